#include "models/net/fidelity/AstraAwareFidelity.h"

#include "kernel/Error.h"

#include <algorithm>
#include <cmath>

namespace etsim::net {

void AstraAwareFidelity::handle(const CalendarEvent& event)
{
    if (event.kind != EventKind::Hop)
        throw Error("NetworkCore: internal: the astra_aware fidelity schedules only hops");
    forwardHop(event.index);
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
    if (flow.hop == flow.route.size())
        state.calendar.schedule(arrive + state.messageDelayPs, EventKind::Deliver, index, 0);
    else
        state.calendar.schedule(arrive, EventKind::Hop, index, 0);
}

} // namespace etsim::net
