#include "models/hbm/MemTraffic.h"

#include "kernel/Error.h"
#include "kernel/Stats.h"
#include "models/hbm/AnalyticHbm.h"
#include "models/hbm/HbmDevice.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <queue>
#include <string_view>

namespace etsim::hbm {

namespace {

// The same buckets as the device's latency stat, ns.
const std::vector<double> latencyEdgesNs = {
    20, 30, 40, 50, 75, 100, 150, 200, 300, 500, 1000, 2000, 5000, 10000, 100000};

std::uint64_t splitMix(std::uint64_t& state)
{
    state += 0x9e3779b97f4a7c15ULL;
    std::uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

std::vector<std::string_view> tokens(std::string_view text)
{
    std::vector<std::string_view> result;
    std::size_t at = 0;
    while (at < text.size()) {
        while (at < text.size() && std::isspace(static_cast<unsigned char>(text[at])))
            ++at;
        std::size_t end = at;
        while (end < text.size() && !std::isspace(static_cast<unsigned char>(text[end])))
            ++end;
        if (end > at)
            result.push_back(text.substr(at, end - at));
        at = end;
    }
    return result;
}

std::optional<std::uint64_t> decimal(std::string_view text)
{
    if (text.empty() || text.size() > 19)
        return std::nullopt;
    std::uint64_t value = 0;
    for (char c : text) {
        if (c < '0' || c > '9')
            return std::nullopt;
        value = value * 10 + static_cast<std::uint64_t>(c - '0');
    }
    return value;
}

bool isHex(std::string_view text)
{
    if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X'))
        text.remove_prefix(2);
    return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
        return std::isxdigit(static_cast<unsigned char>(c)) != 0;
    });
}

std::optional<std::uint64_t> hexadecimal(std::string_view text)
{
    if (!isHex(text))
        return std::nullopt;
    if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X'))
        text.remove_prefix(2);
    if (text.size() > 16)
        return std::nullopt;
    std::uint64_t value = 0;
    for (char c : text) {
        auto digit =
            static_cast<unsigned>(std::isdigit(static_cast<unsigned char>(c))
                                      ? c - '0'
                                      : std::tolower(static_cast<unsigned char>(c)) - 'a' + 10);
        value = value * 16 + digit;
    }
    return value;
}

// Nearest-rank percentile of sorted values.
std::uint64_t percentile(const std::vector<std::uint64_t>& sorted, double q)
{
    auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size())));
    return sorted[std::max<std::size_t>(rank, 1) - 1];
}

LatencySummary summarise(std::vector<std::uint64_t>& latenciesPs)
{
    LatencySummary summary;
    summary.edgesNs = latencyEdgesNs;
    summary.buckets.assign(latencyEdgesNs.size() + 1, 0);
    summary.count = latenciesPs.size();
    if (latenciesPs.empty())
        return summary;
    std::sort(latenciesPs.begin(), latenciesPs.end());
    double sum = 0.0;
    for (std::uint64_t ps : latenciesPs) {
        double ns = static_cast<double>(ps) * 1e-3;
        sum += ns;
        auto bucket = std::lower_bound(latencyEdgesNs.begin(), latencyEdgesNs.end(), ns) -
                      latencyEdgesNs.begin();
        ++summary.buckets[static_cast<std::size_t>(bucket)];
    }
    auto ns = [](std::uint64_t ps) { return static_cast<double>(ps) * 1e-3; };
    summary.minNs = ns(latenciesPs.front());
    summary.maxNs = ns(latenciesPs.back());
    summary.meanNs = sum / static_cast<double>(latenciesPs.size());
    summary.p50Ns = ns(percentile(latenciesPs, 0.50));
    summary.p90Ns = ns(percentile(latenciesPs, 0.90));
    summary.p99Ns = ns(percentile(latenciesPs, 0.99));
    return summary;
}

std::uint64_t counterAt(const StatGroup& stats, const std::string& path)
{
    const auto* counter = dynamic_cast<const Counter*>(stats.findStat(path));
    return counter != nullptr ? counter->value() : 0;
}

RowBufferSummary rowBufferOf(const StatGroup& stats, const Organisation& org)
{
    RowBufferSummary rows;
    for (std::uint32_t channel = 0; channel < org.stacks * org.channelsPerStack; ++channel)
        for (std::uint32_t pc = 0; pc < org.pcsPerChannel; ++pc) {
            std::string prefix =
                "channel" + std::to_string(channel) + ".pc" + std::to_string(pc) + ".";
            rows.hits += counterAt(stats, prefix + "row_hits");
            rows.misses += counterAt(stats, prefix + "row_misses");
            rows.conflicts += counterAt(stats, prefix + "row_conflicts");
            rows.activates += counterAt(stats, prefix + "activates");
            rows.refreshes += counterAt(stats, prefix + "refreshes");
            rows.readWriteSwitches += counterAt(stats, prefix + "rw_switches");
        }
    return rows;
}

} // namespace

void checkTrafficSpec(const TrafficSpec& spec)
{
    if (spec.requestSize.bytes() == 0)
        throw Error("traffic: the request size must be at least 1 B");
    if (spec.count == 0)
        throw Error("traffic: the request count must be at least 1");
    if (!(spec.writeFraction >= 0.0 && spec.writeFraction <= 1.0))
        throw Error("traffic: the write fraction must be in [0, 1], got " +
                    std::to_string(spec.writeFraction));
    if (spec.pattern == AddressPattern::Strided && spec.stride.bytes() == 0)
        throw Error("traffic: the stride must be at least 1 B");
    if (spec.pattern == AddressPattern::Copy && spec.writeFraction != 0.0)
        throw Error("traffic: the copy pattern writes every block it reads (one write per read), "
                    "so leave the write fraction at 0");
    if (spec.pattern == AddressPattern::Copy && spec.burst == 0)
        throw Error("traffic: the copy burst must be at least 1 request");
    if (!(spec.rate.bytesPerSecond() >= 0.0))
        throw Error("traffic: the rate must not be negative; 0 issues every request at once");
}

TrafficGenerator::TrafficGenerator(const TrafficSpec& spec, std::uint64_t capacityBytes)
    : spec(spec)
    , range(spec.range.bytes() != 0 ? spec.range.bytes() : capacityBytes)
    , state(spec.seed)
{
    checkTrafficSpec(spec);
    if (range < spec.requestSize.bytes())
        throw Error("traffic: the address range (" + toString(Size::fromBytes(range)) +
                    ") is smaller than one request (" + toString(spec.requestSize) + ")");
    if (spec.pattern == AddressPattern::Copy && range / 2 < spec.requestSize.bytes())
        throw Error("traffic: the copy pattern splits the address range (" +
                    toString(Size::fromBytes(range)) +
                    ") into source and destination halves, "
                    "each of which must hold one request (" +
                    toString(spec.requestSize) + ")");
}

bool TrafficGenerator::next(MemRequest& request)
{
    if (issued == spec.count)
        return false;
    const std::uint64_t i = issued++;
    const std::uint64_t size = spec.requestSize.bytes();
    std::uint64_t offset = 0;
    switch (spec.pattern) {
    case AddressPattern::Sequential:
        offset = (i % (range / size)) * size;
        break;
    case AddressPattern::Strided:
        offset = (i * spec.stride.bytes()) % range;
        break;
    case AddressPattern::Random:
        offset = (splitMix(state) % (range / size)) * size;
        break;
    case AddressPattern::Copy: {
        // Burst b reads (b even) or writes (b odd) blocks (b / 2)·burst onwards.
        const std::uint64_t burst = i / spec.burst;
        const std::uint64_t block = burst / 2 * spec.burst + i % spec.burst;
        const std::uint64_t half = range / 2;
        offset = (block % (half / size)) * size + (burst % 2 == 1 ? half : 0);
        break;
    }
    }
    request.address = spec.base + offset;
    request.bytes = size;
    if (spec.pattern == AddressPattern::Copy) {
        request.write = i / spec.burst % 2 == 1;
    } else {
        const double f = spec.writeFraction;
        request.write = static_cast<std::uint64_t>(static_cast<double>(i + 1) * f) >
                        static_cast<std::uint64_t>(static_cast<double>(i) * f);
    }
    request.notBeforePs =
        spec.rate.bytesPerSecond() > 0.0 ? (Size::fromBytes(i * size) / spec.rate).ps() : 0;
    return true;
}

StlReader::StlReader(std::istream& in,
                     std::string name,
                     StlTiming timing,
                     Frequency clock,
                     std::uint64_t defaultBytes)
    : in(in), name(std::move(name)), timing(timing), clock(clock), defaultBytes(defaultBytes)
{
}

void StlReader::fail(const std::string& problem) const
{
    throw Error(name + ":" + std::to_string(line) + ": " + problem);
}

bool StlReader::next(MemRequest& request)
{
    while (std::getline(in, text)) {
        ++line;
        std::string_view content(text);
        if (std::size_t hash = content.find('#'); hash != std::string_view::npos)
            content = content.substr(0, hash);
        std::vector<std::string_view> words = tokens(content);
        if (words.empty())
            continue;
        std::string_view cycleText = words[0];
        if (cycleText.size() < 2 || cycleText.back() != ':')
            fail("expected \"<cycle>:\" at the start of the line, got \"" + std::string(cycleText) +
                 "\"; a request reads \"31: read 0x400140\"");
        cycleText.remove_suffix(1);
        std::optional<std::uint64_t> cycle = decimal(cycleText);
        if (!cycle)
            fail("cycle \"" + std::string(cycleText) + "\" is not a non-negative integer");
        std::size_t at = 1;
        std::uint64_t bytes = defaultBytes;
        if (at < words.size() && words[at].front() == '(') {
            std::string_view length = words[at];
            std::optional<std::uint64_t> value;
            if (length.size() > 2 && length.back() == ')')
                value = decimal(length.substr(1, length.size() - 2));
            if (!value || *value == 0)
                fail("length \"" + std::string(length) +
                     "\" is not a byte count in parentheses, e.g. \"(64)\"");
            bytes = *value;
            ++at;
        }
        if (at >= words.size() || (words[at] != "read" && words[at] != "write"))
            fail("expected read or write, got \"" +
                 (at < words.size() ? std::string(words[at]) : std::string("end of line")) + "\"");
        const bool write = words[at] == "write";
        ++at;
        if (at >= words.size())
            fail("the request has no address; give it in hexadecimal, e.g. 0x400140");
        std::optional<std::uint64_t> address = hexadecimal(words[at]);
        if (!address)
            fail("address \"" + std::string(words[at]) +
                 "\" is not a hexadecimal number of at most 64 bits");
        ++at;
        if (at < words.size()) {
            if (!isHex(words[at]))
                fail("data \"" + std::string(words[at]) + "\" is not hexadecimal");
            ++at;
        }
        if (at < words.size())
            fail("unexpected \"" + std::string(words[at]) +
                 "\" after the request; one request per line");
        if (timing == StlTiming::Absolute) {
            if (*cycle < lastCycle)
                fail("cycle " + std::to_string(*cycle) + " is before the previous request's (" +
                     std::to_string(lastCycle) +
                     "); STL cycles must not decrease (relative STL gives distances)");
            lastCycle = *cycle;
        } else {
            lastCycle += *cycle;
        }
        request.notBeforePs = (lastCycle / clock).ps();
        request.address = *address;
        request.bytes = bytes;
        request.write = write;
        return true;
    }
    if (in.bad())
        fail("cannot read further");
    return false;
}

double RowBufferSummary::hitRate() const
{
    std::uint64_t accesses = hits + misses + conflicts;
    return accesses == 0 ? 0.0 : static_cast<double>(hits) / static_cast<double>(accesses);
}

double MemoryRunReport::bandwidth() const
{
    if (lastDonePs <= firstIssuePs)
        return 0.0;
    return static_cast<double>(bytesRead + bytesWritten) /
           (static_cast<double>(lastDonePs - firstIssuePs) * 1e-12);
}

double MemoryRunReport::peakFraction() const
{
    return peakBytesPerSecond > 0.0 ? bandwidth() / peakBytesPerSecond : 0.0;
}

MemoryRunReport
runMemory(const HbmConfig& config, const RequestSource& source, const MemoryRunOptions& options)
{
    validate(config);
    MemoryRunReport report;
    report.preset = config.presetName;
    report.fidelity = config.fidelity;
    report.peakBytesPerSecond = config.organisation.devicePeak().bytesPerSecond();

    // Issue times by slot; a slot is reused once its request has completed.
    std::vector<std::uint64_t> issuePs;
    std::vector<std::uint32_t> freeSlots;
    std::vector<std::uint64_t> latenciesPs;
    // Completion times not yet reached: each frees a place under the outstanding limit.
    std::priority_queue<std::uint64_t, std::vector<std::uint64_t>, std::greater<>> doneAt;
    bool anyDone = false;
    auto completed = [&](std::uint64_t slot, std::uint64_t donePs) {
        latenciesPs.push_back(donePs - issuePs[slot]);
        freeSlots.push_back(static_cast<std::uint32_t>(slot));
        doneAt.push(donePs);
        report.lastDonePs = anyDone ? std::max(report.lastDonePs, donePs) : donePs;
        anyDone = true;
    };

    StatGroup stats("hbm");
    std::unique_ptr<HbmDevice> device;
    std::unique_ptr<AnalyticHbm> analytic;
    if (config.fidelity == Fidelity::Detailed) {
        device = std::make_unique<HbmDevice>(config, stats, completed);
        if (options.commands)
            device->setObserver(options.commands);
    } else
        analytic = std::make_unique<AnalyticHbm>(config, stats);

    constexpr std::uint64_t never = std::numeric_limits<std::uint64_t>::max();
    const std::uint64_t limit = options.outstanding;
    std::uint64_t inFlight = 0;
    std::uint64_t now = 0;
    bool started = false;
    MemRequest next;
    bool have = source(next);
    while (true) {
        while (!doneAt.empty() && doneAt.top() <= now) {
            doneAt.pop();
            --inFlight;
        }
        while (have && next.notBeforePs <= now && (limit == 0 || inFlight < limit)) {
            std::uint32_t slot;
            if (!freeSlots.empty()) {
                slot = freeSlots.back();
                freeSlots.pop_back();
            } else {
                slot = static_cast<std::uint32_t>(issuePs.size());
                issuePs.push_back(0);
            }
            issuePs[slot] = now;
            if (!started) {
                report.firstIssuePs = now;
                started = true;
            }
            ++inFlight;
            (next.write ? report.writes : report.reads) += 1;
            (next.write ? report.bytesWritten : report.bytesRead) += next.bytes;
            if (device)
                device->submit(slot, next.address, next.bytes, next.write, now);
            else
                completed(slot, analytic->complete(now, next.bytes, next.write));
            have = source(next);
        }
        // The next moment anything changes: the device's next command, the next request's
        // arrival when a place is free, or else the completion that frees one.
        std::uint64_t then = device ? device->nextEventPs() : never;
        if (have) {
            if (limit == 0 || inFlight < limit)
                then = std::min(then, std::max(next.notBeforePs, now + 1));
            else if (!doneAt.empty())
                then = std::min(then, doneAt.top());
        }
        if (then == never)
            break;
        if (device)
            device->runUntil(then);
        now = std::max(now, then);
    }
    if (device && !device->idle())
        throw Error("hbm: requests in flight but nothing scheduled (model bug)");
    if (device)
        report.rowBuffer = rowBufferOf(stats, config.organisation);
    report.latency = summarise(latenciesPs);
    return report;
}

} // namespace etsim::hbm
