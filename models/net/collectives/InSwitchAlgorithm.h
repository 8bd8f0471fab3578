#pragma once
// In-switch collectives (NVLS / SHARP-like) on a switch dimension. The algorithm has two
// roles, chosen by the list it is named in (docs/network.md):
//
// Whole all-reduce (listed under algorithms.all_reduce): every member streams its d bytes up
// to the switch, which reduces them at line rate and multicasts the result down to every
// member as it is produced. One step; the stream starts once every member of the switch line
// has reached the step (the reduction needs all inputs) and runs at one rate on all uplinks and
// downlinks of the line together, so alone it takes
//   T = l_up + l_down + d / B         (hardware-models.md 3.5: ~ 2 alpha + S / B_up)
// and under contention it is as slow as its most loaded link.
//
// Reduce-scatter and all-gather phases (listed under reduce_scatter, all_gather or
// all_reduce_phases): NCCL's NVLS split. Reduce-scatter of d bytes per member: once every
// member has reached the step, p shard streams start, shard j carrying d/p bytes up every
// member's uplink and down member j's downlink (the switch reduces shard j of all inputs and
// sends it to j); the p shards share each uplink, so alone T = l_up + l_down + d / B and each
// uplink carries d, each downlink d/p. All-gather of d bytes per member: member j's stream
// starts when j reaches the step and carries d up j's uplink and down every member's downlink
// (multicast, the sender included, as NVLS multimem stores do); the p streams share each
// downlink, so alone T = l_up + l_down + p d / B, each uplink carrying d and each downlink p d.
// The switch's reduction and multicast cost nothing beyond the links (no reduction at the
// endpoints either). NCCL's NVLS kernels multicast one slice while other warps reduce-scatter
// the next, and the two use opposite link directions: an in-switch all-gather is admitted by
// its own queue (ownQueue), so a chunk's multicast runs beside later chunks' reduce-scatters.

#include "models/net/collectives/CollectiveAlgorithmIf.h"

namespace etsim::net {

class InSwitchAlgorithm final : public CollectiveAlgorithmIf {
public:
    /// `scatterGather` false: the whole all-reduce role; true: the reduce-scatter and
    /// all-gather role.
    explicit InSwitchAlgorithm(bool scatterGather = false) : scatterGather(scatterGather) {}

    const char* name() const override { return "in_switch"; }
    AlgorithmKind kind() const override { return AlgorithmKind::InSwitch; }
    void check(const PhaseShape& shape) const override;
    std::uint32_t stepCount(const PhaseShape& shape) const override;
    void plan(const PhaseShape& shape,
              std::uint32_t member,
              std::uint32_t step,
              StepPlan& plan) const override;
    void switchStreams(const PhaseShape& shape,
                       std::uint32_t member,
                       std::uint64_t bytes,
                       std::vector<SwitchStream>& streams) const override;
    bool ownQueue(const PhaseShape& shape) const override
    {
        return scatterGather && shape.type == CollectiveType::AllGather;
    }

private:
    bool scatterGather;
};

} // namespace etsim::net
