// Model-mode runs through the whole platform (driver, accelerator, HBM, fabric as `etsim run`
// builds them from the hgx_h100 preset) on small traces written here, each finish time and
// breakdown computed by hand in the comments from the formulas of docs/accel.md, docs/hbm.md
// and docs/network.md. Ranks without work have empty trace files.

#include "et_driver/NodeTensors.h"
#include "et_driver/TraceNode.h"
#include "et_driver/TraceWriter.h"
#include "platforms/Job.h"
#include "platforms/PlatformConfig.h"
#include "tests/support/ScKernel.h"
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

// Each run gets a kernel of its own (a SystemC kernel runs once), so a test may run twice.
RunReport runOnHgx(const fs::path& prefix, const std::string& sramPolicy = "lru")
{
    etsim::test::ScKernel kernel;
    JobSpec job;
    job.trace = prefix;
    RunReport report =
        runJob(loadPlatform("hgx_h100",
                            {{"driver.mode", "model"}, {"accelerator.sram.policy", sramPolicy}}),
               job);
    EXPECT_TRUE(report.finished) << report.problem;
    return report;
}

// BF16 tensors of the given ids and sizes, as Chakra tensor tuples.
void nameTensors(et::TraceNode& node,
                 const std::vector<TensorUse>& inputs,
                 const std::vector<TensorUse>& outputs)
{
    et::setNodeTensors(node, inputs, outputs, 2, "Tensor(c10::BFloat16)");
}

void expectIdleRanks(const RunReport& report, std::uint32_t firstIdle)
{
    for (std::uint32_t rank = firstIdle; rank < report.ranks.size(); ++rank)
        EXPECT_EQ(report.ranks[rank].finishPs, 0U) << "rank " << rank;
}

// The H100 tile model (docs/accel.md, GPU tiles): of the preset's tiles, 64x128 gives
// ceil(1024/64)·ceil(1024/128) = 128 CTAs, one wave on 132 SMs, and the fastest time:
//   2·64·128·1024 FLOP / (4096 FLOP/clk · 1.83 GHz · pipe 0.8) = 2,797,814 ps,
// plus the 2 us launch overhead = 4,797,814 ps. (The memory term 6 MiB / (33 TB/s · 0.8) =
// 238 ns is below it.) The node names no tensors, so nothing an earlier node did can have left
// them on chip (docs/accel.md, On-chip memory): its 6 MiB come from HBM as three 2 MiB chunks.
// The first is in at 707,155 + 34,417 = 741,572 ps (the HBM figures of the next test); the
// three slices of 4,797,814 / 3 ps then run back to back (the other chunks are in long before
// they are needed): 741,572 + 4,797,814 = 5,539,386 ps.
TEST_F(ScTest, HandComputedGemmOnOneRank)
{
    TempDir dir;
    RunReport report = runOnHgx(writeRanks(dir, {{gemm1024(1)}}));
    EXPECT_EQ(report.simulatedPs, 5'539'386U);
    const RankBreakdown& rank = report.ranks.at(0);
    EXPECT_EQ(rank.finishPs, 5'539'386U);
    EXPECT_EQ(rank.computePs, 5'539'386U);
    EXPECT_EQ(rank.memoryPs, 0U);
    EXPECT_EQ(rank.exposedCommPs, 0U);
    EXPECT_EQ(rank.idlePs, 0U);
    expectIdleRanks(report, 1);
    EXPECT_DOUBLE_EQ(report.resources.flops, 2.0 * 1024 * 1024 * 1024);
    EXPECT_DOUBLE_EQ(report.resources.hbmBytes, 6.0 * 1024 * 1024);
    EXPECT_DOUBLE_EQ(report.resources.onChip.untrackedNodes, 1.0);
    // The legacy per-node shortcut counted its 6 MiB as on chip: the GEMM alone.
    RunReport legacy = runOnHgx(writeRanks(dir, {{gemm1024(1)}}), "legacy");
    EXPECT_EQ(legacy.simulatedPs, 4'797'814U);
    EXPECT_DOUBLE_EQ(legacy.resources.hbmBytes, 0.0);
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

// Load A and B (2 MiB each, tensors 1 and 2), then the GEMM reading them and writing C (tensor
// 3, 2 MiB), then store C (one chunk at the write efficiency 0.9: 696.155 + 34.417 ns; the
// turnaround after the load is long past). The GEMM finds A and B on chip (the load placed
// them) and writes C there, so it moves nothing over HBM and takes its 4,797,814 ps:
//   load 0 -> 1,448,727; GEMM -> 6,246,541; store -> 6,977,113 ps.
// Breakdown: memory 1,448,727 + 730,572 = 2,179,299 ps, compute 4,797,814 ps, no idle time.
TEST_F(ScTest, HandComputedLoadGemmStoreChain)
{
    const std::uint64_t mib2 = 2 * 1024 * 1024;
    et::TraceNode load = memoryNode(1, et::NodeType::MemLoad, 2 * mib2);
    nameTensors(load, {}, {{1, mib2}, {2, mib2}});
    et::TraceNode gemm = gemm1024(2, {1});
    nameTensors(gemm, {{1, mib2}, {2, mib2}}, {{3, mib2}});
    et::TraceNode store = memoryNode(3, et::NodeType::MemStore, mib2, {2});
    nameTensors(store, {{3, mib2}}, {});
    TempDir dir;
    RunReport report = runOnHgx(writeRanks(dir, {{load, gemm, store}}));
    const RankBreakdown& rank = report.ranks.at(0);
    EXPECT_EQ(rank.finishPs, 6'977'113U);
    EXPECT_EQ(rank.computePs, 4'797'814U);
    EXPECT_EQ(rank.memoryPs, 2'179'299U);
    EXPECT_EQ(rank.idlePs, 0U);
    EXPECT_EQ(rank.nodes, 3U);
    EXPECT_DOUBLE_EQ(report.resources.hbmBytes, 3.0 * mib2);
    EXPECT_DOUBLE_EQ(report.resources.onChip.hits, 2.0);
    EXPECT_DOUBLE_EQ(report.resources.onChip.hitBytes, 2.0 * mib2);
    EXPECT_DOUBLE_EQ(report.resources.onChip.misses, 0.0);
}

// An element-wise kernel over an activation larger than the 50 MB L2: it reads tensor 1 (64 MiB,
// written to HBM before the run) and writes tensor 2 (64 MiB); 2^20 operations and tensor_size
// 128 MiB, so its compute time is the launch plus the on-chip memory term, about 2 us + 128 MiB
// / (33 TB/s · 0.8) = 7,083,990 ps (7,084,005 ps as etsim rounds it). Neither tensor fits even
// alone (67,108,864 B > 50,000,000 B), so all 128 MiB stream: 32 read chunks of 2 MiB at
// 707,155 ps each, back to back on the HBM's FIFO server (each load is queued well before the
// server frees), then 32 write chunks at 2,097,152 B / (3.3472 TB/s · 0.9) = 696,155 ps each
// after one read-to-write turnaround of 32.6 ns: the last write's data is in at 32 · 707,155 +
// 32,600 + 32 · 696,155 = 44,938,520 ps, done 34,417 ps later, and the last of the 64 slices
// follows. Each slice takes 7,084,005 / 64 = 110,687 ps rounded down, the last one also the
// remainder of 37 ps: 44,972,937 + 110,724 = 45,083,661 ps, HBM-bound.
// The legacy shortcut priced 50 MB of it as on chip and streamed only the other 84,217,728 B,
// as reads: 40 chunks of 2 MiB and one of 331,648 B. Chunk 39 is in at 40 · 707,155 + 34,417 =
// 28,320,617 ps; the last, short chunk arrives before slice 39 ends, so slices 39 and 40
// (7,084,005 / 41 = 172,780 ps, the last with the remainder of 25 ps) run back to back:
// 28,320,617 + 172,780 + 172,805 = 28,666,202 ps.
TEST_F(ScTest, HandComputedElementwiseOverAnActivationLargerThanSram)
{
    const std::uint64_t mib64 = 64 * 1024 * 1024;
    et::TraceNode node = traceNode(1, et::NodeType::Comp);
    node.setOpKind("elementwise");
    node.setDtype("bf16");
    node.setNumOps(1 << 20);
    node.setTensorSize(2 * mib64);
    nameTensors(node, {{1, mib64}}, {{2, mib64}});
    TempDir dir;
    const fs::path trace = writeRanks(dir, {{node}});
    RunReport report = runOnHgx(trace);
    EXPECT_EQ(report.simulatedPs, 45'083'661U);
    EXPECT_DOUBLE_EQ(report.resources.hbmBytes, 2.0 * mib64);
    EXPECT_DOUBLE_EQ(report.resources.onChip.misses, 1.0);
    EXPECT_DOUBLE_EQ(report.resources.onChip.missBytes, static_cast<double>(mib64));
    RunReport legacy = runOnHgx(trace, "legacy");
    EXPECT_EQ(legacy.simulatedPs, 28'666'202U);
    EXPECT_DOUBLE_EQ(legacy.resources.hbmBytes, 2.0 * mib64 - 50e6);
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
