#include "kernel/ParamTable.h"

#include <sstream>

namespace etsim {

namespace {

// A table cell: pipes would end the cell early.
std::string cell(const std::string& text)
{
    std::string escaped;
    for (char c : text) {
        if (c == '|')
            escaped += '\\';
        escaped += c;
    }
    return escaped;
}

// Code spans for the key and for a default that is a value (not "—" or "required").
std::string code(const std::string& text)
{
    if (text.empty() || text == "—" || text == "required" || text.front() == '`')
        return cell(text);
    return "`" + cell(text) + "`";
}

} // namespace

void failAt(const ParamViolation& bad, const ParamLocations& where, const ConfigMap& map)
{
    const ConfigLocation* at = nullptr;
    std::size_t atLength = 0;
    for (const auto& [key, location] : where) {
        const bool above = bad.key.size() == key.size() ||
                           (bad.key.size() > key.size() &&
                            (bad.key[key.size()] == '.' || bad.key[key.size()] == '['));
        if (above && bad.key.compare(0, key.size(), key) == 0 && key.size() > atLength) {
            at = &location;
            atLength = key.size();
        }
    }
    ConfigLocation location = at != nullptr ? *at : map.location();
    const std::string& base = map.location().keyPath;
    location.keyPath = base.empty() ? bad.key : base + "." + bad.key;
    location.fail(bad.problem);
}

std::string paramMarkdown(const std::vector<ParamInfo>& params)
{
    std::ostringstream out;
    out << "| key | type / unit | default | meaning |\n|---|---|---|---|\n";
    for (const ParamInfo& param : params)
        out << "| " << code(param.key) << " | " << cell(param.type) << " | "
            << code(param.defaultText) << " | " << cell(param.help) << " |\n";
    return out.str();
}

std::string paramListing(const std::vector<ParamInfo>& params)
{
    std::ostringstream out;
    for (const ParamInfo& param : params) {
        out << param.key << "  (" << param.type << "; default " << param.defaultText << ")\n";
        out << "    " << param.help << "\n";
    }
    return out.str();
}

} // namespace etsim
