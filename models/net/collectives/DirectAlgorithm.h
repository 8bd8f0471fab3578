#pragma once
// Direct (one-shot): every member talks to every other member at once.
//   all-reduce      step 0: d/p to each peer (reduce-scatter), step 1: d/p to each (all-gather)
//   reduce-scatter  one step of d/p to each peer;  all-gather: one step of d to each peer
//   all-to-all      one step of d/p to each peer
//   broadcast       member 0 sends d to each;  reduce: each sends d to member 0
//   barrier         an all-reduce of 0 bytes
// Peers are visited starting after the sender, so the p-1 flows of one member start in a
// rotated order and the first link each crosses differs.

#include "models/net/collectives/CollectiveAlgorithmIf.h"

namespace etsim::net {

class DirectAlgorithm final : public CollectiveAlgorithmIf {
public:
    const char* name() const override { return "direct"; }
    AlgorithmKind kind() const override { return AlgorithmKind::Direct; }
    void check(const PhaseShape& shape) const override;
    std::uint32_t stepCount(const PhaseShape& shape) const override;
    void plan(const PhaseShape& shape,
              std::uint32_t member,
              std::uint32_t step,
              StepPlan& plan) const override;
};

} // namespace etsim::net
