#pragma once
// The error trace reading and writing throw: names the file, and for a record the record
// index and byte offset, so a user can find the bad bytes (e.g. with `xxd -s OFFSET`).

#include "kernel/Error.h"

#include <cstdint>
#include <string>

namespace etsim::et {

class TraceError : public Error {
public:
    // A problem with the file as a whole (missing, empty, unwritable, no rank files, ...).
    TraceError(std::string file, std::string problem);
    // A problem at one record. `offset` counts bytes from the start of the record stream,
    // after gzip decompression when the file is compressed (`compressed` says so).
    TraceError(
        std::string file, uint64_t record, uint64_t offset, bool compressed, std::string problem);

    const std::string& file() const { return fileName; }
    // Index of the bad record (0 = first record of the file); -1 for whole-file problems.
    int64_t record() const { return recordIndex; }
    uint64_t offset() const { return byteOffset; }
    const std::string& problem() const { return problemText; }

private:
    std::string fileName;
    int64_t recordIndex = -1;
    uint64_t byteOffset = 0;
    std::string problemText;
};

} // namespace etsim::et
