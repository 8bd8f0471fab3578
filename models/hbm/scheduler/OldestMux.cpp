#include "models/hbm/scheduler/OldestMux.h"

#include <algorithm>

namespace etsim::hbm {

void OldestMux::offer(std::uint64_t cycle,
                      const std::vector<Candidate>& candidates,
                      const SchedulerIf& /*scheduler*/,
                      std::uint64_t refreshWake,
                      std::vector<Candidate>& /*scratch*/,
                      Offer& out) const
{
    std::uint64_t later = neverCycle;
    for (Candidate c : candidates) {
        if (c.slot == refreshSlot)
            c.sequence = 0;
        if (c.ready > cycle)
            later = std::min(later, c.ready);
        // DRAMSys's checker answers "now" for a command legal since earlier: the mux compares
        // no older readiness than the current cycle.
        c.ready = std::max(c.ready, cycle);
        bool row = isRowCommand(c.command);
        bool& has = row ? out.hasRas : out.hasCas;
        Candidate& best = row ? out.ras : out.cas;
        if (!has || finishesFirst(c, best)) {
            best = c;
            has = true;
        }
    }
    later = std::min(later, refreshWake);
    out.next = later == neverCycle ? cycle + 1 : later;
}

} // namespace etsim::hbm
