// Model-mode runs through the whole platform (driver, accelerator, HBM, fabric as `etsim run`
// builds them from the hgx_h100 preset) on small traces written here, each finish time and
// breakdown computed by hand in the comments from the formulas of docs/accel.md, docs/hbm.md
// and docs/network.md. Ranks without work have empty trace files.

#include "et_driver/TraceNode.h"
#include "et_driver/TraceWriter.h"
#include "platforms/Job.h"
#include "platforms/PlatformConfig.h"
#include "tests/support/ScTest.h"
#include "tests/support/TempDir.h"
#include "tests/support/TraceNodes.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

namespace etsim::platform {
namespace {

using etsim::test::memoryNode;
using etsim::test::ScTest;
using etsim::test::TempDir;
using etsim::test::traceNode;
namespace fs = std::filesystem;

constexpr std::uint32_t hgxRanks = 8;

// A 1024 x 1024 x 1024 BF16 GEMM over 6 MiB (inputs and output).
et::TraceNode gemm1024(std::uint64_t id, std::vector<std::uint64_t> deps = {})
{
    return etsim::test::gemmNode(id, 1024, 1024, 1024, 6'291'456, std::move(deps));
}

// dir/job.<rank>.et for every rank of the platform; `nodes[rank]` (missing ranks: empty).
fs::path writeRanks(const TempDir& dir, const std::vector<std::vector<et::TraceNode>>& nodes)
{
    return etsim::test::writeRankFiles(dir.file("job"), hgxRanks, nodes);
}

RunReport runOnHgx(const fs::path& prefix)
{
    JobSpec job;
    job.trace = prefix;
    RunReport report = runJob(loadPlatform("hgx_h100", {{"driver.mode", "model"}}), job);
    EXPECT_TRUE(report.finished) << report.problem;
    return report;
}

void expectIdleRanks(const RunReport& report, std::uint32_t firstIdle)
{
    for (std::uint32_t rank = firstIdle; rank < report.ranks.size(); ++rank)
        EXPECT_EQ(report.ranks[rank].finishPs, 0U) << "rank " << rank;
}

// The H100 tile model (docs/accel.md, GPU tiles): of the preset's tiles, 64x128 gives
// ceil(1024/64)·ceil(1024/128) = 128 CTAs, one wave on 132 SMs, and the fastest time:
//   2·64·128·1024 FLOP / (4096 FLOP/clk · 1.83 GHz · pipe 0.8) = 2,797,814 ps,
// plus the 2 us launch overhead = 4,797,814 ps. Its 6 MiB fit in the 50 MB L2, so nothing
// streams from HBM. (The memory term 6 MiB / (33 TB/s · 0.8) = 238 ns is below it.)
TEST_F(ScTest, HandComputedGemmOnOneRank)
{
    TempDir dir;
    RunReport report = runOnHgx(writeRanks(dir, {{gemm1024(1)}}));
    EXPECT_EQ(report.simulatedPs, 4'797'814U);
    const RankBreakdown& rank = report.ranks.at(0);
    EXPECT_EQ(rank.finishPs, 4'797'814U);
    EXPECT_EQ(rank.computePs, 4'797'814U);
    EXPECT_EQ(rank.memoryPs, 0U);
    EXPECT_EQ(rank.exposedCommPs, 0U);
    EXPECT_EQ(rank.idlePs, 0U);
    expectIdleRanks(report, 1);
    EXPECT_DOUBLE_EQ(report.resources.flops, 2.0 * 1024 * 1024 * 1024);
    EXPECT_DOUBLE_EQ(report.resources.hbmBytes, 0.0);
}

// HBM3 on the H100 (docs/hbm.md, analytic fidelity, the hbm3_h100 preset): one FIFO server,
// a transfer takes bytes / (peak · efficiency) + latency with
//   peak = 5.23 Gb/s / 8 · 32 bit · 160 PCs = 3.3472 TB/s, efficiency 0.886,
//   latency = (nRCDRD 26 + nCL 17 + nBL 2) CK at 1.3075 GHz = 34.417 ns.
// A MEM_LOAD of 4 MiB is two 2 MiB DMA chunks (docs/accel.md), both in flight at once; each
// holds the server 2,097,152 B / 2.9656192 TB/s = 707.155 ns (the DMA engine's own 2 MiB /
// 3.35 TB/s = 626 ns is shorter), so the second is done at 2 · 707.155 + 34.417 = 1,448.727 ns.
TEST_F(ScTest, HandComputedMemoryLoadOnOneRank)
{
    TempDir dir;
    RunReport report =
        runOnHgx(writeRanks(dir, {{memoryNode(1, et::NodeType::MemLoad, 4 * 1024 * 1024)}}));
    const RankBreakdown& rank = report.ranks.at(0);
    EXPECT_EQ(rank.finishPs, 1'448'727U);
    EXPECT_EQ(rank.memoryPs, 1'448'727U);
    EXPECT_EQ(rank.computePs, 0U);
    EXPECT_EQ(rank.idlePs, 0U);
    expectIdleRanks(report, 1);
    EXPECT_DOUBLE_EQ(report.resources.hbmBytes, 4.0 * 1024 * 1024);
}

// Load 4 MiB, then the GEMM, then store 2 MiB (one chunk at the write efficiency 0.9:
// 696.155 + 34.417 ns; the turnaround after the load is long past):
//   load 0 -> 1,448,727; GEMM -> 6,246,541; store -> 6,977,113 ps.
// Breakdown: memory 1,448,727 + 730,572 = 2,179,299 ps, compute 4,797,814 ps, no idle time.
TEST_F(ScTest, HandComputedLoadGemmStoreChain)
{
    TempDir dir;
    RunReport report =
        runOnHgx(writeRanks(dir,
                            {{memoryNode(1, et::NodeType::MemLoad, 4 * 1024 * 1024),
                              gemm1024(2, {1}),
                              memoryNode(3, et::NodeType::MemStore, 2 * 1024 * 1024, {2})}}));
    const RankBreakdown& rank = report.ranks.at(0);
    EXPECT_EQ(rank.finishPs, 6'977'113U);
    EXPECT_EQ(rank.computePs, 4'797'814U);
    EXPECT_EQ(rank.memoryPs, 2'179'299U);
    EXPECT_EQ(rank.idlePs, 0U);
    EXPECT_EQ(rank.nodes, 3U);
}

// Send/recv through the NVSwitch (docs/network.md, flow fidelity): the route is device 0 ->
// switch -> device 1, two links of 936.25 ns, each 450 GB/s · 0.82 = 369 GB/s for data. No
// packets, NIC or message delay in the preset, so the wire carries the payload alone:
//   T = 2 · 936.25 ns + 3,690,000 B / 369 GB/s = 1,872.5 ns + 10,000 ns = 11,872.5 ns.
// The send completes when its message arrives, the recv (posted at 0) at the same instant.
TEST_F(ScTest, HandComputedSendRecvBetweenTwoRanks)
{
    TempDir dir;
    et::TraceNode send = traceNode(1, et::NodeType::CommSend);
    send.setCommDst(1);
    send.setCommSize(3'690'000);
    send.setCommTag(7);
    et::TraceNode recv = traceNode(1, et::NodeType::CommRecv);
    recv.setCommSrc(0);
    recv.setCommSize(3'690'000);
    recv.setCommTag(7);
    RunReport report = runOnHgx(writeRanks(dir, {{send}, {recv}}));
    for (std::uint32_t rank : {0U, 1U}) {
        SCOPED_TRACE(rank);
        EXPECT_EQ(report.ranks.at(rank).finishPs, 11'872'500U);
        EXPECT_EQ(report.ranks.at(rank).exposedCommPs, report.ranks.at(rank).finishPs);
        EXPECT_EQ(report.ranks.at(rank).computePs, 0U);
    }
    expectIdleRanks(report, 2);
}

// An all-reduce of 5,904,000 B over the 8 GPUs (docs/network.md, Collectives; the hgx_h100
// fabric: ring, 4 chunks, 2 active, endpoint delay 10 ns, no reduction cost as no local
// memory bandwidth is set). Chunk c = 5,904,000 / 4 = 1,476,000 B; the ring runs 2(p-1) = 14
// steps, each sending c/p = 184,500 B to the next GPU. Chunks 0 and 1 run together: in every
// step each GPU's uplink and the next GPU's downlink carry both chunks' messages, max-min
// shares give each 369 / 2 = 184.5 GB/s, so a message takes
//   2 · 936.25 ns + 184,500 B / 184.5 GB/s = 1,872.5 + 1,000 = 2,872.5 ns,
// and each step ends 10 ns (endpoint delay) after its message arrived. A chunk's phase starts
// with 10 ns, so chunks 0 and 1 end at 10 + 14 · 2,882.5 = 40,365 ns; chunks 2 and 3 then
// take the two active slots and do the same: every GPU finishes at 80,730 ns.
TEST_F(ScTest, HandComputedAllReduceOnEightGpus)
{
    TempDir dir;
    std::vector<std::vector<et::TraceNode>> nodes(hgxRanks);
    for (auto& rank : nodes) {
        et::TraceNode allReduce = traceNode(1, et::NodeType::CommColl);
        allReduce.setCommType(et::CollectiveType::AllReduce);
        allReduce.setCommSize(5'904'000);
        rank.push_back(allReduce);
    }
    RunReport report = runOnHgx(writeRanks(dir, nodes));
    ASSERT_EQ(report.collectives.size(), 1U);
    EXPECT_EQ(report.collectives[0].type, "all_reduce");
    EXPECT_EQ(report.collectives[0].bytes, 5'904'000U);
    for (const RankBreakdown& rank : report.ranks) {
        SCOPED_TRACE(rank.rank);
        EXPECT_EQ(rank.finishPs, 80'730'000U);
        EXPECT_EQ(rank.exposedCommPs, rank.finishPs);
        EXPECT_EQ(rank.commPs, rank.finishPs);
        EXPECT_EQ(rank.idlePs, 0U);
    }
    EXPECT_EQ(report.collectives[0].timePs, 80'730'000U);
}

} // namespace
} // namespace etsim::platform
