#include "models/net/fidelity/AnalyticalFidelity.h"

#include "kernel/Error.h"

namespace etsim::net {

void AnalyticalFidelity::start(std::uint32_t index)
{
    const Flow& flow = state.flows[index];
    std::uint64_t now = state.calendar.now();
    std::uint64_t serialPs = holdLinksPs(state, flow, now);
    state.calendar.schedule(now + flow.latencyPs + serialPs, EventKind::Deliver, index, 0);
}

void AnalyticalFidelity::handle(const CalendarEvent& /*event*/)
{
    throw Error("NetworkCore: internal: the analytical fidelity schedules no link events");
}

} // namespace etsim::net
