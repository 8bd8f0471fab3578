#include "models/net/flow/NetworkCore.h"

#include "kernel/Error.h"
#include "models/net/topology/MultiDimTopology.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <utility>

namespace etsim::net {
namespace {

// Drives a NetworkCore like the CommEngine does: all events of an instant, then settle().
class Harness final : public MessageSink {
public:
    Harness(std::vector<DimConfig> dims, NetConfig base = {})
        : config(std::move(base))
        , topology(std::move(dims))
        , core(topology, config, calendar, *this)
    {
    }
    void delivered(std::uint64_t cookie) override { arrivals[cookie] = calendar.now(); }
    void sendAt(std::uint64_t ps,
                std::uint32_t src,
                std::uint32_t dst,
                std::uint64_t bytes,
                std::uint64_t cookie)
    {
        runUntil(ps);
        calendar.advance(ps);
        core.send(src, dst, bytes, cookie);
        core.settle();
    }
    /// Sends without settling: messages sent this way at one instant are served together.
    void sendUnsettled(std::uint32_t src,
                       std::uint32_t dst,
                       std::uint64_t bytes,
                       std::uint64_t cookie,
                       MessageOrder order = {})
    {
        core.send(src, dst, bytes, cookie, order);
    }
    void runUntil(std::uint64_t limit)
    {
        while (!calendar.empty() && calendar.nextTime() <= limit) {
            std::uint64_t instant = calendar.nextTime();
            while (!calendar.empty() && calendar.nextTime() == instant)
                core.handle(calendar.pop());
            core.settle();
        }
    }
    void run() { runUntil(UINT64_MAX); }

    NetConfig config;
    MultiDimTopology topology;
    EventCalendar calendar;
    NetworkCore core;
    std::map<std::uint64_t, std::uint64_t> arrivals;
};

DimConfig link(DimKind kind, std::uint32_t size, const char* bandwidth, const char* latency)
{
    DimConfig config;
    config.kind = kind;
    config.size = size;
    config.bandwidth = Bandwidth::parse(bandwidth);
    config.latency = Time::parse(latency);
    return config;
}

NetConfig withFidelity(Fidelity fidelity)
{
    NetConfig config;
    config.fidelity = fidelity;
    return config;
}

// 1 MB at 100 GB/s = 10 us, plus 500 ns latency.
TEST(NetworkCore, SingleTransferIsLatencyPlusSizeOverBandwidth)
{
    Harness net({link(DimKind::Ring, 2, "100 GB/s", "500 ns")});
    net.sendAt(0, 0, 1, 1000000, 7);
    net.run();
    EXPECT_EQ(net.arrivals.at(7), 10500000U);
    EXPECT_DOUBLE_EQ(net.core.linkBytes(0), 1e6);
    EXPECT_EQ(net.core.linkBusyPs(0), 10000000U);
    EXPECT_EQ(net.core.linkBusyPs(1), 0U);
}

// Ring(2) x Switch(2): 0 -> 1 crosses dimension 0 (one 500 ns link), 0 -> 2 dimension 1 (two
// 1 us links), 0 -> 3 both (one and two links, one NIC latency each). 1 kB at 100 GB/s = 10 ns
// on the slowest link. Each message pays each crossed dimension's NIC latency once, in both
// native fidelities; the astra fidelities leave it out.
TEST(NetworkCore, AMessagePaysTheNicLatencyOfEachDimensionItCrossesOnce)
{
    for (Fidelity fidelity :
         {Fidelity::Flow, Fidelity::Analytical, Fidelity::AstraUnaware, Fidelity::AstraAware}) {
        DimConfig inner = link(DimKind::Ring, 2, "100 GB/s", "500 ns");
        DimConfig outer = link(DimKind::Switch, 2, "100 GB/s", "1 us");
        inner.nicLatency = Time::parse("3 us");
        outer.nicLatency = Time::parse("20 us");
        NetConfig config = withFidelity(fidelity);
        config.dims = {inner, outer};
        Harness net({inner, outer}, config);
        // One at a time (100 us apart), so that no two share a link.
        net.sendAt(0, 0, 1, 1000, 1);
        net.sendAt(100'000'000, 0, 2, 1000, 2);
        net.sendAt(200'000'000, 0, 3, 1000, 3);
        net.run();
        bool charged = abilitiesOf(fidelity).chargesLatency;
        std::uint64_t nicInner = charged ? 3'000'000 : 0;
        std::uint64_t nicOuter = charged ? 20'000'000 : 0;
        if (fidelity == Fidelity::Flow || fidelity == Fidelity::Analytical) {
            EXPECT_EQ(net.arrivals.at(1), 500'000 + 10'000 + nicInner);
            EXPECT_EQ(net.arrivals.at(2), 100'000'000 + 2'000'000 + 10'000 + nicOuter);
            EXPECT_EQ(net.arrivals.at(3), 200'000'000 + 2'500'000 + 10'000 + nicInner + nicOuter);
        } else {
            // ASTRA-sim's whole-ns rules; what matters is that no NIC latency is in them.
            EXPECT_LT(net.arrivals.at(3), 203'000'000U);
        }
    }
}

TEST(NetworkCore, TwoEqualFlowsOnOneLinkFinishTogetherAtTwiceTheSoloTime)
{
    Harness net({link(DimKind::Ring, 2, "100 GB/s", "0 ns")});
    net.sendAt(0, 0, 1, 1000000, 1);
    net.sendAt(0, 0, 1, 1000000, 2);
    net.run();
    EXPECT_EQ(net.arrivals.at(1), 20000000U);
    EXPECT_EQ(net.arrivals.at(2), 20000000U);
    // Once per send (the harness settles after each) and once at the common finish.
    EXPECT_EQ(net.core.rateUpdates(), 3U);
}

// A switch of 4 with 100 GB/s links and 500 ns per link: 0->1 and 2->3 share no link, so on a
// non-blocking switch each takes 2 x 500 ns + 1 MB / 100 GB/s = 11 us. With a 100 GB/s
// crossbar both cross it and get 50 GB/s each: 1 us + 20 us = 21 us. A 400 GB/s crossbar
// does not limit them.
TEST(NetworkCore, SwitchCrossbarBandwidthIsSharedByTheTrafficCrossingIt)
{
    auto runPair = [](std::optional<const char*> crossbar) {
        DimConfig dim = link(DimKind::Switch, 4, "100 GB/s", "500 ns");
        if (crossbar)
            dim.switchBandwidth = Bandwidth::parse(*crossbar);
        Harness net({dim});
        net.sendAt(0, 0, 1, 1000000, 1);
        net.sendAt(0, 2, 3, 1000000, 2);
        net.run();
        return std::make_pair(net.arrivals.at(1), net.arrivals.at(2));
    };
    EXPECT_EQ(runPair(std::nullopt),
              std::make_pair(std::uint64_t{11000000}, std::uint64_t{11000000}));
    EXPECT_EQ(runPair("100 GB/s"),
              std::make_pair(std::uint64_t{21000000}, std::uint64_t{21000000}));
    EXPECT_EQ(runPair("400 GB/s"),
              std::make_pair(std::uint64_t{11000000}, std::uint64_t{11000000}));
}

// A starts alone at 0 (100 GB/s); B joins at 5 us and both get 50 GB/s: A has 0.5 MB left and
// ends at 15 us; B then runs alone with 0.5 MB left and ends at 20 us.
TEST(NetworkCore, LaterFlowTakesItsFairShareFromThenOn)
{
    Harness net({link(DimKind::Ring, 2, "100 GB/s", "0 ns")});
    net.sendAt(0, 0, 1, 1000000, 1);
    net.sendAt(5000000, 0, 1, 1000000, 2);
    net.run();
    EXPECT_EQ(net.arrivals.at(1), 15000000U);
    EXPECT_EQ(net.arrivals.at(2), 20000000U);
}

// On a 3-node unidirectional ring, X crosses links 0->1 and 1->2, Y only 1->2, Z only 0->1:
// each link carries two flows, so every flow gets 50 GB/s and all end at 20 us.
TEST(NetworkCore, FlowsCrossingSeveralLinksShareEach)
{
    Harness net({link(DimKind::UniRing, 3, "100 GB/s", "0 ns")});
    net.sendAt(0, 0, 2, 1000000, 1); // X: 0->1->2
    net.sendAt(0, 1, 2, 1000000, 2); // Y: 1->2
    net.sendAt(0, 0, 1, 1000000, 3); // Z: 0->1
    net.run();
    EXPECT_EQ(net.arrivals.at(1), 20000000U);
    EXPECT_EQ(net.arrivals.at(2), 20000000U);
    EXPECT_EQ(net.arrivals.at(3), 20000000U);
}

TEST(NetworkCore, BottleneckFlowLeavesCapacityToOthers)
{
    // X: 0->2 over two links; Y1, Y2: 1->2. Link 1->2 is shared by three flows (33.3 GB/s
    // each); link 0->1 carries only X, which is limited by 1->2. All end at 30 us.
    Harness net({link(DimKind::UniRing, 3, "100 GB/s", "0 ns")});
    net.sendAt(0, 0, 2, 1000000, 1);
    net.sendAt(0, 1, 2, 1000000, 2);
    net.sendAt(0, 1, 2, 1000000, 3);
    net.run();
    EXPECT_EQ(net.arrivals.at(1), 30000000U);
    EXPECT_EQ(net.arrivals.at(3), 30000000U);
    // Z on 0->1 alone afterwards sees the full link.
    net.sendAt(30000000, 0, 1, 1000000, 4);
    net.run();
    EXPECT_EQ(net.arrivals.at(4), 40000000U);
}

TEST(NetworkCore, PacketHeadersAddWireBytes)
{
    NetConfig config;
    config.packetPayload = Size::parse("4 KiB");
    config.packetHeader = Size::parse("82 B");
    Harness net({link(DimKind::Ring, 2, "50 GB/s", "1 us")}, config);
    // 1 MiB = 256 packets: 1048576 + 256 * 82 = 1069568 wire bytes / 50 GB/s = 21391.36 ns.
    EXPECT_EQ(net.core.wireBytes(1048576), 1069568U);
    EXPECT_EQ(net.core.wireBytes(1), 83U);
    net.sendAt(0, 0, 1, 1048576, 1);
    net.run();
    EXPECT_EQ(net.arrivals.at(1), 1000000U + 21391360U);
}

TEST(NetworkCore, NicInjectionLimitsEveryFlowOfAnEndpoint)
{
    NetConfig config;
    config.nicBandwidth = Bandwidth::parse("50 GB/s");
    config.messageDelay = Time::parse("1 us");
    Harness net({link(DimKind::FullyConnected, 3, "100 GB/s", "0 ns")}, config);
    EXPECT_EQ(net.core.linkCount(), 6U + 6);
    // Two flows from rank 0 share its 50 GB/s injection link: 25 GB/s each, 40 us, + 1 us.
    net.sendAt(0, 0, 1, 1000000, 1);
    net.sendAt(0, 0, 2, 1000000, 2);
    net.run();
    EXPECT_EQ(net.arrivals.at(1), 41000000U);
    EXPECT_EQ(net.arrivals.at(2), 41000000U);
}

TEST(NetworkCore, AnalyticalIgnoresContention)
{
    Harness net({link(DimKind::Switch, 4, "100 GB/s", "1 us")}, withFidelity(Fidelity::Analytical));
    net.sendAt(0, 0, 1, 1000000, 1);
    net.sendAt(0, 0, 2, 1000000, 2);
    net.run();
    EXPECT_EQ(net.arrivals.at(1), 12000000U); // 2 hops x 1 us + 10 us
    EXPECT_EQ(net.arrivals.at(2), 12000000U);
}

// ASTRA-sim unaware: floor(h * L + m / B) ns with B = 50 GiB/s = 53.687 B/ns:
// floor(2 * 500 + 65536 / 53.687) = floor(1000 + 1220.70) = 2220 ns.
TEST(NetworkCore, AstraUnawareTruncatesToWholeNanoseconds)
{
    Harness net({link(DimKind::Switch, 4, "50 GiB/s", "500 ns")},
                withFidelity(Fidelity::AstraUnaware));
    net.sendAt(0, 0, 1, 65536, 1);
    net.sendAt(0, 0, 2, 65536, 2);
    net.run();
    EXPECT_EQ(net.arrivals.at(1), 2220000U);
    EXPECT_EQ(net.arrivals.at(2), 2220000U);
}

// ASTRA-sim aware: per hop floor(L + m/B) = 1720 ns, the link is busy floor(m/B) = 1220 ns.
// Alone: 2 x 1720 = 3440 ns. A second message on the same uplink waits 1220 ns there; on its
// separate downlink it does not wait: 1220 + 3440 = 4660 ns.
TEST(NetworkCore, AstraAwareIsFifoStoreAndForward)
{
    Harness net({link(DimKind::Switch, 4, "50 GiB/s", "500 ns")},
                withFidelity(Fidelity::AstraAware));
    net.sendAt(0, 0, 1, 65536, 1);
    net.sendAt(0, 0, 2, 65536, 2);
    net.run();
    EXPECT_EQ(net.arrivals.at(1), 3440000U);
    EXPECT_EQ(net.arrivals.at(2), 4660000U);
    EXPECT_EQ(net.core.linkBusyPs(0), 2440000U);
}

// The hop times follow each message's size, also on a link that carries one size, then
// another, then the first again (the policy remembers a link's times for the last size):
// 32 KiB holds a link floor(610.35) = 610 ns and hops in floor(500 + 610.35) = 1110 ns.
// Uplink 0 serves 64 KiB [0, 1220), 32 KiB [1220, 1830), 64 KiB [1830, 3050).
TEST(NetworkCore, AstraAwareHopTimesFollowEachMessagesSize)
{
    Harness net({link(DimKind::Switch, 4, "50 GiB/s", "500 ns")},
                withFidelity(Fidelity::AstraAware));
    net.sendAt(0, 0, 1, 65536, 1);
    net.sendAt(0, 0, 2, 32768, 2);
    net.sendAt(0, 0, 3, 65536, 3);
    net.run();
    EXPECT_EQ(net.arrivals.at(1), 3440000U); // 1720 + 1720
    EXPECT_EQ(net.arrivals.at(2), 3440000U); // 1220 + 1110 + 1110
    EXPECT_EQ(net.arrivals.at(3), 5270000U); // 1830 + 1720 + 1720
    EXPECT_EQ(net.core.linkBusyPs(0), 3050000U);
}

// Requests for one link at one instant are served in one order whatever order they were made
// in (a partitioned run's processes see an instant's events in other orders): by the time the
// request was made, then the source, then the sender's MessageOrder. Two 64 KiB messages
// (1,220 ns on a link, hops of 1,720 ns) reach switch 0's down link to endpoint 0 together.
TEST(NetworkCore, AstraAwareServesAnInstantsRequestsInOneOrder)
{
    const NetConfig config = withFidelity(Fidelity::AstraAware);
    auto arrivalsWhenSent = [&](bool fromTwoFirst) {
        Harness net({link(DimKind::Switch, 4, "50 GiB/s", "500 ns")}, config);
        if (fromTwoFirst) {
            net.sendUnsettled(2, 0, 65536, 2);
            net.sendUnsettled(1, 0, 65536, 1);
        } else {
            net.sendUnsettled(1, 0, 65536, 1);
            net.sendUnsettled(2, 0, 65536, 2);
        }
        net.core.settle();
        net.run();
        return net.arrivals;
    };
    const std::map<std::uint64_t, std::uint64_t> first = arrivalsWhenSent(false);
    EXPECT_EQ(arrivalsWhenSent(true), first);
    EXPECT_EQ(first.at(1), 3440000U); // the lower source first: 1720 + 1720
    EXPECT_EQ(first.at(2), 4660000U); // then 1220 ns later

    // One source, one destination: the sender's order decides.
    auto arrivalsInOrder = [&](MessageOrder a, MessageOrder b) {
        Harness net({link(DimKind::Switch, 4, "50 GiB/s", "500 ns")}, config);
        net.sendUnsettled(1, 0, 65536, 1, a);
        net.sendUnsettled(1, 0, 65536, 2, b);
        net.core.settle();
        net.run();
        return net.arrivals;
    };
    const std::map<std::uint64_t, std::uint64_t> later = arrivalsInOrder({7, 0}, {3, 0});
    EXPECT_EQ(later.at(2), 3440000U);
    EXPECT_EQ(later.at(1), 4660000U);
    EXPECT_EQ(arrivalsInOrder({3, 1}, {3, 0}), later);
}

TEST(NetworkCore, SendToSelfTakesOnlyTheMessageDelay)
{
    NetConfig config;
    config.messageDelay = Time::parse("3 ns");
    Harness net({link(DimKind::Ring, 4, "1 GB/s", "1 us")}, config);
    net.sendAt(0, 2, 2, 1000, 1);
    net.run();
    EXPECT_EQ(net.arrivals.at(1), 3000U);
}

TEST(NetworkCore, EndpointOutOfRangeIsAnError)
{
    Harness net({link(DimKind::Ring, 4, "1 GB/s", "1 us")});
    try {
        net.core.send(0, 9, 10, 1);
        FAIL();
    } catch (const Error& error) {
        EXPECT_STREQ(error.what(),
                     "NetworkCore::send: endpoint 9 out of range (the network "
                     "has 4 endpoints)");
    }
}

// An in-switch stream over the switch line {0,1,2,3} crosses all 8 links at one rate: alone,
// 2 x 500 ns + 1 MB / 100 GB/s = 11 us; a flow from 0 to 1 started with it shares uplink 0 and
// downlink 1, so both run at 50 GB/s: 1 us + 20 us.
TEST(NetworkCore, StreamCrossesEveryLinkOfItsPairsAtOneRate)
{
    std::vector<std::pair<std::uint32_t, std::uint32_t>> line{{0, 1}, {1, 2}, {2, 3}, {3, 0}};
    Harness alone({link(DimKind::Switch, 4, "100 GB/s", "500 ns")});
    alone.core.sendStream(line, 1000000, 1);
    alone.core.settle();
    alone.run();
    EXPECT_EQ(alone.arrivals.at(1), 11000000U);
    EXPECT_EQ(alone.core.linkBytes(0), 1e6);
    EXPECT_EQ(alone.core.linkBytes(7), 1e6);
    Harness shared({link(DimKind::Switch, 4, "100 GB/s", "500 ns")});
    shared.core.sendStream(line, 1000000, 1);
    shared.sendAt(0, 0, 1, 1000000, 2);
    shared.run();
    EXPECT_EQ(shared.arrivals.at(1), 21000000U);
    EXPECT_EQ(shared.arrivals.at(2), 21000000U);
}

TEST(NetworkCore, StreamErrors)
{
    Harness aware({link(DimKind::Switch, 4, "100 GB/s", "500 ns")},
                  withFidelity(Fidelity::AstraAware));
    try {
        aware.core.sendStream({{0, 1}}, 10, 1);
        FAIL();
    } catch (const Error& error) {
        EXPECT_STREQ(error.what(),
                     "NetworkCore::sendStream: in-switch streams need the flow or analytical "
                     "fidelity");
    }
    Harness flow({link(DimKind::Switch, 4, "100 GB/s", "500 ns")});
    try {
        flow.core.sendStream({{0, 1}, {1, 7}}, 10, 1);
        FAIL();
    } catch (const Error& error) {
        EXPECT_STREQ(error.what(),
                     "NetworkCore::sendStream: endpoint 7 out of range (the network has 4 "
                     "endpoints)");
    }
}

} // namespace
} // namespace etsim::net
