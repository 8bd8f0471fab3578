#include "models/hbm/scheduler/FrFcfsScheduler.h"

namespace etsim::hbm {

std::size_t FrFcfsScheduler::pick(const std::vector<Candidate>& ready) const
{
    std::size_t best = 0;
    for (std::size_t i = 1; i < ready.size(); ++i) {
        const Candidate& c = ready[i];
        const Candidate& b = ready[best];
        if (c.rowHit != b.rowHit ? c.rowHit : c.sequence < b.sequence)
            best = i;
    }
    return best;
}

} // namespace etsim::hbm
