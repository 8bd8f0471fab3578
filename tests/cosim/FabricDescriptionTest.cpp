// The fabric description a host sends to etsim-ns3 in CONFIG: what describeFabric
// writes is what the adapter's parser reads, and every malformed description is refused with
// the line and the reason.

#include "cosim/adapters/ns3/FabricDescription.h"

#include "cosim/adapters/ns3/DescribeFabric.h"
#include "cosim/wire/Frame.h"
#include "models/net/NetConfig.h"
#include "models/net/flow/NetworkCore.h"
#include "models/net/topology/TopologyFactory.h"
#include "tests/support/ErrorOf.h"

#include <gtest/gtest.h>

namespace etsim::cosim::ns3adapter {
namespace {

using test::errorOf;

class NullSink final : public net::MessageSink {
public:
    void delivered(std::uint64_t) override {}
};

std::string describe(const std::string& yaml)
{
    const net::NetConfig config = net::loadNetConfigString(yaml);
    const auto topology = net::makeTopology(config);
    net::EventCalendar calendar;
    NullSink sink;
    const net::NetworkCore core(*topology, config, calendar, sink);
    return describeFabric(core.fabricLinks(), config);
}

TEST(FabricDescription, ASwitchFabricRoundTripsThroughDescribeAndParse)
{
    const FabricDescription fabric = parseFabricDescription(describe(R"(topology:
  kind: multi_dim
  dims:
    - {kind: switch, size: 4, bandwidth: "50 GB/s", latency: "1 us", efficiency: 0.5}
)"));
    EXPECT_EQ(fabric.endpoints, 4u);
    EXPECT_EQ(fabric.devices, 5u);
    ASSERT_EQ(fabric.links.size(), 8u);
    EXPECT_DOUBLE_EQ(fabric.links[0].bytesPerSecond, 25e9);
    EXPECT_EQ(fabric.links[0].latencyPs, 1000000u);
    // Format 2: no route is listed, the topology's shape routes every pair.
    EXPECT_EQ(fabric.routes.size(), 0u);
    ASSERT_NE(fabric.routing, nullptr);
    std::vector<std::uint32_t> route;
    ASSERT_TRUE(fabric.route(0, 3, route));
    ASSERT_EQ(route.size(), 2u);
    EXPECT_EQ(fabric.links[route.at(0)].from, 0u);
    EXPECT_EQ(fabric.links[route.at(0)].to, 4u);
    EXPECT_EQ(fabric.links[route.at(1)].to, 3u);
    EXPECT_FALSE(fabric.route(2, 2, route));
    EXPECT_FALSE(fabric.route(0, 4, route));
    EXPECT_EQ(fabric.minRouteLatencyPs(), 2000000u);
}

TEST(FabricDescription, ANicFabricListsEveryRoutePairByPair)
{
    // NIC links are not the topology's: their routes are listed (format 1).
    const std::string text = describe(R"(topology:
  kind: multi_dim
  dims:
    - {kind: switch, size: 4, bandwidth: "50 GB/s", latency: "1 us"}
nic: {injection_bandwidth: "25 GB/s"}
)");
    EXPECT_EQ(text.find("etsim-fabric 1\n"), text.find("etsim-fabric"));
    const FabricDescription fabric = parseFabricDescription(text);
    EXPECT_EQ(fabric.routing, nullptr);
    EXPECT_EQ(fabric.routes.size(), 12u);
    std::vector<std::uint32_t> route;
    ASSERT_TRUE(fabric.route(0, 3, route));
    // NIC injection (link 8 = 0 -> 0), up, down, NIC ejection (link 15 = 3 -> 3).
    EXPECT_EQ(route, (std::vector<std::uint32_t>{8, 0, 7, 15}));
}

// A fabric of at least 1,024 ranks: its description fits one frame, and the routes the
// adapter decodes are, for every ordered pair, those etsim's topology takes.
void expectCompactAndSameRoutes(const std::string& yaml, std::uint32_t ranks, std::size_t maxBytes)
{
    const net::NetConfig config = net::loadNetConfigString(yaml);
    const auto topology = net::makeTopology(config);
    net::EventCalendar calendar;
    NullSink sink;
    const net::NetworkCore core(*topology, config, calendar, sink);
    const std::string text = describeFabric(core.fabricLinks(), config);
    ::testing::Test::RecordProperty("description_bytes", static_cast<int>(text.size()));
    EXPECT_LT(text.size(), maxBytes);
    EXPECT_LT(text.size(), std::size_t{Limits{}.maxPayload});
    const FabricDescription fabric = parseFabricDescription(text);
    ASSERT_EQ(fabric.endpoints, ranks);
    ASSERT_EQ(fabric.links.size(), topology->links().size());
    std::vector<std::uint32_t> decoded;
    std::vector<LinkId> expected;
    std::size_t checked = 0;
    for (std::uint32_t src = 0; src < ranks; ++src)
        for (std::uint32_t dst = 0; dst < ranks; ++dst) {
            if (src == dst)
                continue;
            ASSERT_TRUE(fabric.route(src, dst, decoded)) << src << " -> " << dst;
            expected.clear();
            topology->route(src, dst, expected);
            ASSERT_EQ(decoded.size(), expected.size()) << src << " -> " << dst;
            for (std::size_t hop = 0; hop < decoded.size(); ++hop)
                ASSERT_EQ(decoded[hop], toUnderlying(expected[hop])) << src << " -> " << dst;
            ++checked;
        }
    EXPECT_EQ(checked, std::size_t{ranks} * (ranks - 1));
}

TEST(FabricDescription, AThousandRankSwitchFitsOneFrameWithEtsimsRoutes)
{
    // 2,048 links and one routing line instead of 1,047,552 routes (about 20 MiB).
    expectCompactAndSameRoutes(R"(topology:
  kind: multi_dim
  dims:
    - {kind: switch, size: 1024, bandwidth: "50 GB/s", latency: "1 us"}
)",
                               1024,
                               100 * 1024);
}

TEST(FabricDescription, AThousandRankTwoDimensionFabricFitsOneFrameWithEtsimsRoutes)
{
    expectCompactAndSameRoutes(R"(topology:
  kind: multi_dim
  dims:
    - {kind: switch, size: 8, bandwidth: "450 GB/s", latency: "936.25 ns", efficiency: 0.82}
    - {kind: ring, size: 128, bandwidth: "50 GB/s", latency: "1 us"}
)",
                               1024,
                               200 * 1024);
}

TEST(FabricDescription, AThousandRankFatTreeFitsOneFrameWithEtsimsRoutes)
{
    // The spine a pair crosses depends on both ranks: no per-destination table could carry it.
    expectCompactAndSameRoutes(R"(topology:
  kind: fat_tree
  fat_tree: {endpoints: 1024, endpoints_per_leaf: 32, spines: 16, host_bandwidth: "50 GB/s",
             host_latency: "1 us", uplink_bandwidth: "50 GB/s", uplink_latency: "500 ns",
             rail_optimised: true}
)",
                               1024,
                               200 * 1024);
}

TEST(FabricDescription, EveryMalformedDescriptionIsRefusedWithTheLine)
{
    const std::string head = "etsim-fabric 1\nendpoints 2\ndevices 2\n";
    const std::string links = "link 0 0 1 1e9 5\nlink 1 1 0 1e9 5\n";
    EXPECT_EQ(errorOf<CosimError>([] { parseFabricDescription(""); }),
              "fabric description: empty; the host must send \"etsim-fabric 1\" followed by "
              "endpoints, devices, links and routes");
    EXPECT_EQ(errorOf<CosimError>([] { parseFabricDescription("endpoints 2\n"); }),
              "fabric description line 1: the description must start with \"etsim-fabric 1\"; "
              "is this the CONFIG of a fabric?");
    EXPECT_EQ(errorOf<CosimError>([] { parseFabricDescription("etsim-fabric 3\n"); }),
              "fabric description line 1: format version 3 is not supported (this adapter "
              "reads versions 1 and 2)");
    EXPECT_EQ(errorOf<CosimError>([&] { parseFabricDescription(head + "link 0 0 5 1e9 5\n"); }),
              "fabric description line 4: link 0 joins device 5 but there are 2 devices");
    EXPECT_EQ(errorOf<CosimError>([&] { parseFabricDescription(head + "link 1 0 1 1e9 5\n"); }),
              "fabric description line 4: link 1 out of order (expected 0)");
    EXPECT_EQ(errorOf<CosimError>([&] { parseFabricDescription(head + "link 0 0 1 fast\n"); }),
              "fabric description line 4: expected the bandwidth in B/s");
    EXPECT_EQ(errorOf<CosimError>([&] { parseFabricDescription(head + "wire 0\n"); }),
              "fabric description line 4: unknown keyword \"wire\"");
    EXPECT_EQ(errorOf<CosimError>([&] { parseFabricDescription(head + links + "route 0 1 1\n"); }),
              "fabric description line 6: route 0 -> 1: link 1 does not start at device 0");
    EXPECT_EQ(errorOf<CosimError>([&] { parseFabricDescription(head + links + "route 0 1 7\n"); }),
              "fabric description line 6: route names link 7 but there are 2 links");
    EXPECT_EQ(errorOf<CosimError>([&] { parseFabricDescription(head + links + "route 0 0\n"); }),
              "fabric description line 6: route 0 -> 0 does not join two different endpoints");
    EXPECT_EQ(errorOf<CosimError>([&] { parseFabricDescription(head + links + "route 0 1\n"); }),
              "fabric description line 6: route 0 -> 1 ends at device 0");
    EXPECT_EQ(errorOf<CosimError>([&] { parseFabricDescription(head + links + "route 0 1 0\n"); }),
              "fabric description: 1 routes for 2 ordered pairs of endpoints; every pair needs "
              "one");
}

TEST(FabricDescription, EveryBadRoutingShapeIsRefusedWithTheLine)
{
    const std::string head = "etsim-fabric 2\nendpoints 2\ndevices 3\n";
    const std::string links =
        "link 0 0 2 1e9 5\nlink 1 2 0 1e9 5\nlink 2 1 2 1e9 5\nlink 3 2 1 1e9 5\n";
    auto error = [](const std::string& text) {
        return errorOf<CosimError>([&] { parseFabricDescription(text); });
    };
    // The well-formed one, to show the cases below differ only where they say.
    std::vector<std::uint32_t> route;
    ASSERT_TRUE(
        parseFabricDescription(head + links + "routing multi_dim switch:2\n").route(1, 0, route));
    EXPECT_EQ(route, (std::vector<std::uint32_t>{2, 1}));

    EXPECT_EQ(error("etsim-fabric 1\nendpoints 2\nrouting multi_dim switch:2\n"),
              "fabric description line 3: \"routing\" needs format 2 (\"etsim-fabric 2\")");
    EXPECT_EQ(error(head + "routing multi_dim switch:2\nrouting multi_dim switch:2\n"),
              "fabric description line 5: a second \"routing\" line (the first is line 4)");
    EXPECT_EQ(error(head + "routing torus 2\n"),
              "fabric description line 4: routing shape \"torus 2\": unknown topology kind "
              "\"torus\" (known: multi_dim, fat_tree)");
    EXPECT_EQ(error(head + "routing multi_dim switch\n"),
              "fabric description line 4: routing shape \"multi_dim switch\": expected "
              "KIND:SIZE, got \"switch\"");
    EXPECT_EQ(error(head + "routing multi_dim mesh:2\n"),
              "fabric description line 4: routing shape \"multi_dim mesh:2\": unknown dimension "
              "kind \"mesh\" (known: ring, uni_ring, fully_connected, switch)");
    EXPECT_EQ(error(head + "routing multi_dim switch:x\n"),
              "fabric description line 4: routing shape \"multi_dim switch:x\": expected the "
              "dimension size (a whole number), got \"x\"");
    EXPECT_EQ(error(head + "routing multi_dim\n"),
              "fabric description line 4: routing shape \"multi_dim\": MultiDimTopology: needs "
              "at least one dimension");
    EXPECT_EQ(error(head + "routing fat_tree 2 1 1 diagonal\n"),
              "fabric description line 4: routing shape \"fat_tree 2 1 1 diagonal\": expected "
              "rail or block, got \"diagonal\"");
    EXPECT_EQ(error(head + "routing fat_tree 2 1 1 rail extra\n"),
              "fabric description line 4: routing shape \"fat_tree 2 1 1 rail extra\": "
              "unexpected \"extra\" at the end");
    EXPECT_EQ(error(head + "routing fat_tree 2 one 1 rail\n"),
              "fabric description line 4: routing shape \"fat_tree 2 one 1 rail\": expected "
              "the endpoints per leaf (a whole number), got \"one\"");
    EXPECT_EQ(error(head + links + "routing multi_dim switch:3\n"),
              "fabric description line 8: the routing shape has 3 endpoints but the description "
              "2; the shape and the links must come from the same fabric");
    EXPECT_EQ(error(head + links + "routing multi_dim ring:2\n"),
              "fabric description line 8: the routing shape has 2 devices but the description "
              "3; the shape and the links must come from the same fabric");
    EXPECT_EQ(error(head + "link 0 0 2 1e9 5\nrouting multi_dim switch:2\n"),
              "fabric description line 5: the routing shape has 4 links but the description 1; "
              "the shape and the links must come from the same fabric");
    EXPECT_EQ(error(head + "link 0 0 2 1e9 5\nlink 1 2 0 1e9 5\nlink 2 2 1 1e9 5\n"
                           "link 3 1 2 1e9 5\nrouting multi_dim switch:2\n"),
              "fabric description line 8: link 2 of the routing shape joins 1 -> 2 but the "
              "description's joins 2 -> 1; the shape and the links must come from the same "
              "fabric");
}

} // namespace
} // namespace etsim::cosim::ns3adapter
