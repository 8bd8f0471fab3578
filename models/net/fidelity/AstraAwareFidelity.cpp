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

void AstraAwareFidelity::forwardHop(std::uint32_t index)
{
    Flow& flow = state.flows[index];
    const std::uint32_t link = flow.route[flow.hop];
    LinkState& target = state.links[link];
    std::uint64_t now = state.calendar.now();
    std::uint64_t start = std::max(now, target.freeAtPs);
    double bytes = static_cast<double>(flow.bytes);
    auto serialNs = static_cast<std::uint64_t>(std::floor(bytes / target.bytesPerNs));
    auto hopNs = static_cast<std::uint64_t>(std::floor(
        static_cast<double>(target.spec.latency.ps()) / psPerNs + bytes / target.bytesPerNs));
    target.freeAtPs = start + serialNs * psPerNs;
    target.busyPs += serialNs * psPerNs;
    state.timeline.busy(link, start, target.freeAtPs, bytes);
    std::uint64_t arrive = start + hopNs * psPerNs;
    ++flow.hop;
    if (flow.hop == flow.route.size())
        state.calendar.schedule(arrive + state.messageDelayPs, EventKind::Deliver, index, 0);
    else
        state.calendar.schedule(arrive, EventKind::Hop, index, 0);
}

} // namespace etsim::net
