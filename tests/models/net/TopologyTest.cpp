#include "kernel/Error.h"
#include "models/net/topology/FatTreeTopology.h"
#include "models/net/topology/MultiDimTopology.h"

#include <gtest/gtest.h>

#include <vector>

namespace etsim::net {
namespace {

DimConfig dim(DimKind kind, std::uint32_t size, const char* bandwidth = "100 GB/s")
{
    DimConfig config;
    config.kind = kind;
    config.size = size;
    config.bandwidth = Bandwidth::parse(bandwidth);
    config.latency = Time::parse("500 ns");
    return config;
}

std::vector<std::uint32_t> route(const TopologyIf& topology, std::uint32_t src, std::uint32_t dst)
{
    std::vector<LinkId> links;
    topology.route(src, dst, links);
    std::vector<std::uint32_t> raw;
    for (LinkId id : links)
        raw.push_back(toUnderlying(id));
    return raw;
}

// Checks that a route is a connected path from src to dst.
void expectPath(const TopologyIf& topology, std::uint32_t src, std::uint32_t dst)
{
    std::vector<LinkId> links;
    topology.route(src, dst, links);
    std::uint32_t at = src;
    for (LinkId id : links) {
        const Link& link = topology.links()[id];
        ASSERT_EQ(link.from, at) << "route " << src << " -> " << dst;
        at = link.to;
    }
    EXPECT_EQ(at, dst);
}

void expectAllPaths(const TopologyIf& topology)
{
    for (std::uint32_t src = 0; src < topology.endpointCount(); ++src)
        for (std::uint32_t dst = 0; dst < topology.endpointCount(); ++dst)
            expectPath(topology, src, dst);
}

TEST(Topology, BidirectionalRingTakesShorterWay)
{
    MultiDimTopology ring({dim(DimKind::Ring, 8)});
    EXPECT_EQ(ring.endpointCount(), 8U);
    EXPECT_EQ(ring.links().size(), 16U);
    EXPECT_EQ(ring.diameter(), 4U);
    EXPECT_EQ(route(ring, 0, 1).size(), 1U);
    EXPECT_EQ(route(ring, 0, 7).size(), 1U); // anticlockwise
    EXPECT_EQ(route(ring, 0, 4).size(), 4U);
    EXPECT_EQ(route(ring, 6, 1).size(), 3U);
    EXPECT_TRUE(route(ring, 3, 3).empty());
    expectAllPaths(ring);
}

TEST(Topology, UnidirectionalRingGoesForward)
{
    MultiDimTopology ring({dim(DimKind::UniRing, 5)});
    EXPECT_EQ(ring.links().size(), 5U);
    EXPECT_EQ(ring.diameter(), 4U);
    EXPECT_EQ(route(ring, 0, 4).size(), 4U);
    EXPECT_EQ(route(ring, 4, 0), (std::vector<std::uint32_t>{4}));
    expectAllPaths(ring);
}

TEST(Topology, FullyConnectedIsOneHop)
{
    MultiDimTopology mesh({dim(DimKind::FullyConnected, 6)});
    EXPECT_EQ(mesh.links().size(), 30U);
    EXPECT_EQ(mesh.diameter(), 1U);
    for (std::uint32_t dst = 1; dst < 6; ++dst)
        EXPECT_EQ(route(mesh, 0, dst).size(), 1U);
    expectAllPaths(mesh);
}

TEST(Topology, SwitchIsTwoLinksThroughOneSwitchDevice)
{
    MultiDimTopology star({dim(DimKind::Switch, 8)});
    EXPECT_EQ(star.deviceCount(), 9U);
    EXPECT_EQ(star.links().size(), 16U);
    EXPECT_EQ(star.diameter(), 2U);
    EXPECT_EQ(route(star, 2, 5), (std::vector<std::uint32_t>{4, 11}));
    EXPECT_EQ(star.links()[static_cast<LinkId>(4)].to, 8U);
    expectAllPaths(star);
}

TEST(Topology, TorusRoutesDimensionOrderWithWrap)
{
    MultiDimTopology torus2({dim(DimKind::Ring, 4), dim(DimKind::Ring, 4)});
    EXPECT_EQ(torus2.endpointCount(), 16U);
    EXPECT_EQ(torus2.diameter(), 4U); // 2 * floor(4/2)
    // rank = x + 4y: (0,0) -> (3,3) wraps in both dimensions: 1 + 1 hops.
    EXPECT_EQ(route(torus2, 0, 15).size(), 2U);
    EXPECT_EQ(route(torus2, 0, 10).size(), 4U);
    expectAllPaths(torus2);

    MultiDimTopology torus3({dim(DimKind::Ring, 4), dim(DimKind::Ring, 4), dim(DimKind::Ring, 4)});
    EXPECT_EQ(torus3.endpointCount(), 64U);
    EXPECT_EQ(torus3.diameter(), 6U); // 3 * floor(4/2)
    EXPECT_EQ(torus3.links().size(), 3U * 64 * 2);
    EXPECT_EQ(route(torus3, 0, 2 + 4 * 2 + 16 * 2).size(), 6U);
    expectAllPaths(torus3);
}

TEST(Topology, CompositionRingFullyConnectedSwitch)
{
    MultiDimTopology composed(
        {dim(DimKind::Ring, 2), dim(DimKind::FullyConnected, 8), dim(DimKind::Switch, 4)});
    EXPECT_EQ(composed.endpointCount(), 64U);
    EXPECT_EQ(composed.name(), "ring(2) x fully_connected(8) x switch(4)");
    EXPECT_EQ(composed.diameter(), 1U + 1 + 2);
    EXPECT_EQ(composed.deviceCount(), 64U + 16); // one switch per line of dimension 2
    EXPECT_EQ(composed.coordinate(37, 0), 1U);
    EXPECT_EQ(composed.coordinate(37, 1), 2U);
    EXPECT_EQ(composed.coordinate(37, 2), 2U);
    EXPECT_EQ(route(composed, 0, 63).size(), 4U);
    expectAllPaths(composed);
}

TEST(Topology, FatTreeRoutesThroughSpines)
{
    FatTreeConfig config;
    config.endpoints = 16;
    config.endpointsPerLeaf = 4;
    config.spines = 2;
    config.hostBandwidth = Bandwidth::parse("50 GB/s");
    config.uplinkBandwidth = Bandwidth::parse("100 GB/s");
    FatTreeTopology tree(config);
    EXPECT_EQ(tree.deviceCount(), 16U + 4 + 2);
    EXPECT_EQ(tree.links().size(), 32U + 16);
    EXPECT_EQ(tree.diameter(), 4U);
    EXPECT_EQ(route(tree, 0, 3).size(), 2U);
    EXPECT_EQ(route(tree, 0, 4).size(), 4U);
    // Spine (src + dst) % spines: 0 -> 5 uses spine 1.
    std::vector<std::uint32_t> path = route(tree, 0, 5);
    EXPECT_EQ(tree.links()[static_cast<LinkId>(path[1])].to, 16U + 4 + 1);
    expectAllPaths(tree);

    config.railOptimised = true;
    FatTreeTopology rails(config);
    EXPECT_EQ(rails.leafOf(0), 0U);
    EXPECT_EQ(rails.leafOf(5), 1U);
    EXPECT_EQ(route(rails, 1, 5).size(), 2U); // same rail
    expectAllPaths(rails);
}

TEST(Topology, BadShapesAreRejected)
{
    EXPECT_THROW(MultiDimTopology({}), Error);
    try {
        MultiDimTopology bad({dim(DimKind::Ring, 1)});
        FAIL();
    } catch (const Error& error) {
        EXPECT_STREQ(error.what(),
                     "MultiDimTopology: dimension 0 has size 1; every dimension needs at least 2");
    }
    try {
        MultiDimTopology bad({dim(DimKind::Ring, 4), dim(DimKind::Switch, 2, "0 B/s")});
        FAIL();
    } catch (const Error& error) {
        EXPECT_STREQ(error.what(),
                     "MultiDimTopology: dimension 1 has zero bandwidth; give a "
                     "bandwidth above 0 B/s");
    }
    MultiDimTopology ring({dim(DimKind::Ring, 4)});
    std::vector<LinkId> links;
    try {
        ring.route(0, 4, links);
        FAIL();
    } catch (const Error& error) {
        EXPECT_STREQ(error.what(),
                     "MultiDimTopology::route: endpoint 4 out of range (the "
                     "topology has 4 endpoints)");
    }
    FatTreeConfig tree;
    tree.endpoints = 10;
    tree.endpointsPerLeaf = 4;
    tree.spines = 1;
    tree.hostBandwidth = Bandwidth::parse("1 GB/s");
    tree.uplinkBandwidth = Bandwidth::parse("1 GB/s");
    EXPECT_THROW(FatTreeTopology{tree}, Error);
}

} // namespace
} // namespace etsim::net
