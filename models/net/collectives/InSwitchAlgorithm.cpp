#include "models/net/collectives/InSwitchAlgorithm.h"

#include "kernel/Error.h"

#include <string>

namespace etsim::net {

void InSwitchAlgorithm::check(const PhaseShape& shape) const
{
    if (scatterGather) {
        if (shape.type != CollectiveType::ReduceScatter && shape.type != CollectiveType::AllGather)
            throw Error(std::string("the in_switch algorithm listed for reduce-scatter and "
                                    "all-gather phases runs only those, not ") +
                        toString(shape.type) +
                        " (list in_switch under algorithms.all_reduce for an in-switch "
                        "all-reduce phase)");
        return;
    }
    if (shape.type != CollectiveType::AllReduce)
        throw Error(std::string("the in_switch algorithm runs only all_reduce phases, not ") +
                    toString(shape.type) +
                    " (with local_bw_aware a multi-dimension all-reduce reduce-scatters in every "
                    "dimension but the last: use in_switch on the last dimension only, "
                    "optimization: baseline, or algorithms.all_reduce_phases for in-switch "
                    "reduce-scatter and all-gather phases)");
}

std::uint32_t InSwitchAlgorithm::stepCount(const PhaseShape& /*shape*/) const
{
    return 1;
}

void InSwitchAlgorithm::plan(const PhaseShape& shape,
                             std::uint32_t /*member*/,
                             std::uint32_t /*step*/,
                             StepPlan& plan) const
{
    plan.inSwitch = true;
    switch (shape.type) {
    case CollectiveType::ReduceScatter:
        // The switch-side bytes of one shard; the member receives its own shard.
        plan.switchBytes = shape.inputBytes / shape.size;
        plan.receives = 1;
        break;
    case CollectiveType::AllGather:
        // The member's part, multicast; it receives every member's part.
        plan.switchBytes = shape.inputBytes;
        plan.receives = shape.size;
        break;
    default:
        plan.switchBytes = shape.inputBytes;
        plan.receives = 1;
        break;
    }
}

} // namespace etsim::net
