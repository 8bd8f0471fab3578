// `etsim demo`, the default job of `make run`: its figures follow from its parameters.
#include "tests/support/RunCommand.h"

#include <gtest/gtest.h>

#include <string>

namespace etsim {
namespace {

test::CommandResult demo(const std::string& arguments)
{
    return test::runCommand(std::string(ETSIM_BINARY) + " demo " + arguments);
}

TEST(DemoCommand, OneRankFinishesAtComputePlusTransferPlusLatency)
{
    // 20 us compute, then 64 MiB at 900 GB/s = 74.565404444 us (rounded to the ps) + 0.5 us.
    test::CommandResult result = demo("--ranks 1 --steps 1");
    EXPECT_EQ(result.code, 0) << result.output;
    EXPECT_NE(result.output.find("simulated time: 95.065404 us (all-idle)"), std::string::npos)
        << result.output;
    EXPECT_NE(result.output.find("demo.rank0.memory        75065404 ps"), std::string::npos)
        << result.output;
}

TEST(DemoCommand, RanksQueueBehindEachOtherAtTheSharedMemory)
{
    // Two ranks issue at 20 us together: the second waits for the first's 74.565404 us.
    test::CommandResult result = demo("--ranks 2 --steps 1");
    EXPECT_EQ(result.code, 0) << result.output;
    EXPECT_NE(result.output.find("simulated time: 169.630808 us"), std::string::npos)
        << result.output;
    EXPECT_NE(result.output.find("demo.memory.bytes        134217728 B"), std::string::npos)
        << result.output;
}

TEST(DemoCommand, LogOptionShowsInfoLines)
{
    EXPECT_EQ(demo("--ranks 1 --steps 1").output.find("[info]"), std::string::npos);
    test::CommandResult info =
        test::runCommand(std::string(ETSIM_BINARY) + " --log info demo --ranks 1 --steps 1");
    EXPECT_EQ(info.code, 0);
    EXPECT_NE(info.output.find("[info] simulation: run all-idle at 95065404 ps"), std::string::npos)
        << info.output;
    test::CommandResult bad = test::runCommand(std::string(ETSIM_BINARY) + " --log loud demo");
    EXPECT_EQ(bad.code, 2);
    EXPECT_NE(bad.output.find("log level \"loud\": expected LEVEL or LOGGER=LEVEL"),
              std::string::npos)
        << bad.output;
}

TEST(DemoCommand, BadOptionsExitWithTwo)
{
    EXPECT_EQ(demo("--ranks 0").code, 2);
    EXPECT_EQ(demo("--colour blue").code, 2);
}

} // namespace
} // namespace etsim
