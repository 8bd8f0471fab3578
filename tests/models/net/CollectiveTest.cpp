#include "kernel/Error.h"
#include "models/net/CommEngine.h"
#include "models/net/NetConfig.h"
#include "models/net/PointToPoint.h"
#include "tests/models/net/NetTestSupport.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace etsim::net {
namespace {

using test::collectiveNode;
using test::runCollective;

NetConfig oneDim(const std::string& kind,
                 std::uint32_t size,
                 const std::string& algorithm = "ring",
                 const std::string& fidelity = "flow",
                 const std::string& extra = "")
{
    return test::oneDimConfig(kind, size, "default: [" + algorithm + "]", fidelity, extra);
}

constexpr std::uint64_t alphaPs = 500000;
// Bytes per ps at 100 GB/s.
constexpr double bytesPerPs = 0.1;

std::uint64_t ps(double value)
{
    return static_cast<std::uint64_t>(std::llround(value));
}

// Ring all-reduce on a ring: 2(n-1) alpha + 2(n-1)/n S/B, exactly (every step is one hop on
// its own link, so nothing contends).
TEST(Collective, RingAllReduceMatchesFormula)
{
    struct Case {
        std::uint32_t n;
        std::uint64_t bytes;
    };
    for (Case c : {Case{4, 1U << 20}, Case{8, 8U << 20}, Case{16, 64U << 20}, Case{3, 12000000}}) {
        test::CollectiveRun run =
            runCollective(oneDim("ring", c.n), CollectiveType::AllReduce, c.bytes);
        double n = c.n;
        std::uint64_t expected = 2 * std::uint64_t{c.n - 1} * alphaPs +
                                 ps(2.0 * (n - 1) / n * static_cast<double>(c.bytes) / bytesPerPs);
        EXPECT_EQ(run.record.endPs, expected) << "n=" << c.n << " S=" << c.bytes;
        EXPECT_EQ(run.messages, 2ULL * (c.n - 1) * c.n);
        for (std::uint64_t done : run.donePs)
            EXPECT_EQ(done, expected);
        // nccl-tests: busbw = S/t * 2(n-1)/n.
        EXPECT_NEAR(run.record.busBandwidth(),
                    static_cast<double>(c.bytes) / (static_cast<double>(expected) * 1e-12) * 2.0 *
                        (n - 1) / n,
                    1.0);
    }
}

TEST(Collective, RingReduceScatterAndAllGatherMatchFormula)
{
    // (n-1) alpha + (n-1)/n S/B with S the total (the all-gather node carries S/n per rank).
    std::uint64_t total = 8U << 20;
    std::uint64_t expected = 7 * alphaPs + ps(7.0 / 8.0 * static_cast<double>(total) / bytesPerPs);
    test::CollectiveRun scatter =
        runCollective(oneDim("ring", 8), CollectiveType::ReduceScatter, total);
    EXPECT_EQ(scatter.record.endPs, expected);
    EXPECT_EQ(scatter.messages, 8U * 7);
    test::CollectiveRun gather =
        runCollective(oneDim("ring", 8), CollectiveType::AllGather, total / 8);
    EXPECT_EQ(gather.record.endPs, expected);
    EXPECT_NEAR(gather.record.algorithmBandwidth(),
                static_cast<double>(total) / (static_cast<double>(expected) * 1e-12),
                1.0);
}

// Halving-doubling on a fully connected group: 2 log2(n) alpha + 2(n-1)/n S/B.
TEST(Collective, HalvingDoublingAllReduceMatchesFormula)
{
    std::uint64_t bytes = 16U << 20;
    test::CollectiveRun run = runCollective(
        oneDim("fully_connected", 8, "halving_doubling"), CollectiveType::AllReduce, bytes);
    std::uint64_t expected =
        6 * alphaPs + ps(2.0 * 7.0 / 8.0 * static_cast<double>(bytes) / bytesPerPs);
    EXPECT_EQ(run.record.endPs, expected);
    EXPECT_EQ(run.messages, 8U * 6);
}

// Direct all-to-all on a switch: every rank's n-1 flows share its uplink and every downlink
// carries n-1 flows, so T = 2 alpha (two links) + (n-1)/n S/B. The spec's (n-1) alpha counts
// one latency per peer for sequential sends; here the sends overlap and pay it once.
TEST(Collective, DirectAllToAllOnSwitch)
{
    std::uint64_t bytes = 8U << 20;
    test::CollectiveRun run =
        runCollective(oneDim("switch", 8, "direct"), CollectiveType::AllToAll, bytes);
    std::uint64_t expected = 2 * alphaPs + ps(7.0 / 8.0 * static_cast<double>(bytes) / bytesPerPs);
    EXPECT_EQ(run.record.endPs, expected);
    EXPECT_EQ(run.messages, 8U * 7);
}

// Posts at one instant are rated once, together: an all-to-all's posts join one component,
// and rating it after every post would cost posts x flows. Until the instant is settled the
// engine reports work due now; the times are those of the formula above.
TEST(Collective, PostsAtOneInstantAreRatedOnce)
{
    std::uint64_t bytes = 8U << 20;
    CommEngine engine(oneDim("switch", 8, "direct"), 8);
    std::vector<std::uint64_t> donePs(8, 0);
    engine.setCompletion([&](std::uint64_t token) { donePs[token] = engine.nowPs(); });
    for (std::uint32_t rank = 0; rank < 8; ++rank) {
        engine.runUntil(0); // as the SystemC fabric does before each post
        engine.post(collectiveNode(rank, CollectiveType::AllToAll, bytes), rank);
        ASSERT_TRUE(engine.hasEvents());
        EXPECT_EQ(engine.nextEventPs(), 0U);
        EXPECT_EQ(engine.network().rateUpdates(), 0U);
    }
    engine.settle();
    EXPECT_EQ(engine.network().rateUpdates(), 1U);
    EXPECT_GT(engine.nextEventPs(), 0U);
    engine.run();
    std::uint64_t expected = 2 * alphaPs + ps(7.0 / 8.0 * static_cast<double>(bytes) / bytesPerPs);
    for (std::uint64_t done : donePs)
        EXPECT_EQ(done, expected);
}

// Direct all-reduce on a fully connected group: 2 alpha + 2(n-1)/n S/B... per link only one
// flow, so each step is alpha + (S/n)/B: 2 alpha + 2 S/(nB).
TEST(Collective, DirectAllReduceOnFullyConnected)
{
    std::uint64_t bytes = 8U << 20;
    test::CollectiveRun run =
        runCollective(oneDim("fully_connected", 8, "direct"), CollectiveType::AllReduce, bytes);
    EXPECT_EQ(run.record.endPs,
              2 * alphaPs + ps(2.0 * static_cast<double>(bytes) / 8 / bytesPerPs));
    EXPECT_EQ(run.messages, 2U * 8 * 7);
}

// Double binary tree on 7 fully connected members (a complete tree of depth 2): two levels up
// and two down, each alpha + S/B; 6 messages up and 6 down. With two chunks the second tree
// (the mirror image) carries the other half concurrently.
TEST(Collective, DoubleBinaryTreeAllReduce)
{
    std::uint64_t bytes = 7000000;
    test::CollectiveRun run = runCollective(
        oneDim("fully_connected", 7, "double_binary_tree"), CollectiveType::AllReduce, bytes);
    EXPECT_EQ(run.record.endPs, 4 * (alphaPs + ps(static_cast<double>(bytes) / bytesPerPs)));
    EXPECT_EQ(run.messages, 12U);

    test::CollectiveRun two = runCollective(oneDim("fully_connected",
                                                   7,
                                                   "double_binary_tree",
                                                   "flow",
                                                   "  chunks: 2\n  active_chunks: 2\n"),
                                            CollectiveType::AllReduce,
                                            bytes);
    EXPECT_EQ(two.messages, 24U);
    // Both chunks are in flight at once on disjoint trees: the same depth at half the size,
    // plus sharing where the trees use a link in the same direction at the same time.
    EXPECT_LT(two.record.endPs, run.record.endPs);
    EXPECT_GE(two.record.endPs, 4 * (alphaPs + ps(static_cast<double>(bytes) / 2 / bytesPerPs)));
}

TEST(Collective, BroadcastReduceAndBarrierComplete)
{
    std::uint64_t bytes = 1000000;
    // Ring broadcast: a chain of n-1 messages, each alpha + S/B.
    test::CollectiveRun broadcast =
        runCollective(oneDim("ring", 4), CollectiveType::Broadcast, bytes);
    EXPECT_EQ(broadcast.messages, 3U);
    EXPECT_EQ(broadcast.record.endPs, 3 * (alphaPs + ps(bytes / bytesPerPs)));
    EXPECT_EQ(broadcast.donePs[1], alphaPs + ps(bytes / bytesPerPs));
    test::CollectiveRun reduce =
        runCollective(oneDim("fully_connected", 4, "direct"), CollectiveType::Reduce, bytes);
    EXPECT_EQ(reduce.messages, 3U);
    EXPECT_EQ(reduce.record.endPs, alphaPs + ps(bytes / bytesPerPs));
    // Barrier: an empty ring all-reduce, 2(n-1) latencies.
    test::CollectiveRun barrier = runCollective(oneDim("ring", 4), CollectiveType::Barrier, 0);
    EXPECT_EQ(barrier.record.endPs, 6 * alphaPs);
}

// A late member delays the others exactly along the ring's dependencies. Analytical mode (no
// link sharing), delta = alpha + (S/n)/B per step. With member 2 posting at D, member i ends at
// max over j of post[i-j] + j delta (j <= 2(n-1)): members 0..3 end at D + 6, 3, 4, 5 delta.
TEST(Collective, LateMemberDelaysOthersAlongRingDependencies)
{
    std::uint64_t bytes = 4000000;
    std::uint64_t delta = alphaPs + ps(1000000 / bytesPerPs);
    std::uint64_t late = 100000000;
    test::CollectiveRun run = runCollective(
        oneDim("ring", 4, "ring", "analytical"), CollectiveType::AllReduce, bytes, {0, 0, late, 0});
    EXPECT_EQ(run.donePs[0], late + 6 * delta);
    EXPECT_EQ(run.donePs[1], late + 3 * delta);
    EXPECT_EQ(run.donePs[2], late + 4 * delta);
    EXPECT_EQ(run.donePs[3], late + 5 * delta);
    EXPECT_EQ(run.record.startPs, 0U);
    EXPECT_EQ(run.record.endPs, late + 6 * delta);
}

// astra-sim-semantics.md section 3: Ring(4) 50 GB/s (= GiB/s) 500 ns, Ring_4chunks: 4 chunks,
// 1 active, endpoint delay 10 ns, local memory 1600 GB/s; 1 MiB all-reduce = 43,000 ns in
// both of ASTRA-sim's modes.
TEST(Collective, AstraRingFourChunksWorkedExample)
{
    for (const char* fidelity : {"astra_unaware", "astra_aware"}) {
        NetConfig config = loadNetConfigString(std::string("fidelity: ") + fidelity + R"(
topology:
  kind: multi_dim
  dims:
    - {kind: ring, size: 4, bandwidth: "50 GiB/s", latency: "500 ns"}
collectives:
  chunks: 4
  active_chunks: 1
  endpoint_delay: "10 ns"
  local_memory_bandwidth: "1600 GB/s"
)");
        test::CollectiveRun run = runCollective(config, CollectiveType::AllReduce, 1U << 20);
        EXPECT_EQ(run.record.endPs, 43000000U) << fidelity;
    }
}

// astra-sim-semantics.md section 3: 64 NPUs Ring(2) 200 GB/s 50 ns x FullyConnected(8)
// 100 GB/s 500 ns x Switch(4) 50 GB/s 2000 ns, 1 MiB all-reduce, 4 chunks, 1 active: phase
// times 923 / 4854 / 24544 / 4644 / 680 ns -> 923 + 4854 + 4 * 24544 + 4644 + 680 ns.
TEST(Collective, AstraThreeDimensionHierarchicalWorkedExample)
{
    NetConfig config = loadNetConfigString(R"(fidelity: astra_unaware
topology:
  kind: multi_dim
  dims:
    - {kind: ring, size: 2, bandwidth: "200 GiB/s", latency: "50 ns"}
    - {kind: fully_connected, size: 8, bandwidth: "100 GiB/s", latency: "500 ns"}
    - {kind: switch, size: 4, bandwidth: "50 GiB/s", latency: "2000 ns"}
collectives:
  algorithms: {default: [ring, ring, ring]}
  chunks: 4
  active_chunks: 1
  endpoint_delay: "10 ns"
  local_memory_bandwidth: "1600 GB/s"
)");
    test::CollectiveRun run = runCollective(config, CollectiveType::AllReduce, 1U << 20);
    EXPECT_EQ(run.record.endPs, (923U + 4854 + 4 * 24544 + 4644 + 680) * 1000);
    for (std::uint64_t done : run.donePs)
        EXPECT_EQ(done, run.record.endPs);
}

// The spec's first-order hierarchical formula, native flow mode, one chunk: per dimension
// RS then AG, payload S_d = S / prod(n_j, j < d), ring per dimension on ring links.
TEST(Collective, HierarchicalAllReduceMatchesPerDimensionSum)
{
    NetConfig config = loadNetConfigString(R"(topology:
  kind: multi_dim
  dims:
    - {kind: ring, size: 4, bandwidth: "100 GB/s", latency: "500 ns"}
    - {kind: ring, size: 4, bandwidth: "50 GB/s", latency: "1 us"}
collectives:
  pipeline_depth: fixed
)");
    std::uint64_t bytes = 16U << 20;
    test::CollectiveRun run = runCollective(config, CollectiveType::AllReduce, bytes);
    auto s1 = static_cast<double>(bytes);
    double s2 = s1 / 4;
    // Dim 0: RS + AG = 2 [3 alpha0 + 3/4 S1/B0]; dim 1: all-reduce 2 [3 alpha1 + 3/4 S2/B1].
    double expected = 2 * (3 * 500000.0 + 0.75 * s1 / 0.1) + 2 * (3 * 1000000.0 + 0.75 * s2 / 0.05);
    EXPECT_NEAR(static_cast<double>(run.record.endPs), expected, 16.0);
    EXPECT_EQ(run.messages, 16U * (3 + 6 + 3));
}

TEST(Collective, SubGroupRunsFlatOverItsMembers)
{
    NetConfig config = oneDim("ring", 8);
    CommEngine engine(config, 8);
    std::vector<std::uint64_t> done(8, 0);
    engine.setCompletion([&](std::uint64_t token) { done[token] = engine.nowPs(); });
    auto members = std::make_shared<const std::vector<RankId>>(
        std::vector<RankId>{RankId{1}, RankId{3}, RankId{5}, RankId{7}});
    for (std::uint32_t rank : {1U, 3U, 5U, 7U}) {
        EtNodeInfo info = collectiveNode(rank, CollectiveType::AllReduce, 4000000);
        info.group = ProcessGroupId{2};
        info.groupRanks = members;
        engine.post(info, rank);
    }
    engine.run();
    // Ring over members 1 -> 3 -> 5 -> 7 -> 1: each step crosses two ring links (2 alpha,
    // cut-through) with 1 MB, 6 steps; 7 -> 1 wraps through 0.
    std::uint64_t step = 2 * alphaPs + ps(1000000 / bytesPerPs);
    EXPECT_EQ(done[1], 6 * step);
    EXPECT_EQ(engine.network().messagesSent(), 4U * 6);
    EXPECT_EQ(engine.records().at(0).ranks, 4U);
}

TEST(Collective, AThousandRanksAllReduceCompletes)
{
    NetConfig config = loadNetConfigString(R"(topology:
  kind: multi_dim
  dims:
    - {kind: switch, size: 8, bandwidth: "450 GB/s", latency: "936.25 ns", efficiency: 0.82}
    - {kind: switch, size: 128, bandwidth: "50 GB/s", latency: "1 us"}
collectives:
  chunks: 4
  active_chunks: 2
)");
    test::CollectiveRun run = runCollective(config, CollectiveType::AllReduce, 1U << 20);
    EXPECT_EQ(run.record.ranks, 1024U);
    EXPECT_GT(run.record.endPs, 0U);
    EXPECT_EQ(*std::min_element(run.donePs.begin(), run.donePs.end()) > 0, true);
    // 4 chunks x 1024 ranks x (7 + 2 * 127 + 7) messages.
    EXPECT_EQ(run.messages, 4ULL * 1024 * (7 + 254 + 7));
}

// Validation anchor (hardware-models.md 4.1): NCCL ring all-reduce on 8 x H100 reaches a bus
// bandwidth of about 370 GB/s at large sizes. The preset's links carry 450 GB/s per direction
// at 82 % efficiency (NCCL's stated ~20 % protocol overhead), 936.25 ns per link.
TEST(Collective, HgxH100RingBusBandwidthAnchor)
{
    NetConfig config = netPreset("hgx_h100");
    std::printf("size        time_us   busbw_GB/s  (NCCL ring ~370 GB/s at large sizes)\n");
    for (std::uint64_t mib : {1, 4, 16, 64, 256, 1024, 4096, 8192}) {
        std::uint64_t bytes = mib << 20;
        test::CollectiveRun run = runCollective(config, CollectiveType::AllReduce, bytes);
        double busbw = run.record.busBandwidth() * 1e-9;
        std::printf("%8llu MiB %9.1f %10.1f\n",
                    static_cast<unsigned long long>(mib),
                    static_cast<double>(run.record.endPs) * 1e-6,
                    busbw);
        if (bytes >= (256ULL << 20)) {
            EXPECT_NEAR(busbw, 370.0, 0.15 * 370.0) << bytes;
        }
    }
}

TEST(Collective, ErrorsNameRankNodeAndFix)
{
    CommEngine tree(oneDim("ring", 4, "double_binary_tree"), 4);
    try {
        tree.post(collectiveNode(0, CollectiveType::AllGather, 1000), 0);
        FAIL();
    } catch (const Error& error) {
        EXPECT_STREQ(error.what(),
                     "fabric: rank 0 node 100: all_gather of 1000 B: dimension 0 (4 members): "
                     "double_binary_tree does not implement all_gather; use ring or direct for it");
    }
    CommEngine engine(oneDim("ring", 4), 4);
    try {
        engine.post(collectiveNode(1, CollectiveType::Gather, 1000), 0);
        FAIL();
    } catch (const Error& error) {
        EXPECT_NE(std::string(error.what()).find("collective gather is not supported"),
                  std::string::npos)
            << error.what();
    }
    engine.post(collectiveNode(0, CollectiveType::AllReduce, 1000), 0);
    try {
        engine.post(collectiveNode(1, CollectiveType::AllReduce, 2000), 1);
        FAIL();
    } catch (const Error& error) {
        EXPECT_STREQ(error.what(),
                     "fabric: rank 1 node 100: collective sequence 0 of its group is all_reduce "
                     "of 2000 B here, but rank 0 node 100 posted all_reduce of 1000 B; every "
                     "member must issue the same collectives in the same order");
    }
    try {
        engine.post(collectiveNode(0, CollectiveType::AllReduce, 1000), 2);
        FAIL();
    } catch (const Error& error) {
        EXPECT_NE(std::string(error.what()).find("posted collective sequence 0 of its group twice"),
                  std::string::npos);
    }
    EtNodeInfo compute;
    compute.rank = RankId{0};
    compute.node = NodeId{5};
    compute.kind = NodeKind::Compute;
    try {
        engine.post(compute, 3);
        FAIL();
    } catch (const Error& error) {
        EXPECT_STREQ(error.what(),
                     "fabric: rank 0 node 5: a compute node reached the fabric, "
                     "which runs only send, recv and collective nodes");
    }
    EtNodeInfo outsider = collectiveNode(0, CollectiveType::AllReduce, 10, 1);
    outsider.group = ProcessGroupId{4};
    outsider.groupRanks =
        std::make_shared<const std::vector<RankId>>(std::vector<RankId>{RankId{1}, RankId{2}});
    try {
        engine.post(outsider, 4);
        FAIL();
    } catch (const Error& error) {
        EXPECT_STREQ(error.what(),
                     "fabric: rank 0 node 101: the rank is not a member of the "
                     "group of its all_reduce (sequence 1)");
    }
}

TEST(Collective, PointToPointMatchesInOrderAndChecksSizes)
{
    CommEngine engine(oneDim("ring", 4), 4);
    std::vector<std::uint64_t> done(8, 0);
    engine.setCompletion([&](std::uint64_t token) { done[token] = engine.nowPs(); });
    auto node = [](NodeKind kind,
                   std::uint32_t rank,
                   std::uint32_t peer,
                   std::uint64_t bytes,
                   std::uint32_t id) {
        EtNodeInfo info;
        info.kind = kind;
        info.rank = RankId{rank};
        info.peer = RankId{peer};
        info.bytes = bytes;
        info.tag = 9;
        info.node = NodeId{id};
        return info;
    };
    engine.post(node(NodeKind::Send, 0, 1, 1000000, 1), 0);
    engine.post(node(NodeKind::Send, 0, 1, 2000000, 2), 1);
    engine.runUntil(50000000);
    // The recv posted after arrival completes at once; the second completes at its arrival.
    engine.post(node(NodeKind::Recv, 1, 0, 1000000, 3), 2);
    engine.post(node(NodeKind::Recv, 1, 0, 2000000, 4), 3);
    engine.run();
    // Both sends share link 0->1 (50 GB/s each): the first ends at 20 us, the second has 1 MB
    // left then and ends at 30 us; plus 500 ns.
    EXPECT_EQ(done[0], 20500000U);
    EXPECT_EQ(done[1], 30500000U);
    EXPECT_EQ(done[2], 50000000U);
    EXPECT_EQ(done[3], 50000000U);
    EXPECT_EQ(engine.pointToPointCompleted(), 2U);

    engine.post(node(NodeKind::Send, 2, 3, 100, 7), 4);
    try {
        engine.post(node(NodeKind::Recv, 3, 2, 64, 8), 5);
        FAIL();
    } catch (const Error& error) {
        EXPECT_STREQ(error.what(),
                     "fabric: send rank 2 node 7 (100 B) matches recv rank 3 node "
                     "8 (64 B), but the sizes differ; a send and its recv must "
                     "agree on comm_size");
    }
}

// A channel (source, destination, tag) lives only while a send or recv waits on it: pipelines
// use a new tag per micro-batch, so channels kept once matched grew with the trace.
TEST(Collective, PointToPointKeepsNoChannelOnceMatched)
{
    std::vector<std::uint64_t> completed;
    std::vector<std::uint32_t> started;
    PointToPoint p2p([&](std::uint64_t token) { completed.push_back(token); },
                     [&](std::uint32_t id, std::uint32_t, std::uint32_t, std::uint64_t) {
                         started.push_back(id);
                     });
    for (std::uint64_t tag = 0; tag < 100; ++tag) {
        p2p.postRecv(10 * tag, NodeId{1}, 0, 1, 64, tag);
        EXPECT_EQ(p2p.openChannels(), 1U);
        p2p.postSend(10 * tag + 1, NodeId{2}, 0, 1, 64, tag, false);
        EXPECT_EQ(p2p.openChannels(), 0U);
        p2p.postSend(10 * tag + 2, NodeId{3}, 1, 0, 64, tag, true);
        EXPECT_EQ(p2p.openChannels(), 1U);
        p2p.postRecv(10 * tag + 3, NodeId{4}, 1, 0, 64, tag);
        p2p.postRecv(10 * tag + 4, NodeId{5}, 2, 0, 64, tag);
        EXPECT_EQ(p2p.openChannels(), 1U);
        const std::uint32_t foreign = p2p.postForeignSend(NodeId{6}, 2, 0, 64, tag);
        EXPECT_EQ(p2p.openChannels(), 0U);
        // Arrivals complete the sends and the recvs they matched (a foreign send's recv only).
        p2p.arrived(started.at(started.size() - 2));
        p2p.arrived(started.back());
        p2p.arrived(foreign);
    }
    EXPECT_EQ(started.size(), 200U);
    EXPECT_EQ(completed.size(), 500U);
}

// A switch of 4 at 100 GB/s and 500 ns per link whose all-reduce runs in the switch.
NetConfig inSwitchConfig(const std::string& fidelity, const std::string& extra)
{
    return loadNetConfigString("fidelity: " + fidelity +
                               "\ntopology:\n  kind: multi_dim\n  dims:\n    - {kind: switch, "
                               "size: 4, bandwidth: \"100 GB/s\", latency: \"500 ns\"}\n"
                               "collectives:\n  algorithms: {all_reduce: [in_switch]}\n" +
                               extra);
}

// In-switch reduction (hardware-models.md 3.5: ~ 2 alpha + S / B_up): on a switch of 4 at
// 100 GB/s and 500 ns per link, a 4 MB all-reduce streams up and down once:
// 500 ns + 500 ns + 4 MB / 100 GB/s = 41 us for every rank, as one stream. A ring all-reduce
// on the same switch needs 6 x 1 us + 1.5 x 40 us = 66 us.
TEST(Collective, InSwitchAllReduceIsTwoLatenciesPlusSizeOverBandwidth)
{
    std::uint64_t bytes = 4000000;
    test::CollectiveRun run =
        runCollective(inSwitchConfig("flow", "  chunks: 1\n"), CollectiveType::AllReduce, bytes);
    for (std::uint64_t done : run.donePs)
        EXPECT_EQ(done, 2 * alphaPs + ps(bytes / bytesPerPs));
    EXPECT_EQ(run.messages, 1U);
    EXPECT_EQ(run.record.endPs, 41000000U);
    test::CollectiveRun ring = runCollective(
        oneDim("switch", 4, "ring", "flow", "  chunks: 1\n"), CollectiveType::AllReduce, bytes);
    EXPECT_EQ(ring.record.endPs, 66000000U);
    // The analytical fidelity gives the same for a lone stream.
    test::CollectiveRun analytical = runCollective(
        inSwitchConfig("analytical", "  chunks: 1\n"), CollectiveType::AllReduce, bytes);
    EXPECT_EQ(analytical.record.endPs, 41000000U);
}

// The reduction needs every input: a member posting 10 us late delays everyone by 10 us.
// Chunks in flight share the links: 4 chunks of 1 MB, 2 active, run as two pairs of streams
// at 50 GB/s each: 2 x (1 us + 1 MB / 50 GB/s) = 42 us.
TEST(Collective, InSwitchAllReduceWaitsForAllMembersAndSharesLinks)
{
    std::uint64_t bytes = 4000000;
    test::CollectiveRun late = runCollective(inSwitchConfig("flow", "  chunks: 1\n"),
                                             CollectiveType::AllReduce,
                                             bytes,
                                             {0, 0, 10000000, 0});
    for (std::uint64_t done : late.donePs)
        EXPECT_EQ(done, 51000000U);
    test::CollectiveRun chunked =
        runCollective(inSwitchConfig("flow", "  chunks: 4\n  active_chunks: 2\n"),
                      CollectiveType::AllReduce,
                      bytes);
    for (std::uint64_t done : chunked.donePs)
        EXPECT_EQ(done, 42000000U);
    EXPECT_EQ(chunked.messages, 4U);
}

// Switch(4) x Switch(2), 8 MB, local_bw_aware, one chunk: ring reduce-scatter on dimension 0
// (3 steps of 2 MB: 3 x (1 us + 20 us)), in-switch all-reduce of the 2 MB shard on dimension 1
// (1 us + 20 us), ring all-gather on dimension 0 (another 63 us): 147 us.
TEST(Collective, InSwitchOnTheLastDimensionOfAHierarchicalAllReduce)
{
    NetConfig config = loadNetConfigString(R"(topology:
  kind: multi_dim
  dims:
    - {kind: switch, size: 4, bandwidth: "100 GB/s", latency: "500 ns"}
    - {kind: switch, size: 2, bandwidth: "100 GB/s", latency: "500 ns"}
collectives:
  algorithms: {all_reduce: [ring, in_switch]}
  pipeline_depth: fixed
)");
    test::CollectiveRun run = runCollective(config, CollectiveType::AllReduce, 8000000);
    for (std::uint64_t done : run.donePs)
        EXPECT_EQ(done, 147000000U);
    // A reduce-scatter phase cannot run in the switch: the error names the phase.
    NetConfig wrong = loadNetConfigString(R"(topology:
  kind: multi_dim
  dims:
    - {kind: switch, size: 4, bandwidth: "100 GB/s", latency: "500 ns"}
    - {kind: switch, size: 2, bandwidth: "100 GB/s", latency: "500 ns"}
collectives:
  algorithms: {all_reduce: [in_switch, ring]}
)");
    CommEngine engine(wrong, 8);
    try {
        engine.post(collectiveNode(0, CollectiveType::AllReduce, 8000000), 0);
        FAIL() << "no error";
    } catch (const Error& error) {
        EXPECT_EQ(std::string(error.what()),
                  "fabric: rank 0 node 100: all_reduce of 8000000 B: dimension 0 (4 members): the "
                  "in_switch algorithm "
                  "runs only all_reduce phases, not reduce_scatter (with local_bw_aware a "
                  "multi-dimension all-reduce reduce-scatters in every dimension but the last: "
                  "use in_switch on the last dimension only, optimization: baseline, or "
                  "algorithms.all_reduce_phases for in-switch reduce-scatter and all-gather "
                  "phases)");
    }
}

} // namespace
} // namespace etsim::net
