#include "models/net/fidelity/AstraAwareFidelity.h"

#include "kernel/Error.h"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace etsim::net {

void AstraAwareFidelity::start(std::uint32_t index)
{
    state.flows[index].requestedPs = state.calendar.now();
    requests.push_back(index);
}

void AstraAwareFidelity::handle(const CalendarEvent& event)
{
    if (event.kind != EventKind::Hop)
        throw Error("NetworkCore: internal: the astra_aware fidelity schedules only hops");
    requests.push_back(event.index);
}

bool AstraAwareFidelity::servedBefore(std::uint32_t a, std::uint32_t b) const
{
    const Flow& first = state.flows[a];
    const Flow& second = state.flows[b];
    auto rank = [](const Flow& flow) {
        return std::tie(flow.route[flow.hop],
                        flow.requestedPs,
                        flow.src,
                        flow.order.key,
                        flow.order.sub,
                        flow.dst);
    };
    return rank(first) < rank(second);
}

void AstraAwareFidelity::settle()
{
    // Nearly every instant has one request; only requests for the same link need an order,
    // but sorting them all by link first is as cheap as finding those.
    if (requests.size() > 1)
        std::stable_sort(requests.begin(),
                         requests.end(),
                         [this](std::uint32_t a, std::uint32_t b) { return servedBefore(a, b); });
    // Serving may start more requests only for later instants (every hop takes time) or, with
    // zero-time hops, for this one; those are served at the next settle().
    std::vector<std::uint32_t> serving;
    serving.swap(requests);
    for (std::uint32_t index : serving)
        forwardHop(index);
    if (requests.empty()) {
        serving.clear();
        requests.swap(serving); // keep the capacity
    }
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
        state.calendar.schedule(arrive + state.messageDelayPs, EventKind::Deliver, index, 0);
        return;
    }
    flow.requestedPs = state.calendar.now();
    state.calendar.schedule(arrive, EventKind::Hop, index, 0);
}

} // namespace etsim::net
