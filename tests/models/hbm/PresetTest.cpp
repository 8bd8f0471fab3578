// The HBM2 and HBM3E presets against the spec's figures (hardware-models.md 2.1, 2.4), and the
// address map of a stack whose capacity is not a power of two (24 Gb dies).

#include "models/hbm/AddressMap.h"
#include "tests/models/hbm/HbmTestSupport.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace etsim::hbm::test {
namespace {

std::string errorOf(const std::string& yaml)
{
    try {
        loadConfigString(yaml, "hbm.yaml").map(parseHbmConfig);
    } catch (const Error& error) {
        return error.what();
    }
    return "(no error)";
}

HbmConfig quiet(HbmPreset preset)
{
    HbmConfig config = hbmPreset(preset);
    config.fidelity = Fidelity::Detailed;
    config.controller.refresh = RefreshKind::None;
    config.controller.latency = Time::fromPs(0);
    return config;
}

TEST(HbmPresets, Hbm2IsTheDramSysReferenceSet)
{
    HbmConfig config = hbmPreset(HbmPreset::Hbm2);
    const Timing& t = config.timing;
    // DRAMSys HBM2.json at tCK = 1 ns (hardware-models.md 2.2), all in CK.
    EXPECT_EQ(t.rcdRd, 12U);
    EXPECT_EQ(t.rcdWr, 6U);
    EXPECT_EQ(t.rp, 14U);
    EXPECT_EQ(t.ras, 28U);
    EXPECT_EQ(t.rc, 42U);
    EXPECT_EQ(t.cl, 17U);
    EXPECT_EQ(t.cwl, 7U);
    EXPECT_EQ(t.wr, 14U);
    EXPECT_EQ(t.rtp, 5U);
    EXPECT_EQ(t.faw, 16U);
    EXPECT_EQ(t.rfc, 220U);
    EXPECT_EQ(t.rfcPb, 96U);
    EXPECT_EQ(t.refi, 3900U);
    const Organisation& org = config.organisation;
    // 16 PCs of 64 bit at 2 Gb/s: 16 GB/s each, 256 GB/s per stack; BL4 is 32 B in 2 CK.
    EXPECT_DOUBLE_EQ(org.pcPeak().bytesPerSecond(), 16e9);
    EXPECT_DOUBLE_EQ(org.devicePeak().bytesPerSecond(), 256e9);
    EXPECT_EQ(org.burstBytes(), 32U);
    EXPECT_EQ(org.burstCycles(), 2U);
    EXPECT_EQ(org.banksPerPc(), 32U);
    // An 8-high stack of 8 Gb dies, the density nRFC 220 ns belongs to.
    EXPECT_EQ(org.deviceBytes(), 8ULL << 30);
}

TEST(HbmPresets, Hbm2RefreshLossIsSixPointFourPercent)
{
    // (nRTP + nRP + nRFC + nRCD) / nREFI = (5 + 14 + 220 + 12) / 3900 = 6.44 %.
    const Timing& t = hbmPreset(HbmPreset::Hbm2).timing;
    double loss = static_cast<double>(t.rtp + t.rp + t.rfc + t.rcdRd) / t.refi;
    EXPECT_NEAR(loss, 251.0 / 3900.0, 1e-12);
    EXPECT_NEAR(loss, 0.064, 0.0005);
}

TEST(HbmPresets, Hbm2UnloadedLatenciesMatchTheTimingSet)
{
    // tCK = 1 ns, so cycles are ns. Latency ends with the burst (nBL = 2 CK).
    DeviceRun run(quiet(HbmPreset::Hbm2));
    std::uint64_t opened = addressOf(run.device, 2, 1, 3, 1, 40, 0);
    std::uint64_t sameRow = addressOf(run.device, 2, 1, 3, 1, 40, 7);
    std::uint64_t otherRow = addressOf(run.device, 2, 1, 3, 1, 41, 0);
    run.submitAt(0, 1, opened, 32);
    run.submitAt(100000, 2, sameRow, 32);
    run.submitAt(200000, 3, otherRow, 32);
    run.drain();
    // Idle bank: nRCDRD + nCL + nBL = 12 + 17 + 2 = 31 ns.
    EXPECT_EQ(run.donePs.at(1), 31000U);
    // Open row: nCL + nBL = 19 ns.
    EXPECT_EQ(run.donePs.at(2) - 100000, 19000U);
    // Other row open: the spec's unloaded row miss (nRP + nRCD + nCL) = 43 CK = 43 ns, then
    // the burst: 45 ns.
    EXPECT_EQ(run.donePs.at(3) - 200000, 45000U);
    EXPECT_EQ(run.donePs.at(3) - 200000 - 2000, 43000U);
    EXPECT_EQ(run.counter("channel2.pc1.row_conflicts"), 1U);
}

TEST(HbmPresets, Hbm3eStackOfTwentyFourGigabytes)
{
    HbmConfig config = hbmPreset(HbmPreset::Hbm3e_9600);
    EXPECT_EQ(config.presetName, "hbm3e_9600");
    const Organisation& org = config.organisation;
    EXPECT_EQ(org.deviceBytes(), 24ULL << 30);
    EXPECT_EQ(org.rows, 24576U);
    // 32 PCs × 32 bit × 9.6 Gb/s = 1.2288 TB/s (hardware-models.md 2.1: 1.0-1.23 TB/s).
    EXPECT_DOUBLE_EQ(org.devicePeak().bytesPerSecond(), 1.2288e12);
    EXPECT_EQ(org.burstCycles(), 2U);
    // 12 Gb per channel refreshes for 450 ns = 1080 CK at 2.4 GHz; tREFI 3.9 us = 9360 CK.
    EXPECT_EQ(config.timing.rfc, 1080U);
    EXPECT_EQ(config.timing.refi, 9360U);
    // The row field is the top 15 bits of the 35 a 24 GiB stack needs.
    const auto& rowBits = config.addressMap.field(AddressField::Row);
    ASSERT_EQ(rowBits.size(), 15U);
    EXPECT_EQ(rowBits.front(), 20U);
    EXPECT_EQ(rowBits.back(), 34U);
    EXPECT_NO_THROW(validate(config));

    HbmConfig h200 = hbmPreset(HbmPreset::Hbm3eH200);
    EXPECT_EQ(h200.organisation.deviceBytes(), 144ULL << 30);
    EXPECT_DOUBLE_EQ(h200.organisation.devicePeak().bytesPerSecond(), 4.8e12);
    EXPECT_NO_THROW(validate(h200));
}

TEST(HbmPresets, PartialRowCountDecodesEveryAddressBelowTheCapacity)
{
    HbmConfig config = hbmPreset(HbmPreset::Hbm3e_9600);
    AddressMap map(config);
    const std::uint64_t capacity = 24ULL << 30;
    // The last burst of the stack is in the last row; the capacity wraps to address 0.
    DeviceAddress last = map.decode(capacity - 32);
    EXPECT_EQ(last.row, 24575U);
    EXPECT_EQ(map.decode(capacity), map.decode(0));
    EXPECT_EQ(map.decode(capacity + 4096 + 64), map.decode(4096 + 64));
    for (std::uint64_t address :
         {std::uint64_t{0}, std::uint64_t{(16ULL << 30) + 12345 * 32}, capacity - 32}) {
        DeviceAddress where = map.decode(address);
        EXPECT_LT(where.row, 24576U);
        EXPECT_EQ(map.encode(where), address - address % 32);
    }
    // Six stacks take turns every 4 KiB over 144 GiB.
    HbmConfig h200 = hbmPreset(HbmPreset::Hbm3eH200);
    AddressMap six(h200);
    std::set<std::uint32_t> stacks;
    for (std::uint64_t block = 0; block < 6; ++block)
        stacks.insert(six.decode(block * 4096).stack);
    EXPECT_EQ(stacks.size(), 6U);
    DeviceAddress end = six.decode((144ULL << 30) - 32);
    EXPECT_EQ(end.stack, 5U);
    EXPECT_EQ(end.row, 24575U);
}

TEST(HbmPresets, ThirtySixGigabyteStackIsARowOverride)
{
    // 12-high of 24 Gb dies: 36 GiB = 36,864 rows per bank with 32 banks per PC.
    HbmConfig config = loadConfigString("preset: hbm3e_9600\norganisation: {rows: 36864}\n"
                                        "timing: {rfc: \"550 ns\"}\n",
                                        "hbm.yaml")
                           .map(parseHbmConfig);
    EXPECT_EQ(config.organisation.deviceBytes(), 36ULL << 30);
    EXPECT_EQ(config.timing.rfc, 1320U);
    AddressMap map(config);
    EXPECT_EQ(map.decode((36ULL << 30) - 32).row, 36863U);
}

TEST(HbmPresets, PartialRowCountNeedsTheRowOnTheTopBits)
{
    // Swapping a row bit with a column bit leaves rows 24576..32767 reachable.
    std::string yaml = "preset: hbm3e_9600\naddress_map:\n"
                       "  byte: [0, 1, 2, 3, 4]\n  channel: [5, 6, 7, 8]\n  pseudo_channel: [9]\n"
                       "  bank_group: [10, 11]\n  column: [12, 13, 14, 15, 34]\n"
                       "  bank: [17, 18]\n  sid: [19]\n"
                       "  row: [20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 16]\n";
    EXPECT_EQ(errorOf(yaml),
              "hbm.yaml:10:8: address_map.row: 24576 rows are not a power of two, so the row "
              "field must be the top address bits in order (20 to 34)");
    EXPECT_EQ(errorOf("preset: hbm3e_9600\norganisation: {rows: 0}\n"),
              "hbm.yaml:2:22: organisation.rows: must be at least 1");
}

} // namespace
} // namespace etsim::hbm::test
