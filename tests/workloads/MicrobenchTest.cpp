// Collective and point-to-point microbenchmarks: attributes, groups, message pairing, written
// traces validating clean, bounded per-rank generation at 1,024 ranks, and every error.

#include "workloads/Microbench.h"

#include "kernel/Error.h"
#include "kernel/InputLimits.h"
#include "tests/support/TempDir.h"
#include "tests/workloads/WorkloadTestSupport.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace etsim::workloads {
namespace {

using et::CollectiveType;
using et::NodeType;
using etsim::test::TempDir;
using test::generateAll;
using test::MemorySink;

TEST(Microbench, CollectiveNodesCarryTypeSizeGroupAndComputeInBetween)
{
    MicrobenchSpec spec;
    spec.ranks = 8;
    spec.groupSize = 4;
    spec.collective = CollectiveType::AllGather;
    spec.bytes = 4096;
    spec.iterations = 2;
    spec.computeFlops = 2 * 64 * 64 * 64; // a 64^3 GEMM
    Microbench bench(spec);
    MemorySink sink = generateAll(bench);
    ASSERT_EQ(sink.ranks.size(), 8U);
    // Rank 5 is in contiguous group 2 (ranks 4..7): METADATA, then (GEMM, all-gather) x 2.
    const std::vector<et::TraceNode>& nodes = sink.ranks[5];
    ASSERT_EQ(nodes.size(), 5U);
    EXPECT_EQ(nodes[0].type, NodeType::Metadata);
    EXPECT_EQ(nodes[1].type, NodeType::Comp);
    EXPECT_EQ(nodes[1].numOps(), 2 * 64 * 64 * 64);
    EXPECT_EQ(nodes[1].gemmM(), 64);
    EXPECT_EQ(nodes[1].opKind(), "gemm");
    EXPECT_EQ(nodes[1].dtype(), "bf16");
    EXPECT_EQ(nodes[1].tensorSize(), 3U * 64 * 64 * 2);
    EXPECT_EQ(nodes[2].type, NodeType::CommColl);
    EXPECT_EQ(nodes[2].commType(), static_cast<int32_t>(CollectiveType::AllGather));
    EXPECT_EQ(nodes[2].commSize(), 4096);
    EXPECT_EQ(nodes[2].pgName(), "2");
    EXPECT_EQ(nodes[2].isCpuOp(), false);
    EXPECT_EQ(nodes[2].dataDeps, std::vector<uint64_t>{1});
    EXPECT_EQ(nodes[3].dataDeps, std::vector<uint64_t>{2});
    std::vector<CommGroup> groups = bench.groupsOf(5);
    ASSERT_EQ(groups.size(), 1U);
    EXPECT_EQ(groups[0].id, 2);
    EXPECT_EQ(groups[0].ranks, (std::vector<int64_t>{4, 5, 6, 7}));
}

TEST(Microbench, StridedGroupsAndTheDefaultGroup)
{
    MicrobenchSpec spec;
    spec.ranks = 8;
    spec.groupSize = 4;
    spec.layout = GroupLayout::Strided;
    Microbench strided(spec);
    // Two groups: {0,2,4,6} (id 1) and {1,3,5,7} (id 2).
    EXPECT_EQ(strided.groupsOf(3).at(0).ranks, (std::vector<int64_t>{1, 3, 5, 7}));
    EXPECT_EQ(strided.groupsOf(3).at(0).id, 2);
    std::ostringstream json;
    writeCommGroups(strided, json);
    EXPECT_EQ(json.str(), "{\n  \"1\": [0, 2, 4, 6],\n  \"2\": [1, 3, 5, 7]\n}\n");

    spec.groupSize = 0;
    Microbench world(spec);
    EXPECT_TRUE(world.groupsOf(3).empty());
    MemorySink sink = generateAll(world);
    // No METADATA_NODE; the collective uses the default group (no pg_name).
    EXPECT_EQ(sink.ranks[3].at(0).type, NodeType::CommColl);
    EXPECT_FALSE(sink.ranks[3].at(0).pgName().has_value());
}

TEST(Microbench, RingAndPairwiseMessagesPairUpAcrossRanks)
{
    for (P2pPattern pattern : {P2pPattern::Ring, P2pPattern::Pairwise}) {
        MicrobenchSpec spec;
        spec.ranks = 8;
        spec.groupSize = 4;
        spec.pattern = pattern;
        spec.bytes = 1000;
        spec.iterations = 3;
        spec.computeMicros = 5;
        MemorySink sink = generateAll(Microbench(spec));
        std::vector<test::Message> sends;
        std::vector<test::Message> recvs;
        test::messages(sink, sends, recvs);
        EXPECT_EQ(sends.size(), 8U * 3);
        EXPECT_EQ(sends, recvs) << p2pPatternName(pattern);
        // Rank 4 (group 2 = 4..7, position 0): ring sends to 5 and receives from 7;
        // pairwise exchanges with 5.
        et::TraceNode send = test::find(sink, 4, "send.1");
        et::TraceNode recv = test::find(sink, 4, "recv.1");
        EXPECT_EQ(send.commDst(), 5);
        EXPECT_EQ(recv.commSrc(), pattern == P2pPattern::Ring ? 7 : 5);
        EXPECT_EQ(send.commTag(), 1);
        EXPECT_EQ(recv.commSize(), 1000);
        // Each iteration's messages wait for that iteration's delay.
        et::TraceNode delay = test::find(sink, 4, "delay.1");
        EXPECT_EQ(delay.durationMicros, 5U);
        EXPECT_EQ(send.dataDeps, std::vector<uint64_t>{delay.id});
        EXPECT_EQ(delay.dataDeps.size(), 2U); // the previous send and receive
    }
}

TEST(Microbench, EveryCollectiveTypeValidatesClean)
{
    TempDir dir;
    for (int32_t type = 0; type <= static_cast<int32_t>(CollectiveType::Barrier); ++type) {
        MicrobenchSpec spec;
        spec.ranks = 8;
        spec.groupSize = 2;
        spec.layout = type % 2 == 0 ? GroupLayout::Contiguous : GroupLayout::Strided;
        spec.collective = static_cast<CollectiveType>(type);
        spec.iterations = 2;
        spec.computeFlops = 1000000;
        et::ValidationReport report =
            test::writeAndValidate(Microbench(spec), dir.path() / std::to_string(type));
        EXPECT_EQ(report.errors + report.warnings, 0U) << et::collectiveTypeName(type) << "\n"
                                                       << test::findingsText(report);
        EXPECT_EQ(report.ranks, 8U);
    }
    for (P2pPattern pattern : {P2pPattern::Ring, P2pPattern::Pairwise}) {
        MicrobenchSpec spec;
        spec.pattern = pattern;
        et::ValidationReport report = test::writeAndValidate(
            Microbench(spec), dir.path() / std::string(p2pPatternName(pattern)));
        EXPECT_TRUE(report.ok()) << test::findingsText(report);
    }
}

TEST(Microbench, ThousandRanksAreWrittenOneAtATime)
{
    TempDir dir;
    MicrobenchSpec spec;
    spec.ranks = 1024;
    spec.groupSize = 8;
    spec.iterations = 4;
    spec.computeFlops = 1 << 20;
    WriteOptions options;
    options.folder = dir.path() / "big";
    options.name = "ar";
    WriteSummary summary = writeWorkload(Microbench(spec), options);
    EXPECT_EQ(summary.ranks, 1024U);
    // Per rank: METADATA + 4 x (GEMM + all-reduce).
    EXPECT_EQ(summary.nodes, 1024U * 9);
    EXPECT_TRUE(std::filesystem::exists(options.folder / "ar.1023.et"));
    EXPECT_FALSE(std::filesystem::exists(options.folder / "ar.1024.et"));
    et::ValidationReport report = et::TraceValidator().validate(summary.prefix);
    EXPECT_EQ(report.ranks, 1024U);
    EXPECT_EQ(report.errors + report.warnings, 0U) << test::findingsText(report);
    std::ifstream groups(summary.commGroupFile);
    std::stringstream text;
    text << groups.rdbuf();
    EXPECT_NE(text.str().find("\"128\": [1016, 1017, 1018, 1019, 1020, 1021, 1022, 1023]"),
              std::string::npos);
}

TEST(Microbench, NamesParse)
{
    EXPECT_EQ(collectiveFromName("all-reduce"), CollectiveType::AllReduce);
    EXPECT_EQ(collectiveFromName("ALL_TO_ALL"), CollectiveType::AllToAll);
    EXPECT_EQ(collectiveFromName("reducescatter"), CollectiveType::ReduceScatter);
    EXPECT_FALSE(collectiveFromName("allsum").has_value());
    EXPECT_EQ(p2pPatternFromName("pairwise"), P2pPattern::Pairwise);
    EXPECT_FALSE(p2pPatternFromName("mesh").has_value());
}

void expectError(MicrobenchSpec spec, const std::string& message)
{
    try {
        Microbench bench(spec);
        ADD_FAILURE() << "no error; expected: " << message;
    } catch (const Error& error) {
        EXPECT_NE(std::string(error.what()).find(message), std::string::npos) << error.what();
    }
}

TEST(Microbench, BadSpecsAreRejectedWithTheField)
{
    MicrobenchSpec spec;
    spec.ranks = 0;
    expectError(spec, "microbenchmark: ranks must be >= 1");
    spec = {};
    spec.groupSize = 3;
    expectError(spec, "group size 3 must divide the rank count 8");
    spec = {};
    spec.groupSize = 16;
    expectError(spec, "group size 16 must divide the rank count 8");
    spec = {};
    spec.bytes = 0;
    expectError(spec, "size must be > 0 bytes");
    spec = {};
    spec.iterations = 0;
    expectError(spec, "iterations must be >= 1");
    spec = {};
    spec.computeFlops = -1;
    expectError(spec, "compute FLOPs must be >= 0");
    spec = {};
    spec.pattern = P2pPattern::Ring;
    spec.groupSize = 1;
    expectError(spec, "needs groups of at least 2 ranks");
    spec = {};
    spec.ranks = 6;
    spec.groupSize = 3;
    spec.pattern = P2pPattern::Pairwise;
    expectError(spec, "the pairwise pattern needs an even group size, got 3");
    // A barrier moves nothing: size 0 is fine there.
    spec = {};
    spec.collective = CollectiveType::Barrier;
    spec.bytes = 0;
    EXPECT_NO_THROW(Microbench{spec});
}

TEST(Microbench, WriteErrorsNameThePath)
{
    TempDir dir;
    WriteOptions options;
    options.folder = dir.path();
    options.name = "a/b";
    try {
        writeWorkload(Microbench({}), options);
        ADD_FAILURE() << "no error";
    } catch (const Error& error) {
        EXPECT_NE(std::string(error.what()).find("trace name \"a/b\": give a plain file prefix"),
                  std::string::npos);
    }
    std::filesystem::path file = dir.write("file", "x");
    options.name = "job";
    options.folder = file / "sub";
    try {
        writeWorkload(Microbench({}), options);
        ADD_FAILURE() << "no error";
    } catch (const Error& error) {
        EXPECT_NE(std::string(error.what()).find("cannot create the output folder"),
                  std::string::npos)
            << error.what();
    }
}

// The work one option can cause is bounded: a rank count beyond etsim's limit is refused at
// once, and a rank with more nodes than the reader takes from one file is refused while it is
// written, its files removed.
TEST(Microbench, RanksAndNodesBeyondTheLimitsAreRefused)
{
    TempDir dir;
    WriteOptions options;
    options.folder = dir.path();
    options.name = "big";
    MicrobenchSpec spec;
    spec.ranks = maxRanks + 2;
    spec.groupSize = 2;
    try {
        writeWorkload(Microbench(spec), options);
        ADD_FAILURE() << "no error";
    } catch (const Error& error) {
        EXPECT_EQ(std::string(error.what()),
                  "1048578 ranks is more than 1048576, the most etsim generates and runs; "
                  "generate a smaller cluster");
    }
    EXPECT_TRUE(std::filesystem::is_empty(dir.path()));

    spec = {};
    spec.iterations = 40;
    options.maxNodesPerRank = 25;
    try {
        writeWorkload(Microbench(spec), options);
        ADD_FAILURE() << "no error";
    } catch (const Error& error) {
        EXPECT_EQ(std::string(error.what()),
                  "rank 0 would have more than 25 nodes, the most etsim reads from one rank "
                  "file; generate fewer layers, micro-batches or iterations");
    }
    for (const auto& entry : std::filesystem::directory_iterator(dir.path()))
        EXPECT_EQ(entry.path().extension(), ".json") << entry.path();
}

} // namespace
} // namespace etsim::workloads
