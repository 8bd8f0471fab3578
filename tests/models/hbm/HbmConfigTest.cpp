// Presets against the spec's tables, YAML overrides with units, and every config error with
// the file position and key path it names.

#include "models/hbm/HbmConfig.h"

#include <gtest/gtest.h>

#include <string>

namespace etsim::hbm {
namespace {

HbmConfig parse(const std::string& yaml)
{
    return loadConfigString(yaml, "hbm.yaml").map(parseHbmConfig);
}

std::string errorOf(const std::string& yaml)
{
    try {
        parse(yaml);
    } catch (const Error& error) {
        return error.what();
    }
    return "(no error)";
}

TEST(HbmConfig, Hbm3_6400PresetIsTheSpecTimingSet)
{
    HbmConfig config = hbmPreset(HbmPreset::Hbm3_6400);
    const Timing& t = config.timing;
    // hardware-models.md 2.2, in CK at 1.6 GHz, nRFC for <= 4 Gb per channel.
    EXPECT_EQ(t.cl, 20U);
    EXPECT_EQ(t.cwl, 10U);
    EXPECT_EQ(t.rcdRd, 31U);
    EXPECT_EQ(t.rcdWr, 15U);
    EXPECT_EQ(t.rp, 26U);
    EXPECT_EQ(t.ras, 45U);
    EXPECT_EQ(t.rc, 72U);
    EXPECT_EQ(t.wr, 33U);
    EXPECT_EQ(t.rtp, 9U);
    EXPECT_EQ(t.ccdS, 2U);
    EXPECT_EQ(t.ccdL, 4U);
    EXPECT_EQ(t.ccdR, 3U);
    EXPECT_EQ(t.rrdS, 4U);
    EXPECT_EQ(t.rrdL, 5U);
    EXPECT_EQ(t.faw, 24U);
    EXPECT_EQ(t.wtrS, 7U);
    EXPECT_EQ(t.wtrL, 10U);
    EXPECT_EQ(t.rtw, 20U);
    EXPECT_EQ(t.ppd, 2U);
    EXPECT_EQ(t.rfc, 416U);
    EXPECT_EQ(t.rfcPb, 320U);
    EXPECT_EQ(t.refi, 6240U);
    EXPECT_EQ(t.rrefd, 8U);
    const Organisation& org = config.organisation;
    EXPECT_EQ(org.burstCycles(), 2U);
    EXPECT_EQ(org.burstBytes(), 32U);
    EXPECT_DOUBLE_EQ(org.pcPeak().bytesPerSecond(), 25.6e9);
    EXPECT_DOUBLE_EQ(org.devicePeak().bytesPerSecond(), 819.2e9);
    EXPECT_EQ(org.stackBytes(), 8ULL << 30);
    EXPECT_EQ(config.analytic.latency, Time::fromPs(33125)); // (31 + 20 + 2) × 0.625 ns
    EXPECT_NO_THROW(validate(config));
}

TEST(HbmConfig, H100PresetHasFiveStacksAt3_35TBps)
{
    HbmConfig config = hbmPreset(HbmPreset::Hbm3H100);
    EXPECT_EQ(config.presetName, "hbm3_h100");
    EXPECT_EQ(config.organisation.stacks, 5U);
    EXPECT_NEAR(config.organisation.devicePeak().bytesPerSecond(), 3.347e12, 1e9);
    EXPECT_EQ(config.organisation.deviceBytes(), 80ULL << 30);
    // 350 ns refresh of a 16 GB stack at 1.3075 GHz: 457.6 -> 458 CK; tREFI rounds down.
    EXPECT_EQ(config.timing.rfc, 458U);
    EXPECT_EQ(config.timing.refi, 5099U);
    EXPECT_EQ(config.timing.rcdRd, 26U); // 19.375 ns = 25.3 CK
    EXPECT_NO_THROW(validate(config));
}

TEST(HbmConfig, EveryPresetValidates)
{
    for (const auto& entry : presetNames) {
        HbmConfig config = hbmPreset(entry.value);
        EXPECT_EQ(config.presetName, entry.name);
        EXPECT_NO_THROW(validate(config)) << entry.name;
    }
    EXPECT_NEAR(
        hbmPreset(HbmPreset::Hbm2eA100).organisation.devicePeak().bytesPerSecond(), 2.039e12, 1e9);
    EXPECT_DOUBLE_EQ(hbmPreset(HbmPreset::Hbm2).organisation.pcPeak().bytesPerSecond(), 16e9);
    EXPECT_DOUBLE_EQ(hbmPreset(HbmPreset::Hbm4).organisation.devicePeak().bytesPerSecond(),
                     2.048e12);
}

TEST(HbmConfig, YamlOverridesPresetWithCyclesOrTimes)
{
    HbmConfig config = parse("preset: hbm3_6400\n"
                             "fidelity: detailed\n"
                             "timing: {rcd_rd: 40, rp: \"20 ns\", rc: 80}\n"
                             "controller: {scheduler: fifo, page_policy: closed, refresh: per_bank,"
                             " latency: 10 ns, write_queue: 64}\n"
                             "analytic: {efficiency: 0.8}\n");
    EXPECT_EQ(config.fidelity, Fidelity::Detailed);
    EXPECT_EQ(config.timing.rcdRd, 40U);
    EXPECT_EQ(config.timing.rp, 32U); // 20 ns at 0.625 ns per CK
    EXPECT_EQ(config.controller.scheduler, SchedulerKind::Fifo);
    EXPECT_EQ(config.controller.pagePolicy, PagePolicyKind::Closed);
    EXPECT_EQ(config.controller.refresh, RefreshKind::PerBank);
    EXPECT_EQ(config.controller.latency, Time::fromPs(10000));
    EXPECT_EQ(config.controller.writeQueue, 64U);
    EXPECT_DOUBLE_EQ(config.analytic.efficiency, 0.8);
}

TEST(HbmConfig, OrganisationChangeRebuildsThePresetAddressMap)
{
    HbmConfig config = parse("organisation: {stacks: 2, rows: 32768}\n");
    EXPECT_EQ(config.organisation.stackBytes(), 16ULL << 30);
    EXPECT_EQ(config.addressMap.field(AddressField::Row).size(), 15U);
    EXPECT_NO_THROW(validate(config));
}

TEST(HbmConfig, ExplicitAddressMapBits)
{
    // byte 0-4, channel 5-8, pc 9, bank_group 10-11, column 12-16, bank 17-18, row 19-32.
    HbmConfig config = parse("address_map:\n"
                             "  byte: [0, 1, 2, 3, 4]\n"
                             "  channel: [5, 6, 7, 8]\n"
                             "  pseudo_channel: [9]\n"
                             "  bank_group: [10, 11]\n"
                             "  column: [12, 13, 14, 15, 16]\n"
                             "  bank: [17, 18]\n"
                             "  row: [19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32]\n");
    EXPECT_EQ(config.addressMap.bits,
              addressMapFromPreset(AddressMapPreset::Interleaved, config.organisation).bits);
}

TEST(HbmConfig, ZeroTimingIsRefused)
{
    EXPECT_EQ(errorOf("timing: {rp: 0}\n"),
              "hbm.yaml:1:14: timing.rp: must be at least 1 cycle, got \"0\"");
}

TEST(HbmConfig, NegativeTimingIsRefused)
{
    EXPECT_EQ(errorOf("timing: {cl: -3}\n"),
              "hbm.yaml:1:14: timing.cl: must be positive, got \"-3\"");
    EXPECT_EQ(errorOf("timing: {cl: \"-3 ns\"}\n"),
              "hbm.yaml:1:14: timing.cl: must be positive, got \"-3 ns\"");
}

TEST(HbmConfig, TimingWithWrongUnitIsRefused)
{
    std::string error = errorOf("timing: {cl: 12 GHz}\n");
    EXPECT_NE(error.find("hbm.yaml:1:14: timing.cl: "), std::string::npos) << error;
    EXPECT_NE(error.find("give cycles (an integer) or a time such as \"19.375 ns\""),
              std::string::npos)
        << error;
}

TEST(HbmConfig, RcShorterThanRasPlusRpIsRefused)
{
    EXPECT_EQ(errorOf("timing:\n  rc: 60\n"),
              "hbm.yaml:2:7: timing.rc: tRC (60) must be at least tRAS + tRP (45 + 26 = 71 "
              "cycles)");
}

TEST(HbmConfig, OtherTimingRulesNameTheirKey)
{
    EXPECT_EQ(errorOf("timing: {ccd_l: 1}\n"),
              "hbm.yaml:1:17: timing.ccd_l: must be at least ccd_s (2)");
    EXPECT_EQ(errorOf("timing: {refi: 400}\n"),
              "hbm.yaml:1:16: timing.refi: must be longer than rfc (416 cycles)");
    EXPECT_EQ(errorOf("timing: {ccd_s: 1, ccd_l: 1}\n"),
              "hbm.yaml:1:17: timing.ccd_s: must cover one burst on the data bus (2 cycles)");
}

TEST(HbmConfig, AddressMapThatDoesNotCoverTheCapacityIsRefused)
{
    EXPECT_EQ(errorOf("address_map:\n"
                      "  byte: [0, 1, 2, 3, 4]\n"
                      "  channel: [5, 6, 7, 8]\n"
                      "  pseudo_channel: [9]\n"
                      "  bank_group: [10, 11]\n"
                      "  column: [12, 13, 14, 15, 16]\n"
                      "  bank: [17, 18]\n"
                      "  row: [19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31]\n"),
              "hbm.yaml:8:8: address_map.row: has 13 bits but 16384 rows need 14 bits");
}

TEST(HbmConfig, AddressMapBitUsedTwiceOrOutsideIsRefused)
{
    EXPECT_EQ(errorOf("address_map:\n"
                      "  byte: [0, 1, 2, 3, 4]\n"
                      "  channel: [4, 6, 7, 8]\n"),
              "hbm.yaml:3:12: address_map.channel: bit 4 is already used by byte");
    EXPECT_EQ(errorOf("address_map:\n"
                      "  byte: [0, 1, 2, 3, 40]\n"),
              "hbm.yaml:2:9: address_map.byte: bit 40 is outside a stack of 8 GiB (bits 0 to 32)");
}

TEST(HbmConfig, AddressMapMissingAFieldIsReportedAtTheMap)
{
    EXPECT_EQ(errorOf("organisation: {rows: 8192}\n"
                      "address_map: {byte: [0, 1, 2, 3, 4]}\n"),
              "hbm.yaml:2:14: address_map.column: has 0 bits but 32 bursts per page need 5 bits");
}

TEST(HbmConfig, OrganisationErrorsNameTheKey)
{
    EXPECT_EQ(errorOf("organisation: {bank_groups: 3}\n"),
              "hbm.yaml:1:29: organisation.bank_groups: must be a power of two (address bits "
              "select it), got 3");
    EXPECT_EQ(errorOf("organisation: {clock: 1 GHz}\n"),
              "hbm.yaml:1:23: organisation.clock: a burst must take a whole number of cycles: "
              "burst_length / (data_rate / clock) is 1.250000; use clock = data_rate / 4 for "
              "HBM3");
    EXPECT_EQ(errorOf("organisation: {stacks: 0}\n"),
              "hbm.yaml:1:24: organisation.stacks: must be at least 1");
}

TEST(HbmConfig, ControllerAndAnalyticErrorsNameTheKey)
{
    EXPECT_EQ(errorOf("controller: {write_low_watermark: 0.9}\n"),
              "hbm.yaml:1:35: controller.write_low_watermark: must be in [0, "
              "write_high_watermark)");
    EXPECT_EQ(errorOf("controller: {read_queue: 0}\n"),
              "hbm.yaml:1:26: controller.read_queue: must be at least 1");
    EXPECT_EQ(errorOf("analytic: {efficiency: 1.5}\n"),
              "hbm.yaml:1:24: analytic.efficiency: must be in (0, 1], the sustained fraction "
              "of peak bandwidth");
    EXPECT_EQ(errorOf("controller: {scheduler: frfcfs}\n"),
              "hbm.yaml:1:25: controller.scheduler: expected one of fr_fcfs, fifo, got "
              "\"frfcfs\" (did you mean \"fr_fcfs\"?)");
}

TEST(HbmConfig, UnknownKeyIsRefused)
{
    std::string error = errorOf("timing: {rcd: 3}\n");
    EXPECT_NE(error.find("hbm.yaml:1:10: timing.rcd: unknown key"), std::string::npos) << error;
}

TEST(HbmConfig, ValidateNamesSectionAndKey)
{
    HbmConfig config = hbmPreset(HbmPreset::Hbm3_6400);
    config.timing.faw = 0;
    EXPECT_THROW(
        {
            try {
                validate(config);
            } catch (const Error& error) {
                EXPECT_EQ(std::string(error.what()), "hbm.timing.faw: must be at least 1 cycle");
                throw;
            }
        },
        Error);
}

TEST(HbmConfig, PresetValuesAChangedOrganisationBreaksAreReportedUnderTheirKey)
{
    // Bursts of 16 beats take 4 CK at the preset's clock: its tCCDS of 2 no longer covers one.
    // The timing came from the preset, so the error is at the hbm map, under timing.ccd_s.
    EXPECT_EQ(errorOf("preset: hbm3_6400\norganisation: {burst_length: 16}\n"),
              "hbm.yaml:1:1: timing.ccd_s: must cover one burst on the data bus (4 cycles)");
}

TEST(HbmConfig, EveryRuleIsInTheParameterTable)
{
    // validate() is the table's rules and nothing else: one broken value per section is found
    // by firstViolation with its key path, as the YAML reader reports it.
    const ParamTable<HbmConfig>& table = hbmParams();
    auto broken = [&](auto change) {
        HbmConfig config = hbmPreset(HbmPreset::Hbm3_6400);
        change(config);
        std::optional<ParamViolation> bad = table.firstViolation(config);
        return bad ? bad->key + ": " + bad->problem : std::string("(none)");
    };
    EXPECT_EQ(broken([](HbmConfig&) {}), "(none)");
    EXPECT_EQ(broken([](HbmConfig& c) { c.organisation.sids = 3; }),
              "organisation.sids: must be a power of two (address bits select it), got 3");
    EXPECT_EQ(broken([](HbmConfig& c) { c.timing.rrdL = 1; }),
              "timing.rrd_l: must be at least rrd_s (4)");
    EXPECT_EQ(broken([](HbmConfig& c) { c.addressMap.field(AddressField::Row).pop_back(); }),
              "address_map.row: has 13 bits but 16384 rows need 14 bits");
    EXPECT_EQ(broken([](HbmConfig& c) { c.controller.refreshMaxPostponed = 9; }),
              "controller.refresh_max_postponed: 9 is more than JEDEC allows (8 refresh "
              "intervals); use 0 to 8");
    EXPECT_EQ(broken([](HbmConfig& c) { c.controller.writeQueue = 0; }),
              "controller.write_queue: must be at least 1");
    EXPECT_EQ(broken([](HbmConfig& c) { c.analytic.writeEfficiency = 1.5; }),
              "analytic.write_efficiency: must be in [0, 1], the sustained fraction of peak "
              "bandwidth for writes (0: efficiency)");
}

TEST(HbmConfig, RequestBufferOrganisationsAndTheirSizes)
{
    HbmConfig c = parse("controller: {buffer: read_write, read_buffer: 6, write_buffer: 3, "
                        "command_mux: oldest}\n");
    EXPECT_EQ(c.controller.buffer, RequestBuffer::ReadWrite);
    EXPECT_EQ(c.controller.readBuffer, 6U);
    EXPECT_EQ(c.controller.writeBuffer, 3U);
    c = parse("controller: {buffer: shared, shared_buffer: 5, command_mux: oldest}\n");
    EXPECT_EQ(c.controller.buffer, RequestBuffer::Shared);
    EXPECT_EQ(c.controller.sharedBuffer, 5U);
    // Written back, the sizes read in again.
    EXPECT_EQ(toYaml(c)["controller"]["shared_buffer"].as<std::string>(), "5");
    EXPECT_EQ(errorOf("controller: {buffer: shared, command_mux: oldest, shared_buffer: 0}\n"),
              "hbm.yaml:1:66: controller.shared_buffer: must be at least 1");
    EXPECT_NE(errorOf("controller: {buffer: read_write}\n")
                  .find("a read_write buffer offers one command per bank; use oldest"),
              std::string::npos);
    EXPECT_NE(
        errorOf("controller: {command_mux: oldest}\n").find("use bankwise, read_write or shared"),
        std::string::npos);
}

TEST(RefreshConfig, ModesTheStandardDoesNotDefineAreRefusedWithTheFix)
{
    std::string e = errorOf("preset: hbm3_6400\ncontroller: {refresh: per_2bank}\n");
    EXPECT_NE(e.find("hbm.yaml:2"), std::string::npos) << e;
    EXPECT_NE(e.find("controller.refresh"), std::string::npos) << e;
    EXPECT_NE(e.find("timing.rfc_p2b is 0"), std::string::npos) << e;
    EXPECT_NE(e.find("use all_bank or per_bank"), std::string::npos) << e;
    e = errorOf("preset: hbm2\ncontroller: {refresh: same_bank}\n");
    EXPECT_NE(e.find("same_bank: the timing set defines no same-bank refresh"), std::string::npos)
        << e;
    // 0 means "not defined" for these keys (a resolved config writes them so).
    EXPECT_EQ(parse("timing: {rfc_p2b: 0, refi_pb: 0}\n").timing.rfcP2b, 0U);
    // Given its timing, the mode is accepted.
    EXPECT_EQ(errorOf("preset: hbm3_6400\ntiming: {rfc_p2b: 360}\n"
                      "controller: {refresh: per_2bank}\n"),
              "(no error)");
}

TEST(RefreshConfig, ContradictoryPostponeAndPullInValuesAreRefused)
{
    std::string e = errorOf("controller: {refresh_max_postponed: 9}\n");
    EXPECT_NE(e.find("controller.refresh_max_postponed: 9 is more than JEDEC allows"),
              std::string::npos)
        << e;
    e = errorOf("controller: {refresh: none, refresh_max_pulled_in: 2}\n");
    EXPECT_NE(e.find("controller.refresh_max_pulled_in: refresh: none has no refresh to "
                     "postpone or pull in"),
              std::string::npos)
        << e;
    // 8 pulled in + 1 regular REFab of 416 CK need 3744 CK: more than a 3000-CK tREFI.
    e = errorOf("timing: {refi: 3000}\ncontroller: {refresh_max_pulled_in: 8}\n");
    EXPECT_NE(e.find("do not fit in one tREFI (3000 cycles); use at most 6"), std::string::npos)
        << e;
    EXPECT_EQ(errorOf("controller: {refresh_max_postponed: 8, refresh_max_pulled_in: 8}\n"),
              "(no error)");
}

} // namespace
} // namespace etsim::hbm
