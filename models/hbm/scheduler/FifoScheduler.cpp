#include "models/hbm/scheduler/FifoScheduler.h"

namespace etsim::hbm {

std::size_t FifoScheduler::pick(const std::vector<Candidate>& ready) const
{
    std::size_t oldest = 0;
    for (std::size_t i = 1; i < ready.size(); ++i)
        if (ready[i].sequence < ready[oldest].sequence)
            oldest = i;
    return oldest;
}

} // namespace etsim::hbm
