// Sustained bandwidth of the detailed model against the spec's efficiency bounds
// (hardware-models.md 2.4), read/write turnaround and scheduler differences on crafted
// patterns whose timing is computed by hand.

#include "tests/models/hbm/HbmTestSupport.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace etsim::hbm::test {
namespace {

constexpr std::uint64_t tck = 625; // ps, HBM3-6400

// Streams `count` transactions of `size` bytes from address 0 on (every `writeEvery`-th one a
// write to a second region; 0 = reads only), keeping `outstanding` in flight like a DMA engine,
// and returns the fraction of peak bandwidth delivered in a steady-state window of four
// refresh intervals.
double sustained(const HbmConfig& config,
                 std::uint64_t size,
                 std::uint64_t count,
                 std::uint64_t writeEvery = 0,
                 std::uint64_t outstanding = 16)
{
    DeviceRun run(config);
    std::uint64_t half = config.organisation.deviceBytes() / 2;
    std::uint64_t submitted = 0;
    std::uint64_t now = 0;
    while (run.donePs.size() < count) {
        while (submitted < count && submitted - run.donePs.size() < outstanding) {
            bool write = writeEvery != 0 && submitted % writeEvery == writeEvery - 1;
            run.submitAt(now, submitted, (write ? half : 0) + submitted * size, size, write);
            ++submitted;
        }
        now = run.device.nextEventPs();
        run.device.runUntil(now);
    }
    CycleClock clock(config.organisation.clock);
    std::uint64_t refi = clock.ps(config.timing.refi);
    std::uint64_t from = refi / 2; // past the start-up, in the middle of an interval
    std::uint64_t to = from + 4 * refi;
    EXPECT_GT(run.donePs.at(count - 1), to) << "stream too short for the window";
    std::uint64_t bytes = 0;
    for (const auto& [token, ps] : run.donePs)
        if (ps > from && ps <= to)
            bytes += size;
    double peak = config.organisation.devicePeak().bytesPerSecond();
    return static_cast<double>(bytes) / (static_cast<double>(to - from) * 1e-12) / peak;
}

// The refresh-bound streaming efficiency of the spec: 1 - (RTP + RP + RFC + RCD) / REFI.
double refreshBound(const Timing& t)
{
    return 1.0 - static_cast<double>(t.rtp + t.rp + t.rfc + t.rcdRd) / t.refi;
}

HbmConfig detailed(HbmPreset preset)
{
    HbmConfig config = hbmPreset(preset);
    config.fidelity = Fidelity::Detailed;
    return config;
}

TEST(HbmBandwidth, StreamingReadsReachPeakMinusRefreshHbm3_6400)
{
    HbmConfig config = detailed(HbmPreset::Hbm3_6400);
    double bound = refreshBound(config.timing); // (9 + 26 + 416 + 31) / 6240 lost: 92.28 %
    EXPECT_NEAR(bound, 0.9228, 0.0001);
    double measured = sustained(config, 16384, 2000);
    EXPECT_LE(measured, bound + 0.002);
    EXPECT_GE(measured, bound - 0.01);
}

TEST(HbmBandwidth, StreamingReadsOnH100StacksLoseMoreToRefresh)
{
    // 16 GB stacks refresh for 350 ns: about 90 % (hardware-models.md, conventions).
    HbmConfig config = detailed(HbmPreset::Hbm3H100);
    config.organisation.stacks = 1; // one stack behaves like five, at a fifth of the cost
    config.addressMap = addressMapFromPreset(AddressMapPreset::Interleaved, config.organisation);
    double bound = refreshBound(config.timing);
    EXPECT_NEAR(bound, 0.899, 0.001);
    double measured = sustained(config, 16384, 1600);
    EXPECT_LE(measured, bound + 0.002);
    // Row changes cost a little more here: the slower clock leaves fewer queued bursts to
    // hide each precharge + activate behind.
    EXPECT_GE(measured, bound - 0.015);
}

TEST(HbmBandwidth, StreamingReadsOnHbm2ReachPeakMinusRefresh)
{
    // (5 + 14 + 220 + 12) / 3900 = 6.4 % lost to refresh (hardware-models.md 2.4): 93.6 %.
    HbmConfig config = detailed(HbmPreset::Hbm2);
    double bound = refreshBound(config.timing);
    EXPECT_NEAR(bound, 0.9356, 0.0001);
    double measured = sustained(config, 16384, 600);
    EXPECT_LE(measured, bound + 0.002);
    EXPECT_GE(measured, bound - 0.01);
    // The preset's analytic efficiency is this measurement.
    EXPECT_NEAR(hbmPreset(HbmPreset::Hbm2).analytic.efficiency, measured, 0.002);
}

TEST(HbmBandwidth, StreamingReadsOnHbm3eLoseMoreToTheLongerRefresh)
{
    // 24 GiB stacks (12 Gb per channel) refresh for 450 ns = 1080 CK at 2.4 GHz:
    // 1 - (14 + 39 + 1080 + 47) / 9360 = 87.4 %.
    HbmConfig config = detailed(HbmPreset::Hbm3e_9600);
    double bound = refreshBound(config.timing);
    EXPECT_NEAR(bound, 1.0 - 1180.0 / 9360.0, 1e-9);
    double measured = sustained(config, 16384, 1600);
    EXPECT_LE(measured, bound + 0.002);
    EXPECT_GE(measured, bound - 0.015);
    EXPECT_NEAR(hbmPreset(HbmPreset::Hbm3e_9600).analytic.efficiency, measured, 0.002);
}

TEST(HbmBandwidth, StreamingReadsOnH200Stacks)
{
    // Its 24 GiB stacks at 1.5625 GHz: 1 - (9 + 26 + 704 + 31) / 6093 = 87.4 %.
    HbmConfig config = detailed(HbmPreset::Hbm3eH200);
    config.organisation.stacks = 1; // one stack behaves like six, at a sixth of the cost
    config.addressMap = addressMapFromPreset(AddressMapPreset::Interleaved, config.organisation);
    double bound = refreshBound(config.timing);
    EXPECT_NEAR(bound, 1.0 - 770.0 / 6093.0, 1e-9);
    double measured = sustained(config, 16384, 1200);
    EXPECT_LE(measured, bound + 0.002);
    // As on the H100 stacks, the slower clock hides fewer row changes behind queued bursts.
    EXPECT_GE(measured, bound - 0.02);
    EXPECT_NEAR(hbmPreset(HbmPreset::Hbm3eH200).analytic.efficiency, measured, 0.002);
}

TEST(HbmBandwidth, StreamingWritesMatchStreamingReads)
{
    HbmConfig config = detailed(HbmPreset::Hbm3_6400);
    double bound = refreshBound(config.timing);
    double measured = sustained(config, 16384, 2000, 1); // every transaction a write
    EXPECT_LE(measured, bound + 0.002);
    EXPECT_GE(measured, bound - 0.015);
}

TEST(HbmBandwidth, ReadWriteMixPaysTurnaroundsButBatchesWrites)
{
    // One write in three: the spec's rule of thumb for mixed streams is 70-85 % of peak.
    HbmConfig config = detailed(HbmPreset::Hbm3_6400);
    double measured = sustained(config, 16384, 2400, 3);
    EXPECT_GE(measured, 0.70);
    EXPECT_LE(measured, 0.85);
}

TEST(HbmBandwidth, RandomSmallReadsAreActivationBound)
{
    // One ACT per max(tRRDS, tFAW / 4) = 6 CK against one 32 B burst per 2 CK: at most a
    // third of peak, less the refresh share and bank collisions.
    HbmConfig config = detailed(HbmPreset::Hbm3_6400);
    DeviceRun run(config);
    std::uint64_t state = 12345;
    std::uint64_t count = 131072;
    for (std::uint64_t i = 0; i < count; ++i) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        run.submitAt(0, i, ((state >> 20) % config.organisation.deviceBytes()) & ~31ULL, 32);
    }
    run.drain();
    std::uint64_t last = 0;
    for (const auto& entry : run.donePs)
        last = std::max(last, entry.second);
    double peak = config.organisation.devicePeak().bytesPerSecond();
    double fraction = static_cast<double>(count * 32) / (static_cast<double>(last) * 1e-12) / peak;
    EXPECT_LE(fraction, 1.0 / 3.0);
    EXPECT_GE(fraction, 0.25);
    EXPECT_GT(run.sumOverPcs("row_conflicts") + run.sumOverPcs("row_misses"), count * 95 / 100);
}

// N reads then N writes, repeated `pairs` times, all row hits spread over the four bank
// groups of one PC, served strictly in order; returns when the last one completed, in CK.
std::uint64_t alternating(std::uint32_t n, std::uint32_t pairs)
{
    HbmConfig config = quietHbm3();
    config.controller.scheduler = SchedulerKind::Fifo;
    config.controller.readQueue = 4096;
    config.controller.writeQueue = 4096;
    DeviceRun run(config);
    std::uint64_t token = 0;
    for (std::uint32_t p = 0; p < pairs; ++p)
        for (bool write : {false, true})
            for (std::uint32_t i = 0; i < n; ++i)
                run.submitAt(
                    0, token++, addressOf(run.device, 0, 0, i % 4, 0, 1, i / 4), 32, write);
    run.drain();
    return run.donePs.at(token - 1) / tck;
}

TEST(HbmBandwidth, EachReadWritePairCostsTheTurnaround)
{
    // Per pair: 2N CAS of 2 CK plus (RTW - BL) + (CWL + BL + WTRS - BL) = 18 + 17 = 35 CK.
    std::uint32_t n = 16;
    std::uint64_t period = alternating(n, 20) - alternating(n, 10);
    EXPECT_EQ(period, 10U * (4 * n + 35));
    // Efficiency 4N / (4N + 35): 64.6 % for N = 16 (hardware-models.md 2.4).
    EXPECT_NEAR(4.0 * n / (static_cast<double>(period) / 10), 0.646, 0.001);
}

TEST(HbmBandwidth, ReadWriteSwitchesAreCounted)
{
    HbmConfig config = quietHbm3();
    config.controller.scheduler = SchedulerKind::Fifo;
    DeviceRun run(config);
    for (std::uint32_t i = 0; i < 6; ++i)
        run.submitAt(0, i, addressOf(run.device, 0, 0, 0, 0, 1, i), 32, i % 2 == 1);
    run.drain();
    EXPECT_EQ(run.counter("channel0.pc0.rw_switches"), 5U);
}

// 2M reads to one bank, alternating between rows 1 and 2, all queued at 0; returns when the
// last completed, in CK.
std::uint64_t pingPong(SchedulerKind scheduler, std::uint32_t m)
{
    HbmConfig config = quietHbm3();
    config.controller.scheduler = scheduler;
    DeviceRun run(config);
    for (std::uint32_t i = 0; i < 2 * m; ++i)
        run.submitAt(0, i, addressOf(run.device, 0, 0, 0, 0, 1 + i % 2, i / 2), 32);
    run.drain();
    std::uint64_t last = 0;
    for (const auto& entry : run.donePs)
        last = std::max(last, entry.second);
    return last / tck;
}

TEST(HbmBandwidth, FrFcfsBeatsFifoOnMixedHitsAndMisses)
{
    std::uint32_t m = 16;
    // FIFO: every request changes the row, and same-bank ACTs are tRC = 72 CK apart:
    // the last RD issues at 31 + 72 × (2M - 1), its data ends 22 CK later.
    EXPECT_EQ(pingPong(SchedulerKind::Fifo, m), 31U + 72U * (2 * m - 1) + 22U);
    // FR-FCFS serves the M hits of row 1 (tCCDL = 4 apart), precharges after tRTP, opens
    // row 2 after tRP and serves its M hits: last RD at 31 + 4(M-1) + 9 + 26 + 31 + 4(M-1).
    std::uint64_t firstRowLast = 31 + 4 * (m - 1);
    std::uint64_t secondAct = firstRowLast + 9 + 26;
    EXPECT_EQ(pingPong(SchedulerKind::FrFcfs, m), secondAct + 31 + 4 * (m - 1) + 22);
}

} // namespace
} // namespace etsim::hbm::test
