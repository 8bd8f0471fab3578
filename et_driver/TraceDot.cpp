#include "et_driver/TraceDot.h"

#include <exception>

namespace etsim::et {

std::string dotEscape(std::string_view text)
{
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
        if (c == '"' || c == '\\')
            out += '\\';
        if (c == '\n') {
            out += "\\n";
            continue;
        }
        out += c;
    }
    return out;
}

DotWriter::DotWriter(std::filesystem::path file) : file(std::move(file))
{
    try {
        output = std::make_unique<AtomicFile>(this->file);
    } catch (const OutputError& error) {
        throw TraceError(this->file.string(), error.problem());
    }
    // The stream writes the temporary file; close() renames it into place.
    if (!output->inPlace())
        out.open(output->temporary(), std::ios::binary | std::ios::trunc);
    else
        out.open(this->file, std::ios::binary);
    if (!out)
        throw TraceError(this->file.string(),
                         "cannot create the DOT file (check the folder exists and is writable)");
    out << "digraph trace {\n"
           "  node [shape=box, fontname=\"monospace\"];\n";
}

DotWriter::~DotWriter()
{
    // Unwinding from an error: the graph is incomplete, so the output is not put in place.
    if (closed || std::uncaught_exceptions() > exceptionsAtStart)
        return;
    try {
        close();
    } catch (const Error&) { // NOLINT(bugprone-empty-catch): a destructor must not throw
    }
}

void DotWriter::write(const TraceNode& node)
{
    out << "  n" << node.id << " [label=\"" << node.id << "\\n"
        << dotEscape(node.name) << "\\n"
        << nodeTypeName(node.type) << "\"];\n";
    for (uint64_t dep : node.dataDeps)
        out << "  n" << dep << " -> n" << node.id << ";\n";
    for (uint64_t dep : node.ctrlDeps)
        out << "  n" << dep << " -> n" << node.id << " [style=dashed];\n";
    ++nodes;
}

void DotWriter::close()
{
    if (closed)
        return;
    closed = true;
    out << "}\n";
    out.close();
    if (!out) {
        output->abandon();
        throw TraceError(file.string(),
                         "writing the DOT file failed (disk full?); the partial file was removed");
    }
    try {
        output->commit();
    } catch (const OutputError& error) {
        throw TraceError(file.string(), error.problem());
    }
}

} // namespace etsim::et
