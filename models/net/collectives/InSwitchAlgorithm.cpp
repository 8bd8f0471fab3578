#include "models/net/collectives/InSwitchAlgorithm.h"

#include "kernel/Error.h"

#include <string>

namespace etsim::net {

void InSwitchAlgorithm::check(const PhaseShape& shape) const
{
    if (shape.type != CollectiveType::AllReduce)
        throw Error(std::string("the in_switch algorithm runs only all_reduce phases, not ") +
                    toString(shape.type) +
                    " (with local_bw_aware a multi-dimension all-reduce reduce-scatters in every "
                    "dimension but the last: use in_switch on the last dimension only, or "
                    "optimization: baseline)");
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
    plan.switchBytes = shape.inputBytes;
    plan.inSwitch = true;
    plan.receives = 1;
}

} // namespace etsim::net
