// The fabric description a host sends to etsim-ns3 in CONFIG: what NetworkCore::describe
// writes is what the adapter's parser reads, and every malformed description is refused with
// the line and the reason.

#include "cosim/adapters/ns3/FabricDescription.h"

#include "cosim/wire/Frame.h"
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
    return core.describe();
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
    EXPECT_EQ(fabric.routes.size(), 12u);
    const std::vector<std::uint32_t>* route = fabric.route(0, 3);
    ASSERT_NE(route, nullptr);
    ASSERT_EQ(route->size(), 2u);
    EXPECT_EQ(fabric.links[route->at(0)].from, 0u);
    EXPECT_EQ(fabric.links[route->at(0)].to, 4u);
    EXPECT_EQ(fabric.links[route->at(1)].to, 3u);
    EXPECT_EQ(fabric.minRouteLatencyPs(), 2000000u);
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
    EXPECT_EQ(errorOf<CosimError>([] { parseFabricDescription("etsim-fabric 2\n"); }),
              "fabric description line 1: format version 2 is not supported (this adapter "
              "reads version 1)");
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

} // namespace
} // namespace etsim::cosim::ns3adapter
