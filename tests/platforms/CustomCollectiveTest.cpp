// Custom collective algorithms: MSCCL programs written by the generator run in exactly the
// time of the built-in algorithm they transcribe; bad files get errors naming file, line and
// element (the verifier's own tests: CollectiveVerifierTest.cpp).

#include "kernel/Error.h"
#include "models/net/CommEngine.h"
#include "models/net/NetConfig.h"
#include "models/net/collectives/CustomAlgorithm.h"
#include "models/net/collectives/ProgramVerifier.h"
#include "platforms/PlatformConfig.h"
#include "platforms/collectives/ChakraAlgorithm.h"
#include "platforms/collectives/CustomAlgorithms.h"
#include "platforms/collectives/MscclReader.h"
#include "platforms/collectives/ProgramGen.h"
#include "tests/models/net/NetTestSupport.h"
#include "tests/platforms/MscclTestPrograms.h"
#include "tests/support/ErrorOf.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace etsim::platform {
namespace {

namespace fs = std::filesystem;
using net::AlgorithmKind;
using ProgramOpKindForTest = net::ProgramOpKind;

// A scratch folder removed at the end of the test.
class Scratch {
public:
    Scratch()
        : folder(fs::temp_directory_path() /
                 ("etsim-custom-" +
                  std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
                  ::testing::UnitTest::GetInstance()->current_test_info()->name()))
    {
        fs::create_directories(folder);
    }
    ~Scratch() { fs::remove_all(folder); }
    std::string write(const std::string& name, const std::string& text) const
    {
        fs::path file = folder / name;
        std::ofstream(file) << text;
        return file.string();
    }

private:
    fs::path folder;
};

std::string platformYaml(const std::string& fidelity,
                         const std::string& kind,
                         std::uint32_t size,
                         const std::string& allReduce)
{
    return "fidelity: " + fidelity +
           "\ntopology:\n  kind: multi_dim\n  dims:\n    - {kind: " + kind +
           ", size: " + std::to_string(size) +
           ", bandwidth: \"100 GB/s\", latency: \"500 ns\"}\n"
           "nic: {message_delay: \"30 ns\"}\n"
           "collectives:\n  algorithms: {all_reduce: [" +
           allReduce +
           "]}\n  chunks: 4\n  active_chunks: 2\n  endpoint_delay: \"10 ns\"\n"
           "  local_memory_bandwidth: \"2000 GB/s\"\n";
}

struct Timing {
    std::vector<std::uint64_t> donePs;
    std::uint64_t endPs = 0;
    double busBandwidth = 0;
    std::uint64_t messages = 0;
    std::vector<double> linkBytes;
    std::vector<std::uint64_t> linkBusyPs;
};

// One all-reduce on every rank, with the stats a report takes from the engine.
Timing timeAllReduce(const net::NetConfig& config, std::uint64_t bytes)
{
    std::uint32_t ranks = config.endpointCount();
    net::CommEngine engine(config, ranks);
    Timing timing;
    timing.donePs.assign(ranks, 0);
    engine.setCompletion([&](std::uint64_t token) { timing.donePs[token] = engine.nowPs(); });
    for (std::uint32_t rank = 0; rank < ranks; ++rank)
        engine.post(net::test::collectiveNode(rank, CollectiveType::AllReduce, bytes), rank);
    engine.run();
    const net::CollectiveRecord& record = engine.records().at(0);
    timing.endPs = record.endPs;
    timing.busBandwidth = record.busBandwidth();
    timing.messages = engine.network().messagesSent();
    for (std::size_t link = 0; link < engine.network().linkCount(); ++link) {
        timing.linkBytes.push_back(engine.network().linkBytes(link));
        timing.linkBusyPs.push_back(engine.network().linkBusyPs(link));
    }
    return timing;
}

TEST(CustomCollective, MscclProgramsMatchTheBuiltInAlgorithmTime)
{
    Scratch scratch;
    struct Case {
        AlgorithmKind algorithm;
        const char* name;
        const char* topology;
        std::uint32_t ranks;
    };
    const Case cases[] = {
        {AlgorithmKind::Ring, "ring", "ring", 8},
        {AlgorithmKind::Ring, "ring", "switch", 8},
        {AlgorithmKind::HalvingDoubling, "halving_doubling", "switch", 8},
        {AlgorithmKind::Direct, "direct", "fully_connected", 8},
        {AlgorithmKind::HalvingDoubling, "halving_doubling", "fully_connected", 16},
    };
    // Divisible by 4 chunks x 16 ranks, so built-in and program cut the same message sizes.
    constexpr std::uint64_t bytes = 64ULL << 20;
    for (const Case& c : cases)
        for (const char* fidelity : {"flow", "astra_aware", "astra_unaware"}) {
            SCOPED_TRACE(std::string(c.name) + " " + c.topology + " " + std::to_string(c.ranks) +
                         " " + fidelity);
            std::string base = std::string(c.name) + std::to_string(c.ranks);
            net::CollectiveProgram program =
                generateProgram(c.algorithm, CollectiveType::AllReduce, c.ranks);
            std::string xml = scratch.write(base + ".xml", writeMsccl(program));
            std::string prefix = scratch.write(base, "");
            writeChakraAlgorithm(program, prefix, bytes);
            net::NetConfig builtIn =
                net::loadNetConfigString(platformYaml(fidelity, c.topology, c.ranks, c.name));
            Timing expected = timeAllReduce(builtIn, bytes);
            EXPECT_GT(expected.endPs, 0U);
            for (const std::string& entry : {"{msccl: " + xml + "}", "{chakra: " + prefix + "}"}) {
                SCOPED_TRACE(entry);
                net::NetConfig custom =
                    net::loadNetConfigString(platformYaml(fidelity, c.topology, c.ranks, entry));
                loadCustomAlgorithms(custom);
                ASSERT_NE(custom.customAlgorithm(CollectiveType::AllReduce, 0), nullptr);
                Timing got = timeAllReduce(custom, bytes);
                EXPECT_EQ(got.donePs, expected.donePs);
                EXPECT_EQ(got.endPs, expected.endPs);
                EXPECT_DOUBLE_EQ(got.busBandwidth, expected.busBandwidth);
                EXPECT_EQ(got.messages, expected.messages);
                EXPECT_EQ(got.linkBytes, expected.linkBytes);
                EXPECT_EQ(got.linkBusyPs, expected.linkBusyPs);
            }
        }
}

// The comparison above can fail: the other algorithm's program does not give the same time.
TEST(CustomCollective, AnotherProgramGivesAnotherTime)
{
    Scratch scratch;
    std::string xml = scratch.write(
        "ring8.xml",
        writeMsccl(generateProgram(AlgorithmKind::Ring, CollectiveType::AllReduce, 8)));
    net::NetConfig halving =
        net::loadNetConfigString(platformYaml("flow", "switch", 8, "halving_doubling"));
    net::NetConfig ring =
        net::loadNetConfigString(platformYaml("flow", "switch", 8, "{msccl: " + xml + "}"));
    loadCustomAlgorithms(ring);
    EXPECT_NE(timeAllReduce(ring, 64ULL << 20).endPs, timeAllReduce(halving, 64ULL << 20).endPs);
}

// A ring all-reduce program over all 4 ranks of a 2 x 2 torus (dimension 0: ranks {0,1} and
// {2,3}; dimension 1: {0,2} and {1,3}), listed with span: all, runs as one phase round the
// ranks in rank order. Every message is one 1 MB chunk of the 4 MB all-reduce: 0 -> 1 and
// 2 -> 3 cross one link (a = 500 ns + 10 us = 10.5 us), 1 -> 2 and 3 -> 0 two (b = 11 us).
// A rank's step ends when its predecessor's message arrives; by hand, after steps 1, 3 and 5
// every rank has waited a + b more, so all finish at 3 (a + b) = 64.5 us. The links of the
// four pairs are distinct, so flow and analytical agree.
TEST(CustomCollective, AProgramSpanningAllDimensionsRunsOverEveryRankInRankOrder)
{
    Scratch scratch;
    std::string xml = scratch.write(
        "ring4.xml",
        writeMsccl(generateProgram(AlgorithmKind::Ring, CollectiveType::AllReduce, 4)));
    auto yaml = [&](const std::string& fidelity, const std::string& list) {
        return "fidelity: " + fidelity +
               "\ntopology:\n  kind: multi_dim\n  dims:\n"
               "    - {kind: ring, size: 2, bandwidth: \"100 GB/s\", latency: \"500 ns\"}\n"
               "    - {kind: ring, size: 2, bandwidth: \"100 GB/s\", latency: \"500 ns\"}\n"
               "collectives:\n  algorithms: {all_reduce: [" +
               list + "]}\n";
    };
    for (const char* fidelity : {"analytical", "flow"}) {
        SCOPED_TRACE(fidelity);
        net::NetConfig config =
            net::loadNetConfigString(yaml(fidelity, "{msccl: " + xml + ", span: all}"));
        loadCustomAlgorithms(config);
        ASSERT_NE(config.wholeGroupAlgorithm(CollectiveType::AllReduce), nullptr);
        Timing got = timeAllReduce(config, 4000000);
        EXPECT_EQ(got.donePs, std::vector<std::uint64_t>(4, 64500000));
        EXPECT_EQ(got.messages, 4U * 6U);
        // A collective over dimension 0 only cannot run a program for every rank.
        net::CommEngine engine(config, 4);
        EtNodeInfo partial = net::test::collectiveNode(0, CollectiveType::AllReduce, 4000000);
        partial.involvedDims = 1;
        EXPECT_THAT(test::errorOf([&] { engine.post(partial, 0); }),
                    ::testing::HasSubstr("spans all dimensions (span: all), but this collective "
                                         "leaves dimension 1 out (involved_dims)"));
    }
    // Per dimension (the default span) the program would run as each dimension's phase: the
    // reduce-scatter phases of local_bw_aware, or, with baseline, all-reduces on 2-member
    // lines; both are refused.
    for (const auto& [extra, expected] :
         {std::pair<std::string, std::string>{"",
                                              "is a all_reduce algorithm, but it is asked "
                                              "to run a reduce_scatter phase"},
          {"  optimization: baseline\n", "has 4 ranks but the group it runs on has 2 members"}}) {
        net::NetConfig perDimension =
            net::loadNetConfigString(yaml("flow", "{msccl: " + xml + "}") + extra);
        loadCustomAlgorithms(perDimension);
        EXPECT_EQ(perDimension.wholeGroupAlgorithm(CollectiveType::AllReduce), nullptr);
        EXPECT_THAT(test::errorOf([&] { timeAllReduce(perDimension, 4000000); }),
                    ::testing::HasSubstr(expected));
    }
    // A program over all dimensions cannot share its list with per-dimension entries.
    EXPECT_THAT(test::errorOf([&] {
                    net::loadNetConfigString(yaml("flow", "{msccl: " + xml + ", span: all}, ring"));
                }),
                ::testing::HasSubstr("a program that spans all dimensions (span: all) runs alone"));
}

// The double-binary-tree program on 3 ranks, by hand (analytical: every message of 1 MB, half
// the 2 MB all-reduce, takes 500 ns + 1 MB / 100 GB/s = 10.5 us; no delays, no reduction
// cost). Tree 0: root 0, children 1 and 2; tree 1: root 2, children 1 and 0.
//   0 us     ranks 1 and 2 send their half 0 up to 0
//   10.5 us  rank 0 has reduced half 0: sends it down to 1 and 2, and its half 1 up to 2
//   21 us    rank 1 has half 0: sends its half 1 up to 2 (its tree-1 part waits for tree 0)
//   31.5 us  rank 2 has reduced half 1: sends it down to 1 and 0, and is done
//   42 us    ranks 0 and 1 have half 1
// The built-in algorithm runs the trees on separate chunks side by side: 21 us.
TEST(CustomCollective, DoubleBinaryTreeProgramRunsEachRanksTreesInTurn)
{
    Scratch scratch;
    net::CollectiveProgram program =
        generateProgram(AlgorithmKind::DoubleBinaryTree, CollectiveType::AllReduce, 3);
    std::string xml = scratch.write("dbt3.xml", writeMsccl(program));
    std::string prefix = scratch.write("dbt3", "");
    constexpr std::uint64_t bytes = 2000000;
    writeChakraAlgorithm(program, prefix, bytes);
    auto yaml = [](const std::string& algorithm, std::uint32_t chunks) {
        return "fidelity: analytical\ntopology:\n  kind: multi_dim\n  dims:\n    - {kind: "
               "fully_connected, size: 3, bandwidth: \"100 GB/s\", latency: \"500 ns\"}\n"
               "collectives:\n  algorithms: {all_reduce: [" +
               algorithm + "]}\n  chunks: " + std::to_string(chunks) + "\n  active_chunks: 2\n";
    };
    for (const std::string& entry : {"{msccl: " + xml + "}", "{chakra: " + prefix + "}"}) {
        SCOPED_TRACE(entry);
        net::NetConfig custom = net::loadNetConfigString(yaml(entry, 1));
        loadCustomAlgorithms(custom);
        Timing got = timeAllReduce(custom, bytes);
        EXPECT_EQ(got.donePs, (std::vector<std::uint64_t>{42000000, 42000000, 31500000}));
        EXPECT_EQ(got.messages, 8U); // 2 (p - 1) per tree
    }
    Timing builtIn = timeAllReduce(net::loadNetConfigString(yaml("double_binary_tree", 2)), bytes);
    EXPECT_EQ(builtIn.endPs, 21000000U);
}

} // namespace
} // namespace etsim::platform

namespace etsim::platform {
namespace {

using test::loadError;
using test::mutate;
using test::replaceFirst;
using test::ring4;
using test::verifyError;

TEST(MscclReader, BadFilesNameFileLineAndElement)
{
    std::string good = ring4();
    EXPECT_NE(loadError("<algo name=\"x\" coll=\"allreduce\"").find("algo.xml:1: malformed XML"),
              std::string::npos)
        << loadError("<algo name=\"x\"");
    std::string unknown = loadError(mutate(good, 1, "type=\"rrs\"", "type=\"rrx\""));
    EXPECT_NE(unknown.find("<step>: unknown step type \"rrx\""), std::string::npos) << unknown;
    EXPECT_NE(unknown.find("algo.xml:"), std::string::npos) << unknown;
    std::string range = verifyError(mutate(good, 2, "srcoff=\"1\"", "srcoff=\"9\""));
    EXPECT_NE(range.find("source input chunk 9 with cnt 1 is out of range: the input buffer "
                         "has 4 chunks"),
              std::string::npos)
        << range;
    EXPECT_NE(range.find("(gpu 2 tb 0 step"), std::string::npos) << range;
    std::string attribute = loadError(mutate(good, 0, "cnt=\"1\"", "cnt=\"1\" loop=\"2\""));
    EXPECT_NE(attribute.find("<step>: the attribute loop is not modelled"), std::string::npos)
        << attribute;
    std::string coll = loadError(replaceFirst(good, "allreduce", "broadcast"));
    EXPECT_NE(coll.find("algo.xml:1: <algo>: coll=\"broadcast\" is not modelled"),
              std::string::npos)
        << coll;
    std::string gpus = loadError(replaceFirst(good, "ngpus=\"4\"", "ngpus=\"5\""));
    EXPECT_NE(gpus.find("ngpus=5 but the program has 4 <gpu> elements"), std::string::npos) << gpus;
    std::string missing = loadError(mutate(good, 0, "cnt=\"1\" ", ""));
    EXPECT_NE(missing.find("<step>: needs the attribute cnt"), std::string::npos) << missing;
}

TEST(ChakraAlgorithm, RoundTripKeepsTheProgramAndMissingFilesAreNamed)
{
    Scratch scratch;
    std::string prefix = scratch.write("hd", "");
    net::CollectiveProgram program =
        generateProgram(AlgorithmKind::HalvingDoubling, CollectiveType::ReduceScatter, 8);
    writeChakraAlgorithm(program, prefix, 1 << 20);
    net::CollectiveProgram read = loadChakraAlgorithm(prefix);
    EXPECT_TRUE(read.chunksKnown);
    EXPECT_EQ(read.type, CollectiveType::ReduceScatter);
    EXPECT_EQ(net::verifyProgram(read).operations, net::verifyProgram(program).operations);
    // A reduce turned into a copy in the traces is caught as in XML.
    net::CollectiveProgram mutated = program;
    mutated.ranks[5].ops[1].kind = ProgramOpKindForTest::Recv;
    writeChakraAlgorithm(mutated, prefix, 1 << 20);
    try {
        net::verifyProgram(loadChakraAlgorithm(prefix));
        FAIL() << "accepted";
    } catch (const Error& error) {
        // Rank 5's level-0 receive keeps the upper half (chunks 4-7) without its own part;
        // rank 4 is the first whose shard lacks it, written last by its final rrc.
        std::string text = error.what();
        EXPECT_NE(text.find("rank 4, output chunk 0 holds chunk 4 reduced over ranks {0-4,6-7} "
                            "only (missing {5})"),
                  std::string::npos)
            << text;
        EXPECT_NE(text.find("hd.4.et node 5 (rrc 5)"), std::string::npos) << text;
    }
    fs::remove(prefix + ".3.et");
    try {
        loadChakraAlgorithm(prefix);
        FAIL() << "accepted";
    } catch (const Error& error) {
        EXPECT_NE(
            std::string(error.what()).find("hd.3.et: missing, but " + prefix + ".4.et exists"),
            std::string::npos)
            << error.what();
    }
}

// Rank files read by several threads give the program, and the error, of reading them in turn.
TEST(ChakraAlgorithm, ThreadsReadTheSameProgramAndTheFirstErrorInRankOrder)
{
    Scratch scratch;
    std::string prefix = scratch.write("ring", "");
    writeChakraAlgorithm(
        generateProgram(AlgorithmKind::Ring, CollectiveType::AllReduce, 16), prefix, 1 << 20);
    net::CollectiveProgram alone = loadChakraAlgorithm(prefix, 1);
    for (unsigned threads : {2U, 3U, 16U, 64U}) {
        SCOPED_TRACE(threads);
        net::CollectiveProgram read = loadChakraAlgorithm(prefix, threads);
        EXPECT_TRUE(read.chunksKnown);
        EXPECT_EQ(writeMsccl(read), writeMsccl(alone));
        ASSERT_EQ(read.rankCount(), 16U);
        for (std::uint32_t rank = 0; rank < 16; ++rank) {
            EXPECT_EQ(read.ranks[rank].names, alone.ranks[rank].names);
            for (std::uint32_t op = 0; op < read.ranks[rank].ops.size(); ++op)
                EXPECT_EQ(read.where(rank, op), alone.where(rank, op));
        }
    }
    // Rank files 14 and 15 missing: the first node (in rank order) naming rank 14 is named.
    for (const char* rank : {".14", ".15"})
        fs::rename(prefix + rank + ".et", prefix + rank + ".bak");
    std::string missing = test::errorOf([&] { loadChakraAlgorithm(prefix, 1); });
    EXPECT_NE(missing.find("ring.0.et node "), std::string::npos) << missing;
    EXPECT_NE(missing.find("talks to rank 15, but " + prefix + ".14.et is missing"),
              std::string::npos)
        << missing;
    for (unsigned threads : {2U, 5U})
        EXPECT_EQ(test::errorOf([&] { loadChakraAlgorithm(prefix, threads); }), missing);
    for (const char* rank : {".14", ".15"})
        fs::rename(prefix + rank + ".bak", prefix + rank + ".et");
    // Ranks 3 and 9 unreadable: rank 3's error, however many threads read.
    scratch.write("ring.9.et", "not a trace");
    std::string ninth = test::errorOf([&] { loadChakraAlgorithm(prefix, 1); });
    EXPECT_NE(ninth.find("ring.9.et"), std::string::npos) << ninth;
    scratch.write("ring.3.et", "not a trace");
    std::string third = test::errorOf([&] { loadChakraAlgorithm(prefix, 1); });
    EXPECT_NE(third.find("ring.3.et"), std::string::npos) << third;
    for (unsigned threads : {2U, 4U, 16U})
        EXPECT_EQ(test::errorOf([&] { loadChakraAlgorithm(prefix, threads); }), third);
}

TEST(MscclReader, PlatformFileFindsTheProgramBesideIt)
{
    Scratch scratch;
    scratch.write("ring2.xml",
                  writeMsccl(generateProgram(AlgorithmKind::Ring, CollectiveType::AllReduce, 2)));
    std::string platform = scratch.write("pair.yaml", R"(name: pair
ranks: 2
accelerator:
  preset: h100_sxm
  hbm: {preset: hbm3_h100}
fabric:
  fidelity: flow
  topology:
    kind: multi_dim
    dims:
      - {kind: switch, size: 2, bandwidth: "100 GB/s", latency: "1 us"}
  collectives:
    algorithms: {all_reduce: [{msccl: ring2.xml}]}
)");
    PlatformConfig config = loadPlatformFile(platform);
    const net::CollectiveAlgorithmIf* custom =
        config.fabric.customAlgorithm(CollectiveType::AllReduce, 0);
    ASSERT_NE(custom, nullptr);
    EXPECT_NE(std::string(custom->name()).find("ring2.xml"), std::string::npos);
    EXPECT_EQ(config.fabric.customAlgorithm(CollectiveType::AllGather, 0), nullptr);
}

TEST(MscclReader, ConfigErrorNamesTheListEntry)
{
    Scratch scratch;
    std::string bad = scratch.write("bad.xml", mutate(ring4(), 1, "type=\"rrs\"", "type=\"zz\""));
    net::NetConfig config = net::loadNetConfigString(
        platformYaml("flow", "ring", 4, "{msccl: " + bad + "}"), "platform.yaml");
    try {
        loadCustomAlgorithms(config);
        FAIL() << "accepted";
    } catch (const ConfigError& error) {
        std::string text = error.what();
        EXPECT_NE(text.find("platform.yaml:"), std::string::npos) << text;
        EXPECT_NE(text.find("bad.xml:"), std::string::npos) << text;
        EXPECT_NE(text.find("unknown step type \"zz\""), std::string::npos) << text;
    }
    // A program for another group size is refused when the collective runs.
    std::string eight = scratch.write(
        "ring8.xml",
        writeMsccl(generateProgram(AlgorithmKind::Ring, CollectiveType::AllReduce, 8)));
    net::NetConfig wrong =
        net::loadNetConfigString(platformYaml("flow", "ring", 4, "{msccl: " + eight + "}"));
    loadCustomAlgorithms(wrong);
    net::CommEngine engine(wrong, 4);
    try {
        engine.post(net::test::collectiveNode(0, CollectiveType::AllReduce, 1 << 20), 0);
        FAIL() << "accepted";
    } catch (const Error& error) {
        EXPECT_NE(std::string(error.what()).find("has 8 ranks but the group it runs on has 4"),
                  std::string::npos)
            << error.what();
    }
}

} // namespace
} // namespace etsim::platform
