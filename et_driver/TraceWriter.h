#pragma once
// Writes one Chakra ET file: the GlobalMetadata record first, then one record per node
// (spec 1.1), plain or gzip-compressed. Plain is the default because ASTRA-sim's current
// feeder cannot read gzip (spec 1.2).

#include "et_driver/TraceError.h"
#include "et_driver/TraceNode.h"
#include "et_driver/proto/et_def.pb.h"

#include <filesystem>
#include <memory>

namespace etsim::et {

enum class TraceCompression {
    ByName, // gzip when the file name ends in ".gz", plain otherwise
    None,
    Gzip,
};

struct TraceWriterOptions {
    TraceCompression compression = TraceCompression::ByName;
    // zlib level 1 (fast) .. 9 (small).
    int gzipLevel = 6;
    // Size of the output buffer, bytes.
    int bufferBytes = 256 * 1024;
    // Whether to write the GlobalMetadata record 0. Only for reproducing legacy files that
    // have none (spec 3.2); new traces always need it (spec 9).
    bool metadataRecord = true;
};

class TraceWriter {
public:
    // GlobalMetadata with version "0.0.4", the version most readers accept today (spec 9).
    static ChakraProtoMsg::GlobalMetadata defaultMetadata();

    // Starts a temporary file beside `file` (kernel/AtomicFile.h) and writes `metadata` as
    // record 0 (an empty one as defaultMetadata(): a zero-length record would end the file for
    // Chakra's Python tools); close() renames it into place, so `file` is complete or
    // untouched. Throws TraceError.
    explicit TraceWriter(std::filesystem::path file,
                         const ChakraProtoMsg::GlobalMetadata& metadata = defaultMetadata(),
                         TraceWriterOptions options = {});
    // Closes the file if close() was not called; errors are then lost, so call close(). When
    // it runs while an exception unwinds the stack, the incomplete file is removed instead.
    ~TraceWriter();
    TraceWriter(const TraceWriter&) = delete;
    TraceWriter& operator=(const TraceWriter&) = delete;

    // Appends a node. Throws TraceError for a node whose fields are all default: it would be
    // a zero-length record, which Chakra's Python tools take for the end of the file
    // (spec 1.3); give it a name.
    void write(const TraceNode& node);
    void write(const ChakraProtoMsg::Node& node);

    // Flushes, closes and renames into place; throws TraceError with the reason on any write
    // error (disk full, ...), after removing the partial file.
    void close();

    uint64_t nodesWritten() const { return nodes; }
    const std::filesystem::path& path() const { return file; }

private:
    struct Stream;
    void writeRecord(const google::protobuf::MessageLite& message);
    [[noreturn]] void fail(const std::string& problem);

    std::filesystem::path file;
    std::unique_ptr<Stream> stream;
    ChakraProtoMsg::Node scratch;
    uint64_t nodes = 0;
};

} // namespace etsim::et
