// The request buffer organisations (models/hbm/buffer), each on a command sequence worked by
// hand from DRAMSys's HBM2 example (timings in DramsysExample.h): what each admits and when,
// as DRAMSys's BufferCounterBankwise, BufferCounterShared and BufferCounterReadWrite count.

#include "tests/models/hbm/DramsysExample.h"

#include <gtest/gtest.h>

#include <vector>

namespace etsim::hbm::test {
namespace {

constexpr std::uint64_t ns = 1000; // ps

TEST(RequestBuffer, BankwiseWaitsForTheBankItStoredLast)
{
    HbmConfig config = dramsysHbm2();
    config.controller.bankBuffer = 2;
    DeviceRun run(config);
    std::vector<Issued> issued;
    watch(run, issued);
    // Two reads fill bank 0 of PC 0 (2 entries); the third goes to PC 1, whose buffer is empty,
    // yet it waits: the admission rule looks at the bank stored last. It enters when the first
    // read's RD (cycle 14) frees an entry, and activates in that cycle.
    run.submitAt(0, 1, at(0, 0, 0, 1, 0), 32);
    run.submitAt(0, 2, at(0, 0, 0, 1, 1), 32);
    run.submitAt(0, 3, at(1, 0, 0, 1, 0), 32);
    run.drain();
    std::vector<Issued> expected{{1, 0, "act", 0},
                                 {14, 0, "rd", 0},
                                 {14, 1, "act", 0},
                                 {17, 0, "rd", 0}, // tCCDL after the first RD
                                 {27, 1, "rd", 0}};
    EXPECT_EQ(issued, expected);
}

// Three reads to three banks, the third to PC 1.
void threeReads(DeviceRun& run)
{
    run.submitAt(0, 1, at(0, 0, 0, 1, 0), 32);
    run.submitAt(0, 2, at(0, 1, 0, 1, 0), 32);
    run.submitAt(0, 3, at(1, 0, 0, 1, 0), 32);
}

TEST(RequestBuffer, SharedCountsEveryRequestOfTheChannel)
{
    // A bank-wise buffer takes all three at once (one per cycle: entries at 1, 2, 3); the
    // third's ACT goes at 3, on the row bus before the second's, which waits for tRRDS
    // (1 + 4 = 5).
    std::vector<Issued> bankwise{{1, 0, "act", 0},
                                 {3, 1, "act", 0},
                                 {5, 0, "act", 4},
                                 {14, 0, "rd", 0},
                                 {16, 1, "rd", 0},
                                 {18, 0, "rd", 4}};
    EXPECT_EQ(commandsOf(dramsysHbm2(), threeReads), bankwise);

    // A shared buffer of 2 entries is full after the second read, whatever bank or PC the
    // third is for: it enters when the first read's RD (14) frees an entry, and activates then.
    HbmConfig config = dramsysHbm2();
    config.controller.buffer = RequestBuffer::Shared;
    config.controller.sharedBuffer = 2;
    DeviceRun run(config);
    std::vector<Issued> issued;
    watch(run, issued);
    threeReads(run);
    run.drain();
    std::vector<Issued> shared{{1, 0, "act", 0},
                               {5, 0, "act", 4},
                               {14, 0, "rd", 0},
                               {14, 1, "act", 0},
                               {18, 0, "rd", 4},
                               {27, 1, "rd", 0}};
    EXPECT_EQ(issued, shared);
    EXPECT_EQ(run.donePs.at(3), (27 + 20) * ns);
}

TEST(RequestBuffer, ReadWriteNeedsRoomInBothDirections)
{
    HbmConfig config = dramsysHbm2();
    config.controller.buffer = RequestBuffer::ReadWrite;
    auto writeThenRead = [](DeviceRun& run) {
        run.submitAt(0, 1, at(0, 0, 0, 1, 0), 32, true);
        run.submitAt(0, 2, at(1, 0, 0, 1, 0), 32);
    };
    // A write to PC 0, then a read to PC 1. With room for one write, the write fills the write
    // buffer and the read waits although the read buffer is empty, as DRAMSys checks both
    // counts: it enters when the WR (ACT 1 + RCDWR 6 + 1 = 8) frees the entry.
    config.controller.readBuffer = 8;
    config.controller.writeBuffer = 1;
    std::vector<Issued> writeFull{
        {1, 0, "act", 0}, {8, 0, "wr", 0}, {8, 1, "act", 0}, {21, 1, "rd", 0}};
    EXPECT_EQ(commandsOf(config, writeThenRead), writeFull);

    // With room for one read instead, a read fills it and the write behind it waits for the
    // RD (1 + 13 = 14).
    config.controller.readBuffer = 1;
    config.controller.writeBuffer = 8;
    std::vector<Issued> readFull{
        {1, 0, "act", 0}, {14, 0, "rd", 0}, {14, 1, "act", 0}, {21, 1, "wr", 0}};
    EXPECT_EQ(commandsOf(config,
                         [](DeviceRun& run) {
                             run.submitAt(0, 1, at(0, 0, 0, 1, 0), 32);
                             run.submitAt(0, 2, at(1, 0, 0, 1, 0), 32, true);
                         }),
              readFull);

    // Room for both: the read enters at 2 and activates when the row bus frees (3).
    config.controller.readBuffer = 8;
    std::vector<Issued> roomy{
        {1, 0, "act", 0}, {3, 1, "act", 0}, {8, 0, "wr", 0}, {16, 1, "rd", 0}};
    EXPECT_EQ(commandsOf(config, writeThenRead), roomy);
}

} // namespace
} // namespace etsim::hbm::test
