// The accelerator's streaming fast path (docs/accel.md, Streaming fast path) against per-chunk
// transactions (accelerator.dma.per_chunk): the same traces on the same small platform must
// give the same simulated times to the picosecond, whether the streams on a rank's HBM run
// one at a time (the fast path computes them) or overlap (the fast path falls back to
// per-chunk transactions while they do), and every model's stats must end alike. Fewer delta
// cycles show that the fast path ran.

#include "et_driver/NodeTensors.h"
#include "et_driver/TraceNode.h"
#include "platforms/Job.h"
#include "platforms/PlatformConfig.h"
#include "tests/support/ScKernel.h"
#include "tests/support/TempDir.h"
#include "tests/support/TraceNodes.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

namespace etsim::platform {
namespace {

using etsim::test::gemmNode;
using etsim::test::memoryNode;
using etsim::test::recvNode;
using etsim::test::ScKernel;
using etsim::test::sendNode;
using etsim::test::TempDir;
namespace fs = std::filesystem;

constexpr std::uint32_t hgxRanks = 8;

fs::path writeRanks(const TempDir& dir, const std::vector<std::vector<et::TraceNode>>& nodes)
{
    return etsim::test::writeRankFiles(dir.file("job"), hgxRanks, nodes);
}

// The hgx_h100 preset with 1 MiB of SRAM and 1 MiB DMA chunks, so that the nodes below stream
// in many chunks.
// Each run gets a kernel of its own (a SystemC kernel runs once).
RunReport run(const fs::path& prefix, bool perChunk, const std::string& engines)
{
    ScKernel kernel;
    JobSpec job;
    job.trace = prefix;
    const std::vector<Override> overrides = {
        {"driver.mode", "model"},
        {"accelerator.sram.capacity", "1 MiB"},
        {"accelerator.dma.chunk", "1 MiB"},
        {"accelerator.dma.engines", engines},
        {"accelerator.dma.per_chunk", perChunk ? "true" : "false"}};
    JobOptions options;
    options.stats = StatsFormat::Text;
    RunReport report = runJob(loadPlatform("hgx_h100", overrides), job, options);
    EXPECT_TRUE(report.finished) << report.problem;
    return report;
}

// Runs `prefix` with the fast path and with per-chunk transactions and compares every rank's
// times; returns {fast, per-chunk} delta cycles.
std::pair<std::uint64_t, std::uint64_t> expectSameTimes(const fs::path& prefix,
                                                        const std::string& engines)
{
    const RunReport fast = run(prefix, false, engines);
    const RunReport chunks = run(prefix, true, engines);
    EXPECT_EQ(fast.simulatedPs, chunks.simulatedPs);
    EXPECT_GT(fast.simulatedPs, 0U);
    EXPECT_EQ(fast.ranks.size(), chunks.ranks.size());
    for (std::size_t rank = 0; rank < fast.ranks.size() && rank < chunks.ranks.size(); ++rank) {
        SCOPED_TRACE("rank " + std::to_string(rank));
        EXPECT_EQ(fast.ranks[rank].finishPs, chunks.ranks[rank].finishPs);
        EXPECT_EQ(fast.ranks[rank].computePs, chunks.ranks[rank].computePs);
        EXPECT_EQ(fast.ranks[rank].memoryPs, chunks.ranks[rank].memoryPs);
        EXPECT_EQ(fast.ranks[rank].exposedCommPs, chunks.ranks[rank].exposedCommPs);
        EXPECT_EQ(fast.ranks[rank].idlePs, chunks.ranks[rank].idlePs);
    }
    EXPECT_DOUBLE_EQ(fast.resources.hbmBytes, chunks.resources.hbmBytes);
    // The stats sum exactly (whole ps, FLOPs per node), so committing a run of repeating
    // chunks at once (StreamPlan.h) leaves them to the bit as per-chunk transactions do.
    EXPECT_EQ(fast.resources.tensorBusy, chunks.resources.tensorBusy);
    EXPECT_EQ(fast.resources.flops, chunks.resources.flops);
    EXPECT_EQ(fast.resources.hbmUtilisation, chunks.resources.hbmUtilisation);
    // Every model's stats, line by line: the HBM's latency histogram and turnarounds, the
    // units' busy times, the DMA's transfers, the on-chip memory's hits.
    EXPECT_FALSE(fast.stats.empty());
    std::istringstream fastLines(fast.stats);
    std::istringstream chunkLines(chunks.stats);
    std::string fastLine;
    std::string chunkLine;
    while (std::getline(fastLines, fastLine)) {
        if (!std::getline(chunkLines, chunkLine)) {
            ADD_FAILURE() << "only with the fast path: " << fastLine;
            break;
        }
        EXPECT_EQ(fastLine, chunkLine);
    }
    EXPECT_FALSE(std::getline(chunkLines, chunkLine)) << "only per chunk: " << chunkLine;
    return {fast.events, chunks.events};
}

// One stream at a time: a load, a GEMM streaming 23 MiB (compute-bound slices), a GEMM whose
// 512 KiB fit in SRAM, a store, and a memory-bound GEMM (its slices wait for the loads).
std::vector<et::TraceNode> chain()
{
    return {memoryNode(1, et::NodeType::MemLoad, 5 * 1024 * 1024 + 4096),
            gemmNode(2, 4096, 4096, 4096, 24 * 1024 * 1024, {1}),
            gemmNode(3, 256, 256, 256, 512 * 1024, {2}),
            memoryNode(4, et::NodeType::MemStore, 3 * 1024 * 1024, {3}),
            gemmNode(5, 64, 64, 8192, 9 * 1024 * 1024 + 100, {4})};
}

TEST(StreamFastPath, MatchesPerChunkForOneStreamAtATime)
{
    for (const char* engines : {"4", "1"}) {
        SCOPED_TRACE(std::string("dma.engines ") + engines);
        TempDir dir;
        auto [fast, chunks] = expectSameTimes(writeRanks(dir, {chain()}), engines);
        EXPECT_LT(fast * 4, chunks) << "the fast path should have replaced most transactions";
    }
}

// Overlapping streams. Rank 0: two GEMMs start together at 0 (both streaming: per-chunk from
// the start), then, one after the other, a long streaming GEMM (fast path) during which a GEMM
// and a load arrive, released by a message from rank 1 (the long GEMM leaves the fast path in
// the middle of its chunks), and a last GEMM alone again.
TEST(StreamFastPath, FallsBackToPerChunkWhileStreamsOverlap)
{
    for (const char* engines : {"4", "1"}) {
        SCOPED_TRACE(std::string("dma.engines ") + engines);
        TempDir dir;
        std::vector<et::TraceNode> rank0 = {
            gemmNode(1, 1024, 1024, 1024, 6 * 1024 * 1024),
            gemmNode(2, 512, 2048, 1024, 5 * 1024 * 1024 + 12345),
            gemmNode(3, 8192, 8192, 2048, 40 * 1024 * 1024, {1, 2}),
            recvNode(4, 1, 7, 3'690'000),
            gemmNode(5, 2048, 2048, 2048, 12 * 1024 * 1024, {4}),
            memoryNode(6, et::NodeType::MemLoad, 7 * 1024 * 1024, {4}),
            gemmNode(7, 4096, 4096, 1024, 20 * 1024 * 1024, {3, 5, 6})};
        // Rank 1 sends after a GEMM of its own, so the message lands while node 3 streams.
        std::vector<et::TraceNode> rank1 = {gemmNode(1, 4096, 4096, 4096, 8 * 1024 * 1024),
                                            sendNode(2, 0, 7, 3'690'000)};
        rank1[1].dataDeps = {1};
        auto [fast, chunks] = expectSameTimes(writeRanks(dir, {rank0, rank1}), engines);
        EXPECT_LT(fast, chunks) << "nodes 3 and 7 should have started on the fast path";
    }
}

// Streams that write as well as read (docs/accel.md, On-chip memory), one at a time and
// overlapping: with 1 MiB on chip, node 1 leaves tensor 1 (768 KiB) dirty on chip; node 2 reads
// tensor 2 (900 KiB, a miss that evicts tensor 1: a 768 KiB write-back) and writes tensor 3
// (2.5 MiB, too large: written straight to HBM); the load of tensor 4 (1 MiB) evicts tensor 2;
// nodes 4 and 5 start together, both reading and writing.
TEST(StreamFastPath, MatchesPerChunkWithWrites)
{
    const std::uint64_t kib = 1024;
    auto named = [](et::TraceNode node,
                    const std::vector<TensorUse>& inputs,
                    const std::vector<TensorUse>& outputs) {
        et::setNodeTensors(node, inputs, outputs, 2, "Tensor(c10::BFloat16)");
        return node;
    };
    for (const char* engines : {"4", "1"}) {
        SCOPED_TRACE(std::string("dma.engines ") + engines);
        TempDir dir;
        std::vector<et::TraceNode> rank0 = {
            named(gemmNode(1, 256, 256, 256, 768 * kib), {}, {{1, 768 * kib}}),
            named(gemmNode(2, 1024, 1024, 1024, 3400 * kib, {1}),
                  {{2, 900 * kib}},
                  {{3, 2560 * kib}}),
            named(memoryNode(3, et::NodeType::MemLoad, 1024 * kib, {2}), {}, {{4, 1024 * kib}}),
            named(gemmNode(4, 2048, 2048, 512, 5000 * kib, {3}),
                  {{4, 1024 * kib}, {5, 2000 * kib}},
                  {{6, 600 * kib}}),
            named(gemmNode(5, 1024, 2048, 1024, 3000 * kib, {3}),
                  {{6, 600 * kib}},
                  {{7, 2400 * kib}})};
        auto [fast, chunks] = expectSameTimes(writeRanks(dir, {rank0}), engines);
        EXPECT_LT(fast, chunks) << "nodes 1 to 3 should have run on the fast path";
    }
}

} // namespace
} // namespace etsim::platform
