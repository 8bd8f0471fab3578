// ASTRA-sim's custom collectives (its system file's *-implementation-custom keys) run end to
// end (runJob), with finish times worked out by hand from that simulator's rules
// (docs/astra-compat.md, "Custom collectives"): every algorithm node issues once its
// dependencies are done, a COMM_SEND / COMM_RECV is one point-to-point message of its
// comm_size that completes when it arrives (delta(m) = floor(L + m / B) for one ring hop, in
// both backends), a COMP node takes duration_micros x 1000 ns (1 ns for 0), and there is no
// endpoint delay, chunking or reduction cost.

#include "et_driver/TraceWriter.h"
#include "platforms/Job.h"
#include "platforms/astra/AstraPlatform.h"
#include "platforms/collectives/ChakraAlgorithm.h"
#include "platforms/collectives/ProgramGen.h"
#include "tests/support/ScTest.h"
#include "tests/support/TempDir.h"
#include "tests/support/TraceNodes.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace etsim::platforms::astra {
namespace {

using etsim::test::compNode;
using etsim::test::gpuCollectiveNode;
using etsim::test::pointToPointNode;
using etsim::test::ScTest;
using etsim::test::TempDir;
namespace fs = std::filesystem;
using et::TraceNode;

constexpr std::uint64_t ps = 1000; // per ns

// One all-reduce node of `bytes` on every rank: dir/job.<rank>.et.
fs::path allReduceWorkload(const TempDir& dir, std::uint32_t ranks, std::uint64_t bytes)
{
    for (std::uint32_t rank = 0; rank < ranks; ++rank) {
        et::TraceWriter writer(dir.file("job." + std::to_string(rank) + ".et"));
        writer.write(gpuCollectiveNode(1, et::CollectiveType::AllReduce, bytes));
        writer.close();
    }
    return dir.file("job");
}

std::string ringNetwork(std::uint32_t npus)
{
    return "topology: [ Ring ]\nnpus_count: [ " + std::to_string(npus) +
           " ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n";
}

// `implementation` is the all-reduce entry: "\"all-reduce-implementation\": [\"ring\"]" or
// the custom key.
std::string system(const std::string& implementation)
{
    return "{\n  \"scheduling-policy\": \"FIFO\",\n  \"endpoint-delay\": 10,\n"
           "  \"preferred-dataset-splits\": 1,\n  " +
           implementation + ",\n  \"local-mem-bw\": 1600\n}\n";
}

std::string customKey(const fs::path& prefix)
{
    return "\"all-reduce-implementation-custom\": [\"" + prefix.string() + "\"]";
}

platform::RunReport run(const TempDir& dir,
                        std::uint32_t npus,
                        const std::string& systemText,
                        Congestion congestion,
                        const fs::path& trace)
{
    AstraFiles files;
    files.network = dir.write("network.yml", ringNetwork(npus));
    files.system = dir.write("system.json", systemText);
    files.congestion = congestion;
    std::vector<std::string> warnings;
    platform::PlatformConfig config = loadAstraPlatform(files, warnings);
    platform::JobSpec job;
    job.trace = trace;
    return platform::runJob(config, job);
}

void expectEveryRankFinishesAt(const platform::RunReport& report, std::uint64_t finishNs)
{
    ASSERT_TRUE(report.finished) << report.problem;
    EXPECT_EQ(report.simulatedPs, finishNs * ps);
    for (const platform::RankBreakdown& rank : report.ranks)
        EXPECT_EQ(rank.finishPs, finishNs * ps) << "rank " << rank.rank;
}

// ASTRA-sim's shipped example (examples/system/custom_collectives/
// custom_ring_allreduce_8npus_1MB, converted from MSCCL's allreduce_a100_ring for 8 ranks and
// 1 MiB), node for node: on rank r one chain of 35 nodes, seven times SEND to r+1, RECV from
// r-1, COMP of 7 us (the rrc steps), then seven times SEND, RECV (the r steps); every message
// is 131,072 B, tag 0. Run with its network (Ring_8npus: 50 GB/s, 500 ns) and workload (one
// all-reduce of 1 MiB).
fs::path shippedExample(const TempDir& dir)
{
    constexpr std::uint32_t ranks = 8;
    constexpr std::uint64_t message = 131072;
    for (std::uint32_t rank = 0; rank < ranks; ++rank) {
        et::TraceWriter writer(dir.file("custom_allreduce." + std::to_string(rank) + ".et"));
        const int next = static_cast<int>((rank + 1) % ranks);
        const int previous = static_cast<int>((rank + ranks - 1) % ranks);
        const int self = static_cast<int>(rank);
        std::uint64_t id = 0;
        std::vector<std::uint64_t> after;
        auto add = [&](TraceNode node) {
            after = {node.id};
            writer.write(node);
        };
        for (int step = 0; step < 14; ++step) {
            add(pointToPointNode(id++, true, self, next, message, 0, after));
            add(pointToPointNode(id++, false, self, previous, message, 0, after));
            if (step < 7)
                add(compNode(id++, after, {}, 7));
        }
        writer.close();
    }
    return dir.file("custom_allreduce");
}

// delta = floor(500 + 131,072 / 53.6870912) = floor(500 + 2,441.4) = 2,941 ns per message
// (both backends: one hop, and each link carries one message at a time). Each rank's chain
// waits for its own send to arrive, and the message of its left neighbour arrives at the
// same instant, so each RECV completes at once: 14 x 2,941 + 7 x 7,000 = 90,174 ns.
// The built-in ring in the same system (ASTRA-sim's custom_collective.json has no endpoint
// delay and local-mem-bw 50) would take 14 x 2,941 + 7 x 3 floor(131,072 / 50) = 96,215 ns:
// its reductions cost 7,863 ns each where the converter wrote 7 us COMP nodes.
void shippedExampleRun(Congestion congestion)
{
    TempDir dir;
    fs::path prefix = shippedExample(dir);
    std::string json = "{\n  \"scheduling-policy\": \"FIFO\",\n  \"preferred-dataset-splits\": 1,\n"
                       "  " +
                       customKey(prefix) + ",\n  \"local-mem-bw\": 50\n}\n";
    platform::RunReport report = run(dir, 8, json, congestion, allReduceWorkload(dir, 8, 1 << 20));
    expectEveryRankFinishesAt(report, 90174);
    ASSERT_EQ(report.collectives.size(), 1U);
    EXPECT_EQ(report.collectives[0].type, "all_reduce");
}

TEST_F(ScTest, AstraShippedCustomRingExampleTakes90174NsUnaware)
{
    shippedExampleRun(Congestion::Unaware);
}

TEST_F(ScTest, AstraShippedCustomRingExampleTakes90174NsAware)
{
    shippedExampleRun(Congestion::Aware);
}

// The ring all-reduce `etsim gen collective --ranks 4 --format chakra --bytes 1MiB` writes:
// per rank a chain of 12 nodes, SEND then six times RECV -> SEND (rrs, rrcs, rcs) ending in a
// RECV (r), every message 1 MiB / 4 = 262,144 B, no COMP node (the reductions are part of the
// receives). delta = floor(500 + 262,144 / 53.6870912) = floor(500 + 4,882.8) = 5,382 ns; as
// above every RECV completes when the rank's own send arrives, so the all-reduce takes
// 6 x 5,382 = 32,292 ns whatever endpoint-delay and local-mem-bw say.
fs::path generatedRing(const TempDir& dir)
{
    fs::path prefix = dir.file("ring");
    platform::writeChakraAlgorithm(
        platform::generateProgram(net::AlgorithmKind::Ring, CollectiveType::AllReduce, 4),
        prefix.string(),
        1 << 20);
    return prefix;
}

void generatedRingRun(Congestion congestion)
{
    TempDir dir;
    platform::RunReport report = run(dir,
                                     4,
                                     system(customKey(generatedRing(dir))),
                                     congestion,
                                     allReduceWorkload(dir, 4, 1 << 20));
    expectEveryRankFinishesAt(report, 32292);
}

TEST_F(ScTest, AstraGeneratedRingThroughTheCustomKeyTakes32292NsUnaware)
{
    generatedRingRun(Congestion::Unaware);
}

TEST_F(ScTest, AstraGeneratedRingThroughTheCustomKeyTakes32292NsAware)
{
    generatedRingRun(Congestion::Aware);
}

// The built-in ring on the same files: T = e + 6 (delta + e) + 3 rho with e = 10 and
// rho = 3 floor(262,144 / 1,600) = 489: 10 + 6 x 5,392 + 3 x 489 = 33,829 ns, 1,537 ns more
// than the custom ring: seven endpoint delays and three reductions, which ASTRA-sim charges
// its built-in algorithms but not a custom one.
TEST_F(ScTest, AstraBuiltInRingOnTheSameFilesTakes33829Ns)
{
    TempDir dir;
    platform::RunReport report = run(dir,
                                     4,
                                     system("\"all-reduce-implementation\": [\"ring\"]"),
                                     Congestion::Unaware,
                                     allReduceWorkload(dir, 4, 1 << 20));
    expectEveryRankFinishesAt(report, 33829);
}

// per-node-custom-implementation picks the program by the collective's node id (1 here).
TEST_F(ScTest, AstraPerNodeCustomImplementationRunsTheNamedProgram)
{
    TempDir dir;
    fs::path perNode = dir.write("per_node.yml", "1: " + generatedRing(dir).string() + "\n");
    platform::RunReport report = run(dir,
                                     4,
                                     system("\"all-reduce-implementation\": [\"ring\"],\n  "
                                            "\"per-node-custom-implementation\": \"" +
                                            perNode.string() + "\""),
                                     Congestion::Unaware,
                                     allReduceWorkload(dir, 4, 1 << 20));
    expectEveryRankFinishesAt(report, 32292);
}

// A program of 4 ranks for a collective of 8 members cannot run: the error names the program
// and both counts.
TEST_F(ScTest, AstraCustomProgramOfTheWrongSizeIsAnError)
{
    TempDir dir;
    // The fabric reports it through SystemC (an sc_report, not an etsim::Error).
    std::string error;
    try {
        run(dir,
            8,
            system(customKey(generatedRing(dir))),
            Congestion::Unaware,
            allReduceWorkload(dir, 8, 1 << 20));
    } catch (const std::exception& caught) {
        error = caught.what();
    }
    EXPECT_NE(error.find("has 4 rank files, but the collective's group has 8 members"),
              std::string::npos)
        << error;
    EXPECT_NE(error.find("ring"), std::string::npos) << error;
}

} // namespace
} // namespace etsim::platforms::astra
