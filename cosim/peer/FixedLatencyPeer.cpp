#include "cosim/peer/FixedLatencyPeer.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <thread>

namespace etsim::cosim {

namespace {
struct Due {
    std::uint64_t timePs;
    std::uint64_t order;
    PeerSession::Arrival arrival;
    bool operator>(const Due& other) const
    {
        return timePs != other.timePs ? timePs > other.timePs : order > other.order;
    }
};
} // namespace

FixedLatencyReport runFixedLatencyPeer(PeerSession& session, const FixedLatencyOptions& options)
{
    FixedLatencyReport report;
    std::priority_queue<Due, std::vector<Due>, std::greater<Due>> calendar;
    std::vector<PeerSession::Arrival> arrivals;
    std::uint64_t order = 0;
    std::uint64_t clockPs = 0; // time of the last event this component processed
    while (true) {
        const std::uint64_t next = calendar.empty() ? unlimitedPs : calendar.top().timePs;
        if (!session.advance(next, arrivals))
            return report;
        for (PeerSession::Arrival& arrival : arrivals) {
            ++report.requests;
            // Only conservative sync promises this; the other modes allow skew by design.
            if (arrival.timePs < clockPs && session.mode() == SyncMode::Conservative)
                ++report.causalityViolations;
            if (options.badFrameAfter != 0 && report.requests >= options.badFrameAfter) {
                session.sendRaw(std::vector<std::uint8_t>(40, 0xAB));
                session.close();
                return report;
            }
            if (options.stallAfter != 0 && report.requests > options.stallAfter) {
                // Stay connected and silent: the host must notice by its own timeout.
                std::this_thread::sleep_for(std::chrono::hours(1));
                return report;
            }
            std::uint64_t cost = options.latencyPs;
            if (arrival.request.node) {
                const WireNodeInfo& node = *arrival.request.node;
                cost = node.durationPs != 0 ? std::max(node.durationPs, options.latencyPs)
                                            : options.latencyPs + node.bytes * options.psPerByte;
            }
            const std::uint64_t due = arrival.timePs + cost;
            calendar.push(Due{due, order++, std::move(arrival)});
        }
        arrivals.clear();
        // Run every event the grant allows.
        while (!calendar.empty() && calendar.top().timePs <= session.bound()) {
            Due due = calendar.top();
            calendar.pop();
            clockPs = std::max(clockPs, due.timePs);
            Response response;
            if (due.arrival.request.command == 0)
                response.data.assign(due.arrival.request.data.size(), 0);
            session.respond(due.arrival, due.timePs, std::move(response));
            ++report.responses;
            report.lastEventPs = due.timePs;
        }
    }
}

} // namespace etsim::cosim
