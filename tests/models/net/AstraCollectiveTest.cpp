// ASTRA-sim's analytical collective timing, checked against the worked examples of
// shared/spec/astra-sim-semantics.md and against hand computations.
#include "models/net/astra/AstraCollective.h"

#include "kernel/Error.h"

#include <gtest/gtest.h>

#include <vector>

namespace etsim::models::net::astra {
namespace {

constexpr double gibPerNs(double gbPerSecondAsWritten)
{
    return gbPerSecondAsWritten * 1073741824.0 / 1e9;
}

Dim ring(std::uint32_t npus, double gb, double latencyNs)
{
    return Dim{DimTopology::Ring, npus, gibPerNs(gb), latencyNs};
}

SystemParams ring4Chunks()
{
    SystemParams system;
    system.endpointDelayNs = 10;
    system.localMemBytesPerNs = 1600.0;
    system.datasetSplits = 4;
    system.activeChunks = 1;
    system.localBwAware = true;
    return system;
}

TEST(AstraCollective, MessageAndReductionCosts)
{
    // delta = floor(500 + 65536 / 53.687) = 1720; rho = 3 * floor(65536 / 1600) = 120.
    EXPECT_EQ(messageNs(ring(4, 50, 500), 65536), 1720u);
    EXPECT_EQ(reductionNs(ring4Chunks(), 65536), 120u);
    // Through a switch a message crosses two hops of latency: floor(2 * 936.25 + 1e6 / 429.5).
    Dim sw{DimTopology::Switch, 8, gibPerNs(400), 936.25};
    EXPECT_EQ(messageNs(sw, 1000000), 4200u); // 1872.5 + 2328.3 = 4200.8
    EXPECT_EQ(hops(DimTopology::FullyConnected), 1u);
}

TEST(AstraCollective, WorkedExampleRingAllReduceOfOneMebibyte)
{
    // Spec section 3: 1 MiB all-reduce, Ring(4) 50 GB/s 500 ns, Ring_4chunks: 43,000 ns.
    CollectivePlan plan =
        planCollective(Collective::AllReduce, 1 << 20, {ring(4, 50, 500)}, 4, ring4Chunks());
    EXPECT_EQ(plan.chunkBytes, 262144u);
    EXPECT_EQ(plan.chunks, 4u);
    ASSERT_EQ(plan.phases.size(), 1u);
    EXPECT_EQ(plan.phases[0].durationNs, 10750u); // 10 + 6 * 1730 + 3 * 120
    EXPECT_EQ(plan.finishNs, 43000u);
}

TEST(AstraCollective, ActiveChunksRunInWaves)
{
    SystemParams system = ring4Chunks();
    system.activeChunks = 2;
    CollectivePlan plan =
        planCollective(Collective::AllReduce, 1 << 20, {ring(4, 50, 500)}, 4, system);
    EXPECT_EQ(plan.finishNs, 2u * 10750u); // ceil(4 / 2) waves of T_chunk
    system.activeChunks = 3;
    EXPECT_EQ(
        planCollective(Collective::AllReduce, 1 << 20, {ring(4, 50, 500)}, 4, system).finishNs,
        2u * 10750u); // ceil(4 / 3) = 2 waves too
}

TEST(AstraCollective, WorkedExampleThreeDimensionalFlowShop)
{
    // Spec section 3.5: 64 NPUs, Ring(2) x FC(8) x Switch(4), 1 MiB, phase times
    // 923 / 4854 / 24544 / 4644 / 680 ns, four chunks, one active chunk per dimension:
    // 923 + 4854 + 4 * 24544 + 4644 + 680 = 109,277 ns.
    EXPECT_EQ(flowShopFinishNs({0, 1, 2, 1, 0}, {923, 4854, 24544, 4644, 680}, 4, 1), 109277u);
    // One chunk is the plain sum; two active chunks per dimension run two chunks abreast, so
    // the bottleneck dimension is crossed in two waves instead of four.
    EXPECT_EQ(flowShopFinishNs({0, 1, 2, 1, 0}, {923, 4854, 24544, 4644, 680}, 1, 1), 35645u);
    EXPECT_EQ(flowShopFinishNs({0, 1, 2, 1, 0}, {923, 4854, 24544, 4644, 680}, 4, 2),
              923u + 4854u + 2u * 24544u + 4644u + 680u);
}

TEST(AstraCollective, LocalBwAwareAllReducePhasesShrinkAndGrow)
{
    std::vector<Dim> dims{ring(2, 100, 100),
                          Dim{DimTopology::FullyConnected, 8, gibPerNs(200), 200},
                          Dim{DimTopology::Switch, 4, gibPerNs(50), 500}};
    CollectivePlan plan = planCollective(Collective::AllReduce, 1 << 20, dims, 64, ring4Chunks());
    ASSERT_EQ(plan.phases.size(), 5u);
    const Collective expectedTypes[] = {Collective::ReduceScatter,
                                        Collective::ReduceScatter,
                                        Collective::AllReduce,
                                        Collective::AllGather,
                                        Collective::AllGather};
    const std::size_t expectedDims[] = {0, 1, 2, 1, 0};
    const std::uint64_t expectedInputs[] = {262144, 131072, 16384, 16384, 131072};
    for (std::size_t i = 0; i < 5; ++i) {
        EXPECT_EQ(plan.phases[i].type, expectedTypes[i]) << i;
        EXPECT_EQ(plan.phases[i].dim, expectedDims[i]) << i;
        EXPECT_EQ(plan.phases[i].inputBytes, expectedInputs[i]) << i;
    }
    EXPECT_EQ(plan.phases[4].outputBytes, 262144u);
    // RS on Ring(2): e + 1 * (delta(131072) + e + rho(131072)).
    const std::uint64_t delta = messageNs(dims[0], 131072);
    EXPECT_EQ(plan.phases[0].durationNs, 10 + delta + 10 + reductionNs(ring4Chunks(), 131072));
}

TEST(AstraCollective, AllGatherSendsTheWholeInputEachStep)
{
    SystemParams system = ring4Chunks();
    system.datasetSplits = 1;
    CollectivePlan plan =
        planCollective(Collective::AllGather, 1000, {ring(4, 50, 500)}, 4, system);
    ASSERT_EQ(plan.phases.size(), 1u);
    // e + (p - 1) * (delta(d) + e) with d = 1000: delta = floor(500 + 18.6) = 518.
    EXPECT_EQ(plan.phases[0].durationNs, 10u + 3u * (518u + 10u));
    EXPECT_EQ(plan.phases[0].outputBytes, 4000u);
    EXPECT_EQ(plan.finishNs, 1594u);
}

TEST(AstraCollective, AllToAllRingIsSequentialNeighbourMessages)
{
    SystemParams system = ring4Chunks();
    system.datasetSplits = 1;
    CollectivePlan plan = planCollective(Collective::AllToAll, 4000, {ring(4, 50, 500)}, 4, system);
    // p(p-1)/2 = 6 messages of 1000 B: e + 6 * (delta(1000) + e).
    EXPECT_EQ(plan.finishNs, 10u + 6u * (518u + 10u));
}

TEST(AstraCollective, SmallCollectivesAreInflatedToTheNpuCount)
{
    SystemParams system = ring4Chunks(); // 4 splits
    CollectivePlan plan = planCollective(Collective::AllReduce, 16, {ring(8, 50, 500)}, 8, system);
    EXPECT_EQ(plan.chunkBytes, 8u);      // floor(16 / 4) = 4 < 8 NPUs -> 8
    EXPECT_EQ(plan.effectiveBytes, 32u); // S raised to 4 * 8
    EXPECT_EQ(plan.chunks, 4u);
    // All-gather is exempt.
    EXPECT_EQ(planCollective(Collective::AllGather, 16, {ring(8, 50, 500)}, 8, system).chunkBytes,
              4u);
}

TEST(AstraCollective, DimensionsWithOneNpuAreSkipped)
{
    std::vector<Dim> dims{ring(1, 50, 500), ring(4, 50, 500), ring(1, 50, 500)};
    CollectivePlan plan = planCollective(Collective::AllReduce, 1 << 20, dims, 4, ring4Chunks());
    ASSERT_EQ(plan.phases.size(), 1u);
    EXPECT_EQ(plan.phases[0].dim, 1u);
    EXPECT_EQ(plan.finishNs, 43000u);
    EXPECT_EQ(
        planCollective(Collective::AllReduce, 64, {ring(1, 50, 500)}, 1, ring4Chunks()).finishNs,
        0u);
}

TEST(AstraCollective, BadParametersAreErrors)
{
    SystemParams system = ring4Chunks();
    system.datasetSplits = 0;
    EXPECT_THROW(planCollective(Collective::AllReduce, 64, {ring(4, 50, 500)}, 4, system), Error);
    EXPECT_THROW(planCollective(Collective::AllReduce, 0, {ring(4, 50, 500)}, 4, ring4Chunks()),
                 Error);
}

} // namespace
} // namespace etsim::models::net::astra
