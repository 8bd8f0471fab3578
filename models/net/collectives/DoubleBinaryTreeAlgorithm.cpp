#include "models/net/collectives/DoubleBinaryTreeAlgorithm.h"

#include "kernel/Error.h"

#include <string>

namespace etsim::net {

void DoubleBinaryTreeAlgorithm::check(const PhaseShape& shape) const
{
    switch (shape.type) {
    case CollectiveType::AllReduce:
    case CollectiveType::Broadcast:
    case CollectiveType::Reduce:
    case CollectiveType::Barrier:
        return;
    default:
        throw Error(std::string("double_binary_tree does not implement ") + toString(shape.type) +
                    "; use ring or direct for it");
    }
}

std::uint32_t DoubleBinaryTreeAlgorithm::stepCount(const PhaseShape& shape) const
{
    return shape.type == CollectiveType::AllReduce || shape.type == CollectiveType::Barrier ? 3 : 2;
}

void DoubleBinaryTreeAlgorithm::plan(const PhaseShape& shape,
                                     std::uint32_t member,
                                     std::uint32_t step,
                                     StepPlan& plan) const
{
    std::uint32_t p = shape.size;
    bool mirrored = shape.type == CollectiveType::AllReduce && shape.variant % 2 == 1;
    // Heap numbering: position j has children 2j+1, 2j+2 and parent (j-1)/2.
    auto memberAt = [&](std::uint32_t position) { return mirrored ? p - 1 - position : position; };
    std::uint32_t position = mirrored ? p - 1 - member : member;
    std::uint32_t children = 0;
    for (std::uint32_t child = 2 * position + 1; child <= 2 * position + 2 && child < p; ++child)
        ++children;
    bool hasParent = position > 0;
    std::uint32_t parent = hasParent ? memberAt((position - 1) / 2) : 0;
    std::uint64_t d = shape.type == CollectiveType::Barrier ? 0 : shape.inputBytes;
    auto sendToChildren = [&](std::uint32_t childStep) {
        for (std::uint32_t child = 2 * position + 1; child <= 2 * position + 2 && child < p;
             ++child)
            plan.addSend(memberAt(child), d, childStep);
    };

    switch (shape.type) {
    case CollectiveType::AllReduce:
    case CollectiveType::Barrier:
        if (step == 0) {
            plan.receives = children;
            plan.reducedBytes = children * d;
        } else if (step == 1) {
            if (hasParent) {
                plan.addSend(parent, d, 0);
                plan.receives = 1;
            }
        } else {
            sendToChildren(1);
        }
        break;
    case CollectiveType::Reduce:
        if (step == 0) {
            plan.receives = children;
            plan.reducedBytes = children * d;
        } else if (hasParent) {
            plan.addSend(parent, d, 0);
        }
        break;
    case CollectiveType::Broadcast:
        if (step == 0)
            plan.receives = hasParent ? 1 : 0;
        else
            sendToChildren(0);
        break;
    default:
        break;
    }
}

} // namespace etsim::net
