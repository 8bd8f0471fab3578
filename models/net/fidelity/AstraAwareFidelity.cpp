#include "models/net/fidelity/AstraAwareFidelity.h"

#include "kernel/Error.h"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace etsim::net {

void AstraAwareFidelity::start(std::uint32_t index)
{
    Flow& flow = state.flows[index];
    flow.requestedPs = state.calendar.now();
    requests.push_back(Request{flow.route[flow.hop], index});
}

void AstraAwareFidelity::handle(const CalendarEvent& event)
{
    if (event.kind != EventKind::Hop)
        throw Error("NetworkCore: internal: the astra_aware fidelity schedules only hops");
    const Flow& flow = state.flows[event.index];
    requests.push_back(Request{flow.route[flow.hop], event.index});
}

bool AstraAwareFidelity::servedBefore(const Request& a, const Request& b) const
{
    const Flow& first = state.flows[a.flow];
    const Flow& second = state.flows[b.flow];
    return std::tie(
               a.link, first.requestedPs, first.src, first.order.key, first.order.sub, first.dst) <
           std::tie(b.link,
                    second.requestedPs,
                    second.src,
                    second.order.key,
                    second.order.sub,
                    second.dst);
}

void AstraAwareFidelity::settle()
{
    // Only requests for one link need an order; links are independent of each other. Most
    // instants have no link asked for twice, and those are served as they came.
    ++instant;
    bool shared = false;
    for (const Request& request : requests) {
        std::uint64_t& seen = linkInstant[request.link];
        shared = shared || seen == instant;
        seen = instant;
    }
    if (shared)
        std::stable_sort(requests.begin(),
                         requests.end(),
                         [this](const Request& a, const Request& b) { return servedBefore(a, b); });
    // Serving may make requests only for later instants (every hop takes time) or, with
    // zero-time hops, for this one; those are served at the next settle().
    serving.swap(requests);
    for (const Request& request : serving)
        forwardHop(request.flow);
    serving.clear();
}

const AstraAwareFidelity::HopTimes& AstraAwareFidelity::hopTimes(std::uint32_t link,
                                                                 std::uint64_t bytes)
{
    HopTimes& times = lastHop[link];
    if (times.bytes == bytes)
        return times;
    const LinkState& target = state.links[link];
    const double size = static_cast<double>(bytes);
    auto serialNs = static_cast<std::uint64_t>(std::floor(size / target.bytesPerNs));
    auto hopNs = static_cast<std::uint64_t>(std::floor(
        static_cast<double>(target.spec.latency.ps()) / psPerNs + size / target.bytesPerNs));
    times = HopTimes{bytes, serialNs * psPerNs, hopNs * psPerNs};
    return times;
}

void AstraAwareFidelity::forwardHop(std::uint32_t index)
{
    Flow& flow = state.flows[index];
    const std::uint32_t link = flow.route[flow.hop];
    LinkState& target = state.links[link];
    const HopTimes& times = hopTimes(link, flow.bytes);
    std::uint64_t start = std::max(state.calendar.now(), target.freeAtPs);
    target.freeAtPs = start + times.serialPs;
    target.busyPs += times.serialPs;
    state.timeline.busy(link, start, target.freeAtPs, static_cast<double>(flow.bytes));
    std::uint64_t arrive = start + times.hopPs;
    ++flow.hop;
    if (flow.hop == flow.route.size()) {
        state.deliverAt(index, arrive + state.messageDelayPs);
        return;
    }
    flow.requestedPs = state.calendar.now();
    // A partitioned run: the next link is another process's.
    if (!state.foreignLinks.empty() && state.foreignLinks[flow.route[flow.hop]]) {
        state.handOver(index, arrive);
        return;
    }
    state.calendar.schedule(arrive, EventKind::Hop, index, 0);
}

} // namespace etsim::net
