// Whole runs (runJob) of ASTRA-sim configurations on traces written with etsim's TraceWriter:
// the worked examples of shared/spec/astra-sim-semantics.md to the nanosecond, and compute,
// memory and send/recv cases worked out by hand from its section 4.

#include "et_driver/TraceWriter.h"
#include "platforms/Job.h"
#include "platforms/astra/AstraPlatform.h"
#include "tests/support/ScTest.h"
#include "tests/support/TempDir.h"
#include "tests/support/TraceNodes.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <optional>

namespace etsim::platforms::astra {
namespace {

using etsim::test::computeNode;
using etsim::test::gpuCollectiveNode;
using etsim::test::gpuMemoryNode;
using etsim::test::pointToPointNode;
using etsim::test::ScTest;
using etsim::test::TempDir;
namespace fs = std::filesystem;
using et::NodeType;
using et::TraceNode;

constexpr std::uint64_t ps = 1000; // per ns

// dir/job.<rank>.et for every rank, written with etsim's writer.
fs::path writeTrace(const TempDir& dir,
                    std::uint32_t ranks,
                    const std::function<std::vector<TraceNode>(std::uint32_t)>& nodesOf)
{
    for (std::uint32_t rank = 0; rank < ranks; ++rank) {
        et::TraceWriter writer(dir.file("job." + std::to_string(rank) + ".et"));
        for (const TraceNode& each : nodesOf(rank))
            writer.write(each);
        writer.close();
    }
    return dir.file("job");
}

struct AstraSetup {
    std::string network;
    std::string system;
    std::string memory; // empty: none
    Congestion congestion = Congestion::Aware;
};

platform::RunReport run(const TempDir& dir, const AstraSetup& setup, const fs::path& trace)
{
    AstraFiles files;
    files.network = dir.write("network.yml", setup.network);
    files.system = dir.write("system.json", setup.system);
    if (!setup.memory.empty())
        files.memory = dir.write("memory.json", setup.memory);
    files.congestion = setup.congestion;
    std::vector<std::string> warnings;
    platform::PlatformConfig config = loadAstraPlatform(files, warnings);
    platform::JobSpec job;
    job.trace = trace;
    return platform::runJob(config, job);
}

// Ring_4chunks.json of the spec's worked example (all four implementation lists given).
std::string ringSystem(const std::string& extra = "",
                       int splits = 4,
                       int active = 1,
                       const std::string& implementation = R"("ring")",
                       int localMemBw = 1600)
{
    return R"({
  "scheduling-policy": "LIFO",
  "endpoint-delay": 10,
  "active-chunks-per-dimension": )" +
           std::to_string(active) + R"(,
  "preferred-dataset-splits": )" +
           std::to_string(splits) + R"(,
  "all-reduce-implementation": [)" +
           implementation + R"(],
  "all-gather-implementation": [)" +
           implementation + R"(],
  "reduce-scatter-implementation": [)" +
           implementation + R"(],
  "all-to-all-implementation": [)" +
           implementation + R"(],
  "collective-optimization": "localBWAware",
  "local-mem-bw": )" +
           std::to_string(localMemBw) + R"(,
  "boost-mode": 0)" +
           extra + "\n}\n";
}

constexpr const char* ring4 = "topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ 50 ]\n"
                              "latency: [ 500 ]\n";

void expectEveryRankFinishesAt(const platform::RunReport& report, std::uint64_t finishNs)
{
    ASSERT_TRUE(report.finished) << report.problem;
    EXPECT_EQ(report.simulatedPs, finishNs * ps);
    for (const platform::RankBreakdown& rank : report.ranks)
        EXPECT_EQ(rank.finishPs, finishNs * ps) << "rank " << rank.rank;
}

// Section 3's worked example: c = 262,144, m = 65,536, delta = floor(500 + 65,536 / 53.687)
// = 1,720, rho = 3 floor(40.96) = 120, e = 10: T_chunk = 10 + 6 x 1,730 + 3 x 120 = 10,750;
// four chunks one after another = 43,000 ns, in both backends (no contention on a ring).
void ringAllReduce(Congestion congestion)
{
    TempDir dir;
    fs::path trace = writeTrace(dir, 4, [](std::uint32_t) {
        return std::vector<TraceNode>{gpuCollectiveNode(1, et::CollectiveType::AllReduce, 1 << 20)};
    });
    platform::RunReport report = run(dir, {ring4, ringSystem(), "", congestion}, trace);
    expectEveryRankFinishesAt(report, 43000);
    ASSERT_EQ(report.collectives.size(), 1U);
    EXPECT_EQ(report.collectives[0].type, "all_reduce");
    EXPECT_EQ(report.collectives[0].count, 1U);
    // ASTRA-sim's exposed communication: finish minus GPU compute (none here).
    EXPECT_EQ(report.ranks[0].astraExposedCommPs, 43000 * ps);
}

// One run per test: the SystemC kernel cannot be restarted in a process.
TEST_F(ScTest, AstraRingAllReduceOfOneMebibyteTakes43000NsAware)
{
    ringAllReduce(Congestion::Aware);
}

TEST_F(ScTest, AstraRingAllReduceOfOneMebibyteTakes43000NsUnaware)
{
    ringAllReduce(Congestion::Unaware);
}

// Section 3: 64 NPUs, Ring(2) 200 x FullyConnected(8) 100 x Switch(4) 50 GB/s, 50 / 500 /
// 2,000 ns, 1 MiB in 4 chunks, 1 active, localBWAware, congestion-unaware: phase times
// 923 / 4,854 / 24,544 / 4,644 / 680 ns -> 923 + 4,854 + 4 x 24,544 + 4,644 + 680 ns.
TEST_F(ScTest, Astra64RankThreeDimensionAllReduce)
{
    TempDir dir;
    fs::path trace = writeTrace(dir, 64, [](std::uint32_t) {
        return std::vector<TraceNode>{gpuCollectiveNode(7, et::CollectiveType::AllReduce, 1 << 20)};
    });
    AstraSetup setup{"topology: [ Ring, FullyConnected, Switch ]\nnpus_count: [ 2, 8, 4 ]\n"
                     "bandwidth: [ 200, 100, 50 ]\nlatency: [ 50, 500, 2000 ]\n",
                     ringSystem("", 4, 1, R"("ring", "ring", "ring")"),
                     "",
                     Congestion::Unaware};
    platform::RunReport report = run(dir, setup, trace);
    expectEveryRankFinishesAt(report, 923 + 4854 + 4 * 24544 + 4644 + 680);
}

// Section 3, 1-D Switch(4) 50 GB/s 500 ns, a = 2, four chunks: c = 262,144, m = 65,536,
// m / B = 1,220.7; congestion-aware delta = 2 floor(500 + 1,220.7) = 3,440, rho = 120,
// T_chunk = 10 + 6 (3,440 + 10) + 3 x 120 = 21,070; the two chunks of a wave collide once on
// the uplink: T = 2 T_chunk + floor(m / B) = 42,140 + 1,220 = 43,360 ns. Unaware: delta =
// floor(1,000 + 1,220.7) = 2,220, T_chunk = 10 + 6 x 2,230 + 360 = 13,750, two waves with no
// contention = 27,500 ns.
void switchTwoActiveChunks(Congestion congestion, std::uint64_t finishNs)
{
    TempDir dir;
    fs::path trace = writeTrace(dir, 4, [](std::uint32_t) {
        return std::vector<TraceNode>{gpuCollectiveNode(1, et::CollectiveType::AllReduce, 1 << 20)};
    });
    platform::RunReport report = run(dir,
                                     {"topology: [ Switch ]\nnpus_count: [ 4 ]\nbandwidth: [ 50 ]\n"
                                      "latency: [ 500 ]\n",
                                      ringSystem("", 4, 2),
                                      "",
                                      congestion},
                                     trace);
    expectEveryRankFinishesAt(report, finishNs);
}

TEST_F(ScTest, AstraSwitchWithTwoActiveChunksAware)
{
    switchTwoActiveChunks(Congestion::Aware, 43360);
}

TEST_F(ScTest, AstraSwitchWithTwoActiveChunksUnaware)
{
    switchTwoActiveChunks(Congestion::Unaware, 27500);
}

// Section 4, roofline on (peak 100 TFLOP/s, local memory 1,000 GB/s): one GPU compute slot,
// nodes one after another.
//   2,000,000 ops over 1,234,567 B: memory-bound, 1,234,567 / 1e12 s = 1,234.567 -> 1,234 ns
//   123,456,789,000 ops over 1e6 B: compute-bound, 1.23456789e11 / 1e14 s -> 1,234,567 ns
//   tensor_size 0: skipped, 0 ns
//   is_cpu_op with 7 us: replayed on the host, 7,000 ns (the roofline is for GPU nodes)
// duration_micros of the GPU nodes is ignored. Finish 1,242,801 ns; ASTRA-sim's exposed
// communication counts the CPU op: 7,000 ns.
TEST_F(ScTest, AstraRooflineComputeByHand)
{
    TempDir dir;
    fs::path trace = writeTrace(dir, 2, [](std::uint32_t rank) {
        TraceNode cpu = computeNode(4, 0, 0, 7, {3});
        cpu.setIsCpuOp(true);
        std::vector<TraceNode> nodes{computeNode(1, 2000000, 1234567, 99),
                                     computeNode(2, 123456789000, 1000000, 99, {1}),
                                     computeNode(3, 5000, 0, 99, {2}),
                                     cpu};
        if (rank == 1)
            nodes.resize(1);
        return nodes;
    });
    const std::string system =
        ringSystem(",\n  \"roofline-enabled\": 1,\n  \"peak-perf\": 100", 4, 1, R"("ring")", 1000);
    platform::RunReport report =
        run(dir,
            {"topology: [ Ring ]\nnpus_count: [ 2 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n",
             system,
             "",
             Congestion::Aware},
            trace);
    ASSERT_TRUE(report.finished) << report.problem;
    EXPECT_EQ(report.ranks[0].finishPs, 1242801 * ps);
    EXPECT_EQ(report.ranks[0].astraExposedCommPs, 7000 * ps);
    EXPECT_EQ(report.ranks[1].finishPs, 1234 * ps);
    EXPECT_EQ(report.ranks[1].astraExposedCommPs, 0U);
}

// Section 4, roofline off: compute replays duration_micros x 1000, 0 -> 1 ns; num_ops ignored.
TEST_F(ScTest, AstraReplayedComputeByHand)
{
    TempDir dir;
    fs::path trace = writeTrace(dir, 2, [](std::uint32_t) {
        return std::vector<TraceNode>{computeNode(1, 1000000000, 1000, 5),
                                      computeNode(2, 1000000000, 1000, 0, {1}),
                                      computeNode(3, 0, 0, 12, {2})};
    });
    platform::RunReport report = run(dir,
                                     {"topology: [ Switch ]\nnpus_count: [ 2 ]\nbandwidth: [ 50 ]"
                                      "\nlatency: [ 500 ]\n",
                                      ringSystem(),
                                      "",
                                      Congestion::Aware},
                                     trace);
    expectEveryRankFinishesAt(report, 5000 + 1 + 12000);
}

// Section 4, remote memory 100 ns + floor(bytes / 50 B per ns):
//   PER_NPU: load of 1,000,003 B = 100 + 20,000 = 20,100 ns, then a store of the same: 40,200;
//   MEMORY_POOL: both ranks load 1,000,000 B at 0 on one FIFO server: 20,100 and 40,200 ns.
constexpr const char* ring2 =
    "topology: [ Ring ]\nnpus_count: [ 2 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n";

TEST_F(ScTest, AstraRemoteMemoryPerNpuByHand)
{
    TempDir dir;
    fs::path trace = writeTrace(dir, 2, [](std::uint32_t) {
        return std::vector<TraceNode>{gpuMemoryNode(1, true, 1000003),
                                      gpuMemoryNode(2, false, 1000003, {1})};
    });
    platform::RunReport report = run(dir,
                                     {ring2,
                                      ringSystem(),
                                      R"({"memory-type": "PER_NPU_MEMORY_EXPANSION",
                                          "remote-mem-latency": 100, "remote-mem-bw": 50})",
                                      Congestion::Aware},
                                     trace);
    expectEveryRankFinishesAt(report, 40200);
    // ASTRA-sim counts remote-memory time as exposed communication.
    EXPECT_EQ(report.ranks[0].astraExposedCommPs, 40200 * ps);
    EXPECT_EQ(report.ranks[0].memoryPs, 40200 * ps);
}

TEST_F(ScTest, AstraRemoteMemoryPoolByHand)
{
    TempDir dir;
    fs::path trace = writeTrace(dir, 2, [](std::uint32_t) {
        return std::vector<TraceNode>{gpuMemoryNode(1, true, 1000000)};
    });
    platform::RunReport report = run(dir,
                                     {ring2,
                                      ringSystem(),
                                      R"({"memory-type": "MEMORY_POOL",
                                          "remote-mem-latency": 100, "remote-mem-bw": 50})",
                                      Congestion::Aware},
                                     trace);
    ASSERT_TRUE(report.finished) << report.problem;
    std::uint64_t first = std::min(report.ranks[0].finishPs, report.ranks[1].finishPs);
    std::uint64_t second = std::max(report.ranks[0].finishPs, report.ranks[1].finishPs);
    EXPECT_EQ(first, 20100 * ps);
    EXPECT_EQ(second, 40200 * ps);
}

// Without a remote memory a memory node is an error that says how to fix it.
TEST_F(ScTest, AstraMemoryNodeWithoutRemoteMemoryFails)
{
    TempDir dir;
    fs::path trace = writeTrace(
        dir, 2, [](std::uint32_t) { return std::vector<TraceNode>{gpuMemoryNode(1, true, 1000)}; });
    try {
        run(dir,
            {"topology: [ Ring ]\nnpus_count: [ 2 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n",
             ringSystem(),
             "",
             Congestion::Aware},
            trace);
        FAIL() << "a memory node ran without a remote memory";
    } catch (const sc_core::sc_report& error) {
        const std::string text = error.what();
        EXPECT_NE(text.find("node 1 (\"n1\"): a MEM_LOAD_NODE needs ASTRA-sim's remote memory"),
                  std::string::npos)
            << text;
        EXPECT_NE(text.find("give --astra-memory FILE"), std::string::npos) << text;
    }
}

// Section 4, send/recv: one message of comm_size bytes, no chunking, no endpoint delay; both
// complete when it arrives. 1,000,000 B at 53.687 B/ns = 18,626.45 ns.
//   neighbour on Ring(4): delta = floor(500 + 18,626.45) = 19,126 ns (either backend);
//   two hops: aware = 2 x 19,126 = 38,252 ns (store-and-forward); unaware = floor(1,000 +
//   18,626.45) = 19,626 ns (cut-through).
// Rank 0 sends to rank 1, then to rank 2; its one communication slot makes the second wait
// for the first to arrive. Rank 2 posts its recv at 100 us, after the message arrived.
void sendRecv(Congestion congestion, std::uint64_t twoHopsNs)
{
    TempDir dir;
    fs::path trace = writeTrace(dir, 4, [](std::uint32_t rank) -> std::vector<TraceNode> {
        switch (rank) {
        case 0:
            return {pointToPointNode(1, true, 0, 1, 1000000, 5),
                    pointToPointNode(2, true, 0, 2, 1000000, 5)};
        case 1:
            return {pointToPointNode(1, false, 1, 0, 1000000, 5)};
        case 2:
            return {computeNode(1, 0, 0, 100), pointToPointNode(2, false, 2, 0, 1000000, 5, {1})};
        default:
            return {computeNode(1, 0, 0, 1)};
        }
    });
    platform::RunReport report = run(dir, {ring4, ringSystem(), "", congestion}, trace);
    ASSERT_TRUE(report.finished) << report.problem;
    // Rank 0: one communication slot, so the second send starts when the first arrives.
    EXPECT_EQ(report.ranks[0].finishPs, (19126 + twoHopsNs) * ps);
    EXPECT_EQ(report.ranks[1].finishPs, 19126 * ps);
    // Rank 2's recv is posted at 100 us, after the message arrived: it completes at once.
    EXPECT_EQ(report.ranks[2].finishPs, 100000 * ps);
    EXPECT_EQ(report.ranks[3].finishPs, 1000 * ps);
}

TEST_F(ScTest, AstraSendRecvByHandAware)
{
    sendRecv(Congestion::Aware, 38252);
}

TEST_F(ScTest, AstraSendRecvByHandUnaware)
{
    sendRecv(Congestion::Unaware, 19626);
}

// A real trace: the 64-rank ResNet-50 data-parallel set on an ASTRA-sim Switch(64) setup.
TEST_F(ScTest, AstraSharedResnet64Ranks)
{
    std::optional<fs::path> traces;
    if (const char* env = std::getenv("ETSIM_TRACES"))
        traces = fs::path(env);
    else if (const char* source = std::getenv("ETSIM_SOURCE_DIR"))
        traces = fs::path(source) / ".." / "shared" / "traces";
    const fs::path prefix =
        traces ? *traces / "text-resnet50-dp-64r-legacy" / "resnet50_DataParallel" : fs::path();
    if (!traces || !fs::exists(prefix.string() + ".0.et"))
        GTEST_SKIP() << "shared traces not found: set ETSIM_TRACES to the traces folder";
    TempDir dir;
    platform::RunReport report = run(dir,
                                     {"topology: [ Switch ]\nnpus_count: [ 64 ]\n"
                                      "bandwidth: [ 50 ]\nlatency: [ 500 ]\n",
                                      ringSystem(),
                                      "",
                                      Congestion::Aware},
                                     prefix);
    ASSERT_TRUE(report.finished) << report.problem;
    EXPECT_EQ(report.nodes, 64U * 215U);
    ASSERT_EQ(report.collectives.size(), 1U);
    EXPECT_EQ(report.collectives[0].count, 54U);
    for (const platform::RankBreakdown& rank : report.ranks) {
        EXPECT_GT(rank.finishPs, 0U);
        EXPECT_LE(rank.astraExposedCommPs, rank.finishPs);
    }
}

} // namespace
} // namespace etsim::platforms::astra
