#include "models/hbm/AddressMap.h"

#include <gtest/gtest.h>

namespace etsim::hbm {
namespace {

TEST(HbmAddressMap, InterleavedSpreadsBurstsOverChannelsThenBankGroups)
{
    HbmConfig config = hbmPreset(HbmPreset::Hbm3_6400);
    AddressMap map(config);
    EXPECT_EQ(map.decode(31).channel, 0U);
    EXPECT_EQ(map.decode(32).channel, 1U);            // 32 B interleave
    EXPECT_EQ(map.decode(16 * 32).pc, 1U);            // after 16 channels, the other PC
    EXPECT_EQ(map.decode(32 * 32).bankGroup, 1U);     // after all 32 PCs, the next BG
    EXPECT_EQ(map.decode(4 * 32 * 32).column, 1U);    // then the next column
    EXPECT_EQ(map.decode(128 * 1024).bank, 1U);       // 32 columns later, the next bank
    EXPECT_EQ(map.decode(512 * 1024).row, 1U);        // and after 4 banks, the next row
    EXPECT_EQ(map.decode(8ULL << 30), map.decode(0)); // beyond the capacity: wraps
}

TEST(HbmAddressMap, EncodeInvertsDecode)
{
    HbmConfig config = hbmPreset(HbmPreset::Hbm3H100);
    AddressMap map(config);
    for (std::uint64_t address : {0ULL, 32ULL, 4095ULL, 4096ULL, 123456789ULL, 79ULL << 30}) {
        DeviceAddress where = map.decode(address);
        EXPECT_EQ(map.encode(where), address) << address;
    }
}

TEST(HbmAddressMap, FiveStacksTakeTurnsEveryInterleave)
{
    HbmConfig config = hbmPreset(HbmPreset::Hbm3H100);
    AddressMap map(config);
    EXPECT_EQ(map.decode(0).stack, 0U);
    EXPECT_EQ(map.decode(4096).stack, 1U);
    EXPECT_EQ(map.decode(4 * 4096).stack, 4U);
    EXPECT_EQ(map.decode(5 * 4096).stack, 0U);
    EXPECT_EQ(map.decode(5 * 4096).bankGroup, 0U);
    // The sixth block is stack 0's second 4 KiB: 4096 / 32 B = 128 bursts = 4 rounds of
    // 32 PCs, so bank group 0, column 1.
    EXPECT_EQ(map.decode(5 * 4096).column, 1U);
    DeviceAddress where = map.decode(3 * 4096 + 64);
    EXPECT_EQ(map.pcIndex(where), (3U * 16U + 2U) * 2U); // stack 3, channel 2, PC 0
}

TEST(HbmAddressMap, BankIndexCountsSidsAndGroups)
{
    HbmConfig config = hbmPreset(HbmPreset::Hbm3H100); // 2 SIDs × 4 BG × 4 banks
    AddressMap map(config);
    DeviceAddress where;
    where.sid = 1;
    where.bankGroup = 2;
    where.bank = 3;
    EXPECT_EQ(map.bankGroupIndex(where), 6U);
    EXPECT_EQ(map.bankIndex(where), 27U);
}

TEST(HbmAddressMap, PageInterleavedKeepsAPagePerPc)
{
    HbmConfig config = hbmPreset(HbmPreset::Hbm3_6400);
    config.addressMap =
        addressMapFromPreset(AddressMapPreset::PageInterleaved, config.organisation);
    AddressMap map(config);
    EXPECT_EQ(map.decode(1023).channel, 0U);
    EXPECT_EQ(map.decode(1023).column, 31U);
    EXPECT_EQ(map.decode(1024).channel, 1U);
}

} // namespace
} // namespace etsim::hbm
