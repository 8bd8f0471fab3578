// The command-line forms of a job's timeline options (--timeline-window, --timeline-ranks).
#include "kernel/Error.h"
#include "kernel/Units.h"
#include "platforms/Job.h"

#include <limits>

namespace etsim::platform {

std::pair<std::uint64_t, std::uint64_t> parseTimelineWindow(const std::string& text)
{
    const std::string where = "--timeline-window " + text + ": ";
    const std::size_t colon = text.find(':');
    if (colon == std::string::npos)
        throw Error(where + "expected START:END with units, e.g. 2ms:3ms (either side may be "
                            "empty)");
    auto parseSide = [&](const std::string& side, std::uint64_t empty) {
        if (side.find_first_not_of(" \t") == std::string::npos)
            return empty;
        try {
            return Time::parse(side).ps();
        } catch (const Error& error) {
            throw Error(where + "\"" + side + "\" is not a time: " + error.what() +
                        " (write a unit, e.g. 2ms, 1.5 us, 700 ns)");
        }
    };
    const std::uint64_t start = parseSide(text.substr(0, colon), 0);
    const std::uint64_t end =
        parseSide(text.substr(colon + 1), std::numeric_limits<std::uint64_t>::max());
    if (end <= start)
        throw Error(where + "the end (" + toString(Time::fromPs(end)) +
                    ") must come after the start (" + toString(Time::fromPs(start)) + ")");
    return {start, end};
}

std::optional<std::vector<std::uint32_t>> parseRankList(const std::string& text)
{
    if (text == "all")
        return std::nullopt;
    std::vector<std::uint32_t> ranks;
    if (text == "none")
        return ranks;
    auto number = [&](const std::string& item, const std::string& digits) {
        if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos ||
            digits.size() > 9)
            throw Error("--timeline-ranks " + text + ": \"" + item +
                        "\" is not a rank or a range (write all, none, or e.g. 0,3,8-15)");
        return static_cast<std::uint32_t>(std::stoul(digits));
    };
    std::size_t begin = 0;
    while (begin <= text.size()) {
        std::size_t comma = text.find(',', begin);
        if (comma == std::string::npos)
            comma = text.size();
        const std::string item = text.substr(begin, comma - begin);
        const std::size_t dash = item.find('-');
        if (dash == std::string::npos) {
            ranks.push_back(number(item, item));
        } else {
            const std::uint32_t first = number(item, item.substr(0, dash));
            const std::uint32_t last = number(item, item.substr(dash + 1));
            if (last < first)
                throw Error("--timeline-ranks " + text + ": the range \"" + item +
                            "\" ends before it starts");
            if (last - first >= (1U << 24))
                throw Error("--timeline-ranks " + text + ": the range \"" + item +
                            "\" holds more ranks than a platform can have");
            for (std::uint32_t rank = first; rank <= last; ++rank)
                ranks.push_back(rank);
        }
        begin = comma + 1;
    }
    return ranks;
}

} // namespace etsim::platform
