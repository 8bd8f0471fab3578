#pragma once
// Recursive halving and doubling (Rabenseifner) for a power-of-two group, log2(p) = L:
//   reduce-scatter  step s: exchange d / 2^(s+1) with member XOR p / 2^(s+1), reduce it
//   all-gather      step s: exchange d * 2^s with member XOR 2^s
//   all-reduce      the reduce-scatter, then the all-gather of the d/p result (2L steps)
//   all-to-all      L steps of d/2 with member XOR 2^s (Bruck-style)
//   barrier         an all-reduce of 0 bytes
// Broadcast and reduce are not offered (use double_binary_tree, ring or direct).

#include "models/net/collectives/CollectiveAlgorithmIf.h"

namespace etsim::net {

class HalvingDoublingAlgorithm final : public CollectiveAlgorithmIf {
public:
    const char* name() const override { return "halving_doubling"; }
    AlgorithmKind kind() const override { return AlgorithmKind::HalvingDoubling; }
    void check(const PhaseShape& shape) const override;
    std::uint32_t stepCount(const PhaseShape& shape) const override;
    void plan(const PhaseShape& shape,
              std::uint32_t member,
              std::uint32_t step,
              StepPlan& plan) const override;
};

} // namespace etsim::net
