#include "models/net/fidelity/AstraUnawareFidelity.h"

#include "kernel/Error.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace etsim::net {

void AstraUnawareFidelity::start(std::uint32_t index)
{
    const Flow& flow = state.flows[index];
    std::uint64_t now = state.calendar.now();
    const double bytes = static_cast<double>(flow.bytes);
    double latencyNs = static_cast<double>(flow.latencyPs - state.messageDelayPs) / psPerNs;
    double bottleneckNs = std::numeric_limits<double>::infinity();
    for (std::uint32_t link : flow.route)
        bottleneckNs = std::min(bottleneckNs, state.links[link].bytesPerNs);
    auto delayNs = static_cast<std::uint64_t>(std::floor(latencyNs + bytes / bottleneckNs));
    for (std::uint32_t link : flow.route) {
        LinkState& target = state.links[link];
        std::uint64_t busy =
            psPerNs * static_cast<std::uint64_t>(std::floor(bytes / target.bytesPerNs));
        target.busyPs += busy;
        state.timeline.busy(link, now, now + busy, bytes);
    }
    state.calendar.schedule(
        now + delayNs * psPerNs + state.messageDelayPs, EventKind::Deliver, index, 0);
}

void AstraUnawareFidelity::handle(const CalendarEvent& /*event*/)
{
    throw Error("NetworkCore: internal: the astra_unaware fidelity schedules no link events");
}

} // namespace etsim::net
