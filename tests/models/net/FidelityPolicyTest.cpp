// The fidelity policies (models/net/fidelity/): the factory builds the policy each configured
// name stands for, each rounds the endpoint reduction as its fidelity says, and the abilities
// the configuration checks (fidelityAbilities) are what the network core lets each do.

#include "kernel/Error.h"
#include "models/net/fidelity/FidelityIf.h"
#include "models/net/flow/NetworkCore.h"
#include "models/net/topology/MultiDimTopology.h"

#include <gtest/gtest.h>

#include <string>

namespace etsim::net {
namespace {

class NullSink final : public MessageSink {
public:
    void delivered(std::uint64_t) override {}
};

DimConfig ringOfTwo()
{
    DimConfig dim;
    dim.size = 2;
    dim.bandwidth = Bandwidth::parse("100 GB/s");
    return dim;
}

TEST(FidelityPolicy, EveryConfiguredNameBuildsThePolicyOfThatName)
{
    EventCalendar calendar;
    MultiDimTopology topology({ringOfTwo()});
    FabricLinks links(topology, Bandwidth());
    NetworkState state(calendar, links, 0);
    for (const auto& [name, kind] : fidelityNames)
        EXPECT_EQ(std::string(makeFidelity(kind, state)->name()), name);
}

TEST(FidelityPolicy, ReductionsRoundToThePsOrToWholeNsAsTheFidelitySays)
{
    EventCalendar calendar;
    MultiDimTopology topology({ringOfTwo()});
    FabricLinks links(topology, Bandwidth());
    NetworkState state(calendar, links, 0);
    const Bandwidth memory = Bandwidth::parse("3 GB/s");
    // 3 x 1,001 B at 3 GB/s = 1,001 ns exactly; ASTRA-sim: 3 x floor(1,001 / 3) = 999 ns.
    EXPECT_EQ(makeFidelity(Fidelity::Flow, state)->reductionPs(1001, memory), 1001000U);
    EXPECT_EQ(makeFidelity(Fidelity::Analytical, state)->reductionPs(1001, memory), 1001000U);
    EXPECT_EQ(makeFidelity(Fidelity::AstraAware, state)->reductionPs(1001, memory), 999000U);
    EXPECT_EQ(makeFidelity(Fidelity::AstraUnaware, state)->reductionPs(1001, memory), 999000U);
}

TEST(FidelityPolicy, OnlyFidelitiesThatCarryStreamsAcceptThem)
{
    DimConfig dim;
    dim.kind = DimKind::Switch;
    dim.size = 4;
    dim.bandwidth = Bandwidth::parse("100 GB/s");
    dim.latency = Time::parse("1 us");
    for (const FidelityAbilities& abilities : fidelityAbilities) {
        NetConfig config;
        config.fidelity = abilities.fidelity;
        MultiDimTopology topology({dim});
        EventCalendar calendar;
        NullSink sink;
        NetworkCore core(topology, config, calendar, sink);
        auto stream = [&] { core.sendStream({{0, 1}, {1, 2}, {2, 3}, {3, 0}}, 1000000, 1); };
        if (abilities.carriesStreams) {
            EXPECT_NO_THROW(stream()) << enumName(fidelityNames, abilities.fidelity);
            // 1 MB at 100 GB/s after the two 1 us hops of the longest route.
            core.settle();
            while (!calendar.empty()) {
                core.handle(calendar.pop());
                core.settle();
            }
            EXPECT_EQ(calendar.now(), 12000000U) << enumName(fidelityNames, abilities.fidelity);
        } else {
            EXPECT_THROW(stream(), Error) << enumName(fidelityNames, abilities.fidelity);
        }
    }
}

} // namespace
} // namespace etsim::net
