#pragma once
// Double binary tree (as NCCL's tree algorithm): two binary trees over the members, the
// second the mirror image of the first, so a member that is a leaf in one is mostly an inner
// node in the other. Chunk k uses tree k % 2, so a collective split into two or more chunks
// keeps both trees busy (one chunk uses only the first tree).
//   all-reduce  step 0: receive from the children and reduce; step 1: send up and receive the
//               result from the parent; step 2: send the result to the children
//   reduce      the first half (towards member 0, tree 0 only)
//   broadcast   the second half (from member 0, tree 0 only)
//   barrier     an all-reduce of 0 bytes
// Reduce-scatter, all-gather and all-to-all are not offered (use ring or direct).

#include "models/net/collectives/CollectiveAlgorithmIf.h"

namespace etsim::net {

class DoubleBinaryTreeAlgorithm final : public CollectiveAlgorithmIf {
public:
    const char* name() const override { return "double_binary_tree"; }
    AlgorithmKind kind() const override { return AlgorithmKind::DoubleBinaryTree; }
    void check(const PhaseShape& shape) const override;
    std::uint32_t stepCount(const PhaseShape& shape) const override;
    void plan(const PhaseShape& shape,
              std::uint32_t member,
              std::uint32_t step,
              StepPlan& plan) const override;
};

} // namespace etsim::net
