// Single accesses against latencies computed by hand from the HBM3-6400 timing set
// (hardware-models.md 2.2, 2.4). tCK = 625 ps. Latency = arrival at an idle controller to the
// last data beat, so every figure below ends with CL + BL (reads) or CWL + BL (writes).

#include "tests/models/hbm/HbmTestSupport.h"

#include <gtest/gtest.h>

#include <vector>

namespace etsim::hbm::test {
namespace {

constexpr std::uint64_t tck = 625; // ps

TEST(HbmLatency, IdleBankIsActivatePlusRead)
{
    DeviceRun run(quietHbm3());
    run.submitAt(0, 1, addressOf(run.device, 3, 1, 2, 1, 100, 5), 32);
    run.drain();
    // ACT at 0, RD at nRCDRD = 31, data from 31 + nCL = 51 to 53.
    EXPECT_EQ(run.donePs.at(1), (31 + 20 + 2) * tck);
    EXPECT_EQ(run.counter("channel3.pc1.row_misses"), 1U);
}

TEST(HbmLatency, OpenRowIsReadOnlyAndOtherRowPaysPrechargeToo)
{
    DeviceRun run(quietHbm3());
    std::uint64_t opened = addressOf(run.device, 0, 0, 1, 2, 7, 0);
    std::uint64_t sameRow = addressOf(run.device, 0, 0, 1, 2, 7, 9);
    std::uint64_t otherRow = addressOf(run.device, 0, 0, 1, 2, 8, 0);
    run.submitAt(0, 1, opened, 32);
    run.submitAt(100000, 2, sameRow, 32); // 160 CK: every bank timing has elapsed
    run.submitAt(200000, 3, otherRow, 32);
    run.drain();
    // Row hit: nCL + nBL = 22 CK = 13.75 ns (the spec's row-hit figure).
    EXPECT_EQ(run.donePs.at(2) - 100000, (20 + 2) * tck);
    // Row conflict: PRE, then ACT after nRP, RD after nRCDRD: (26 + 31 + 20) CK = 48.125 ns
    // before the burst (the spec's unloaded row-miss figure), 49.375 ns with it.
    EXPECT_EQ(run.donePs.at(3) - 200000, (26 + 31 + 20 + 2) * tck);
    EXPECT_EQ(run.donePs.at(3) - 200000 - 2 * tck, 48125U);
    EXPECT_EQ(run.counter("channel0.pc0.row_hits"), 1U);
    EXPECT_EQ(run.counter("channel0.pc0.row_misses"), 1U);
    EXPECT_EQ(run.counter("channel0.pc0.row_conflicts"), 1U);
}

TEST(HbmLatency, WriteToIdleBankIsActivatePlusWriteLatency)
{
    DeviceRun run(quietHbm3());
    run.submitAt(0, 1, addressOf(run.device, 0, 0, 0, 0, 1, 0), 32, true);
    run.drain();
    EXPECT_EQ(run.donePs.at(1), (15 + 10 + 2) * tck); // nRCDWR + nCWL + nBL
}

TEST(HbmLatency, ControllerLatencyIsAddedOnce)
{
    HbmConfig config = quietHbm3();
    config.controller.latency = Time::fromPs(10000);
    DeviceRun run(config);
    run.submitAt(0, 1, addressOf(run.device, 0, 0, 0, 0, 1, 0), 32);
    run.drain();
    EXPECT_EQ(run.donePs.at(1), 10000 + (31 + 20 + 2) * tck);
}

TEST(HbmLatency, TransactionCompletesWithItsLastBurst)
{
    DeviceRun run(quietHbm3());
    // 64 B from address 0 under the interleaved map: two bursts on channels 0 and 1, both idle
    // banks, served in parallel: the transaction ends when both have moved their data.
    run.submitAt(0, 1, 0, 64);
    // 33 B starting at 31: touches bursts 0 and 1 and 2 (bytes 31..63 span two bursts).
    run.submitAt(1000000, 2, 31, 34);
    run.drain();
    EXPECT_EQ(run.donePs.at(1), (31 + 20 + 2) * tck);
    EXPECT_EQ(run.sumOverPcs("read_bursts"), 2U + 3U);
}

TEST(HbmLatency, RrdLSpacesActivatesInOneBankGroup)
{
    DeviceRun run(quietHbm3());
    std::vector<std::uint64_t> acts;
    run.device.setObserver(
        [&](std::uint32_t, std::uint64_t cycle, Command command, std::uint32_t, std::uint32_t) {
            if (command == Command::Act)
                acts.push_back(cycle);
        });
    for (std::uint32_t bank = 0; bank < 4; ++bank)
        run.submitAt(0, bank, addressOf(run.device, 0, 0, 0, bank, 3, 0), 32);
    run.drain();
    // Same bank group: nRRDL = 5 apart.
    EXPECT_EQ(acts, (std::vector<std::uint64_t>{0, 5, 10, 15}));
}

TEST(HbmLatency, RrdSAndFawLimitActivatesAcrossBankGroups)
{
    DeviceRun run(quietHbm3());
    std::vector<std::uint64_t> acts;
    run.device.setObserver(
        [&](std::uint32_t, std::uint64_t cycle, Command command, std::uint32_t, std::uint32_t) {
            if (command == Command::Act)
                acts.push_back(cycle);
        });
    std::uint64_t token = 0;
    for (std::uint32_t bank = 0; bank < 2; ++bank)
        for (std::uint32_t group = 0; group < 4; ++group)
            run.submitAt(0, token++, addressOf(run.device, 0, 0, group, bank, 3, 0), 32);
    run.drain();
    // Other bank groups: nRRDS = 4 apart, but no more than four ACTs in nFAW = 24: the fifth
    // waits for the first + 24, the sixth for the second + 24, ...
    EXPECT_EQ(acts, (std::vector<std::uint64_t>{0, 4, 8, 12, 24, 28, 32, 36}));
}

TEST(HbmLatency, AllBankRefreshBlocksTheChannel)
{
    HbmConfig config = quietHbm3();
    config.controller.refresh = RefreshKind::AllBank;
    DeviceRun run(config);
    // Arriving exactly when the first refresh is due (nREFI = 6240 CK = 3.9 us), the read
    // waits for REFab (nRFC = 416 for this density) before ACT + RD.
    run.submitAt(6240 * tck, 1, addressOf(run.device, 0, 0, 0, 0, 1, 0), 32);
    run.drain();
    EXPECT_EQ(run.donePs.at(1) - 6240 * tck, (416 + 31 + 20 + 2) * tck);
    EXPECT_EQ(run.counter("channel0.pc0.refreshes"), 1U);
}

TEST(HbmLatency, PerBankRefreshBlocksOnlyItsBank)
{
    HbmConfig config = quietHbm3();
    config.controller.refresh = RefreshKind::PerBank;
    DeviceRun run(config);
    // Per-bank interval nREFI / 16 banks = 390 CK. The read to bank 0 enters first, so the
    // refresh goes to the first idle bank, bank 1; the read to bank 1 entering in the same
    // cycle then waits for it.
    std::uint64_t due = 390 * tck;
    run.submitAt(due, 1, addressOf(run.device, 0, 0, 0, 0, 1, 0), 32);
    run.submitAt(due, 2, addressOf(run.device, 0, 0, 0, 1, 1, 0), 32);
    run.drain();
    // Bank 1: nRFCpb before its ACT. Bank 0: only nRREFD after the REFpb.
    EXPECT_EQ(run.donePs.at(2) - due, (320 + 31 + 20 + 2) * tck);
    EXPECT_EQ(run.donePs.at(1) - due, (8 + 31 + 20 + 2) * tck);
}

TEST(HbmLatency, IdleRefreshesAreAccountedWithoutEvents)
{
    HbmConfig config = quietHbm3();
    config.controller.refresh = RefreshKind::AllBank;
    DeviceRun run(config);
    run.submitAt(0, 1, addressOf(run.device, 0, 0, 0, 0, 1, 0), 32);
    run.drain();
    // Ten intervals later: the refreshes in between happened (rows closed), the device slept.
    std::uint64_t later = 10 * 6240 * tck + 1000 * tck;
    run.submitAt(later, 2, addressOf(run.device, 0, 0, 0, 0, 1, 1), 32);
    run.drain();
    EXPECT_EQ(run.donePs.at(2) - later, (31 + 20 + 2) * tck); // row closed again: ACT + RD
    EXPECT_EQ(run.counter("channel0.pc0.refreshes"), 10U);
}

} // namespace
} // namespace etsim::hbm::test
