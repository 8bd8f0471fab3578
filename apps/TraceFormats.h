#pragma once
// The trace file formats `etsim trace convert` reads and writes, keyed by file extension.
// A format is a way to open a node source and/or a node sink; the converter only streams
// nodes from one to the other, so adding a format is adding one row to traceFormats().

#include "et_driver/TraceReader.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace etsim::apps {

// Where converted nodes come from.
class NodeSource {
public:
    virtual ~NodeSource() = default;
    // GlobalMetadata of the input; `present` false for inputs without one.
    virtual const et::TraceMetadata& metadata() const = 0;
    virtual bool next(et::TraceNode& node) = 0;
};

// Where converted nodes go.
class NodeSink {
public:
    virtual ~NodeSink() = default;
    virtual void write(const et::TraceNode& node) = 0;
    // Flushes and closes; throws et::TraceError naming the output on any write error.
    virtual void close() = 0;
};

struct TraceFormat {
    // Including the dot, e.g. ".et.gz"; the longest matching extension wins.
    std::string extension;
    std::string description;
    // Empty when the format cannot be read.
    std::function<std::unique_ptr<NodeSource>(const std::filesystem::path&)> openSource;
    // Empty when the format cannot be written. The metadata is the input's, present or not:
    // each format decides what an absent record becomes.
    std::function<std::unique_ptr<NodeSink>(const std::filesystem::path&, const et::TraceMetadata&)>
        openSink;
    // Nodes written at most unless forced (0: no limit), and why.
    uint64_t nodeLimit = 0;
    std::string limitReason;
};

// Every known format.
std::vector<TraceFormat> traceFormats();

// The format of a file name, or nullptr.
const TraceFormat* findFormat(const std::vector<TraceFormat>& formats,
                              const std::filesystem::path& file);

// "a.et, .et.gz, .dot" style list of the extensions that can be read (or written).
std::string knownExtensions(const std::vector<TraceFormat>& formats, bool readable);

} // namespace etsim::apps
