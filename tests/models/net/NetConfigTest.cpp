#include "models/net/NetConfig.h"

#include "kernel/Error.h"
#include "models/net/CommEngine.h"

#include <gtest/gtest.h>

#include <string>

namespace etsim::net {
namespace {

std::string errorOf(const std::string& yaml)
{
    try {
        loadNetConfigString(yaml, "net.yaml");
    } catch (const ConfigError& error) {
        return error.what();
    }
    return "no error";
}

TEST(NetConfig, ParsesUnitsAndDefaults)
{
    NetConfig config = loadNetConfigString(R"(fidelity: astra_aware
topology:
  kind: multi_dim
  dims:
    - {kind: switch, size: 8, bandwidth: "450 GB/s", latency: "936.25 ns", efficiency: 0.82}
    - {kind: uni_ring, size: 2, bandwidth: "400 Gb/s", latency: "1 us"}
nic: {injection_bandwidth: "50 GB/s", message_delay: "2 ns"}
packet: {payload: "4 KiB", header: "82 B"}
collectives:
  algorithms: {default: [ring, direct], all_to_all: [direct]}
  chunks: 4
  active_chunks: 2
  endpoint_delay: "10 ns"
  local_memory_bandwidth: "3350 GB/s"
  optimization: baseline
)");
    EXPECT_EQ(config.fidelity, Fidelity::AstraAware);
    ASSERT_EQ(config.dims.size(), 2U);
    EXPECT_EQ(config.dims[0].latency.ps(), 936250U);
    EXPECT_DOUBLE_EQ(config.dims[0].effectiveBandwidth().bytesPerSecond(), 450e9 * 0.82);
    EXPECT_DOUBLE_EQ(config.dims[1].bandwidth.bytesPerSecond(), 50e9);
    EXPECT_EQ(config.endpointCount(), 16U);
    EXPECT_EQ(config.packetPayload.bytes(), 4096U);
    EXPECT_EQ(config.messageDelay.ps(), 2000U);
    EXPECT_EQ(config.algorithm(CollectiveType::AllReduce, 1), AlgorithmKind::Direct);
    EXPECT_EQ(config.algorithm(CollectiveType::AllToAll, 0), AlgorithmKind::Direct);
    EXPECT_EQ(config.algorithm(CollectiveType::AllToAll, 1), AlgorithmKind::Direct);
    EXPECT_EQ(config.chunks, 4U);
    EXPECT_EQ(config.optimization, CollectiveOptimization::Baseline);

    NetConfig minimal = loadNetConfigString(R"(topology:
  kind: fat_tree
  fat_tree: {endpoints: 16, endpoints_per_leaf: 4, spines: 2, host_bandwidth: "50 GB/s",
             host_latency: "1 us", uplink_bandwidth: "100 GB/s", uplink_latency: "500 ns"}
)");
    EXPECT_EQ(minimal.fidelity, Fidelity::Flow);
    EXPECT_EQ(minimal.endpointCount(), 16U);
    EXPECT_EQ(minimal.dimCount(), 1U);
    EXPECT_EQ(minimal.algorithm(CollectiveType::Barrier, 0), AlgorithmKind::Ring);
    EXPECT_EQ(minimal.chunks, defaultChunks);
}

TEST(NetConfig, PresetsParse)
{
    for (const std::string& name : netPresetNames())
        EXPECT_NO_THROW(netPreset(name)) << name;
    EXPECT_EQ(netPreset("hgx_h100").endpointCount(), 8U);
    EXPECT_EQ(netPreset("hgx_h100_scaleout").endpointCount(), 16U);
    EXPECT_EQ(netPreset("tpu_torus").endpointCount(), 64U);
    try {
        netPreset("dgx");
        FAIL();
    } catch (const Error& error) {
        EXPECT_STREQ(error.what(),
                     "unknown network preset \"dgx\"; known presets: hgx_h100, "
                     "hgx_h100_scaleout, tpu_torus");
    }
}

TEST(NetConfig, ZeroBandwidthIsRejectedAtItsKey)
{
    EXPECT_EQ(errorOf(R"(topology:
  kind: multi_dim
  dims:
    - {kind: ring, size: 4, bandwidth: "0 GB/s", latency: "1 us"}
)"),
              "net.yaml:4:40: topology.dims[0].bandwidth: must be greater than 0 B/s");
}

TEST(NetConfig, ShapeErrorsNameKeyAndFix)
{
    EXPECT_EQ(errorOf(R"(topology:
  kind: multi_dim
  dims:
    - {kind: ring, size: 1, bandwidth: "1 GB/s", latency: "1 us"}
)"),
              "net.yaml:4:26: topology.dims[0].size: must be at least 2 (a dimension of one "
              "member has no links)");
    EXPECT_EQ(errorOf(R"(topology:
  kind: multi_dim
  dims:
    - {kind: ring, size: 4, bandwidth: "1 GB/s", latency: "1 us", efficiency: 1.5}
)"),
              "net.yaml:4:79: topology.dims[0].efficiency: must be in (0, 1]: the usable "
              "fraction of the link bandwidth");
    EXPECT_EQ(errorOf(R"(topology:
  kind: multi_dim
  dims:
    - {kind: torus, size: 4, bandwidth: "1 GB/s", latency: "1 us"}
)"),
              "net.yaml:4:14: topology.dims[0].kind: expected one of ring, uni_ring, "
              "fully_connected, switch, got \"torus\"");
    EXPECT_EQ(errorOf(R"(topology:
  kind: fat_tree
  fat_tree: {endpoints: 10, endpoints_per_leaf: 4, spines: 2, host_bandwidth: "50 GB/s",
             host_latency: "1 us", uplink_bandwidth: "100 GB/s", uplink_latency: "500 ns"}
)"),
              "net.yaml:3:49: topology.fat_tree.endpoints_per_leaf: must divide endpoints (10) "
              "evenly");
}

TEST(NetConfig, AlgorithmThatDoesNotFitTheTopologyIsRejected)
{
    EXPECT_EQ(errorOf(R"(topology:
  kind: multi_dim
  dims:
    - {kind: ring, size: 6, bandwidth: "1 GB/s", latency: "1 us"}
collectives:
  algorithms: {default: [halving_doubling]}
)"),
              "net.yaml:6:25: collectives.algorithms.default: halving_doubling needs a "
              "power-of-two dimension, but dimension 0 has 6 members (use ring or direct there)");
    EXPECT_EQ(errorOf(R"(topology:
  kind: multi_dim
  dims:
    - {kind: ring, size: 4, bandwidth: "1 GB/s", latency: "1 us"}
    - {kind: ring, size: 4, bandwidth: "1 GB/s", latency: "1 us"}
    - {kind: ring, size: 4, bandwidth: "1 GB/s", latency: "1 us"}
collectives:
  algorithms: {all_reduce: [ring, direct]}
)"),
              "net.yaml:8:28: collectives.algorithms.all_reduce: lists 2 algorithms but the "
              "topology has 3 dimensions (give one per dimension, or one for all)");
    EXPECT_EQ(errorOf(R"(topology:
  kind: multi_dim
  dims:
    - {kind: ring, size: 4, bandwidth: "1 GB/s", latency: "1 us"}
collectives:
  chunks: 0
)"),
              "net.yaml:6:11: collectives.chunks: must be from 1 to 1024");
}

TEST(NetConfig, RankCountMismatchNamesTheTopology)
{
    NetConfig config = loadNetConfigString(R"(topology:
  kind: multi_dim
  dims:
    - {kind: switch, size: 8, bandwidth: "450 GB/s", latency: "1 us"}
)",
                                           "hgx.yaml");
    try {
        CommEngine engine(config, 16);
        FAIL();
    } catch (const ConfigError& error) {
        EXPECT_STREQ(error.what(),
                     "hgx.yaml:2:3: topology: the topology has 8 endpoints but the run has 16 "
                     "ranks; make the product of the dimension sizes (or fat_tree.endpoints) "
                     "equal the rank count");
    }
}

TEST(NetConfig, InSwitchNeedsAllReduceASwitchDimensionAndAFlowOrAnalyticalModel)
{
    const std::string topology = R"(topology:
  kind: multi_dim
  dims:
    - {kind: switch, size: 4, bandwidth: "1 GB/s", latency: "1 us"}
    - {kind: ring, size: 2, bandwidth: "1 GB/s", latency: "1 us"}
)";
    EXPECT_EQ(errorOf(topology + "collectives:\n  algorithms: {all_reduce: [ring, in_switch]}\n"),
              "net.yaml:7:28: collectives.algorithms.all_reduce: in_switch needs a switch "
              "dimension, but dimension 1 is not one (use kind: switch there, or another "
              "algorithm)");
    EXPECT_EQ(errorOf(topology + "collectives:\n  algorithms: {default: [in_switch, ring]}\n"),
              "net.yaml:7:25: collectives.algorithms.default: in_switch runs only all_reduce, "
              "reduce_scatter and all_gather; list it under algorithms.all_reduce, "
              "reduce_scatter, all_gather or all_reduce_phases");
    EXPECT_EQ(errorOf("fidelity: astra_aware\n" + topology +
                      "collectives:\n  algorithms: {all_reduce: [in_switch, ring]}\n"),
              "net.yaml:8:28: collectives.algorithms.all_reduce: in_switch is an etsim "
              "extension that ASTRA-sim's network models do not have; use fidelity flow or "
              "analytical");
    EXPECT_EQ(errorOf(topology + "collectives:\n  group_algorithm: in_switch\n"),
              "net.yaml:7:20: collectives.group_algorithm: in_switch cannot run on groups of "
              "any size; use ring, direct or double_binary_tree");
    NetConfig config =
        loadNetConfigString(topology + "collectives:\n  algorithms: {all_reduce: [in_switch, "
                                       "ring]}\n");
    EXPECT_EQ(config.algorithm(CollectiveType::AllReduce, 0), AlgorithmKind::InSwitch);
    EXPECT_EQ(config.algorithm(CollectiveType::AllGather, 0), AlgorithmKind::Ring);
}

} // namespace
} // namespace etsim::net

namespace etsim::net {
namespace {

TEST(NetConfig, SwitchCrossbarBandwidthIsReadAndChecked)
{
    NetConfig config = loadNetConfigString(R"(fidelity: flow
topology:
  kind: multi_dim
  dims:
    - {kind: switch, size: 8, bandwidth: "450 GB/s", latency: "1 us", switch_bandwidth: "3.6 TB/s"}
)",
                                           "net.yaml");
    ASSERT_TRUE(config.dims[0].switchBandwidth.has_value());
    EXPECT_DOUBLE_EQ(config.dims[0].switchBandwidth->bytesPerSecond(), 3.6e12);

    EXPECT_EQ(errorOf(R"(fidelity: flow
topology:
  kind: multi_dim
  dims:
    - {kind: ring, size: 4, bandwidth: "1 GB/s", latency: "1 us", switch_bandwidth: "1 TB/s"}
)"),
              "net.yaml:5:85: topology.dims[0].switch_bandwidth: only a switch dimension has a "
              "crossbar; remove the key or use kind: switch");
    EXPECT_EQ(errorOf(R"(fidelity: astra_aware
topology:
  kind: multi_dim
  dims:
    - {kind: switch, size: 4, bandwidth: "1 GB/s", latency: "1 us", switch_bandwidth: "1 TB/s"}
)"),
              "net.yaml:5:87: topology.dims[0].switch_bandwidth: a shared crossbar is modelled by "
              "flow-level link sharing; use fidelity: flow, or remove the key for a non-blocking "
              "switch");
}

} // namespace
} // namespace etsim::net
