// WallProfile charges each part the host time it ran itself: nested entries (the driver's
// process calling the accelerator's socket) take their time out of the caller's, time in no
// part is `other`, and only the time between start and stop counts. A hand-driven clock makes
// every figure exact.
#include "kernel/WallProfile.h"

#include "kernel/Stats.h"

#include <gtest/gtest.h>

#include <memory>

namespace etsim {
namespace {

class WallProfileTest : public ::testing::Test {
protected:
    std::shared_ptr<std::uint64_t> now = std::make_shared<std::uint64_t>(1'000);
    WallProfile profile{[clock = now] { return *clock; }};

    void advance(std::uint64_t ns) { *now += ns; }
};

TEST_F(WallProfileTest, NestedPartsAreChargedOnlyTheirOwnTime)
{
    advance(500); // before start: not counted
    profile.start();
    advance(10); // other
    profile.enter(WallPart::Driver);
    advance(100);
    profile.enter(WallPart::Accelerator);
    advance(40);
    profile.enter(WallPart::Hbm);
    advance(7);
    profile.leave();
    advance(3); // accelerator again
    profile.leave();
    advance(50); // driver again
    profile.leave();
    advance(20); // other
    profile.enter(WallPart::Fabric);
    advance(30);
    profile.leave();
    profile.stop();
    advance(1'000); // after stop: not counted

    EXPECT_DOUBLE_EQ(profile.share(WallPart::Driver).seconds, 150e-9);
    EXPECT_DOUBLE_EQ(profile.share(WallPart::Accelerator).seconds, 43e-9);
    EXPECT_DOUBLE_EQ(profile.share(WallPart::Hbm).seconds, 7e-9);
    EXPECT_DOUBLE_EQ(profile.share(WallPart::Fabric).seconds, 30e-9);
    EXPECT_DOUBLE_EQ(profile.share(WallPart::Cosim).seconds, 0.0);
    EXPECT_DOUBLE_EQ(profile.otherSeconds(), 30e-9);
    EXPECT_DOUBLE_EQ(profile.totalSeconds(), 260e-9);
    EXPECT_EQ(profile.share(WallPart::Driver).entries, 1U);
    EXPECT_EQ(profile.share(WallPart::Cosim).entries, 0U);
}

TEST_F(WallProfileTest, EntriesCountEveryScopeAndAScopeWithoutProfileDoesNothing)
{
    profile.start();
    for (int call = 0; call < 5; ++call) {
        WallScope scope(&profile, WallPart::Fabric);
        advance(2);
    }
    {
        WallScope none(nullptr, WallPart::Fabric);
        advance(4);
    }
    profile.stop();
    EXPECT_EQ(profile.share(WallPart::Fabric).entries, 5U);
    EXPECT_DOUBLE_EQ(profile.share(WallPart::Fabric).seconds, 10e-9);
    EXPECT_DOUBLE_EQ(profile.otherSeconds(), 4e-9);
}

// Entries count a part entered from outside it: a part calling into itself (the accelerator's
// process into its own compute engine) is one entry, and scopes before start or after stop
// are not counted.
TEST_F(WallProfileTest, APartCallingIntoItselfIsOneEntryAndOnlyTheRunCounts)
{
    profile.enter(WallPart::Driver); // before start
    profile.leave();
    profile.start();
    profile.enter(WallPart::Accelerator);
    profile.enter(WallPart::Accelerator); // its own engine
    advance(5);
    profile.leave();
    profile.enter(WallPart::Hbm);
    profile.enter(WallPart::Accelerator); // back into the accelerator from the HBM's answer
    advance(1);
    profile.leave();
    profile.leave();
    profile.leave();
    profile.stop();
    profile.enter(WallPart::Fabric); // after stop
    profile.leave();
    EXPECT_EQ(profile.share(WallPart::Accelerator).entries, 2U);
    EXPECT_EQ(profile.share(WallPart::Hbm).entries, 1U);
    EXPECT_EQ(profile.share(WallPart::Driver).entries, 0U);
    EXPECT_EQ(profile.share(WallPart::Fabric).entries, 0U);
    EXPECT_DOUBLE_EQ(profile.share(WallPart::Accelerator).seconds, 6e-9);
}

TEST_F(WallProfileTest, EveryPartHasItsReportName)
{
    EXPECT_EQ(wallPartName(WallPart::Driver), "driver");
    EXPECT_EQ(wallPartName(WallPart::Accelerator), "accelerator");
    EXPECT_EQ(wallPartName(WallPart::Hbm), "hbm");
    EXPECT_EQ(wallPartName(WallPart::Fabric), "fabric");
    EXPECT_EQ(wallPartName(WallPart::Cosim), "cosim");
}

TEST(WallProfileStats, AGroupFindsTheProfileOfItsRoot)
{
    WallProfile profile;
    StatGroup root("platform");
    EXPECT_EQ(root.addGroup("before").wallProfile(), nullptr);
    root.attachWallProfile(&profile);
    StatGroup& rank = root.addGroup("rank0");
    EXPECT_EQ(rank.addGroup("hbm").wallProfile(), &profile);
    EXPECT_EQ(root.wallProfile(), &profile);
}

} // namespace
} // namespace etsim
