#include "models/net/collectives/HalvingDoublingAlgorithm.h"

#include "kernel/Error.h"

#include <string>

namespace etsim::net {

namespace {

std::uint32_t log2Of(std::uint32_t value)
{
    std::uint32_t bits = 0;
    while ((1U << bits) < value)
        ++bits;
    return bits;
}

} // namespace

void HalvingDoublingAlgorithm::check(const PhaseShape& shape) const
{
    if (shape.size == 0 || (shape.size & (shape.size - 1)) != 0)
        throw Error("halving_doubling needs a power-of-two group, but this one has " +
                    std::to_string(shape.size) + " members; use ring or direct");
    switch (shape.type) {
    case CollectiveType::AllReduce:
    case CollectiveType::ReduceScatter:
    case CollectiveType::AllGather:
    case CollectiveType::AllToAll:
    case CollectiveType::Barrier:
        return;
    default:
        throw Error(std::string("halving_doubling does not implement ") + toString(shape.type) +
                    "; use double_binary_tree, ring or direct for it");
    }
}

std::uint32_t HalvingDoublingAlgorithm::stepCount(const PhaseShape& shape) const
{
    std::uint32_t levels = log2Of(shape.size);
    return shape.type == CollectiveType::AllReduce || shape.type == CollectiveType::Barrier
               ? 2 * levels
               : levels;
}

void HalvingDoublingAlgorithm::plan(const PhaseShape& shape,
                                    std::uint32_t member,
                                    std::uint32_t step,
                                    StepPlan& plan) const
{
    std::uint32_t p = shape.size;
    std::uint32_t levels = log2Of(p);
    std::uint64_t d = shape.type == CollectiveType::Barrier ? 0 : shape.inputBytes;
    plan.receives = 1;
    bool halving =
        shape.type == CollectiveType::ReduceScatter ||
        ((shape.type == CollectiveType::AllReduce || shape.type == CollectiveType::Barrier) &&
         step < levels);
    if (halving) {
        std::uint32_t distance = p >> (step + 1);
        std::uint64_t bytes = d >> (step + 1);
        plan.addSend(member ^ distance, bytes, step);
        plan.reducedBytes = bytes;
        return;
    }
    if (shape.type == CollectiveType::AllToAll) {
        plan.addSend(member ^ (1U << step), d / 2, step);
        return;
    }
    // Doubling: for all-reduce the gathered part starts at d/p.
    std::uint32_t level = shape.type == CollectiveType::AllGather ? step : step - levels;
    std::uint64_t base = shape.type == CollectiveType::AllGather ? d : d / p;
    plan.addSend(member ^ (1U << level), base << level, step);
}

} // namespace etsim::net
