// Placement of tensors in HBM: aligned, staggered over channels, stable per tensor id, and
// wrapping when the space runs out.

#include "models/accel/HbmAllocator.h"

#include <gtest/gtest.h>

namespace etsim::accel {
namespace {

MemoryMapConfig smallMap()
{
    MemoryMapConfig map;
    map.base = 0x1000'0000;
    map.capacity = Size::fromBytes(64 * 1024);
    map.alignment = Size::fromBytes(4096);
    map.interleave = Size::fromBytes(256);
    map.channels = 4;
    return map;
}

TEST(HbmAllocator, RegionsAreAlignedAndStartOnSuccessiveChannels)
{
    HbmAllocator hbm(smallMap());
    // Region i starts at the next 4 KiB boundary plus (i mod 4) · 256 B.
    EXPECT_EQ(hbm.fresh(1000), 0x1000'0000u);
    EXPECT_EQ(hbm.fresh(1000), 0x1000'0000u + 4096 + 256);
    EXPECT_EQ(hbm.fresh(5000), 0x1000'0000u + 8192 + 512);
    EXPECT_EQ(hbm.fresh(10), 0x1000'0000u + 16384 + 768);
    EXPECT_EQ(hbm.fresh(10), 0x1000'0000u + 20480); // channel 0 again
    EXPECT_EQ(hbm.regions(), 5u);
}

TEST(HbmAllocator, NamedTensorsKeepTheirRegionUntilTheyGrow)
{
    HbmAllocator hbm(smallMap());
    std::uint64_t first = hbm.tensor(42, 2000);
    hbm.fresh(100);
    EXPECT_EQ(hbm.tensor(42, 2000), first);
    EXPECT_EQ(hbm.tensor(42, 1000), first);
    std::uint64_t grown = hbm.tensor(42, 9000);
    EXPECT_NE(grown, first);
    EXPECT_EQ(hbm.tensor(42, 9000), grown);
}

TEST(HbmAllocator, WrapsWhenTheSpaceRunsOut)
{
    HbmAllocator hbm(smallMap());
    EXPECT_EQ(hbm.fresh(60 * 1024), 0x1000'0000u);
    // 4 KiB left is not enough for 8 KiB at the next boundary: start over (on channel 1).
    EXPECT_EQ(hbm.fresh(8 * 1024), 0x1000'0000u + 256);
    EXPECT_EQ(hbm.wraps(), 1u);
    // Offsets past the end fold back into the space.
    EXPECT_EQ(hbm.address(0x1000'0000u + 60 * 1024, 8 * 1024), 0x1000'0000u + 4 * 1024);
}

} // namespace
} // namespace etsim::accel
