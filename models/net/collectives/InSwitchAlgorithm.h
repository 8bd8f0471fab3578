#pragma once
// In-switch reduction (NVLS / SHARP-like) for all-reduce on a switch dimension: every member
// streams its d bytes up to the switch, which reduces them at line rate and multicasts the
// result down to every member as it is produced. One step; the stream starts once every member
// of the switch line has reached the step (the reduction needs all inputs) and runs at one rate
// on all uplinks and downlinks of the line together, so alone it takes
//   T = l_up + l_down + d / B         (hardware-models.md 3.5: ~ 2 alpha + S / B_up)
// and under contention it is as slow as its most loaded link. The switch's reduction and
// multicast cost nothing beyond the links (no reduction at the endpoints either).

#include "models/net/collectives/CollectiveAlgorithmIf.h"

namespace etsim::net {

class InSwitchAlgorithm final : public CollectiveAlgorithmIf {
public:
    const char* name() const override { return "in_switch"; }
    void check(const PhaseShape& shape) const override;
    std::uint32_t stepCount(const PhaseShape& shape) const override;
    void plan(const PhaseShape& shape,
              std::uint32_t member,
              std::uint32_t step,
              StepPlan& plan) const override;
};

} // namespace etsim::net
