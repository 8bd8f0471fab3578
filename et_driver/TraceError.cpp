#include "et_driver/TraceError.h"

#include <utility>

namespace etsim::et {

TraceError::TraceError(std::string file, std::string problem)
    : Error(file + ": " + problem), fileName(std::move(file)), problemText(std::move(problem))
{
}

TraceError::TraceError(
    std::string file, uint64_t record, uint64_t offset, bool compressed, std::string problem)
    : Error(file + ": record " + std::to_string(record) + " at " +
            (compressed ? "uncompressed byte offset " : "byte offset ") + std::to_string(offset) +
            ": " + problem)
    , fileName(std::move(file))
    , recordIndex(static_cast<int64_t>(record))
    , byteOffset(offset)
    , problemText(std::move(problem))
{
}

} // namespace etsim::et
