#include "models/net/collectives/RingAlgorithm.h"

#include "kernel/Error.h"

#include <string>

namespace etsim::net {

std::uint64_t phaseOutputBytes(const PhaseShape& shape)
{
    switch (shape.type) {
    case CollectiveType::ReduceScatter:
        return shape.inputBytes / shape.size;
    case CollectiveType::AllGather:
        return shape.inputBytes * shape.size;
    default:
        return shape.inputBytes;
    }
}

void RingAlgorithm::check(const PhaseShape& shape) const
{
    switch (shape.type) {
    case CollectiveType::AllReduce:
    case CollectiveType::ReduceScatter:
    case CollectiveType::AllGather:
    case CollectiveType::AllToAll:
    case CollectiveType::Broadcast:
    case CollectiveType::Reduce:
    case CollectiveType::Barrier:
        return;
    default:
        throw Error(std::string("the ring algorithm does not implement ") + toString(shape.type));
    }
}

std::uint32_t RingAlgorithm::stepCount(const PhaseShape& shape) const
{
    std::uint32_t p = shape.size;
    switch (shape.type) {
    case CollectiveType::AllReduce:
    case CollectiveType::Barrier:
        return 2 * (p - 1);
    case CollectiveType::ReduceScatter:
    case CollectiveType::AllGather:
        return p - 1;
    case CollectiveType::AllToAll:
        return p * (p - 1) / 2;
    case CollectiveType::Broadcast:
    case CollectiveType::Reduce:
        return 2;
    default:
        return 0;
    }
}

void RingAlgorithm::plan(const PhaseShape& shape,
                         std::uint32_t member,
                         std::uint32_t step,
                         StepPlan& plan) const
{
    std::uint32_t p = shape.size;
    // (Comparisons rather than `% p`: this runs once per message.)
    std::uint32_t next =
        shape.reverse ? (member == 0 ? p - 1 : member - 1) : (member + 1 == p ? 0 : member + 1);
    std::uint64_t part = shape.inputBytes / p;
    switch (shape.type) {
    case CollectiveType::AllReduce:
    case CollectiveType::Barrier: {
        std::uint64_t bytes = shape.type == CollectiveType::Barrier ? 0 : part;
        plan.addSend(next, bytes, step);
        plan.receives = 1;
        plan.reducedBytes = step < p - 1 ? bytes : 0;
        break;
    }
    case CollectiveType::ReduceScatter:
        plan.addSend(next, part, step);
        plan.receives = 1;
        plan.reducedBytes = part;
        break;
    case CollectiveType::AllGather:
        plan.addSend(next, shape.inputBytes, step);
        plan.receives = 1;
        break;
    case CollectiveType::AllToAll:
        plan.addSend(next, part, step);
        plan.receives = 1;
        break;
    case CollectiveType::Broadcast:
        // Step 0: receive from the previous member (the root receives nothing); step 1: pass on.
        if (step == 0)
            plan.receives = member == 0 ? 0 : 1;
        else if (member + 1 < p)
            plan.addSend(member + 1, shape.inputBytes, 0);
        break;
    case CollectiveType::Reduce:
        if (step == 0) {
            plan.receives = member + 1 < p ? 1 : 0;
            plan.reducedBytes = plan.receives * shape.inputBytes;
        } else if (member > 0) {
            plan.addSend(member - 1, shape.inputBytes, 0);
        }
        break;
    default:
        break;
    }
}

} // namespace etsim::net
