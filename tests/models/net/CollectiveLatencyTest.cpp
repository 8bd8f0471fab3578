// The collective latency model (docs/network.md, "Latency model"): per-step latency of each
// algorithm, base latency per collective, NIC latency per message crossing a dimension, checked
// to the picosecond against hand-computed formulas.
#include "kernel/Config.h"
#include "models/net/CommEngine.h"
#include "models/net/NetConfig.h"
#include "models/net/collectives/HierarchicalPlan.h"
#include "tests/models/net/NetTestSupport.h"

#include <gtest/gtest.h>

#include <string>

namespace etsim::net {
namespace {

using test::runCollective;

// One dimension of 100 GB/s, 500 ns links, `algorithm` for all-reduces (ring otherwise) and
// `extra` under `collectives:`.
NetConfig latencyDim(const std::string& kind,
                     std::uint32_t size,
                     const std::string& algorithm,
                     const std::string& extra,
                     const std::string& fidelity = "flow")
{
    return test::oneDimConfig(kind, size, "all_reduce: [" + algorithm + "]", fidelity, extra);
}

constexpr std::uint64_t alphaPs = 500'000;
constexpr std::uint64_t stepPs = 3'400'000; // NCCL's NVLink ring step, Simple
constexpr std::uint64_t basePs = 8'400'000; // NCCL's ring base latency, Simple
constexpr const char* ncclRing =
    "  step_latency: {ring: \"3.4 us\"}\n  base_latency: {ring: \"8.4 us\"}\n";

// A ring all-reduce of n members and n x 1,000 B: every step moves 1,000 B (10 ns at 100 GB/s)
// one hop, so T = base + 2(n-1)(alpha + 10 ns + step latency), in both native fidelities.
TEST(CollectiveLatency, SmallRingAllReduceIsBasePlusStepsTimesHopLatency)
{
    for (const char* fidelity : {"flow", "analytical"})
        for (std::uint32_t n : {2U, 4U, 8U, 16U}) {
            std::uint64_t bytes = 1000ULL * n;
            test::CollectiveRun run =
                runCollective(latencyDim("ring", n, "ring", ncclRing, fidelity),
                              CollectiveType::AllReduce,
                              bytes);
            std::uint64_t expected = basePs + 2ULL * (n - 1) * (alphaPs + 10'000 + stepPs);
            EXPECT_EQ(run.record.endPs, expected) << fidelity << " n=" << n;
            for (std::uint64_t done : run.donePs)
                EXPECT_EQ(done, expected) << fidelity << " n=" << n;
            // Latency-dominated: the bytes are 0.2 % of the time at 16 ranks.
            EXPECT_GT(basePs + 2ULL * (n - 1) * (alphaPs + stepPs), 98 * expected / 100);
        }
}

// The latency grows with the rank count exactly as the algorithm's step count says: the time
// with latency minus the time without is base + steps x step latency.
TEST(CollectiveLatency, LatencyGrowsWithRankCountAsTheAlgorithmSays)
{
    struct Case {
        const char* kind;
        const char* algorithm;
        std::uint32_t n;
        std::uint32_t steps;
    };
    for (Case c : {Case{"ring", "ring", 4, 6},
                   Case{"ring", "ring", 8, 14},
                   Case{"ring", "ring", 12, 22},
                   Case{"switch", "halving_doubling", 4, 4},
                   Case{"switch", "halving_doubling", 16, 8},
                   Case{"fully_connected", "direct", 5, 2},
                   Case{"fully_connected", "direct", 9, 2},
                   Case{"switch", "in_switch", 8, 1}}) {
        std::string name(c.algorithm);
        std::string latency = "  step_latency: {" + name + ": \"2 us\"}\n";
        latency += "  base_latency: {" + name + ": \"5 us\"}\n";
        std::uint64_t bytes = 4096ULL * c.n;
        test::CollectiveRun without =
            runCollective(latencyDim(c.kind, c.n, name, ""), CollectiveType::AllReduce, bytes);
        test::CollectiveRun with =
            runCollective(latencyDim(c.kind, c.n, name, latency), CollectiveType::AllReduce, bytes);
        EXPECT_EQ(with.record.endPs - without.record.endPs, 5'000'000 + c.steps * 2'000'000ULL)
            << name << " n=" << c.n;
        EXPECT_EQ(with.messages, without.messages);
    }
}

// Reduce-scatter and all-gather rings pay n-1 steps.
TEST(CollectiveLatency, RingReduceScatterAndAllGatherPayNMinusOneSteps)
{
    for (CollectiveType type : {CollectiveType::ReduceScatter, CollectiveType::AllGather}) {
        test::CollectiveRun without = runCollective(latencyDim("ring", 8, "ring", ""), type, 8000);
        test::CollectiveRun with =
            runCollective(latencyDim("ring", 8, "ring", ncclRing), type, 8000);
        EXPECT_EQ(with.record.endPs - without.record.endPs, basePs + 7 * stepPs);
    }
}

// Zero latency, written or left out, gives today's times: the ring formula of CollectiveTest.
TEST(CollectiveLatency, ZeroLatencyGivesTheTimesWithoutTheModel)
{
    std::uint64_t bytes = 1U << 20;
    std::uint64_t formula = 6 * alphaPs + 15'728'640; // 2(n-1)/n S/B at 100 GB/s, n = 4
    const std::string zeros = "  step_latency: {ring: \"0 ns\", direct: \"0 us\"}\n"
                              "  base_latency: {ring: \"0 ps\"}\n";
    for (const std::string& extra : {std::string(), zeros})
        EXPECT_EQ(
            runCollective(latencyDim("ring", 4, "ring", extra), CollectiveType::AllReduce, bytes)
                .record.endPs,
            formula);
    // Another algorithm's latency does not touch the ring.
    EXPECT_EQ(runCollective(latencyDim("ring",
                                       4,
                                       "ring",
                                       "  step_latency: {direct: \"9 us\"}\n  base_latency: "
                                       "{double_binary_tree: \"9 us\"}\n"),
                            CollectiveType::AllReduce,
                            bytes)
                  .record.endPs,
              formula);
}

// ASTRA-sim's backends have no such latency: the astra fidelities leave the keys out.
TEST(CollectiveLatency, AstraFidelitiesStayAstraSim)
{
    for (const char* fidelity : {"astra_aware", "astra_unaware"}) {
        std::uint64_t without = runCollective(latencyDim("ring", 4, "ring", "", fidelity),
                                              CollectiveType::AllReduce,
                                              1 << 20)
                                    .record.endPs;
        std::uint64_t with = runCollective(latencyDim("ring", 4, "ring", ncclRing, fidelity),
                                           CollectiveType::AllReduce,
                                           1 << 20)
                                 .record.endPs;
        EXPECT_EQ(with, without) << fidelity;
    }
}

// Two dimensions: a ring of 4 (no NIC) times a ring of 2 whose messages cross a NIC of 20 us.
// The hierarchical all-reduce is RS(3 steps) AR(2 steps) AG(3 steps); only the 2 AR messages
// cross the NIC, so the NIC adds 2 x 20 us; the base latency is the largest of the phases'
// algorithms (direct's 8 us over ring's 5 us), paid once.
TEST(CollectiveLatency, NicLatencyPerInterNodeMessageAndOneBaseLatency)
{
    auto config = [](const std::string& nic, const std::string& extra) {
        return loadNetConfigString(
            "topology:\n  kind: multi_dim\n  dims:\n"
            "    - {kind: ring, size: 4, bandwidth: \"100 GB/s\", latency: \"500 ns\"}\n"
            "    - {kind: ring, size: 2, bandwidth: \"50 GB/s\", latency: \"1 us\"" +
            nic +
            "}\ncollectives:\n  pipeline_depth: fixed\n  algorithms: {default: [ring, "
            "direct]}\n" +
            extra);
    };
    std::uint64_t bytes = 16U << 20;
    std::uint64_t without =
        runCollective(config("", ""), CollectiveType::AllReduce, bytes).record.endPs;
    std::uint64_t nic =
        runCollective(config(", nic_latency: \"20 us\"", ""), CollectiveType::AllReduce, bytes)
            .record.endPs;
    // direct all-reduce on 2 members: 2 steps, one message each.
    EXPECT_EQ(nic - without, 2 * 20'000'000ULL);
    std::uint64_t based = runCollective(config("",
                                               "  base_latency: {ring: \"5 us\", direct: "
                                               "\"8 us\", in_switch: \"30 us\"}\n"),
                                        CollectiveType::AllReduce,
                                        bytes)
                              .record.endPs;
    EXPECT_EQ(based - without, 8'000'000ULL);
}

// step_latency and base_latency are looked up by the algorithm's kind: every built-in must
// report the kind its configuration name stands for.
TEST(CollectiveLatency, EveryBuiltInAlgorithmReportsTheKindOfItsName)
{
    AlgorithmSet algorithms;
    for (const auto& entry : algorithmNames) {
        const CollectiveAlgorithmIf& algorithm = algorithms.get(entry.value);
        EXPECT_EQ(algorithm.kind(), entry.value) << entry.name;
        EXPECT_EQ(std::string(algorithm.name()), entry.name);
    }
}

TEST(CollectiveLatency, KeysAreCheckedWithTheirPath)
{
    try {
        latencyDim("ring", 4, "ring", "  step_latency: {rings: \"1 us\"}\n");
        FAIL() << "an unknown algorithm was accepted";
    } catch (const ConfigError& error) {
        EXPECT_NE(std::string(error.what()).find("rings"), std::string::npos) << error.what();
    }
    try {
        latencyDim("ring", 4, "ring", "  base_latency: {ring: \"fast\"}\n");
        FAIL() << "a latency without a unit was accepted";
    } catch (const ConfigError& error) {
        EXPECT_NE(std::string(error.what()).find("base_latency.ring"), std::string::npos)
            << error.what();
    }
    // Written back and read again, the values survive.
    NetConfig config = latencyDim("ring", 4, "ring", ncclRing);
    NetConfig again = loadNetConfigString(YAML::Dump(toYaml(config)));
    EXPECT_EQ(again.stepLatency[0].ps(), stepPs);
    EXPECT_EQ(again.baseLatency[0].ps(), basePs);
}

} // namespace
} // namespace etsim::net
