// `etsim run --partitions / --partition-by / --explain-partition` as a user runs them: the
// plan printed without MPI, the errors, and the refusal of a build without MPI.

#include "tests/support/RunCommand.h"

#include <gtest/gtest.h>

namespace etsim::apps {
namespace {

using etsim::test::CommandResult;
using etsim::test::contains;
using etsim::test::runEtsim;

TEST(PartitionCommand, ExplainsTheSplitAndTheLookahead)
{
    CommandResult run =
        runEtsim("run --platform hgx_h100_4node --partitions 4 --explain-partition");
    ASSERT_EQ(run.code, 0) << run.output;
    EXPECT_TRUE(contains(run.output,
                         "partitions: 4 processes for 32 ranks, by the outermost "
                         "dimension (dimension 1)"))
        << run.output;
    EXPECT_TRUE(contains(run.output, "  partition 3: 8 ranks: 24-31\n")) << run.output;
    EXPECT_TRUE(contains(run.output,
                         "lookahead: 2.5 us (2 links of dimension 1 (switch) at "
                         "1.25 us)"))
        << run.output;

    CommandResult byDim = runEtsim(
        "run --platform hgx_h100_4node --partitions 2 --partition-by dim:0 --explain-partition");
    ASSERT_EQ(byDim.code, 0) << byDim.output;
    EXPECT_TRUE(contains(byDim.output, "partition 0: 16 ranks: 0-3,8-11,16-19,24-27"))
        << byDim.output;
}

TEST(PartitionCommand, BadPartitionOptionsCannotStart)
{
    CommandResult tooMany =
        runEtsim("run --platform hgx_h100_4node --partitions 40 --explain-partition");
    EXPECT_EQ(tooMany.code, 2) << tooMany.output;
    EXPECT_TRUE(contains(tooMany.output,
                         "etsim run: --partitions 40: the platform has 32 ranks; give at most 32 "
                         "partitions"))
        << tooMany.output;
    CommandResult badBy = runEtsim(
        "run --platform hgx_h100_4node --partitions 2 --partition-by dim:7 --explain-partition");
    EXPECT_EQ(badBy.code, 2) << badBy.output;
    EXPECT_TRUE(contains(badBy.output, "--partition-by dim:7: the fabric has 2 dimensions (0-1)"))
        << badBy.output;
    CommandResult alone = runEtsim("run --platform hgx_h100_4node --trace x --partition-by nodes");
    EXPECT_EQ(alone.code, 2) << alone.output;
    EXPECT_TRUE(contains(alone.output,
                         "--partition-by shapes a partitioned run: add "
                         "--partitions K"))
        << alone.output;
    CommandResult profiled = runEtsim("run --platform hgx_h100 --trace x --partitions 2 --profile");
    EXPECT_EQ(profiled.code, 2) << profiled.output;
    EXPECT_TRUE(contains(profiled.output,
                         "etsim run: --profile measures a run in one process: leave out "
                         "--partitions, or profile the partitions with perf"))
        << profiled.output;
}

TEST(PartitionCommand, ABuildWithoutMpiRefusesPartitions)
{
#ifdef ETSIM_WITH_MPI
    GTEST_SKIP() << "this build has MPI; the mpi-labelled tests run --partitions";
#else
    CommandResult run = runEtsim("run --platform hgx_h100 --trace x --partitions 2");
    EXPECT_EQ(run.code, 2) << run.output;
    EXPECT_TRUE(contains(run.output,
                         "etsim run: --partitions 2: this etsim was built without MPI, so it "
                         "runs in one process only"))
        << run.output;
#endif
}

} // namespace
} // namespace etsim::apps
