#include "cosim/adapters/verilator/RtlPeer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <queue>
#include <sstream>

namespace etsim::rtl {

namespace {

struct Due {
    std::uint64_t timePs;
    std::uint64_t order;
    cosim::PeerSession::Arrival arrival;
    std::uint8_t status;
    bool operator>(const Due& other) const
    {
        return timePs != other.timePs ? timePs > other.timePs : order > other.order;
    }
};

std::string trim(const std::string& text)
{
    const std::size_t first = text.find_first_not_of(" \t\r\"");
    const std::size_t last = text.find_last_not_of(" \t\r\"");
    return first == std::string::npos ? std::string() : text.substr(first, last - first + 1);
}

double number(const std::string& key, const std::string& text)
{
    char* end = nullptr;
    const double value = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || !(value > 0))
        throw cosim::CosimError("component description: " + key + ": \"" + text +
                                "\" is not a positive number");
    return value;
}

std::int64_t intAttribute(const cosim::WireNodeInfo& node, const char* key, std::int64_t fallback)
{
    for (const auto& attribute : node.attributes)
        if (attribute.key == key)
            if (const auto* value = std::get_if<std::int64_t>(&attribute.value))
                return *value;
    return fallback;
}

// The share of `total` that slice `index` of `count` takes (as the local engine splits it).
std::uint64_t share(std::uint64_t total, std::uint64_t index, std::uint64_t count)
{
    const std::uint64_t q = total / count;
    const std::uint64_t r = total % count;
    auto upTo = [&](std::uint64_t i) { return q * i + r * i / count; };
    return upTo(index + 1) - upTo(index);
}

} // namespace

RtlPeerOptions applyDescription(RtlPeerOptions options, const std::string& description)
{
    std::istringstream lines(description);
    std::string line;
    while (std::getline(lines, line)) {
        const std::size_t colon = line.find(':');
        if (colon == std::string::npos)
            continue;
        const std::string key = trim(line.substr(0, colon));
        const std::string value = trim(line.substr(colon + 1));
        if (key == "rows")
            options.rows = static_cast<std::uint32_t>(number(key, value));
        else if (key == "cols")
            options.cols = static_cast<std::uint32_t>(number(key, value));
        else if (key == "clock_hz")
            options.clockHz = number(key, value);
    }
    return options;
}

std::uint64_t cyclesToPs(std::uint64_t cycles, double clockHz)
{
    return static_cast<std::uint64_t>(std::llround(static_cast<double>(cycles) * 1e12 / clockHz));
}

std::uint64_t minimumGemmPs(const RtlPeerOptions& options)
{
    // formulaCycles(1x1x1) = 1 + L + 2 + 1 - 1; rounded down so the promise holds.
    return static_cast<std::uint64_t>(static_cast<double>(options.memoryLatency + 3) * 1e12 /
                                      options.clockHz);
}

RtlPeerReport runRtlPeer(cosim::PeerSession& session, GemmTile& tile, const RtlPeerOptions& options)
{
    RtlPeerReport report;
    std::priority_queue<Due, std::vector<Due>, std::greater<Due>> calendar;
    std::vector<cosim::PeerSession::Arrival> arrivals;
    std::uint64_t order = 0;
    std::uint64_t freeAtPs = 0; // when the engine finishes the GEMMs accepted so far
    const std::uint64_t lookahead =
        session.mode() == cosim::SyncMode::Conservative ? session.lookaheadPs() : 0;
    const std::uint64_t edgesBefore = tile.edges();
    while (true) {
        const std::uint64_t next = calendar.empty() ? cosim::unlimitedPs : calendar.top().timePs;
        if (!session.advance(next, arrivals))
            break;
        for (cosim::PeerSession::Arrival& arrival : arrivals) {
            ++report.requests;
            const auto& node = arrival.request.node;
            if (!node || !node->gemm || node->gemm->batch == 0) {
                ++report.refused;
                const std::uint64_t due = arrival.timePs + std::max<std::uint64_t>(lookahead, 1);
                calendar.push(Due{due, order++, std::move(arrival), cosim::Response::genericError});
                continue;
            }
            const auto& gemm = *node->gemm;
            const auto started = std::chrono::steady_clock::now();
            const std::uint64_t cycles =
                gemm.batch *
                timeGemm(tile, {gemm.m, gemm.n, gemm.k}, options.memoryLatency, options.folds);
            report.rtlSeconds +=
                std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
            report.cycles += cycles;
            ++report.gemms;
            const std::int64_t slices =
                std::max<std::int64_t>(intAttribute(*node, slicesAttribute, 1), 1);
            const std::int64_t slice =
                std::clamp<std::int64_t>(intAttribute(*node, sliceAttribute, 0), 0, slices - 1);
            const std::uint64_t duration = share(cyclesToPs(cycles, options.clockHz),
                                                 static_cast<std::uint64_t>(slice),
                                                 static_cast<std::uint64_t>(slices));
            const std::uint64_t start = std::max(arrival.timePs, freeAtPs);
            // A slice shorter than the lookahead still answers no earlier than the link allows.
            const std::uint64_t due = std::max(start + duration, arrival.timePs + lookahead);
            freeAtPs = due;
            calendar.push(Due{due, order++, std::move(arrival), cosim::Response::ok});
        }
        arrivals.clear();
        while (!calendar.empty() && calendar.top().timePs <= session.bound()) {
            Due due = calendar.top();
            calendar.pop();
            cosim::Response response;
            response.status = due.status;
            if (due.arrival.request.command == 0)
                response.data.assign(due.arrival.request.data.size(), 0);
            session.respond(due.arrival, due.timePs, std::move(response));
            report.lastEventPs = due.timePs;
        }
    }
    report.simulatedEdges = tile.edges() - edgesBefore;
    return report;
}

} // namespace etsim::rtl
