#include "models/hbm/scheduler/SchedulerMux.h"

#include <algorithm>

namespace etsim::hbm {

void SchedulerMux::offer(std::uint64_t cycle,
                         const std::vector<Candidate>& candidates,
                         const SchedulerIf& scheduler,
                         std::uint64_t refreshWake,
                         std::vector<Candidate>& ready,
                         Offer& out) const
{
    for (const Candidate& c : candidates) {
        if (c.slot != refreshSlot || c.ready > cycle)
            continue;
        out.hasRas = true;
        out.refresh = true;
        out.ras = c;
        return;
    }

    ready.clear();
    std::uint64_t earliest = neverCycle;
    for (const Candidate& c : candidates) {
        earliest = std::min(earliest, c.ready);
        if (c.slot != refreshSlot && c.ready <= cycle)
            ready.push_back(c);
    }
    if (ready.empty()) {
        earliest = std::min(earliest, refreshWake);
        out.next = earliest == neverCycle ? neverCycle : std::max(earliest, cycle + 1);
        return;
    }
    const Candidate& chosen = ready[scheduler.pick(ready)];
    if (isRowCommand(chosen.command)) {
        out.hasRas = true;
        out.ras = chosen;
    } else {
        out.hasCas = true;
        out.cas = chosen;
    }
}

} // namespace etsim::hbm
