#pragma once
// Chakra traces as JSON, in three forms (docs/trace-json.md):
//
//  * etsim's own form ("format": "etsim-trace-json/1"): a one-to-one image of every protobuf
//    field, attribute value case and unknown field, so et -> json -> et reproduces the file
//    byte for byte and a user can inspect and hand-edit a trace. Written and read node by node.
//  * the legacy feeder's input form (spec 1.6 item 1): {"workload_graph": [{"Id": ..}, ..]}.
//  * protobuf's JSON mapping as written by chakra_jsonizer (spec 1.6 item 2): concatenated
//    objects (or one array of them), GlobalMetadata first, lowerCamelCase names.
//
// Files may be gzip-compressed (detected by content, whatever the name). The reader finds the
// form from the first key of the file. Memory is bounded per node: one node object is held as
// text and as a JSON tree at a time (at most TraceJsonReaderOptions::maxNodeBytes of text).

#include "et_driver/TraceError.h"
#include "et_driver/TraceNode.h"
#include "et_driver/TraceReader.h"
#include "et_driver/TraceWriter.h"
#include "et_driver/proto/et_def.pb.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

namespace etsim::et {

// The "format" value of etsim's JSON form; the number changes with incompatible changes.
inline constexpr const char* traceJsonFormat = "etsim-trace-json/1";

enum class JsonForm {
    Etsim,        // etsim's lossless form
    LegacyFeeder, // {"workload_graph": [...]} of the legacy feeder
    ProtobufJson, // protobuf's JSON mapping, as chakra_jsonizer writes it
};

// "etsim", "legacy-feeder", "protobuf-json".
const char* jsonFormName(JsonForm form);

// A problem in a JSON trace. what() reads
// "FILE: line L: node I (id N): /nodes/I/attr/2/int64_val: PROBLEM; HOW TO FIX".
class TraceJsonError : public TraceError {
public:
    TraceJsonError(std::string file,
                   uint64_t line,
                   int64_t nodeIndex,
                   std::optional<uint64_t> nodeId,
                   std::string jsonPath,
                   std::string problem);

    // 1-based line where the problem is, or where the node holding it starts; 0 if unknown.
    uint64_t line() const { return lineNumber; }
    // Index of the node in the file (0 = first node), -1 outside nodes.
    int64_t nodeIndex() const { return index; }
    std::optional<uint64_t> nodeId() const { return id; }
    // JSON pointer of the offending value ("/nodes/3/attr/0/int64_val"), "" if none.
    const std::string& jsonPath() const { return path; }

private:
    uint64_t lineNumber;
    int64_t index;
    std::optional<uint64_t> id;
    std::string path;
};

struct TraceJsonReaderOptions {
    // Largest JSON text of one node (or of the metadata) accepted, bytes.
    std::size_t maxNodeBytes = 64U << 20;
    // Size of the read buffer, bytes (at least 1); a gzip file also gets zlib's own buffers of
    // four times this size. Small buffers put refills inside keys, strings and numbers.
    std::size_t bufferBytes = 64U << 10;
};

// Streaming reader of a JSON trace in any of the three forms.
class TraceJsonReader {
public:
    // Opens the file, finds its form and reads everything before the first node. Throws
    // TraceJsonError / TraceError.
    explicit TraceJsonReader(std::filesystem::path file, TraceJsonReaderOptions options = {});
    ~TraceJsonReader();
    TraceJsonReader(TraceJsonReader&&) noexcept;
    TraceJsonReader& operator=(TraceJsonReader&&) noexcept;
    TraceJsonReader(const TraceJsonReader&) = delete;
    TraceJsonReader& operator=(const TraceJsonReader&) = delete;

    JsonForm form() const { return jsonForm; }
    // Legacy feeder form: present, version "", and one attribute per other top-level key
    // (workload_name, ngpus, soc, ...). Protobuf-JSON without a metadata object: absent.
    const TraceMetadata& metadata() const { return meta; }
    const std::filesystem::path& path() const { return file; }

    // The next node into `node`; false after the last one (the rest of the file is checked).
    bool next(TraceNode& node);
    uint64_t nodesRead() const { return nodes; }

private:
    struct Scanner;

    void openEtsimOrLegacy(const std::string& firstKey);
    void seekToNodeArray();
    void readTopLevelValue(const std::string& key, bool skipNodes);
    bool nextEtsim(TraceNode& node);
    bool nextProtobuf(TraceNode& node);
    [[noreturn]] void fail(uint64_t line, const std::string& jsonPath, const std::string& problem);

    std::filesystem::path file;
    TraceJsonReaderOptions options;
    JsonForm jsonForm = JsonForm::Etsim;
    TraceMetadata meta;
    std::unique_ptr<Scanner> scanner;
    std::unique_ptr<ChakraProtoMsg::Node> scratch;
    std::string text;
    std::string pendingRecord;
    bool inArray = false;
    bool ended = false;
    bool topIsArray = false;
    uint64_t pendingLine = 0;
    uint64_t nodes = 0;
};

struct TraceJsonWriterOptions {
    TraceCompression compression = TraceCompression::ByName;
    // zlib level 1 (fast) .. 9 (small).
    int gzipLevel = 6;
};

// Writes etsim's JSON form, pretty-printed, one node at a time.
class TraceJsonWriter {
public:
    // Starts a temporary file beside `file` and writes the header and the metadata (null when
    // metadata.present is false); close() renames it into place, and a writer destroyed
    // without close() removes it, so `file` is complete or untouched. Throws TraceError.
    TraceJsonWriter(std::filesystem::path file,
                    const TraceMetadata& metadata,
                    TraceJsonWriterOptions options = {});
    ~TraceJsonWriter();
    TraceJsonWriter(const TraceJsonWriter&) = delete;
    TraceJsonWriter& operator=(const TraceJsonWriter&) = delete;

    void write(const TraceNode& node);
    // Ends the document, flushes and closes; throws TraceError on any write error.
    void close();

    uint64_t nodesWritten() const { return nodes; }

private:
    struct Sink;
    void put(const std::string& text);

    std::filesystem::path file;
    std::unique_ptr<Sink> sink;
    ChakraProtoMsg::Node scratch;
    uint64_t nodes = 0;
};

// etsim's JSON form of one node / of the metadata, as a JSON tree (insertion-ordered).
nlohmann::ordered_json nodeToJson(const TraceNode& node);
nlohmann::ordered_json metadataToJson(const TraceMetadata& metadata);
// The reverse. Errors throw TraceJsonError with `jsonPath` prefixed to the offending key's
// path and `file`/`nodeIndex` in the message.
void nodeFromJson(const nlohmann::ordered_json& json,
                  TraceNode& node,
                  const std::string& file = "<json>",
                  int64_t nodeIndex = 0,
                  const std::string& jsonPath = "");
TraceMetadata metadataFromJson(const nlohmann::ordered_json& json,
                               const std::string& file = "<json>",
                               const std::string& jsonPath = "/metadata");
// etsim's pretty layout of a JSON tree: objects one key per line, arrays of scalars on one
// line. `indent` is the column of the opening brace's line.
std::string prettyJson(const nlohmann::ordered_json& json, int indent = 0);

} // namespace etsim::et
