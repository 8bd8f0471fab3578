// In-switch reduce-scatter and multicast all-gather (NCCL NVLS), alone and as the node phases
// of a hierarchical all-reduce, with hand-computed times; and every configuration error of the
// all_reduce_phases key and of in_switch outside all_reduce.
#include "kernel/Config.h"
#include "kernel/Error.h"
#include "models/net/CommEngine.h"
#include "models/net/NetConfig.h"
#include "models/net/collectives/InSwitchAlgorithm.h"
#include "models/net/topology/MultiDimTopology.h"
#include "tests/models/net/NetTestSupport.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace etsim::net {
namespace {

using test::collectiveNode;
using test::runCollective;

// Every link: 100 GB/s = 0.1 B/ps, 500 ns.
constexpr std::uint64_t alphaPs = 500000;
constexpr double bytesPerPs = 0.1;

// One switch of n members, flow fidelity, one chunk; `algorithms` is the algorithms map.
NetConfig oneSwitch(std::uint32_t n, const std::string& algorithms)
{
    return loadNetConfigString(
        "topology:\n  kind: multi_dim\n  dims:\n    - {kind: switch, size: " + std::to_string(n) +
        ", bandwidth: \"100 GB/s\", latency: \"500 ns\"}\n"
        "collectives:\n  algorithms: " +
        algorithms + "\n");
}

// Wire bytes that crossed each rank's uplink (rank -> switch) and downlink (switch -> rank)
// during one collective of `bytes` on every rank.
struct LinkLoad {
    std::vector<double> up;
    std::vector<double> down;
};

LinkLoad linkLoad(const NetConfig& config, CollectiveType type, std::uint64_t bytes)
{
    std::uint32_t ranks = config.endpointCount();
    CommEngine engine(config, ranks);
    for (std::uint32_t rank = 0; rank < ranks; ++rank)
        engine.post(collectiveNode(rank, type, bytes), rank);
    engine.run();
    LinkLoad load{std::vector<double>(ranks), std::vector<double>(ranks)};
    const NetworkCore& core = engine.network();
    for (std::size_t index = 0; index < core.linkCount(); ++index) {
        const Link& link = core.link(index);
        if (link.from < ranks)
            load.up[link.from] += core.linkBytes(index);
        if (link.to < ranks)
            load.down[link.to] += core.linkBytes(index);
    }
    return load;
}

std::uint64_t ps(double value)
{
    return static_cast<std::uint64_t>(std::llround(value));
}

// Reduce-scatter of S bytes per member on a switch of n: n shard streams of S/n, each up every
// uplink and down its owner's downlink; the n shards share each uplink (B/n each), so every
// member has its shard after l_up + l_down + (S/n) / (B/n) = 2 alpha + S/B:
// n = 4, S = 4 MB: 1 us + 40 us = 41 us; n = 8, S = 8 MB: 1 us + 80 us = 81 us.
// A ring reduce-scatter needs (n-1)(2 alpha + S/(nB)): 3 x 11 us = 33 us and 7 x 11 us = 77 us:
// the switch's uplinks carry all of S, the ring's links only (n-1)/n of it.
TEST(InSwitchPhase, ReduceScatterIsTwoLatenciesPlusSizeOverBandwidth)
{
    struct Case {
        std::uint32_t n;
        std::uint64_t bytes;
        std::uint64_t expectedPs;
    };
    for (Case c : {Case{4, 4000000, 41000000}, Case{8, 8000000, 81000000}}) {
        NetConfig config = oneSwitch(c.n, "{reduce_scatter: [in_switch]}");
        test::CollectiveRun run = runCollective(config, CollectiveType::ReduceScatter, c.bytes);
        EXPECT_EQ(c.expectedPs, 2 * alphaPs + ps(static_cast<double>(c.bytes) / bytesPerPs));
        for (std::uint64_t done : run.donePs)
            EXPECT_EQ(done, c.expectedPs) << "n=" << c.n;
        EXPECT_EQ(run.record.endPs, c.expectedPs);
        EXPECT_EQ(run.messages, c.n); // one stream per shard
        LinkLoad load = linkLoad(config, CollectiveType::ReduceScatter, c.bytes);
        for (std::uint32_t rank = 0; rank < c.n; ++rank) {
            EXPECT_DOUBLE_EQ(load.up[rank], static_cast<double>(c.bytes));
            // The shards divide the input exactly (bytes is a multiple of n in every case).
            EXPECT_DOUBLE_EQ(load.down[rank], static_cast<double>(c.bytes) / c.n);
        }
        test::CollectiveRun ring = runCollective(
            oneSwitch(c.n, "{default: [ring]}"), CollectiveType::ReduceScatter, c.bytes);
        EXPECT_EQ(ring.record.endPs, (c.n - 1) * (2 * alphaPs + c.bytes / c.n * 10));
    }
}

// All-gather of d bytes per member (Chakra: the part each member contributes) on a switch of n:
// member j's stream carries d up its uplink and down every downlink (multicast, j included);
// the n streams share each downlink (B/n each), so all parts are everywhere after
// 2 alpha + (d) / (B/n) = 2 alpha + n d / B:
// n = 4, d = 1 MB: 1 us + 40 us = 41 us; n = 8, d = 1 MB: 1 us + 80 us = 81 us.
TEST(InSwitchPhase, MulticastAllGatherIsTwoLatenciesPlusGatheredSizeOverBandwidth)
{
    for (std::uint32_t n : {4U, 8U}) {
        std::uint64_t part = 1000000;
        std::uint64_t expected = 2 * alphaPs + ps(n * static_cast<double>(part) / bytesPerPs);
        EXPECT_EQ(expected, n == 4 ? 41000000U : 81000000U);
        NetConfig config = oneSwitch(n, "{all_gather: [in_switch]}");
        test::CollectiveRun run = runCollective(config, CollectiveType::AllGather, part);
        for (std::uint64_t done : run.donePs)
            EXPECT_EQ(done, expected) << "n=" << n;
        EXPECT_EQ(run.messages, n); // one multicast per member
        // nccl-tests: algbw = n d / t.
        EXPECT_NEAR(run.record.algorithmBandwidth(),
                    n * static_cast<double>(part) / (static_cast<double>(expected) * 1e-12),
                    1.0);
        LinkLoad load = linkLoad(config, CollectiveType::AllGather, part);
        for (std::uint32_t rank = 0; rank < n; ++rank) {
            EXPECT_DOUBLE_EQ(load.up[rank], static_cast<double>(part));
            EXPECT_DOUBLE_EQ(load.down[rank], static_cast<double>(n * part));
        }
    }
}

// The reduction needs every input, the multicast only its sender's: with rank 2 posting 10 us
// late, the reduce-scatter ends 10 us late for everyone (51 us), while the all-gather's other
// three multicasts start at once (B/3 each on every downlink), rank 2's joins at 10 us, and the
// downlinks stay busy until all 4 MB have crossed: still 41 us (to a few ps: the 1/3 shares).
TEST(InSwitchPhase, ReduceScatterWaitsForAllMembersAllGatherDoesNot)
{
    std::vector<std::uint64_t> late = {0, 0, 10000000, 0};
    test::CollectiveRun scatter = runCollective(oneSwitch(4, "{reduce_scatter: [in_switch]}"),
                                                CollectiveType::ReduceScatter,
                                                4000000,
                                                late);
    for (std::uint64_t done : scatter.donePs)
        EXPECT_EQ(done, 51000000U);
    test::CollectiveRun gather = runCollective(
        oneSwitch(4, "{all_gather: [in_switch]}"), CollectiveType::AllGather, 1000000, late);
    for (std::uint64_t done : gather.donePs)
        EXPECT_NEAR(static_cast<double>(done), 41000000.0, 2.0);
}

// Switch(4) x Switch(2), 8 MB all-reduce, local_bw_aware, one chunk, ring all-reduce lists with
// the node phases in the switch (all_reduce_phases: [in_switch, ring]):
//   in-switch reduce-scatter of 8 MB on dimension 0:  1 us + 8 MB / 100 GB/s = 81 us
//   ring all-reduce of the 2 MB shard on dimension 1: 2 steps of (1 us + 1 MB / 100 GB/s) = 22 us
//   in-switch all-gather of 2 MB parts on dimension 0: 1 us + 4 x 2 MB / 100 GB/s = 81 us
// = 184 us. Without the key the same lists run ring phases: 3 x 21 + 22 + 3 x 21 = 148 us.
TEST(InSwitchPhase, HierarchicalAllReduceRunsNodePhasesInTheSwitch)
{
    const std::string topology = R"(topology:
  kind: multi_dim
  dims:
    - {kind: switch, size: 4, bandwidth: "100 GB/s", latency: "500 ns"}
    - {kind: switch, size: 2, bandwidth: "100 GB/s", latency: "500 ns"}
)";
    NetConfig config = loadNetConfigString(
        topology + "collectives:\n  pipeline_depth: fixed\n  algorithms: {all_reduce: [ring, "
                   "ring], all_reduce_phases: [in_switch, ring]}\n");
    EXPECT_EQ(config.allReducePhases,
              (std::vector<AlgorithmKind>{AlgorithmKind::InSwitch, AlgorithmKind::Ring}));
    test::CollectiveRun run = runCollective(config, CollectiveType::AllReduce, 8000000);
    for (std::uint64_t done : run.donePs)
        EXPECT_EQ(done, 184000000U);
    // 2 switch lines x (4 shards + 4 multicasts) + 8 ranks x 2 ring steps.
    EXPECT_EQ(run.messages, 2U * 8 + 16);
    test::CollectiveRun ring = runCollective(
        loadNetConfigString(topology + "collectives:\n  pipeline_depth: fixed\n  algorithms: "
                                       "{all_reduce: [ring, ring]}\n"),
        CollectiveType::AllReduce,
        8000000);
    for (std::uint64_t done : ring.donePs)
        EXPECT_EQ(done, 148000000U);
    // A one-member list applies to every dimension; the last dimension's entry is unused (it
    // runs the all-reduce phase), so in_switch there needs only a switch.
    NetConfig every = loadNetConfigString(
        topology + "collectives:\n  pipeline_depth: fixed\n  algorithms: {all_reduce: [ring], "
                   "all_reduce_phases: [in_switch]}\n");
    test::CollectiveRun same = runCollective(every, CollectiveType::AllReduce, 8000000);
    EXPECT_EQ(same.record.endPs, 184000000U);
}

// The multicast of one chunk runs beside the next chunk's reduce-scatter (NVLS pipelines them
// on opposite link directions): in-switch all-gathers have their own admission queue.
// Switch(4) x Switch(2), 8 MB, 2 chunks of 4 MB, 1 active per queue:
//   0-41 us   chunk 0 reduce-scatter (1 us + 4 MB / 100 GB/s)
//   41-53     chunk 0 ring all-reduce of its 1 MB shard on dimension 1 (2 x (1 us + 5 us));
//   41-       chunk 1 reduce-scatter: by 53 us its 1 MB shard streams have 0.7 MB left
//   53-88     chunk 0's 4 multicasts of 1 MB join: every uplink and downlink carries 5 streams
//             at 20 GB/s; chunk 1's shards end at 88 (0.7 MB / 20 GB/s), arrive at 89
//   88-100    the multicasts' last 0.3 MB at 25 GB/s (4 per downlink): arrive at 101
//   89-101    chunk 1 all-reduce on dimension 1; 101-142 chunk 1 all-gather alone (41 us)
// = 142 us (to a few ps: the 20 GB/s shares). With one queue per dimension, chunk 0's
// all-gather would wait for chunk 1's reduce-scatter: 41 + 41 + 41 + 41 = 164 us.
TEST(InSwitchPhase, AllGatherOfOneChunkOverlapsTheNextChunksReduceScatter)
{
    NetConfig config = loadNetConfigString(R"(topology:
  kind: multi_dim
  dims:
    - {kind: switch, size: 4, bandwidth: "100 GB/s", latency: "500 ns"}
    - {kind: switch, size: 2, bandwidth: "100 GB/s", latency: "500 ns"}
collectives:
  algorithms: {all_reduce: [ring, ring], all_reduce_phases: [in_switch, ring]}
  chunks: 2
  active_chunks: 1
  pipeline_depth: fixed
)");
    test::CollectiveRun run = runCollective(config, CollectiveType::AllReduce, 8000000);
    for (std::uint64_t done : run.donePs)
        EXPECT_NEAR(static_cast<double>(done), 142000000.0, 2.0);
}

std::string errorOf(const std::string& yaml)
{
    try {
        loadNetConfigString(yaml, "net.yaml");
    } catch (const ConfigError& error) {
        return error.what();
    }
    return "no error";
}

TEST(InSwitchPhase, ConfigErrorsNameTheKeyAndTheFix)
{
    const std::string topology = R"(topology:
  kind: multi_dim
  dims:
    - {kind: switch, size: 4, bandwidth: "1 GB/s", latency: "1 us"}
    - {kind: ring, size: 2, bandwidth: "1 GB/s", latency: "1 us"}
)";
    EXPECT_EQ(errorOf(topology + "collectives:\n  algorithms: {all_to_all: [in_switch, ring]}\n"),
              "net.yaml:7:28: collectives.algorithms.all_to_all: in_switch runs only "
              "all_reduce, reduce_scatter and all_gather; list it under algorithms.all_reduce, "
              "reduce_scatter, all_gather or all_reduce_phases");
    EXPECT_EQ(
        errorOf(topology + "collectives:\n  algorithms: {reduce_scatter: [ring, in_switch]}\n"),
        "net.yaml:7:32: collectives.algorithms.reduce_scatter: in_switch needs a switch "
        "dimension, but dimension 1 is not one (use kind: switch there, or another "
        "algorithm)");
    EXPECT_EQ(errorOf(topology + "collectives:\n  algorithms: {all_gather: [in_switch]}\n"),
              "net.yaml:7:28: collectives.algorithms.all_gather: in_switch needs a switch "
              "dimension, but dimension 1 is not one (use kind: switch there, or another "
              "algorithm)");
    EXPECT_EQ(
        errorOf(topology + "collectives:\n  algorithms: {all_reduce_phases: [ring, in_switch]}\n"),
        "net.yaml:7:35: collectives.algorithms.all_reduce_phases: in_switch needs a switch "
        "dimension, but dimension 1 is not one (use kind: switch there, or another algorithm)");
    EXPECT_EQ(errorOf(topology + "collectives:\n  algorithms: {all_reduce_phases: [in_switch, "
                                 "ring, ring]}\n"),
              "net.yaml:7:35: collectives.algorithms.all_reduce_phases: lists 3 algorithms but "
              "the topology has 2 dimensions (give one per dimension, or one for all)");
    EXPECT_EQ(errorOf("fidelity: analytical\n" + topology +
                      "collectives:\n  algorithms: {all_gather: [in_switch, ring]}\n"),
              "net.yaml:8:28: collectives.algorithms.all_gather: in_switch reduce-scatter and "
              "all-gather run as shard streams that share the switch links, which only the flow "
              "fidelity models; use fidelity: flow");
    EXPECT_EQ(errorOf("fidelity: astra_aware\n" + topology +
                      "collectives:\n  algorithms: {reduce_scatter: [in_switch, ring]}\n"),
              "net.yaml:8:32: collectives.algorithms.reduce_scatter: in_switch is an etsim "
              "extension that ASTRA-sim's network models do not have; use fidelity flow or "
              "analytical");
    EXPECT_EQ(errorOf(R"(topology:
  kind: fat_tree
  fat_tree: {endpoints: 8, endpoints_per_leaf: 4, spines: 2, host_bandwidth: "1 GB/s",
             host_latency: "1 us", uplink_bandwidth: "1 GB/s", uplink_latency: "1 us"}
collectives:
  algorithms: {all_reduce_phases: [in_switch]}
)"),
              "net.yaml:6:35: collectives.algorithms.all_reduce_phases: in_switch needs a "
              "switch dimension, but dimension 0 is not one (use kind: switch there, or another "
              "algorithm)");
    // What the same lists accept: in_switch under each of the three keys on the switch.
    NetConfig accepted = loadNetConfigString(
        topology + "collectives:\n  algorithms: {reduce_scatter: [in_switch, ring], all_gather: "
                   "[in_switch, ring], all_reduce_phases: [in_switch, ring]}\n");
    EXPECT_EQ(accepted.algorithm(CollectiveType::ReduceScatter, 0), AlgorithmKind::InSwitch);
    EXPECT_EQ(accepted.algorithm(CollectiveType::AllGather, 0), AlgorithmKind::InSwitch);
    EXPECT_EQ(accepted.algorithm(CollectiveType::AllReduce, 0), AlgorithmKind::Ring);
    EXPECT_TRUE(loadNetConfigString(topology).allReducePhases.empty());
}

// The reduce-scatter/all-gather role refuses other phases (the configuration never gives it
// one; the check names the role and the fix).
TEST(InSwitchPhase, ScatterGatherRoleRefusesAllReducePhases)
{
    InSwitchAlgorithm algorithm(true);
    PhaseShape shape;
    shape.type = CollectiveType::AllReduce;
    shape.size = 4;
    shape.inputBytes = 16;
    try {
        algorithm.check(shape);
        FAIL() << "no error";
    } catch (const Error& error) {
        EXPECT_STREQ(error.what(),
                     "the in_switch algorithm listed for reduce-scatter and all-gather phases "
                     "runs only those, not all_reduce (list in_switch under algorithms.all_reduce "
                     "for an in-switch all-reduce phase)");
    }
    shape.type = CollectiveType::ReduceScatter;
    EXPECT_NO_THROW(algorithm.check(shape));
    shape.type = CollectiveType::AllGather;
    EXPECT_NO_THROW(algorithm.check(shape));
}

// A switch stream with a single endpoint, or one out of range, is a caller error.
class Sink final : public MessageSink {
public:
    virtual ~Sink() = default;
    void delivered(std::uint64_t /*cookie*/) override {}
};

TEST(InSwitchPhase, SwitchStreamErrors)
{
    NetConfig config = oneSwitch(4, "{reduce_scatter: [in_switch]}");
    MultiDimTopology topology(config.dims);
    EventCalendar calendar;
    Sink sink;
    NetworkCore core(topology, config, calendar, sink);
    try {
        core.sendSwitchStream({1}, {1}, 10, 0);
        FAIL() << "no error";
    } catch (const Error& error) {
        EXPECT_STREQ(error.what(),
                     "NetworkCore::sendSwitchStream: a switch stream needs at least two distinct "
                     "endpoints among its sources and destinations");
    }
    try {
        core.sendSwitchStream({0, 9}, {1}, 10, 0);
        FAIL() << "no error";
    } catch (const Error& error) {
        EXPECT_STREQ(error.what(),
                     "NetworkCore::sendSwitchStream: endpoint 9 out of range (the network has 4 "
                     "endpoints)");
    }
    EXPECT_EQ(core.messagesSent(), 0U);
}

} // namespace
} // namespace etsim::net
