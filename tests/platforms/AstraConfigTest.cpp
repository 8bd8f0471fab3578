// ASTRA-sim configuration files read into typed structs: values, quirks, warnings and errors.
#include "platforms/astra/AstraConfig.h"

#include "kernel/Error.h"
#include "tests/support/ErrorOf.h"
#include "tests/support/TempDir.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace etsim::platforms::astra {
namespace {

using test::errorOf;

struct AstraConfigTest : ::testing::Test {
    test::TempDir dir;
    std::vector<std::string> warnings;
};

TEST_F(AstraConfigTest, NetworkBandwidthIsGibibytesPerSecond)
{
    auto file = dir.write("net.yml",
                          "topology: [ Ring, FullyConnected, Switch ]\n"
                          "npus_count: [ 2, 8, 4 ]\n"
                          "bandwidth: [ 50.0, 200, 400.0 ]  # GB/s\n"
                          "latency: [ 500.0, 700, 936.25 ]  # ns\n");
    NetworkConfig network = loadNetworkConfig(file, warnings);
    ASSERT_EQ(network.dims.size(), 3u);
    EXPECT_EQ(network.npus(), 64u);
    EXPECT_EQ(network.dims[0].topology, Topology::Ring);
    EXPECT_EQ(network.dims[1].topology, Topology::FullyConnected);
    EXPECT_EQ(network.dims[2].topology, Topology::Switch);
    EXPECT_DOUBLE_EQ(network.dims[0].bytesPerNs, 53.6870912); // 50 * 2^30 / 1e9
    EXPECT_DOUBLE_EQ(network.dims[2].bytesPerNs, 429.4967296);
    EXPECT_DOUBLE_EQ(network.dims[2].latencyNs, 936.25);
    EXPECT_DOUBLE_EQ(network.dims[1].bandwidthAsWritten, 200.0);
    EXPECT_TRUE(warnings.empty());
}

TEST_F(AstraConfigTest, SystemFileWithUnmodelledAndUnknownKeysLoadsWithWarnings)
{
    auto file = dir.write("sys.json",
                          "{\n"
                          "    \"scheduling-policy\": \"LIFO\",\n"
                          "    \"endpoint-delay\": 10,\n"
                          "    \"active-chunks-per-dimension\": 1,\n"
                          "    \"preferred-dataset-splits\": 4,\n"
                          "    \"all-reduce-implementation\": [\"ring\"],\n"
                          "    \"all-gather-implementation\": [\"ring\"],\n"
                          "    \"reduce-scatter-implementation\": [\"ring\"],\n"
                          "    \"all-to-all-implementation\": [\"direct\"],\n"
                          "    \"collective-optimization\": \"localBWAware\",\n"
                          "    \"local-mem-bw\": 1600,\n"
                          "    \"boost-mode\": 0,\n"
                          "    \"roofline-enabled\": 1,\n"
                          "    \"peak-perf\": 900,\n"
                          "    \"fancy-new-knob\": 3\n"
                          "}\n");
    SystemConfig system = loadSystemConfig(file, warnings);
    EXPECT_EQ(system.schedulingPolicy, SchedulingPolicy::Lifo);
    EXPECT_EQ(system.endpointDelayNs, 10u);
    EXPECT_EQ(system.activeChunksPerDimension, 1u);
    EXPECT_EQ(system.preferredDatasetSplits, 4u);
    EXPECT_EQ(system.allReduce,
              std::vector<CollectiveImplementation>{CollectiveImplementation::Ring});
    EXPECT_EQ(system.allToAll,
              std::vector<CollectiveImplementation>{CollectiveImplementation::Direct});
    EXPECT_EQ(system.optimization, CollectiveOptimization::LocalBwAware);
    EXPECT_DOUBLE_EQ(system.localMemBwGBps, 1600.0);
    EXPECT_TRUE(system.rooflineEnabled);
    EXPECT_DOUBLE_EQ(system.peakPerfTflops, 900.0);
    ASSERT_EQ(warnings.size(), 2u);
    EXPECT_EQ(warnings[0], file.string() + ":12:5: boost-mode: accepted, not modelled by etsim");
    EXPECT_EQ(warnings[1], file.string() + ":15:5: fancy-new-knob: unknown key, ignored");
}

TEST_F(AstraConfigTest, SystemDefaultsWhenKeysAreAbsent)
{
    auto file = dir.write("sys.json", "{\"local-mem-bw\": 50, \"peak-perf\": 10}\n");
    SystemConfig system = loadSystemConfig(file, warnings);
    EXPECT_EQ(system.activeChunksPerDimension, SystemConfig::defaultActiveChunks);
    EXPECT_EQ(system.preferredDatasetSplits, SystemConfig::defaultDatasetSplits);
    EXPECT_EQ(system.endpointDelayNs, SystemConfig::defaultEndpointDelayNs);
    EXPECT_EQ(system.optimization, CollectiveOptimization::Baseline);
    EXPECT_FALSE(system.rooflineEnabled);
    EXPECT_TRUE(warnings.empty()); // peak-perf without roofline is accepted silently
}

TEST_F(AstraConfigTest, CustomCollectiveKeysNameOnePrefixEach)
{
    auto file = dir.write("custom.json",
                          "{\"local-mem-bw\": 50,\n"
                          " \"all-reduce-implementation-custom\": [\"algo/allreduce_ring\"],\n"
                          " \"all-to-all-implementation-custom\": [\"algo/a2a\"]}\n");
    SystemConfig system = loadSystemConfig(file, warnings);
    ASSERT_TRUE(system.allReduceCustom.has_value());
    EXPECT_EQ(system.allReduceCustom->prefix, "algo/allreduce_ring");
    EXPECT_EQ(system.allReduceCustom->location.line, 2);
    ASSERT_TRUE(system.allToAllCustom.has_value());
    EXPECT_EQ(system.allToAllCustom->prefix, "algo/a2a");
    EXPECT_FALSE(system.allGatherCustom.has_value());
    EXPECT_FALSE(system.reduceScatterCustom.has_value());
    EXPECT_TRUE(system.allReduce.empty()); // the custom key replaces the list
    EXPECT_TRUE(warnings.empty());
}

TEST_F(AstraConfigTest, CustomCollectiveListOfTwoPrefixesIsAnError)
{
    auto file = dir.write("custom.json",
                          "{\"local-mem-bw\": 50,\n"
                          " \"all-gather-implementation-custom\": [\"a/x\", \"a/y\"]}\n");
    std::string error = errorOf([&] { loadSystemConfig(file, warnings); });
    EXPECT_NE(error.find("custom.json:2:"), std::string::npos) << error;
    EXPECT_NE(error.find("all-gather-implementation-custom: lists 2 trace prefixes; give "
                         "exactly one (one algorithm covers every dimension of the group)"),
              std::string::npos)
        << error;
}

// ASTRA-sim runs a custom algorithm as one stream but waits for one per split: it never ends.
TEST_F(AstraConfigTest, CustomCollectiveWithSeveralSplitsIsAnError)
{
    auto file = dir.write("custom.json",
                          "{\"local-mem-bw\": 50, \"preferred-dataset-splits\": 4,\n"
                          " \"reduce-scatter-implementation-custom\": [\"a/x\"]}\n");
    std::string error = errorOf([&] { loadSystemConfig(file, warnings); });
    EXPECT_NE(error.find("custom.json:1:"), std::string::npos) << error;
    EXPECT_NE(error.find("preferred-dataset-splits: is 4, but a custom collective "
                         "implementation runs as one stream"),
              std::string::npos)
        << error;
    EXPECT_NE(error.find("set preferred-dataset-splits to 1"), std::string::npos) << error;
}

TEST_F(AstraConfigTest, PerNodeCustomImplementationReadsItsFile)
{
    auto perNode = dir.write("per_node.yml", "7: algo/ring\n12: algo/tree\n");
    auto file = dir.write("custom.json",
                          "{\"local-mem-bw\": 50,\n \"per-node-custom-implementation\": \"" +
                              perNode.string() + "\"}\n");
    SystemConfig system = loadSystemConfig(file, warnings);
    ASSERT_EQ(system.perNodeCustom.size(), 2U);
    EXPECT_EQ(system.perNodeCustom.at(7).prefix, "algo/ring");
    EXPECT_EQ(system.perNodeCustom.at(12).prefix, "algo/tree");

    auto bad = dir.write("bad_node.yml", "first: algo/ring\n");
    auto badFile = dir.write("bad.json",
                             "{\"local-mem-bw\": 50,\n \"per-node-custom-implementation\": \"" +
                                 bad.string() + "\"}\n");
    std::string error = errorOf([&] { loadSystemConfig(badFile, warnings); });
    EXPECT_NE(error.find("bad_node.yml:1:"), std::string::npos) << error;
    EXPECT_NE(error.find("first: is not a node id"), std::string::npos) << error;

    auto missing = dir.write("missing.json",
                             "{\"local-mem-bw\": 50,\n \"per-node-custom-implementation\": "
                             "\"nowhere.yml\"}\n");
    error = errorOf([&] { loadSystemConfig(missing, warnings); });
    EXPECT_NE(error.find("missing.json:2:"), std::string::npos) << error;
    EXPECT_NE(error.find("\"nowhere.yml\": no such file (the path is relative to the working "
                         "directory"),
              std::string::npos)
        << error;
}

TEST_F(AstraConfigTest, BadValuesNameFileLineAndKey)
{
    auto torus = dir.write("t.yml",
                           "topology: [ Torus ]\nnpus_count: [ 4 ]\nbandwidth: [ 1 ]\n"
                           "latency: [ 1 ]\n");
    EXPECT_EQ(errorOf([&] { loadNetworkConfig(torus, warnings); }),
              torus.string() + ":1:13: topology[0]: expected one of Ring, FullyConnected, Switch, "
                               "got \"Torus\"");
    auto lengths = dir.write("l.yml",
                             "topology: [ Ring, Switch ]\nnpus_count: [ 4 ]\nbandwidth: [ 1, 2 ]\n"
                             "latency: [ 1, 2 ]\n");
    EXPECT_EQ(errorOf([&] { loadNetworkConfig(lengths, warnings); }),
              lengths.string() +
                  ":2:13: npus_count: has 1 entries but topology has 2; give one per dimension");
    auto zeroBw = dir.write("z.yml",
                            "topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ 0 ]\n"
                            "latency: [ 1 ]\n");
    EXPECT_EQ(errorOf([&] { loadNetworkConfig(zeroBw, warnings); }),
              zeroBw.string() +
                  ":3:12: bandwidth: dimension 0 is 0 GB/s; it must be from 1e-6 to 1e9 GB/s");

    auto policy = dir.write("p.json", "{\"scheduling-policy\": \"RANDOM\", \"local-mem-bw\": 1}");
    EXPECT_NE(errorOf([&] { loadSystemConfig(policy, warnings); })
                  .find("p.json:1:23: scheduling-policy: expected one of LIFO, FIFO, EXPLICIT, got "
                        "\"RANDOM\""),
              std::string::npos);
    auto roofline = dir.write("r.json", "{\"local-mem-bw\": 1, \"roofline-enabled\": 1}");
    EXPECT_NE(errorOf([&] { loadSystemConfig(roofline, warnings); })
                  .find("peak-perf: missing required key (TFLOP/s; required when "
                        "roofline-enabled is 1)"),
              std::string::npos);
    auto chunks = dir.write("c.json", "{\"local-mem-bw\": 1, \"active-chunks-per-dimension\": 0}");
    EXPECT_NE(errorOf([&] {
                  loadSystemConfig(chunks, warnings);
              }).find("active-chunks-per-dimension: must be greater than zero"),
              std::string::npos);
}

TEST_F(AstraConfigTest, MemoryFiles)
{
    auto none = dir.write("none.json", "{\"memory-type\": \"NO_MEMORY_EXPANSION\"}");
    EXPECT_EQ(loadMemoryConfig(none, warnings).type, MemoryExpansion::None);

    auto perNode = dir.write("node.json",
                             "{\"memory-type\": \"PER_NODE_MEMORY_EXPANSION\",\n"
                             " \"remote-mem-latency\": 100, \"remote-mem-bw\": 50,\n"
                             " \"num-npus-per-node\": 8, \"num-nodes\": 2}\n");
    MemoryConfig memory = loadMemoryConfig(perNode, warnings);
    EXPECT_EQ(memory.type, MemoryExpansion::PerNode);
    EXPECT_DOUBLE_EQ(memory.remoteMemLatencyNs, 100.0);
    EXPECT_DOUBLE_EQ(memory.remoteMemBytesPerNs, 50.0);
    EXPECT_EQ(memory.npusPerNode, 8u);
    EXPECT_TRUE(warnings.empty());

    auto missing = dir.write("m.json",
                             "{\"memory-type\": \"PER_NODE_MEMORY_EXPANSION\",\n"
                             " \"remote-mem-latency\": 100, \"remote-mem-bw\": 50}\n");
    EXPECT_NE(errorOf([&] {
                  loadMemoryConfig(missing, warnings);
              }).find("num-npus-per-node: missing required key"),
              std::string::npos);
}

TEST_F(AstraConfigTest, EveryBusyDimensionNeedsAnImplementation)
{
    auto net = dir.write("net.yml",
                         "topology: [ Ring, FullyConnected, Switch ]\nnpus_count: [ 2, 1, 4 ]\n"
                         "bandwidth: [ 1, 1, 1 ]\nlatency: [ 1, 1, 1 ]\n");
    auto sys = dir.write("sys.json",
                         "{\"local-mem-bw\": 1,\n"
                         " \"all-reduce-implementation\": [\"ring\", \"ring\", \"ring\"],\n"
                         " \"all-gather-implementation\": [\"ring\", \"ring\", \"ring\"],\n"
                         " \"reduce-scatter-implementation\": [\"ring\", \"ring\", \"ring\"],\n"
                         " \"all-to-all-implementation\": [\"ring\"]}\n");
    NetworkConfig network = loadNetworkConfig(net, warnings);
    SystemConfig system = loadSystemConfig(sys, warnings);
    EXPECT_EQ(errorOf([&] { checkCompatible(network, system); }),
              sys.string() +
                  ": all-to-all-implementation lists 1 implementation(s) but the "
                  "network " +
                  net.string() +
                  " has 3 dimensions; give one per dimension (dimension 2 has 4 NPUs)");
}

} // namespace
} // namespace etsim::platforms::astra
