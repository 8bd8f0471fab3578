#pragma once
// Writes a trace's dependency graph as Graphviz DOT, one rank file at a time: a box per node
// labelled with id, name and type; an edge from each dependency to its dependent, solid for
// data dependencies and dashed for control dependencies. Dependencies on ids that are not in
// the file show up as bare nodes named by id (Graphviz creates them).
//
// Streams: nothing but the output buffer is kept, so the limit on size is Graphviz's, not
// ours (layouts beyond about 100k nodes take hours; the `etsim trace convert` command refuses
// them unless forced).

#include "et_driver/TraceError.h"
#include "et_driver/TraceNode.h"
#include "kernel/AtomicFile.h"

#include <exception>
#include <filesystem>
#include <fstream>
#include <memory>

namespace etsim::et {

class DotWriter {
public:
    // Starts a temporary file beside `file` and writes the graph header; close() renames it
    // into place. Throws TraceError.
    explicit DotWriter(std::filesystem::path file);
    // Closes the file if close() was not called (errors are then lost, so call close()); while
    // an exception unwinds the stack, removes the incomplete file instead.
    ~DotWriter();
    DotWriter(const DotWriter&) = delete;
    DotWriter& operator=(const DotWriter&) = delete;

    void write(const TraceNode& node);
    // Writes the closing brace and closes; throws TraceError on any write error.
    void close();

    uint64_t nodesWritten() const { return nodes; }

private:
    std::filesystem::path file;
    std::unique_ptr<AtomicFile> output; // renamed over `file` by close()
    std::ofstream out;
    bool closed = false;
    int exceptionsAtStart = std::uncaught_exceptions();
    uint64_t nodes = 0;
};

// `text` as the body of a DOT double-quoted string.
std::string dotEscape(std::string_view text);

} // namespace etsim::et
