#include "models/accel/residency/ReplacementPolicyIf.h"

#include "models/accel/residency/FifoPolicy.h"
#include "models/accel/residency/LruPolicy.h"

namespace etsim::accel {

std::unique_ptr<ReplacementPolicyIf> makeReplacementPolicy(SramPolicy policy)
{
    switch (policy) {
    case SramPolicy::Lru:
        return std::make_unique<LruPolicy>();
    case SramPolicy::Fifo:
        return std::make_unique<FifoPolicy>();
    case SramPolicy::Legacy:
        return nullptr;
    }
    return nullptr;
}

} // namespace etsim::accel
