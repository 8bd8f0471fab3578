#pragma once
// Streaming reader of one Chakra ET file (one rank): `<prefix>.<rank>.et`, plain or gzip
// (detected by the 1F 8B magic, whatever the name), record framing of spec 1.1.
//
// Memory is bounded and independent of the file length: one I/O buffer (bufferBytes, twice
// for gzip), the record being decoded, and the nodes the caller keeps. Nodes come out one by
// one with next(), or windowNodes at a time with nextBatch().
//
// Files are opened lazily and closed as soon as the last record was read. suspend() closes
// the file early and remembers the position, so a caller streaming thousands of ranks (see
// TraceSet) keeps only a bounded number of descriptors open. Resuming a plain file seeks and
// refills a buffer sized by what the reader consumed before its suspension; resuming a gzip
// file re-inflates from the start up to the position (cost proportional to the bytes already
// read, so suspend gzip readers sparingly).
//
// Every problem with the input throws one TraceError naming the file, the record index and
// its byte offset, and what to do; a clean end exactly at a record boundary is the only end.
// (For a string that is not UTF-8, protobuf also logs one line of its own before the parse
// fails.) Not detected: files of the pre-October-2023 schemas (spec 3.1), which usually fail
// to parse but can decode into nonsense; the validator is the place to catch those.
//
// Well-known attributes that appear twice keep the first occurrence in the typed field (as
// ASTRA-sim's feeder does) and the later ones among the preserved attributes, where a
// validator can report them.

#include "et_driver/NodeView.h"
#include "et_driver/TraceError.h"
#include "et_driver/TraceNode.h"
#include "et_driver/proto/et_def.pb.h"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace etsim::et {

struct TraceReaderOptions {
    // Size of the file read buffer and of the gzip output window, bytes.
    std::size_t bufferBytes = 256 * 1024;
    // Nodes nextBatch() returns at most; bounds the memory of a caller that consumes batches.
    std::size_t windowNodes = 4096;
    // Largest record accepted, bytes. A length prefix above it is rejected before anything is
    // allocated. Real records are far smaller (the biggest Node in the shared traces is a few
    // KiB; a GlobalMetadata carrying a workload text is at most some hundred KiB), and 64 MiB
    // is protobuf's traditional per-message limit, which Chakra's own Python tools inherit.
    uint32_t maxRecordBytes = 64U << 20;
    // Most nodes one rank file may hold. Every Node record takes at least 3 bytes, so a small
    // gzip file can decompress to hundreds of millions of them; readers that keep something
    // per node (trace info, validate, the run's dependency tracker) would exhaust memory long
    // before the end. 2^26 is about 600 times the largest rank of the shared traces.
    uint64_t maxNodes = uint64_t{1} << 26;
};

// Record 0 of a trace, or nothing for legacy files that start with a Node (spec 3.2).
struct TraceMetadata {
    bool present = false;
    ChakraProtoMsg::GlobalMetadata message;

    // "", "0.0.4" or "1.0.0" in known traces; empty too when the record is absent.
    const std::string& version() const { return message.version(); }
    // The first string_val attribute of that name (e.g. "schema"), or nullopt.
    std::optional<std::string> stringAttr(std::string_view name) const;
};

class TraceReader {
public:
    // Opens the file and reads record 0; throws TraceError if it cannot.
    explicit TraceReader(std::filesystem::path file, TraceReaderOptions options = {});
    ~TraceReader();
    TraceReader(TraceReader&&) noexcept;
    TraceReader& operator=(TraceReader&&) noexcept;
    TraceReader(const TraceReader&) = delete;
    TraceReader& operator=(const TraceReader&) = delete;

    const std::filesystem::path& path() const { return file; }
    const TraceMetadata& metadata() const { return meta; }
    // Whether the file is gzip-compressed (offsets in errors are then uncompressed offsets).
    bool compressed() const { return gzip; }

    // The next node into `node` (its buffers are reused); false at the end of the file.
    bool next(TraceNode& node);
    // The same record read in place (NodeView.h): valid until the next read or suspend(). The same
    // records are refused with the same errors.
    bool next(NodeView& view);
    // Replaces the content of `batch` with up to windowNodes next nodes; 0 at the end.
    std::size_t nextBatch(std::vector<TraceNode>& batch);

    // Nodes returned so far.
    uint64_t nodesRead() const { return nodes; }
    bool atEnd() const { return ended && !pending; }
    // Whether the reader holds an open file descriptor now.
    bool isOpen() const { return stream != nullptr; }
    // Closes the file, keeping the position; the next read reopens it.
    void suspend();

private:
    struct Stream;

    void open(uint64_t resumeOffset);
    void readFirstRecord();
    bool
    readLength(google::protobuf::io::CodedInputStream& coded, uint64_t offset, uint32_t& length);
    void checkBody(google::protobuf::io::CodedInputStream& coded,
                   bool parsed,
                   uint64_t offset,
                   uint32_t length,
                   const char* what);
    void checkInput(uint64_t offset);
    // Reads the next record where the input stream holds it, without a CodedInputStream or
    // protobuf's parser, when it lies whole in the stream's current buffer and scanRecord takes
    // it (nearly every record of a large file); false, having consumed nothing, for any other
    // case, which the general path then reads or refuses.
    bool scanInPlace(TraceNode* node, NodeView* view);
    // NodeView::scan or TraceCodec::decodeRecord of `bytes` into the one target given.
    static bool scanRecord(std::string_view bytes, TraceNode* node, NodeView* view);
    // Reads the next record into `node` or `view` (exactly one is given); false at the end.
    bool nextRecord(TraceNode* node, NodeView* view);
    uint64_t position() const;
    [[noreturn]] void fail(uint64_t offset, const std::string& problem) const;

    std::filesystem::path file;
    TraceReaderOptions options;
    TraceMetadata meta;
    std::unique_ptr<Stream> stream;
    std::unique_ptr<ChakraProtoMsg::Node> scratch;
    std::optional<TraceNode> pending;
    // Wire bytes of the record being decoded (reused).
    std::string wire;
    bool gzip = false;
    bool startsLikeJson = false;
    bool ended = false;
    uint64_t fileBytes = 0;
    uint64_t record = 0;
    uint64_t resumeAt = 0;
    // Read buffer of a plain file's next resumption (see suspend()).
    static constexpr std::size_t minResumeBlock = 4096;
    std::size_t resumeBlock = 0;
    uint64_t nodes = 0;
};

} // namespace etsim::et
