// Whole traces through the driver: every Chakra ET of shared/traces in replay mode, and a
// generated 1,024-rank trace read back from files.

#include "et_driver/RankDriver.h"
#include "et_driver/TraceSet.h"
#include "et_driver/TraceWriter.h"
#include "tests/et_driver/DriverTestSupport.h"
#include "tests/et_driver/TraceTestSupport.h"
#include "tests/support/ScTest.h"
#include "tests/support/TempDir.h"

#include <gtest/gtest.h>

namespace etsim::et::test {
namespace {

using etsim::test::ScTest;
namespace fs = std::filesystem;

struct SetRun {
    std::uint64_t nodes = 0;
    std::uint64_t finishPs = 0;
    std::uint64_t collectivesInFabric = 0;
    LoweringFallbacks fallbacks;
    std::vector<std::uint64_t> rankFinishPs;
};

SetRun runSet(const fs::path& prefix,
              RankDriverOptions options,
              const std::vector<ProcessGroup>& groups = {})
{
    std::ostringstream logText;
    LogRegistry logs(logText);
    Simulation simulation;
    TraceSet set(prefix);
    LoweringContext context(set.rankCount(), &logs.get("et_driver"));
    context.addGroups(groups);
    etsim::test::FixedTarget compute("compute", {0, 0, 1000});
    etsim::test::FixedTarget memory("memory", {0, 1, 0});
    etsim::test::CommTarget comm("comm", {100000, 10, 500000, 1});
    std::vector<std::unique_ptr<RankDriver>> drivers;
    for (std::uint32_t rank = 0; rank < set.rankCount(); ++rank) {
        auto driver = std::make_unique<RankDriver>(
            ("rank" + std::to_string(rank)).c_str(),
            static_cast<RankId>(rank),
            [&set, rank](TraceNode& node) { return set.next(rank, node); },
            context,
            simulation,
            options);
        driver->computeSocket.bind(compute.socket);
        driver->memorySocket.bind(memory.socket);
        driver->communicationSocket.bind(comm.socket);
        drivers.push_back(std::move(driver));
    }
    RunResult result = simulation.run();
    EXPECT_EQ(result.outcome, RunOutcome::AllIdle);
    std::vector<const RankDriver*> list;
    SetRun run;
    for (const auto& driver : drivers) {
        list.push_back(driver.get());
        run.nodes += driver->nodesFinished();
        run.finishPs = std::max(run.finishPs, driver->finishPs());
        run.rankFinishPs.push_back(driver->finishPs());
        const LoweringFallbacks& f = driver->fallbacks();
        run.fallbacks.hostCommunication += f.hostCommunication;
        run.fallbacks.localCollectives += f.localCollectives;
        run.fallbacks.zeroDuration += f.zeroDuration;
    }
    EXPECT_NO_THROW(checkFinished(list));
    run.collectivesInFabric = comm.collectives();
    return run;
}

RankDriverOptions replay(DependencyPolicy policy)
{
    RankDriverOptions options;
    options.lowering.compute = ExecutionMode::Replay;
    options.lowering.memory = ExecutionMode::Replay;
    options.dependencies.policy = policy;
    return options;
}

TEST_F(ScTest, FeederTestTraceRunsToCompletion)
{
    std::optional<fs::path> traces = sharedTraces();
    if (!traces)
        GTEST_SKIP() << "shared traces not found: set ETSIM_TRACES to the traces folder";
    SetRun run =
        runSet(*traces / "chakra-feeder-test" / "chakra", replay(DependencyPolicy::DataOnly));
    EXPECT_EQ(run.nodes, 3664U);
    EXPECT_EQ(run.fallbacks.hostCommunication, 14U); // the c10d host wrappers
    EXPECT_EQ(run.fallbacks.localCollectives, 7U);   // a 1-rank trace of a larger job
    EXPECT_GT(run.finishPs, 0U);
}

TEST_F(ScTest, PytorchLinkedTraceRunsToCompletion)
{
    std::optional<fs::path> traces = sharedTraces();
    if (!traces)
        GTEST_SKIP() << "shared traces not found: set ETSIM_TRACES to the traces folder";
    SetRun run =
        runSet(*traces / "pytorch-linked-1.1.0-r0" / "chakra", replay(DependencyPolicy::DataOnly));
    EXPECT_EQ(run.nodes, 11347U);
    EXPECT_EQ(run.fallbacks.localCollectives, 14U);
}

TEST_F(ScTest, Resnet64RanksRunToCompletionWithMatchedCollectives)
{
    std::optional<fs::path> traces = sharedTraces();
    if (!traces)
        GTEST_SKIP() << "shared traces not found: set ETSIM_TRACES to the traces folder";
    SetRun run = runSet(*traces / "text-resnet50-dp-64r-legacy" / "resnet50_DataParallel",
                        replay(DependencyPolicy::CtrlOnly));
    EXPECT_EQ(run.nodes, 64U * 215U);
    EXPECT_EQ(run.collectivesInFabric, 54U); // each all-reduce matched across the 64 ranks
    EXPECT_EQ(run.fallbacks.localCollectives, 0U);
}

TEST_F(ScTest, GeneratedTraceOf1024RanksRunsToCompletion)
{
    constexpr std::uint32_t ranks = 1024;
    constexpr std::uint32_t groupSize = 8;
    etsim::test::TempDir dir;
    std::vector<ProcessGroup> groups;
    for (std::uint32_t group = 0; group < ranks / groupSize; ++group) {
        ProcessGroup pg{group + 1, {}};
        for (std::uint32_t member = 0; member < groupSize; ++member)
            pg.ranks.push_back(group * groupSize + member);
        groups.push_back(pg);
    }
    for (std::uint32_t rank = 0; rank < ranks; ++rank) {
        TraceWriter writer(dir.file("gen." + std::to_string(rank) + ".et"));
        std::string pg = std::to_string(rank / groupSize + 1);
        for (const TraceNode& node : {comp(1, (rank % 4 + 1) * 100),
                                      coll(2, CollectiveType::AllReduce, 1000, {1}),
                                      comp(3, 50, {2}),
                                      coll(4, CollectiveType::AllGather, 2000, {3}, pg),
                                      comp(5, 10, {4}),
                                      coll(6, CollectiveType::AllReduce, 4000, {5})})
            writer.write(node);
        writer.close();
    }
    SetRun run = runSet(dir.file("gen"), RankDriverOptions{}, groups);
    EXPECT_EQ(run.nodes, ranks * 6U);
    EXPECT_EQ(run.collectivesInFabric, 2U + ranks / groupSize);
    // 400 ns (slowest first node) + 501 ns + 50 ns + 502 ns + 10 ns + 504 ns.
    for (std::uint32_t rank = 0; rank < ranks; ++rank)
        ASSERT_EQ(run.rankFinishPs[rank], 1967000U) << "rank " << rank;
}

} // namespace
} // namespace etsim::et::test
