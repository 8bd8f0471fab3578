// Refresh modes and refresh flexibility: the RefreshSchedule state machine on hand-worked
// sequences, refresh counts and refresh time per mode against the timing parameters on busy
// traffic, postponing and pulling in on the device (the configuration rules are in
// HbmConfigTest).

#include "models/hbm/refresh/RefreshSchedule.h"
#include "tests/models/hbm/DramsysExample.h"
#include "tests/models/hbm/HbmTestSupport.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace etsim::hbm::test {
namespace {

constexpr std::uint64_t tck = 625; // ps, HBM3-6400

TEST(RefreshSchedule, WithoutFlexibilityEveryDueRefreshIsForced)
{
    RefreshSchedule s(100, 0, 0, 100);
    EXPECT_TRUE(s.forced());
    s.refreshed();
    EXPECT_FALSE(s.pulledIn());
    EXPECT_EQ(s.due(), 200U);
}

TEST(RefreshSchedule, PostponesWhileBusyUntilTheLimitThenForces)
{
    RefreshSchedule s(100, 2, 0, 100);
    // Busy at 100 and 200: both postponed; at 300 the refresh is forced.
    EXPECT_FALSE(s.forced());
    s.postpone();
    EXPECT_EQ(s.due(), 200U);
    s.postpone();
    EXPECT_EQ(s.due(), 300U);
    EXPECT_EQ(s.owed(), 2);
    EXPECT_TRUE(s.forced());
    s.refreshed(); // the forced one: now pulled in, due at once while idle
    EXPECT_TRUE(s.pulledIn());
    EXPECT_EQ(s.due(), 300U);
    EXPECT_EQ(s.owed(), 2);
    s.refreshed(); // idle: the owed ones catch up
    s.refreshed();
    EXPECT_EQ(s.owed(), 0);
    // No pulling in (limit 0): back to the timetable.
    EXPECT_FALSE(s.pulledIn());
    EXPECT_EQ(s.due(), 400U);
}

TEST(RefreshSchedule, PullsInWhileIdleAndABusyEvaluationEndsTheRun)
{
    RefreshSchedule s(100, 0, 3, 100);
    s.refreshed(); // the regular one
    s.refreshed(); // pulled in: 1 ahead
    EXPECT_EQ(s.owed(), -1);
    EXPECT_TRUE(s.pulledIn());
    s.endPullIn(); // a request arrived
    EXPECT_EQ(s.due(), 200U);
    // At 200, 1 ahead: busy postpones it (spends the refresh done ahead), it is not forced.
    EXPECT_FALSE(s.forced());
    s.postpone();
    EXPECT_EQ(s.owed(), 0);
    EXPECT_EQ(s.due(), 300U);
    // A late evaluation, a whole interval after the due time, moves the timetable on.
    s.catchUp(450);
    EXPECT_EQ(s.due(), 400U);
}

// One channel (two PCs) of HBM3-6400 with a refresh mode.
HbmConfig oneChannel(RefreshKind kind)
{
    HbmConfig config = quietHbm3();
    config.organisation.channelsPerStack = 1;
    config.addressMap = addressMapFromPreset(AddressMapPreset::Interleaved, config.organisation);
    config.controller.refresh = kind;
    // Devices with per-2-bank and same-bank refresh (not JEDEC HBM): their refresh blocks
    // two banks, or four, for 360 cycles.
    config.timing.rfcP2b = 360;
    config.timing.rfcSb = 360;
    validate(config);
    return config;
}

struct Stream {
    std::uint64_t refreshes = 0;
    double refreshSeconds = 0;
    double seconds = 0;   // first request to the last data beat
    double bandwidth = 0; // B/s
};

// Sequential 64 B reads, 64 in flight, for `cycles` of simulated time: both PCs stay busy.
Stream stream(const HbmConfig& config, std::uint64_t cycles)
{
    DeviceRun run(config);
    std::uint64_t end = cycles * tck;
    std::uint64_t submitted = 0;
    std::uint64_t now = 0;
    while (now < end) {
        while (submitted - run.donePs.size() < 64) {
            run.submitAt(now, submitted, submitted * 64, 64);
            ++submitted;
        }
        now = run.device.nextEventPs();
        run.device.runUntil(now);
    }
    run.drain();
    Stream s;
    s.refreshes = run.sumOverPcs("refreshes");
    for (std::uint32_t pc = 0; pc < 2; ++pc)
        s.refreshSeconds +=
            dynamic_cast<const Scalar&>(
                *run.stats.findStat("channel0.pc" + std::to_string(pc) + ".refresh_time"))
                .value();
    s.seconds = static_cast<double>(run.donePs.rbegin()->second) * 1e-12;
    s.bandwidth = static_cast<double>(submitted * 64) / s.seconds;
    return s;
}

TEST(RefreshModes, EachModeRefreshesOncePerItsIntervalOnBusyTraffic)
{
    // 20 tREFI = 124,800 CK. Per PC and mode, the interval and the refresh duration:
    //   all_bank   tREFI        = 6240 CK, tRFC    416
    //   per_bank   tREFI / 16   =  390 CK, tRFCpb  320
    //   per_2bank  tREFI / 8    =  780 CK, rfc_p2b 360
    //   same_bank  tREFI / 4    = 1560 CK, rfc_sb  360
    struct Mode {
        RefreshKind kind;
        std::uint64_t interval;
        std::uint64_t duration;
    };
    const std::uint64_t cycles = 20 * 6240;
    Stream allBank;
    for (Mode m : {Mode{RefreshKind::AllBank, 6240, 416},
                   Mode{RefreshKind::PerBank, 390, 320},
                   Mode{RefreshKind::Per2Bank, 780, 360},
                   Mode{RefreshKind::SameBank, 1560, 360}}) {
        Stream s = stream(oneChannel(m.kind), cycles);
        std::uint64_t busyCycles = static_cast<std::uint64_t>(s.seconds * 1e12) / tck;
        // One per interval of the busy time, per PC (the last may fall after the data).
        std::uint64_t expected = 2 * (busyCycles / m.interval);
        EXPECT_LE(s.refreshes, expected) << static_cast<int>(m.kind);
        EXPECT_GE(s.refreshes + 2, expected) << static_cast<int>(m.kind);
        // Each refresh keeps its banks busy for exactly its duration.
        EXPECT_NEAR(
            s.refreshSeconds, static_cast<double>(s.refreshes * m.duration * tck) * 1e-12, 1e-12);
        if (m.kind == RefreshKind::AllBank)
            allBank = s;
    }
    // All-bank refresh costs streaming (tRTP + tRP + tRFC + tRCD) / tREFI of peak:
    // (9 + 26 + 416 + 31) / 6240 = 7.7 %; the stream stays within 1.5 % below that bound.
    double peak = oneChannel(RefreshKind::AllBank).organisation.devicePeak().bytesPerSecond();
    double bound = 1.0 - (9.0 + 26 + 416 + 31) / 6240;
    EXPECT_LE(allBank.bandwidth / peak, bound + 0.002);
    EXPECT_GE(allBank.bandwidth / peak, bound - 0.015);
    // A per-bank refresh leaves the other banks serving: the stream loses less.
    Stream perBank = stream(oneChannel(RefreshKind::PerBank), cycles);
    EXPECT_GT(perBank.bandwidth, allBank.bandwidth);
}

TEST(RefreshModes, PostponedRefreshesAreOwedWhileTheChannelStaysBusy)
{
    // Busy all the time: the first four due refreshes are postponed, then every one is
    // forced (the controller owes four for the rest of the run): four fewer refreshes.
    const std::uint64_t cycles = 20 * 6240;
    HbmConfig config = oneChannel(RefreshKind::AllBank);
    Stream regular = stream(config, cycles);
    config.controller.refreshMaxPostponed = 4;
    validate(config);
    Stream postponed = stream(config, cycles);
    EXPECT_EQ(postponed.refreshes + 2 * 4, regular.refreshes);
    // Per bank, the limit counts in all-bank intervals: 4 x 16 REFpb per PC.
    HbmConfig perBank = oneChannel(RefreshKind::PerBank);
    Stream perBankRegular = stream(perBank, cycles);
    perBank.controller.refreshMaxPostponed = 4;
    Stream perBankPostponed = stream(perBank, cycles);
    // Per bank a refresh is postponed only while every bank has requests, which the stream
    // does not keep up: at most 2 x 64 fewer.
    EXPECT_LE(perBankPostponed.refreshes, perBankRegular.refreshes);
    EXPECT_GE(perBankPostponed.refreshes + 2 * 64, perBankRegular.refreshes);
}

TEST(RefreshModes, ForcedRefreshWaitsForTheLimitOnTheCommandSequence)
{
    // Reads keep PC 0 busy from cycle 0 past 2 tREFI. Without postponing the first REFab
    // issues once the rows are closed after the due time 6240; with one postponed refresh it
    // waits for the second due time, 12480.
    auto firstRefresh = [](std::uint32_t postponed) {
        HbmConfig config = oneChannel(RefreshKind::AllBank);
        config.controller.refreshMaxPostponed = postponed;
        DeviceRun run(config);
        std::vector<std::uint64_t> refs;
        run.device.setObserver([&](std::uint32_t pc,
                                   std::uint64_t cycle,
                                   Command command,
                                   std::uint32_t,
                                   std::uint32_t) {
            if (pc == 0 && command == Command::RefAb)
                refs.push_back(cycle);
        });
        // One read every 100 CK to PC 0, bank 0, alternating rows: always a request waiting.
        for (std::uint64_t i = 0; i < 140; ++i)
            run.submitAt(i * 100 * tck, i, addressOf(run.device, 0, 0, 0, 0, i % 2, 0), 32);
        run.drain();
        return refs;
    };
    std::vector<std::uint64_t> none = firstRefresh(0);
    ASSERT_FALSE(none.empty());
    EXPECT_GE(none.front(), 6240U);
    EXPECT_LT(none.front(), 6240U + 100);
    std::vector<std::uint64_t> one = firstRefresh(1);
    ASSERT_FALSE(one.empty());
    EXPECT_GE(one.front(), 12480U);
    EXPECT_LT(one.front(), 12480U + 100);
    EXPECT_EQ(one.size() + 1, none.size());
}

TEST(RefreshModes, AnIdlePcPullsRefreshesInBackToBack)
{
    // Idle from cycle 100 to 10.5 tREFI: the ten regular refreshes (at 6240 k) happened, and
    // with 8 to pull in the first due time also issued 8 more, one tRFC apart
    // (6240 + 8 x 416 = 9568 finishes long before the next due time).
    for (std::uint32_t pulledIn : {0U, 8U}) {
        HbmConfig config = quietHbm3();
        config.controller.refresh = RefreshKind::AllBank;
        config.controller.refreshMaxPulledIn = pulledIn;
        DeviceRun run(config);
        run.submitAt(0, 1, addressOf(run.device, 0, 0, 0, 0, 1, 0), 32);
        run.drain();
        std::uint64_t later = 65520 * tck;
        run.submitAt(later, 2, addressOf(run.device, 0, 0, 0, 0, 1, 1), 32);
        run.drain();
        EXPECT_EQ(run.counter("channel0.pc0.refreshes"), 10U + pulledIn);
        // The refreshes done ahead leave the read alone: ACT + RD on a closed bank.
        EXPECT_EQ(run.donePs.at(2) - later, (31 + 20 + 2) * tck);
    }
}

TEST(RefreshModes, PerBankRefreshGoesToTheFirstIdleBank)
{
    HbmConfig config = quietHbm3();
    config.controller.refresh = RefreshKind::PerBank;
    DeviceRun run(config);
    std::vector<std::uint32_t> refreshed;
    run.device.setObserver(
        [&](std::uint32_t pc, std::uint64_t, Command command, std::uint32_t bank, std::uint32_t) {
            if (pc == 0 && command == Command::RefPb)
                refreshed.push_back(bank);
        });
    // Due at 390 CK: bank 0 has a request then, so bank 1 (the first idle one) refreshes and
    // bank 0's read only waits tRREFD after the REFpb; bank 0 is refreshed at the next due
    // time, 780, when it is idle again.
    std::uint64_t due = 390 * tck;
    run.submitAt(due, 1, addressOf(run.device, 0, 0, 0, 0, 1, 0), 32);
    run.submitAt(2 * due, 2, addressOf(run.device, 0, 0, 0, 2, 1, 0), 32);
    run.drain();
    ASSERT_GE(refreshed.size(), 2U);
    EXPECT_EQ(refreshed[0], 1U);
    EXPECT_EQ(refreshed[1], 0U);
    EXPECT_EQ(run.donePs.at(1) - due, (8 + 31 + 20 + 2) * tck);
}

TEST(RefreshModes, Per2BankAndSameBankRefreshTheirSets)
{
    for (RefreshKind kind : {RefreshKind::Per2Bank, RefreshKind::SameBank}) {
        HbmConfig config = oneChannel(kind);
        DeviceRun run(config);
        std::vector<std::pair<Command, std::uint32_t>> refs;
        run.device.setObserver([&](std::uint32_t pc,
                                   std::uint64_t,
                                   Command command,
                                   std::uint32_t bank,
                                   std::uint32_t) {
            if (pc == 0 && (command == Command::Ref2b || command == Command::RefSb))
                refs.emplace_back(command, bank);
        });
        // Requests to bank 0 at its first due time: the set holding bank 0 is busy, so the
        // next set refreshes; a read to a bank of that set then waits rfc_p2b / rfc_sb.
        std::uint64_t due = (kind == RefreshKind::Per2Bank ? 780 : 1560) * tck;
        run.submitAt(due, 1, addressOf(run.device, 0, 0, 0, 0, 1, 0), 32);
        // Set 1: banks 1 and 9 (per-2-bank), or bank 1 of every group (same-bank, bank 13 is
        // group 3's bank 1).
        std::uint32_t group = kind == RefreshKind::Per2Bank ? 2 : 3;
        run.submitAt(due + tck, 2, addressOf(run.device, 0, 0, group, 1, 1, 0), 32);
        run.drain();
        ASSERT_FALSE(refs.empty());
        EXPECT_EQ(refs[0].first, kind == RefreshKind::Per2Bank ? Command::Ref2b : Command::RefSb);
        EXPECT_EQ(refs[0].second, 1U);
        EXPECT_EQ(run.donePs.at(1) - due, (8 + 31 + 20 + 2) * tck);
        EXPECT_EQ(run.donePs.at(2) - due, (360 + 31 + 20 + 2) * tck);
    }
}

TEST(RefreshModes, SameBankRefreshClosesItsSetWithOnePresb)
{
    // DRAMSys's HBM2 example (timings in DramsysExample.h) with same-bank refresh: tREFI 1000,
    // so a REFsb every 250 cycles, PC 0's first at 250; rfc_sb 100. Set 0 is bank 0 of every
    // bank group of both stack IDs (banks 0, 4, ..., 28).
    HbmConfig config = dramsysHbm2();
    config.controller.refresh = RefreshKind::SameBank;
    config.timing.refi = 1000;
    config.timing.rfcSb = 100;
    validate(config);

    // Reads open banks 0 and 4 (ACT 1, and 5 after tRRDS). A read to bank 1 (set 1) enters at
    // 261, after the refresh fell due: set 0 is idle, so it refreshes. One PRESB closes both
    // rows at 261 (tRAS and tRTP long over; it finishes before the ACT, so it goes first), the
    // ACT follows on the row bus at 262, REFsb goes tRP = 14 after the PRESB (275), and in
    // the same cycle the read's RD (262 + 13) on the column bus.
    DeviceRun run(config);
    std::vector<Issued> issued;
    watch(run, issued);
    run.submitAt(0, 1, at(0, 0, 0, 1, 0), 32);
    run.submitAt(0, 2, at(0, 1, 0, 1, 0), 32);
    run.submitAt(260 * 1000, 3, at(0, 0, 1, 1, 0), 32);
    run.drain();
    std::vector<Issued> expected{{1, 0, "act", 0},
                                 {5, 0, "act", 4},
                                 {14, 0, "rd", 0},
                                 {18, 0, "rd", 4},
                                 {261, 0, "presb", 0},
                                 {262, 0, "act", 1},
                                 {275, 0, "refsb", 0},
                                 {275, 0, "rd", 1}};
    EXPECT_EQ(issued, expected);
    EXPECT_EQ(run.counter("channel0.pc0.refreshes"), 1U); // the PRESB is not a refresh
    EXPECT_EQ(run.donePs.at(3), (275 + 20) * 1000U);

    // PRESB waits for tRAS of every bank of the set: bank 4 activated at 235 (its read done
    // by the due time, so set 0 is idle) lets it go only at 235 + RAS 28 + 1 = 264 (ACT's
    // timings count from its second cycle). Bank 1's ACT goes first (261), REFsb tRP after
    // the PRESB (278), while a read to bank 2 entering at 271 keeps the PC busy.
    std::vector<Issued> expectedLate{{1, 0, "act", 0},
                                     {14, 0, "rd", 0},
                                     {235, 0, "act", 4},
                                     {248, 0, "rd", 4},
                                     {261, 0, "act", 1},
                                     {264, 0, "presb", 0},
                                     {271, 0, "act", 2},
                                     {274, 0, "rd", 1},
                                     {278, 0, "refsb", 0},
                                     {284, 0, "rd", 2}};
    EXPECT_EQ(commandsOf(config,
                         [](DeviceRun& late) {
                             late.submitAt(0, 1, at(0, 0, 0, 1, 0), 32);
                             late.submitAt(234 * 1000, 2, at(0, 1, 0, 1, 0), 32);
                             late.submitAt(260 * 1000, 3, at(0, 0, 1, 1, 0), 32);
                             late.submitAt(270 * 1000, 4, at(0, 0, 2, 1, 0), 32);
                         }),
              expectedLate);
}

} // namespace
} // namespace etsim::hbm::test
