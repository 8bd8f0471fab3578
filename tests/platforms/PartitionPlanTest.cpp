// The partition planner (platforms/partition/PartitionPlan.h): the split, the cut dimensions
// and the lookahead, without MPI.

#include "platforms/partition/PartitionPlan.h"

#include "tests/support/ErrorOf.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

namespace etsim::platform {
namespace {

using etsim::test::errorOf;

// A platform of `ranks` ranks on `dims` (YAML flow entries), in `fidelity`.
PlatformConfig platformOf(std::uint32_t ranks,
                          const std::string& dims,
                          const std::string& fidelity = "analytical",
                          const std::string& extra = "")
{
    return loadPlatformString("name: cut\nranks: " + std::to_string(ranks) +
                                  "\nranks_per_node: 8\naccelerator:\n  preset: h100_sxm\n  "
                                  "hbm: {preset: hbm3_h100}\nfabric:\n  fidelity: " +
                                  fidelity + "\n  topology:\n    kind: multi_dim\n    dims:\n" +
                                  dims + extra + "driver:\n  mode: replay\n",
                              "cut.yaml");
}

std::vector<std::uint32_t> sizesOf(const PartitionPlan& plan)
{
    std::vector<std::uint32_t> sizes;
    for (std::uint32_t p = 0; p < plan.partitions; ++p)
        sizes.push_back(static_cast<std::uint32_t>(plan.ranksOf(p).size()));
    return sizes;
}

TEST(PartitionPlan, DefaultSplitCutsOnlyTheOutermostDimension)
{
    PlatformConfig config = loadPlatform("hgx_h100_4node"); // 8 x 4, switch dims
    PartitionPlan two = planPartitions(config, {2, "auto"});
    EXPECT_EQ(formatRankRanges(two.ranksOf(0)), "0-15");
    EXPECT_EQ(formatRankRanges(two.ranksOf(1)), "16-31");
    EXPECT_EQ(two.cutDims, std::vector<std::uint32_t>{1});
    // Two rail-switch links of 1.25 us: up to the switch and down.
    EXPECT_EQ(two.lookaheadPs, 2'500'000U);

    PartitionPlan four = planPartitions(config, {4, "auto"});
    for (std::uint32_t p = 0; p < 4; ++p)
        EXPECT_EQ(four.ranksOf(p).front(), 8 * p) << "whole nodes";
    EXPECT_EQ(sizesOf(four), (std::vector<std::uint32_t>{8, 8, 8, 8}));
    EXPECT_EQ(four.lookaheadPs, 2'500'000U);
}

TEST(PartitionPlan, MorePartitionsThanOuterLinesCutTheInnerDimensionToo)
{
    PartitionPlan plan = planPartitions(loadPlatform("hgx_h100_4node"), {8, "auto"});
    EXPECT_EQ(sizesOf(plan), std::vector<std::uint32_t>(8, 4));
    EXPECT_EQ(plan.cutDims, (std::vector<std::uint32_t>{0, 1}));
    // The NVSwitch dimension is now the fastest crossing: 2 x 936.25 ns.
    EXPECT_EQ(plan.lookaheadPs, 1'872'500U);
}

TEST(PartitionPlan, ByDimensionSplitsItsCoordinate)
{
    PartitionPlan plan = planPartitions(loadPlatform("hgx_h100_4node"), {2, "dim:0"});
    // GPUs 0-3 of every node in partition 0, GPUs 4-7 in partition 1.
    EXPECT_EQ(formatRankRanges(plan.ranksOf(0)), "0-3,8-11,16-19,24-27");
    EXPECT_EQ(plan.cutDims, std::vector<std::uint32_t>{0});
    EXPECT_EQ(plan.lookaheadPs, 1'872'500U);
}

TEST(PartitionPlan, RanksAndNodesSplitsAreBalanced)
{
    PlatformConfig config = loadPlatform("hgx_h100_4node");
    EXPECT_EQ(sizesOf(planPartitions(config, {3, "ranks"})),
              (std::vector<std::uint32_t>{11, 11, 10}));
    PartitionPlan nodes = planPartitions(config, {3, "nodes"});
    // Node u of 4 goes to partition floor(3u / 4): nodes 0-1, 2, 3.
    EXPECT_EQ(sizesOf(nodes), (std::vector<std::uint32_t>{16, 8, 8}));
    EXPECT_EQ(formatRankRanges(nodes.ranksOf(2)), "24-31");
}

TEST(PartitionPlan, RingDimensionsCountOneLinkAndTheMessageDelayIsAdded)
{
    PlatformConfig config =
        platformOf(16,
                   "      - {kind: ring, size: 4, bandwidth: \"50 GB/s\", latency: \"300 ns\"}\n"
                   "      - {kind: ring, size: 4, bandwidth: \"50 GB/s\", latency: \"700 ns\"}\n",
                   "analytical",
                   "  nic: {injection_bandwidth: \"50 GB/s\", message_delay: \"1 us\"}\n");
    PartitionPlan plan = planPartitions(config, {2, "auto"});
    EXPECT_EQ(plan.lookaheadPs, 700'000U + 1'000'000U);
    EXPECT_NE(plan.lookaheadReason.find("message delay"), std::string::npos);
}

TEST(PartitionPlan, AstraFidelitiesCountWholeNanoseconds)
{
    const std::string dims =
        "      - {kind: ring, size: 4, bandwidth: \"50 GB/s\", latency: \"1.5 ns\"}\n"
        "      - {kind: ring, size: 2, bandwidth: \"50 GB/s\", latency: \"2.7 ns\"}\n";
    EXPECT_EQ(planPartitions(platformOf(8, dims, "analytical"), {2, "auto"}).lookaheadPs, 2700U);
    // astra_aware: the cut's link (2 ns), or the fastest last link before a send's completion
    // goes back to another process (1 ns), whichever is shorter.
    EXPECT_EQ(planPartitions(platformOf(8, dims, "astra_aware"), {2, "auto"}).lookaheadPs, 1000U);
    EXPECT_EQ(planPartitions(platformOf(8, dims, "astra_unaware"), {2, "dim:0"}).lookaheadPs,
              1000U);
}

// astra_aware changes process one link into a cut dimension (a switch's up link), and waits
// for a send's completion to go back after the fastest last link (the NVSwitch's 936.25 ns,
// whole ns); a fat tree's switch-to-switch links belong to no process, so it is refused.
TEST(PartitionPlan, AstraAwareHandsMessagesOverOneLinkIntoTheCut)
{
    PlatformConfig config = loadPlatform("hgx_h100_4node");
    config.fabric.fidelity = net::Fidelity::AstraAware;
    PartitionPlan plan = planPartitions(config, {2, "auto"});
    EXPECT_EQ(plan.lookaheadPs, 936'000U);
    EXPECT_NE(plan.lookaheadReason.find("before a send's completion goes back"), std::string::npos)
        << plan.lookaheadReason;
    config.fabric.dims[0].latency = Time::parse("2 us");
    plan = planPartitions(config, {2, "auto"});
    EXPECT_EQ(plan.lookaheadPs, 1'250'000U);
    EXPECT_EQ(plan.lookaheadReason, "1 link of dimension 1 (switch) at 1.25 us");

    const PlatformConfig tree = loadPlatformString(
        "name: tree\nranks: 16\nranks_per_node: 4\naccelerator:\n  preset: h100_sxm\n  "
        "hbm: {preset: hbm3_h100}\nfabric:\n  fidelity: astra_aware\n  topology:\n    kind: "
        "fat_tree\n    fat_tree: {endpoints: 16, endpoints_per_leaf: 4, spines: 2, "
        "host_bandwidth: \"50 GB/s\", host_latency: \"1 us\", uplink_bandwidth: \"100 GB/s\", "
        "uplink_latency: \"500 ns\"}\ndriver:\n  mode: replay\n",
        "tree.yaml");
    EXPECT_EQ(errorOf([&] {
                  planPartitions(tree, {2, "auto"});
              }),
              "--partitions 2: a partitioned astra_aware run needs a multi_dim fabric: the links "
              "between a fat tree's switches queue the messages of ranks of every process, and "
              "each link's queue must live in one process; run in one process, or use "
              "astra_unaware");
}

TEST(PartitionPlan, OnePartitionHasNoLookahead)
{
    PartitionPlan plan = planPartitions(loadPlatform("hgx_h100"), {1, "auto"});
    EXPECT_EQ(plan.ranksOf(0).size(), 8U);
    EXPECT_EQ(plan.lookaheadPs, 0U);
    EXPECT_TRUE(plan.cutDims.empty());
}

TEST(PartitionPlan, BadRequestsNameTheOptionAndTheFix)
{
    PlatformConfig config = loadPlatform("hgx_h100_4node");
    EXPECT_EQ(errorOf([&] {
                  planPartitions(config, {0, "auto"});
              }),
              "--partitions 0: a run needs at least one partition");
    EXPECT_EQ(errorOf([&] {
                  planPartitions(config, {33, "auto"});
              }),
              "--partitions 33: the platform has 32 ranks; give at most 32 partitions");
    EXPECT_EQ(errorOf([&] {
                  planPartitions(config, {2, "rows"});
              }),
              "--partition-by rows: not a split; use auto, nodes, ranks or dim:N");
    EXPECT_EQ(errorOf([&] {
                  planPartitions(config, {2, "dim:2"});
              }),
              "--partition-by dim:2: the fabric has 2 dimensions (0-1)");
    EXPECT_EQ(errorOf([&] {
                  planPartitions(config, {2, "dim:x"});
              }),
              "--partition-by dim:x: write a dimension index, e.g. dim:0");
    EXPECT_EQ(errorOf([&] {
                  planPartitions(config, {5, "dim:1"});
              }),
              "--partition-by dim:1: dimension 1 has 4 members, fewer than the 5 partitions; "
              "pick a larger dimension or fewer --partitions");
    EXPECT_EQ(errorOf([&] {
                  planPartitions(config, {5, "nodes"});
              }),
              "--partition-by nodes: the platform has 4 nodes of 8 ranks (ranks_per_node), "
              "fewer than the 5 partitions; use --partition-by ranks or fewer --partitions");
}

TEST(PartitionPlan, ACutWithoutLatencyIsRefused)
{
    PlatformConfig config =
        platformOf(16,
                   "      - {kind: ring, size: 8, bandwidth: \"50 GB/s\", latency: \"1 us\"}\n"
                   "      - {kind: ring, size: 2, bandwidth: \"50 GB/s\", latency: \"0 ns\"}\n");
    const std::string error = errorOf([&] { planPartitions(config, {2, "auto"}); });
    EXPECT_NE(error.find("--partitions 2: the links across the cut (1 link of dimension 1 "
                         "(ring) at 0 ps) take no time"),
              std::string::npos)
        << error;
    // Cutting the other dimension works.
    EXPECT_EQ(planPartitions(config, {2, "dim:0"}).lookaheadPs, 1'000'000U);
}

TEST(PartitionPlan, ExplainsTheSplitForPeople)
{
    std::ostringstream out;
    writePartitionPlan(out, planPartitions(loadPlatform("hgx_h100_4node"), {2, "auto"}));
    EXPECT_EQ(out.str(),
              "partitions: 2 processes for 32 ranks, by the outermost dimension (dimension 1), "
              "whole slices of dimension 0 (8 ranks each)\n"
              "  partition 0: 16 ranks: 0-15\n"
              "  partition 1: 16 ranks: 16-31\n"
              "cut dimensions: 1\n"
              "lookahead: 2.5 us (2 links of dimension 1 (switch) at 1.25 us)\n");
}

TEST(PartitionPlan, ABuildWithoutMpiRefusesMoreThanOnePartition)
{
    EXPECT_EQ(partitionsRefusal(4, false),
              "--partitions 4: this etsim was built without MPI, so it runs in one process only; "
              "install OpenMPI (scripts/install-deps.sh installs libopenmpi-dev and openmpi-bin), "
              "rebuild, and start the run with mpirun -n 4 (--explain-partition prints the split "
              "without MPI)");
    EXPECT_EQ(partitionsRefusal(1, false), std::nullopt);
    EXPECT_EQ(partitionsRefusal(4, true), std::nullopt);
}

TEST(PartitionPlan, FormatsRankRanges)
{
    EXPECT_EQ(formatRankRanges({}), "");
    EXPECT_EQ(formatRankRanges({3}), "3");
    EXPECT_EQ(formatRankRanges({0, 1, 2, 5, 7, 8}), "0-2,5,7-8");
}

} // namespace
} // namespace etsim::platform
