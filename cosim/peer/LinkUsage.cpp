#include "cosim/peer/LinkUsage.h"

#include "cosim/wire/Frame.h"

#include <sstream>
#include <stdexcept>

namespace etsim::cosim {

namespace {

constexpr const char* magic = "etsim-link-usage";

[[noreturn]] void bad(std::size_t line, const std::string& problem)
{
    throw CosimError("link usage line " + std::to_string(line) + ": " + problem);
}

std::uint64_t number(std::istringstream& in, std::size_t line, const char* what)
{
    std::string word;
    if (!(in >> word) || word.find_first_not_of("0123456789") != std::string::npos)
        bad(line, std::string("expected ") + what + " (a whole number)");
    try {
        return std::stoull(word);
    } catch (const std::out_of_range&) {
        bad(line, std::string(what) + " " + word + " is out of range");
    }
}

} // namespace

std::string encodeLinkUsage(const std::vector<RemoteLinkUsage>& links)
{
    std::ostringstream text;
    text << magic << " 1\n";
    for (const RemoteLinkUsage& link : links)
        text << "link " << link.link << ' ' << link.busyPs << ' ' << link.bytes << '\n';
    return text.str();
}

bool isLinkUsage(const std::string& text)
{
    return text.compare(0, std::char_traits<char>::length(magic), magic) == 0;
}

std::vector<RemoteLinkUsage> parseLinkUsage(const std::string& text, std::size_t linkCount)
{
    std::vector<RemoteLinkUsage> usage(linkCount);
    for (std::size_t index = 0; index < linkCount; ++index)
        usage[index].link = static_cast<std::uint32_t>(index);
    std::vector<bool> seen(linkCount, false);
    std::istringstream lines(text);
    std::string raw;
    std::size_t line = 0;
    bool versioned = false;
    while (std::getline(lines, raw)) {
        ++line;
        std::istringstream in(raw.substr(0, raw.find('#')));
        std::string keyword;
        if (!(in >> keyword))
            continue;
        if (keyword == magic) {
            const std::uint64_t version = number(in, line, "the format version");
            if (version != 1)
                bad(line,
                    "format version " + std::to_string(version) +
                        " is not supported (this etsim reads version 1)");
            versioned = true;
            continue;
        }
        if (!versioned)
            bad(line, std::string("the report must start with \"") + magic + " 1\"");
        if (keyword != "link")
            bad(line, "unknown keyword \"" + keyword + "\"");
        const std::uint64_t index = number(in, line, "the link index");
        if (index >= linkCount)
            bad(line,
                "link " + std::to_string(index) + " does not exist (the fabric has " +
                    std::to_string(linkCount) + " links)");
        if (seen[index])
            bad(line, "link " + std::to_string(index) + " is listed twice");
        seen[index] = true;
        usage[index].busyPs = number(in, line, "the busy time in ps");
        usage[index].bytes = number(in, line, "the byte count");
        std::string extra;
        if (in >> extra)
            bad(line, "unexpected \"" + extra + "\" after the byte count");
    }
    if (!versioned)
        throw CosimError(std::string("link usage: empty; expected \"") + magic +
                         " 1\" followed by one \"link INDEX BUSY_PS BYTES\" line per link");
    return usage;
}

} // namespace etsim::cosim
