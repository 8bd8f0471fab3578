#pragma once
// Ring: every step sends one message to the next member (previous when reversed) and waits
// for one from the other neighbour, as NCCL's ring and ASTRA-sim's `ring` implementation do.
//   all-reduce      2(p-1) steps of d/p, the first p-1 reduce
//   reduce-scatter  p-1 steps of d/p, all reduce
//   all-gather      p-1 steps of d (d = the member's contribution)
//   all-to-all      p(p-1)/2 steps of d/p (ASTRA-sim's ring all-to-all)
//   broadcast       a chain from member 0; reduce a chain towards member 0
//   barrier         an all-reduce of 0 bytes

#include "models/net/collectives/CollectiveAlgorithmIf.h"

namespace etsim::net {

class RingAlgorithm final : public CollectiveAlgorithmIf {
public:
    const char* name() const override { return "ring"; }
    AlgorithmKind kind() const override { return AlgorithmKind::Ring; }
    void check(const PhaseShape& shape) const override;
    std::uint32_t stepCount(const PhaseShape& shape) const override;
    void plan(const PhaseShape& shape,
              std::uint32_t member,
              std::uint32_t step,
              StepPlan& plan) const override;
};

} // namespace etsim::net
