// ASTRA-sim's files as an etsim platform: the mapping of every value, the warnings for keys
// etsim does not model, and the errors for setups it cannot build. No SystemC.

#include "platforms/astra/AstraPlatform.h"

#include "platforms/Job.h"
#include "platforms/astra/AstraNodes.h"
#include "platforms/collectives/ChakraAlgorithm.h"
#include "platforms/collectives/ProgramGen.h"
#include "tests/support/ErrorOf.h"
#include "tests/support/TempDir.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace etsim::platforms::astra {
namespace {

using test::errorOf;

bool hasWarning(const std::vector<std::string>& warnings, const std::string& part)
{
    for (const std::string& warning : warnings)
        if (warning.find(part) != std::string::npos)
            return true;
    return false;
}

struct AstraPlatformTest : ::testing::Test {
    test::TempDir dir;
    std::vector<std::string> warnings;

    platform::PlatformConfig load(const std::string& network,
                                  const std::string& system,
                                  const std::string& memory = "",
                                  Congestion congestion = Congestion::Aware)
    {
        AstraFiles files;
        files.network = dir.write("net.yml", network);
        files.system = dir.write("sys.json", system);
        if (!memory.empty())
            files.memory = dir.write("mem.json", memory);
        files.congestion = congestion;
        return loadAstraPlatform(files, warnings);
    }
};

// A system file as found in the wild: the keys etsim models, keys ASTRA-sim reads that etsim
// does not model, and a key of some other version.
constexpr const char* realWorldSystem = R"({
  "scheduling-policy": "FIFO",
  "endpoint-delay": 10,
  "active-chunks-per-dimension": 2,
  "preferred-dataset-splits": 8,
  "all-reduce-implementation": ["ring", "direct", "halvingDoubling"],
  "all-gather-implementation": ["ring", "direct", "ring"],
  "reduce-scatter-implementation": ["ring", "direct", "ring"],
  "all-to-all-implementation": ["direct", "direct", "direct"],
  "collective-optimization": "localBWAware",
  "local-mem-bw": 1600,
  "boost-mode": 0,
  "model-shared-bus": 0,
  "intra-dimension-scheduling": "FIFO",
  "roofline-enabled": 1,
  "peak-perf": 900,
  "my-fork-only-key": true
})";

constexpr const char* network3d = "topology: [ Ring, FullyConnected, Switch ]\n"
                                  "npus_count: [ 2, 1, 4 ]\n"
                                  "bandwidth: [ 200, 100, 50 ]\n"
                                  "latency: [ 50, 500, 2000 ]\n"
                                  "units-count: [ 2, 1, 4 ]\n";

TEST_F(AstraPlatformTest, BuildsTheWholeCompatibilityProfile)
{
    platform::PlatformConfig config = load(network3d,
                                           realWorldSystem,
                                           R"({"memory-type": "PER_NODE_MEMORY_EXPANSION",
                                               "remote-mem-latency": 250, "remote-mem-bw": 64,
                                               "num-nodes": 2, "num-npus-per-node": 4})",
                                           Congestion::Unaware);
    EXPECT_EQ(config.ranks, 8U);
    EXPECT_EQ(config.ranksPerNode, 2U);
    EXPECT_EQ(config.driver.profile, et::SchedulingProfile::Astra);
    EXPECT_EQ(config.driver.compute, et::ExecutionMode::Model); // roofline on
    EXPECT_EQ(config.driver.memory, et::ExecutionMode::Model);
    EXPECT_EQ(config.driver.communication, et::ExecutionMode::Model);
    ASSERT_TRUE(config.astra.has_value());
    EXPECT_TRUE(config.astra->roofline);
    EXPECT_DOUBLE_EQ(config.astra->peak.flopsPerSecond(), 900e12);
    EXPECT_DOUBLE_EQ(config.astra->localMemory.bytesPerSecond(), 1600e9);
    EXPECT_EQ(config.astra->remoteMemory.kind, hbm::RemoteMemoryKind::PerNode);
    EXPECT_EQ(config.astra->remoteMemory.latency.ps(), 250000U);
    EXPECT_DOUBLE_EQ(config.astra->remoteMemory.bandwidth.bytesPerSecond(), 64e9);
    EXPECT_EQ(config.astra->remoteMemory.npusPerNode, 4U);

    // The one-NPU dimension is dropped, as ASTRA-sim skips it; GB/s means GiB/s.
    const net::NetConfig& fabric = config.fabric;
    EXPECT_EQ(fabric.fidelity, net::Fidelity::AstraUnaware);
    ASSERT_EQ(fabric.dims.size(), 2U);
    EXPECT_EQ(fabric.dims[0].kind, net::DimKind::Ring);
    EXPECT_EQ(fabric.dims[0].size, 2U);
    EXPECT_DOUBLE_EQ(fabric.dims[0].bandwidth.bytesPerSecond(), 200.0 * 1073741824.0);
    EXPECT_EQ(fabric.dims[0].latency.ps(), 50000U);
    EXPECT_EQ(fabric.dims[1].kind, net::DimKind::Switch);
    EXPECT_EQ(fabric.dims[1].size, 4U);
    EXPECT_EQ(fabric.dims[1].latency.ps(), 2000000U);
    EXPECT_EQ(fabric.algorithm(CollectiveType::AllReduce, 0), net::AlgorithmKind::Ring);
    EXPECT_EQ(fabric.algorithm(CollectiveType::AllReduce, 1), net::AlgorithmKind::HalvingDoubling);
    EXPECT_EQ(fabric.algorithm(CollectiveType::AllToAll, 0), net::AlgorithmKind::Direct);
    EXPECT_EQ(fabric.chunks, 8U);
    EXPECT_EQ(fabric.activeChunks, 2U);
    EXPECT_EQ(fabric.endpointDelay.ps(), 10000U);
    EXPECT_DOUBLE_EQ(fabric.localMemoryBandwidth.bytesPerSecond(), 1600e9);
    EXPECT_EQ(fabric.optimization, net::CollectiveOptimization::LocalBwAware);
    EXPECT_EQ(fabric.messageDelay.ps(), 0U);
    EXPECT_DOUBLE_EQ(fabric.nicBandwidth.bytesPerSecond(), 0.0);

    // The report shows every resolved value.
    const nlohmann::ordered_json& resolved = config.resolved;
    EXPECT_EQ(resolved["profile"], "astra");
    EXPECT_EQ(resolved["compute"]["model"], "roofline");
    EXPECT_EQ(resolved["memory"]["type"], "PER_NODE_MEMORY_EXPANSION");
    EXPECT_EQ(resolved["memory"]["num_npus_per_node"], 4);
    EXPECT_EQ(resolved["fabric"]["fidelity"], "astra_unaware");
    EXPECT_EQ(resolved["fabric"]["dims"].size(), 3U);
    EXPECT_EQ(resolved["fabric"]["dims"][1]["modelled"], false);
    EXPECT_DOUBLE_EQ(resolved["fabric"]["dims"][0]["bytes_per_ns"].get<double>(), 214.7483648);
    EXPECT_EQ(resolved["fabric"]["collectives"]["all_reduce"][2], "halvingDoubling");
    EXPECT_EQ(resolved["fabric"]["collectives"]["scheduling_policy"], "FIFO");
    EXPECT_EQ(resolved["fabric"]["collectives"]["preferred_dataset_splits"], 8);

    // Real files load; each ignored key is named with its place.
    EXPECT_TRUE(hasWarning(warnings, "net.yml:5:1: units-count: unknown key, ignored"));
    EXPECT_TRUE(hasWarning(warnings, "boost-mode: accepted, not modelled by etsim"));
    EXPECT_TRUE(hasWarning(warnings, "model-shared-bus: accepted, not modelled by etsim"));
    EXPECT_TRUE(
        hasWarning(warnings, "intra-dimension-scheduling: accepted, not modelled by etsim"));
    EXPECT_TRUE(hasWarning(warnings, "my-fork-only-key: unknown key, ignored"));
    EXPECT_FALSE(hasWarning(warnings, "peak-perf"));
}

TEST_F(AstraPlatformTest, ReplayWithoutRooflineAndNoMemoryFile)
{
    platform::PlatformConfig config =
        load("topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n",
             R"({"all-reduce-implementation": ["ring"], "all-gather-implementation": ["ring"],
                 "reduce-scatter-implementation": ["ring"], "all-to-all-implementation": ["ring"],
                 "local-mem-bw": 1600})");
    EXPECT_EQ(config.driver.compute, et::ExecutionMode::Replay);
    EXPECT_FALSE(config.astra->roofline);
    EXPECT_EQ(config.astra->remoteMemory.kind, hbm::RemoteMemoryKind::None);
    EXPECT_EQ(config.fabric.fidelity, net::Fidelity::AstraAware);
    EXPECT_EQ(config.fabric.chunks, 1U);
    EXPECT_EQ(config.fabric.activeChunks, 1U);
    EXPECT_EQ(config.fabric.optimization, net::CollectiveOptimization::Baseline);
    EXPECT_EQ(config.resolved["memory"]["type"], "none (no --astra-memory)");
    EXPECT_EQ(config.resolved["compute"]["model"], "replay");
    EXPECT_TRUE(warnings.empty());
}

TEST_F(AstraPlatformTest, AwareOnSeveralDimensionsWarns)
{
    load("topology: [ Ring, Switch ]\nnpus_count: [ 2, 4 ]\nbandwidth: [ 50, 50 ]\n"
         "latency: [ 500, 500 ]\n",
         R"({"all-reduce-implementation": ["ring", "ring"],
             "all-gather-implementation": ["ring", "ring"],
             "reduce-scatter-implementation": ["ring", "ring"],
             "all-to-all-implementation": ["ring", "ring"], "local-mem-bw": 1600})");
    ASSERT_EQ(warnings.size(), 1U);
    EXPECT_NE(warnings[0].find("--astra-congestion aware on a 2-dimensional network: ASTRA-sim's "
                               "congestion-aware backend accepts only 1-D topologies"),
              std::string::npos)
        << warnings[0];
}

TEST_F(AstraPlatformTest, ErrorsNameTheFileAndTheFix)
{
    const std::string lists = R"("all-gather-implementation": ["ring"],
        "reduce-scatter-implementation": ["ring"], "all-to-all-implementation": ["ring"],
        "local-mem-bw": 1600})";
    const std::string ring4 =
        "topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n";
    std::string oneRing =
        errorOf([&] { load(ring4, R"({"all-reduce-implementation": ["oneRing"], )" + lists); });
    EXPECT_NE(oneRing.find("sys.json: all-reduce-implementation: oneRing (one algorithm over the "
                           "whole network flattened to one dimension) is not modelled by etsim; "
                           "give one implementation per dimension"),
              std::string::npos)
        << oneRing;
    std::string single = errorOf([&] {
        load("topology: [ Ring ]\nnpus_count: [ 1 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n",
             R"({"all-reduce-implementation": ["ring"], )" + lists);
    });
    EXPECT_NE(single.find("net.yml: npus_count: the network has 1 NPU; etsim's fabric needs at "
                          "least 2"),
              std::string::npos)
        << single;
    std::string shortList = errorOf([&] {
        load("topology: [ Ring, Switch ]\nnpus_count: [ 2, 4 ]\nbandwidth: [ 50, 50 ]\n"
             "latency: [ 500, 500 ]\n",
             R"({"all-reduce-implementation": ["ring"], )" + lists);
    });
    EXPECT_NE(shortList.find("all-reduce-implementation lists 1 implementation(s) but the "
                             "network"),
              std::string::npos)
        << shortList;
}

// Bad custom-collective traces fail when the platform is built, naming the system file's
// entry, the trace file and what to do.
TEST_F(AstraPlatformTest, CustomCollectiveTracesThatCannotBeReadAreErrors)
{
    const std::string ring = "topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ 50 ]\n"
                             "latency: [ 500 ]\n";
    auto systemNaming = [&](const std::string& prefix) {
        return "{\"local-mem-bw\": 50,\n \"all-reduce-implementation-custom\": [\"" + prefix +
               "\"]}\n";
    };
    std::string absent = errorOf([&] { load(ring, systemNaming("nowhere/algo")); });
    EXPECT_NE(absent.find("sys.json:2:"), std::string::npos) << absent;
    EXPECT_NE(absent.find("all-reduce-implementation-custom[0]: nowhere/algo.0.et: no such file"),
              std::string::npos)
        << absent;
    EXPECT_NE(absent.find("relative to the working directory"), std::string::npos) << absent;

    // Rank files 0, 1 and 3 of a 4-rank ring: the gap is named.
    std::string prefix = dir.file("ring").string();
    platform::writeChakraAlgorithm(
        platform::generateProgram(net::AlgorithmKind::Ring, CollectiveType::AllReduce, 4),
        prefix,
        1 << 20);
    std::filesystem::remove(prefix + ".2.et");
    std::string gap = errorOf([&] { load(ring, systemNaming(prefix)); });
    EXPECT_NE(gap.find("all-reduce-implementation-custom[0]: " + prefix + ".2.et: missing, but " +
                       prefix + ".3.et exists"),
              std::string::npos)
        << gap;

    // Without its last file the ring talks to a rank that has none.
    std::filesystem::remove(prefix + ".3.et");
    std::string peer = errorOf([&] { load(ring, systemNaming(prefix)); });
    EXPECT_NE(peer.find("is not an algorithm rank of " + prefix +
                        " (0..1, one PREFIX.<rank>.et "
                        "each)"),
              std::string::npos)
        << peer;
}

// A system file may leave out collectives its workload does not run (ASTRA-sim's example
// custom_collective.json has only the all-reduce key); running one is an error naming the key.
TEST_F(AstraPlatformTest, AbsentImplementationListLoadsButCannotRun)
{
    platform::PlatformConfig config =
        load("topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n",
             "{\"local-mem-bw\": 50, \"all-reduce-implementation\": [\"ring\"]}\n");
    const std::string& missing = config.fabric.missingAlgorithm[3]; // all_to_all
    EXPECT_NE(missing.find("sys.json has no all-to-all-implementation (nor "
                           "all-to-all-implementation-custom)"),
              std::string::npos)
        << missing;
    EXPECT_TRUE(config.fabric.missingAlgorithm[0].empty()); // all_reduce
}

TEST(AstraRoofline, TruncatesLikeAstraSim)
{
    // Memory-bound: 1,234,567 B at 1e12 B/s = 1,234.567 ns -> 1,234.
    EXPECT_EQ(rooflineNs(2000000, 1234567, 100e12, 1000e9), 1234U);
    // Compute-bound: 1.23456789e11 FLOP at 1e14 FLOP/s = 1,234,567.89 ns -> 1,234,567.
    EXPECT_EQ(rooflineNs(123456789000, 1000000, 100e12, 1000e9), 1234567U);
    // tensor_size 0 or num_ops 0: skipped.
    EXPECT_EQ(rooflineNs(5000, 0, 100e12, 1000e9), 0U);
    EXPECT_EQ(rooflineNs(0, 5000, 100e12, 1000e9), 0U);
}

TEST(AstraExposedCommunication, CountsHostWorkAsExposed)
{
    using et::Engine;
    platform::RankBreakdown b = platform::breakdown(
        0,
        10000,
        {{0, 4000, Engine::Host}, {4000, 6000, Engine::Compute}, {6000, 9000, Engine::Memory}});
    EXPECT_EQ(b.computePs, 6000U);                  // host and GPU compute
    EXPECT_EQ(b.astraExposedCommPs, 10000U - 2000); // only GPU compute is subtracted
}

TEST(AstraCongestion, ParsesBothBackends)
{
    EXPECT_EQ(parseCongestion("aware"), Congestion::Aware);
    EXPECT_EQ(parseCongestion("unaware"), Congestion::Unaware);
    EXPECT_FALSE(parseCongestion("Aware").has_value());
    EXPECT_STREQ(congestionName(Congestion::Unaware), "unaware");
}

} // namespace
} // namespace etsim::platforms::astra
