#include "models/net/collectives/DirectAlgorithm.h"

#include "kernel/Error.h"

#include <string>

namespace etsim::net {

void DirectAlgorithm::check(const PhaseShape& shape) const
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
        throw Error(std::string("the direct algorithm does not implement ") + toString(shape.type));
    }
}

std::uint32_t DirectAlgorithm::stepCount(const PhaseShape& shape) const
{
    return shape.type == CollectiveType::AllReduce || shape.type == CollectiveType::Barrier ? 2 : 1;
}

void DirectAlgorithm::plan(const PhaseShape& shape,
                           std::uint32_t member,
                           std::uint32_t step,
                           StepPlan& plan) const
{
    std::uint32_t p = shape.size;
    std::uint64_t part = shape.inputBytes / p;
    auto toAll = [&](std::uint64_t bytes) {
        for (std::uint32_t offset = 1; offset < p; ++offset)
            plan.addSend((member + offset) % p, bytes, step);
        plan.receives = p - 1;
    };
    switch (shape.type) {
    case CollectiveType::AllReduce:
        toAll(part);
        plan.reducedBytes = step == 0 ? (p - 1) * part : 0;
        break;
    case CollectiveType::Barrier:
        toAll(0);
        break;
    case CollectiveType::ReduceScatter:
        toAll(part);
        plan.reducedBytes = (p - 1) * part;
        break;
    case CollectiveType::AllGather:
        toAll(shape.inputBytes);
        break;
    case CollectiveType::AllToAll:
        toAll(part);
        break;
    case CollectiveType::Broadcast:
        if (member == 0)
            for (std::uint32_t peer = 1; peer < p; ++peer)
                plan.addSend(peer, shape.inputBytes, 0);
        else
            plan.receives = 1;
        break;
    case CollectiveType::Reduce:
        if (member == 0) {
            plan.receives = p - 1;
            plan.reducedBytes = (p - 1) * shape.inputBytes;
        } else {
            plan.addSend(0, shape.inputBytes, 0);
        }
        break;
    default:
        break;
    }
}

} // namespace etsim::net
