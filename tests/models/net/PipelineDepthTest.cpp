// collectives/PipelineDepth.h and `collectives.pipeline_depth`: which chunk count a
// collective of several phases runs as, and that `auto` runs exactly that many chunks.
#include "models/net/collectives/PipelineDepth.h"

#include "tests/models/net/NetTestSupport.h"

#include <gtest/gtest.h>

#include <string>

namespace etsim::net {
namespace {

using test::runCollective;

// Switch(4) x Switch(2), all-reduce of 64 MB, local_bw_aware, ring in both dimensions, links of
// 500 ns; 100 GB/s in the node, 25 GB/s across, so the inter-node phase has the least
// bandwidth but the node dimension carries two phases:
//   RS on dim 0: a member sends 3/4 S = 48 MB: 480 us; 3 steps of 2 links: 3 us a chunk
//   AR on dim 1 of S/4: a member sends 16 MB at 25 GB/s: 640 us; 2 steps of 2 links: 2 us
//   AG on dim 0: as RS, 480 us and 3 us
// With 2 chunks in flight, T(K) = max(960 + ceil(K/2) 6, 640 + ceil(K/2) 2) + 640 / K (us):
// T(4) = 1132, T(8) = 1064, T(16) = 1048, T(32) = 1076, T(64) = 1162, so 16 chunks.
std::vector<PhaseCost> twoDimCosts()
{
    return {PhaseCost{0, 480e-6, 3e-6}, PhaseCost{1, 640e-6, 2e-6}, PhaseCost{0, 480e-6, 3e-6}};
}

std::string twoDimYaml(const std::string& fidelity, const std::string& collectives)
{
    return "fidelity: " + fidelity + R"(
topology:
  kind: multi_dim
  dims:
    - {kind: switch, size: 4, bandwidth: "100 GB/s", latency: "500 ns"}
    - {kind: switch, size: 2, bandwidth: "25 GB/s", latency: "500 ns"}
collectives:
  algorithms: {default: [ring, ring]}
  active_chunks: 2
)" + collectives;
}

constexpr std::uint64_t bytes = 64'000'000;

TEST(PipelineDepth, EstimateIsTheBusiestDimensionPlusOneChunkOfTheOthers)
{
    const std::vector<PhaseCost> costs = twoDimCosts();
    EXPECT_NEAR(pipelineSeconds(costs, 4, 2), 1132e-6, 1e-12);
    EXPECT_NEAR(pipelineSeconds(costs, 8, 2), 1064e-6, 1e-12);
    EXPECT_NEAR(pipelineSeconds(costs, 16, 2), 1048e-6, 1e-12);
    EXPECT_NEAR(pipelineSeconds(costs, 32, 2), 1076e-6, 1e-12);
    // Rounds are whole: 5 chunks with 2 in flight pay the latency 3 times.
    EXPECT_NEAR(pipelineSeconds(costs, 5, 2), (960 + 3 * 6 + 640.0 / 5) * 1e-6, 1e-12);
}

TEST(PipelineDepth, TakesTheShortestEstimateAmongMultiplesOfChunks)
{
    EXPECT_EQ(pipelineDepth(twoDimCosts(), 4, 2, 1024), 16U);
    // The limit caps the depth; a tie keeps the shallower pipeline.
    EXPECT_EQ(pipelineDepth(twoDimCosts(), 4, 2, 8), 8U);
    EXPECT_EQ(pipelineDepth({PhaseCost{0, 1e-3, 0}, PhaseCost{1, 0, 0}}, 4, 2, 1024), 4U);
    // Latency that outweighs the fill keeps `chunks`.
    EXPECT_EQ(pipelineDepth({PhaseCost{0, 1e-3, 1e-3}, PhaseCost{1, 1e-3, 1e-3}}, 4, 2, 1024), 4U);
    // One dimension has no fill to save: `chunks`, however large the collective.
    EXPECT_EQ(pipelineDepth({PhaseCost{0, 1.0, 0}, PhaseCost{0, 1.0, 0}}, 4, 2, 1024), 4U);
    EXPECT_EQ(pipelineDepth({}, 4, 2, 1024), 4U);
}

// `auto` runs the collective exactly as `chunks: 16` would, and that is faster than 4.
TEST(PipelineDepth, AutoRunsTheChosenChunkCount)
{
    for (const char* fidelity : {"flow", "analytical"}) {
        test::CollectiveRun deep = runCollective(
            loadNetConfigString(twoDimYaml(fidelity, "  chunks: 4\n  pipeline_depth: auto\n")),
            CollectiveType::AllReduce,
            bytes);
        test::CollectiveRun sixteen = runCollective(
            loadNetConfigString(twoDimYaml(fidelity, "  chunks: 16\n  pipeline_depth: fixed\n")),
            CollectiveType::AllReduce,
            bytes);
        test::CollectiveRun four = runCollective(
            loadNetConfigString(twoDimYaml(fidelity, "  chunks: 4\n  pipeline_depth: fixed\n")),
            CollectiveType::AllReduce,
            bytes);
        EXPECT_EQ(deep.record.endPs, sixteen.record.endPs) << fidelity;
        EXPECT_EQ(deep.donePs, sixteen.donePs) << fidelity;
        EXPECT_EQ(deep.messages, sixteen.messages) << fidelity;
        EXPECT_EQ(four.messages * 4, sixteen.messages) << fidelity;
        EXPECT_LT(deep.record.endPs, four.record.endPs) << fidelity;
    }
}

// Where a deeper pipeline does not pay, `auto` changes nothing: a small collective (latency
// outweighs the fill), a collective of one dimension, and the astra fidelities, which run
// ASTRA-sim's fixed chunks.
TEST(PipelineDepth, AutoKeepsChunksWhereDeeperDoesNotPay)
{
    auto both = [](const std::string& yaml, std::uint64_t size) {
        std::uint64_t automatic =
            runCollective(loadNetConfigString(yaml + "  pipeline_depth: auto\n"),
                          CollectiveType::AllReduce,
                          size)
                .record.endPs;
        std::uint64_t fixed = runCollective(loadNetConfigString(yaml + "  pipeline_depth: fixed\n"),
                                            CollectiveType::AllReduce,
                                            size)
                                  .record.endPs;
        return std::pair{automatic, fixed};
    };
    auto [smallAuto, smallFixed] = both(twoDimYaml("flow", "  chunks: 4\n"), 64'000);
    EXPECT_EQ(smallAuto, smallFixed);
    auto [oneAuto, oneFixed] =
        both(test::oneDimConfigYaml(
                 "switch", 8, "default: [ring]", "flow", "  chunks: 4\n  active_chunks: 2\n"),
             bytes);
    EXPECT_EQ(oneAuto, oneFixed);
    for (const char* fidelity : {"astra_aware", "astra_unaware"}) {
        auto [astraAuto, astraFixed] = both(twoDimYaml(fidelity, "  chunks: 4\n"), bytes);
        EXPECT_EQ(astraAuto, astraFixed) << fidelity;
    }
}

} // namespace
} // namespace etsim::net
