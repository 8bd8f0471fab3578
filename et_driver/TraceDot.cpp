#include "et_driver/TraceDot.h"

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

DotWriter::DotWriter(std::filesystem::path file)
    : file(std::move(file)), out(this->file, std::ios::binary | std::ios::trunc)
{
    if (!out)
        throw TraceError(this->file.string(),
                         "cannot create the DOT file (check the folder exists and is writable)");
    out << "digraph trace {\n"
           "  node [shape=box, fontname=\"monospace\"];\n";
}

DotWriter::~DotWriter()
{
    if (!closed) {
        out << "}\n";
        out.close();
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
    if (!out)
        throw TraceError(file.string(), "writing the DOT file failed (disk full?)");
}

} // namespace etsim::et
