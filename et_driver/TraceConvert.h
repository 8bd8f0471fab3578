#pragma once
// Reading any trace file etsim understands, and converting between the protobuf and JSON
// forms: what `etsim trace convert IN OUT` needs.

#include "et_driver/TraceJson.h"
#include "et_driver/TraceReader.h"

#include <cstdint>
#include <filesystem>
#include <optional>

namespace etsim::et {

enum class TraceFileKind {
    Et,   // protobuf Chakra ET (.et, .et.gz)
    Json, // any JSON form (.json, .json.gz)
};

// The kind a file name asks for: ".et"/".et.gz" or ".json"/".json.gz"; nullopt otherwise.
std::optional<TraceFileKind> traceFileKindByName(const std::filesystem::path& file);

// Reads a .et/.et.gz file with TraceReader and a .json/.json.gz file with TraceJsonReader. For
// any other name it looks at the content: JSON when it starts with '{' or '[' followed by
// JSON text (gzip is looked through), protobuf otherwise.
class AnyTraceReader {
public:
    explicit AnyTraceReader(const std::filesystem::path& file);

    TraceFileKind kind() const { return json ? TraceFileKind::Json : TraceFileKind::Et; }
    // The JSON form read, for JSON input.
    std::optional<JsonForm> jsonForm() const;
    const TraceMetadata& metadata() const;
    bool next(TraceNode& node);

private:
    std::optional<TraceReader> et;
    std::optional<TraceJsonReader> json;
};

struct ConvertResult {
    uint64_t nodes = 0;
    TraceFileKind inputKind = TraceFileKind::Et;
    std::optional<JsonForm> inputJsonForm;
    bool metadataPresent = false;
};

// Converts `in` (any readable trace) to `out`, whose name chooses the output: .et (plain),
// .et.gz, .json (etsim form), .json.gz. Node by node, so memory does not grow with the trace.
// A protobuf input without GlobalMetadata record (legacy, spec 3.2) gives an output without
// one, so et -> json -> et is byte-identical. Throws TraceError for an output name of another
// kind and for every read or write problem; `out` must not be `in`.
ConvertResult convertTrace(const std::filesystem::path& in, const std::filesystem::path& out);

} // namespace etsim::et
