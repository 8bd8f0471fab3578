// The driver on hand-built traces with the stand-in targets of tests/support/TestTargets.h.
// Timings (DriverTestSupport.h): compute 1 ns per FLOP; memory 1 ps per byte; a message
// 100 ns + 10 ps per byte; a collective 500 ns + 1 ps per byte after its last member joins.

#include "et_driver/RankDriver.h"

#include "kernel/Error.h"
#include "kernel/PayloadPool.h"
#include "kernel/Stats.h"
#include "kernel/Timeline.h"
#include "tests/et_driver/DriverTestSupport.h"
#include "tests/support/ScTest.h"
#include "tests/support/TempDir.h"

#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <sstream>

namespace etsim::et::test {
namespace {

using etsim::test::ScTest;
using Traces = std::vector<std::vector<TraceNode>>;

std::string runExpectingReport(Job& job)
{
    try {
        job.run();
    } catch (const sc_core::sc_report& report) {
        return report.what();
    }
    ADD_FAILURE() << "the run did not raise an error";
    return {};
}

TEST_F(ScTest, DependencyChainFinishesAtSummedTimes)
{
    Job job({{comp(1, 100), comp(2, 50, {1}), comp(3, 10, {2})}});
    RunResult result = job.run();
    EXPECT_EQ(result.outcome, RunOutcome::AllIdle);
    EXPECT_EQ(job.finish(0, 1), 100000U);
    EXPECT_EQ(job.finish(0, 2), 150000U);
    EXPECT_EQ(job.finish(0, 3), 160000U);
    EXPECT_EQ(job.record(0, 2).issuePs, 100000U);
    EXPECT_EQ(job.record(0, 2).engine, Engine::Compute);
    EXPECT_EQ(job.drivers[0]->finishPs(), 160000U);
    EXPECT_EQ(job.drivers[0]->nodesFinished(), 3U);
    EXPECT_EQ(job.drivers[0]->pool().inUse(), 0U);
    const auto* nodes = dynamic_cast<const Counter*>(job.stats.findStat("rank0.nodes"));
    ASSERT_NE(nodes, nullptr);
    EXPECT_EQ(nodes->value(), 3U);
    const auto* busy = dynamic_cast<const Scalar*>(job.stats.findStat("rank0.compute.node_time"));
    ASSERT_NE(busy, nullptr);
    EXPECT_DOUBLE_EQ(busy->value(), 160e-9);
    EXPECT_NO_THROW(checkFinished(job.driverList()));
}

TEST_F(ScTest, ComputeOverlapsCommunication)
{
    Job job({{comp(1, 1000), send(2, 1, 7, 1000)}, {recv(1, 0, 7, 1000)}});
    job.run();
    EXPECT_EQ(job.finish(0, 1), 1000000U);
    EXPECT_EQ(job.finish(0, 2), 110000U); // 100 ns + 1000 B * 10 ps
    EXPECT_EQ(job.finish(1, 1), 110000U);
    EXPECT_EQ(job.drivers[0]->finishPs(), 1000000U); // not 1.11 us: the engines overlap
    EXPECT_EQ(job.record(0, 2).engine, Engine::Communication);
}

TEST_F(ScTest, RendezvousSendWaitsForLateRecv)
{
    RankDriverOptions options;
    options.lowering.eagerThresholdBytes = 0;
    Job job({{send(1, 1, 3, 1000)}, {comp(1, 2000), recv(2, 0, 3, 1000, {1})}}, options);
    job.run();
    EXPECT_EQ(job.finish(1, 2), 2110000U); // posted at 2 us, then 110 ns
    EXPECT_EQ(job.finish(0, 1), 2110000U);
}

TEST_F(ScTest, EagerSendCompletesWhenItsMessageArrives)
{
    Job job({{send(1, 1, 3, 1000)}, {comp(1, 2000), recv(2, 0, 3, 1000, {1})}});
    job.run();
    EXPECT_EQ(job.finish(0, 1), 110000U);
    EXPECT_EQ(job.finish(1, 2), 2000000U); // the data was already there when it was posted
}

TEST_F(ScTest, RecvPostedBeforeSend)
{
    for (std::uint64_t threshold : {std::uint64_t{0}, std::uint64_t{1} << 20}) {
        etsim::test::ScKernel kernelForThisRun;
        RankDriverOptions options;
        options.lowering.eagerThresholdBytes = threshold;
        Job job({{comp(1, 2000), send(2, 1, 3, 1000, {1})}, {recv(1, 0, 3, 1000)}}, options);
        job.run();
        EXPECT_EQ(job.finish(0, 2), 2110000U) << "threshold " << threshold;
        EXPECT_EQ(job.finish(1, 1), 2110000U) << "threshold " << threshold;
    }
}

TEST_F(ScTest, SendsMatchRecvsInOrderPerTag)
{
    Job job({{send(1, 1, 5, 100), send(2, 1, 5, 200, {1}), send(3, 1, 6, 300)},
             {recv(1, 0, 6, 300), recv(2, 0, 5, 100), recv(3, 0, 5, 200)}});
    job.run();
    EXPECT_EQ(job.finish(1, 1), 103000U);
    EXPECT_EQ(job.finish(1, 2), 101000U);
    EXPECT_EQ(job.finish(1, 3), 101000U + 102000U); // second send issued after the first
    EXPECT_EQ(job.comm.messages(), 3U);
}

TEST_F(ScTest, AllReduceWaitsForTheLateRank)
{
    Traces traces;
    for (int rank = 0; rank < 4; ++rank)
        traces.push_back(
            {comp(1, rank == 3 ? 5000 : 10), coll(2, CollectiveType::AllReduce, 1000, {1})});
    Job job(traces);
    job.run();
    for (std::uint32_t rank = 0; rank < 4; ++rank) {
        EXPECT_EQ(job.record(rank, 2).issuePs, rank == 3 ? 5000000U : 10000U);
        EXPECT_EQ(job.finish(rank, 2), 5000000U + 500000U + 1000U) << "rank " << rank;
    }
    EXPECT_EQ(job.comm.collectives(), 1U);
}

TEST_F(ScTest, ProcessGroupsThatAreSubsetsOfTheRanks)
{
    Traces traces(4);
    for (int rank : {0, 1})
        traces[rank] = {coll(1, CollectiveType::AllReduce, 1000, {}, "1"),
                        coll(2, CollectiveType::AllReduce, 2000, {1}, "1")};
    traces[2] = {coll(1, CollectiveType::AllGather, 4000, {}, "2")};
    traces[3] = {comp(1, 3000), coll(2, CollectiveType::AllGather, 4000, {1}, "2")};
    Job job(traces, {}, {}, {{1, {0, 1}}, {2, {2, 3}}});
    job.run();
    EXPECT_EQ(job.finish(0, 1), 501000U);
    EXPECT_EQ(job.finish(1, 2), 501000U + 502000U);
    EXPECT_EQ(job.finish(2, 1), 3504000U); // waits for rank 3 only, not for group 1
    EXPECT_EQ(job.finish(3, 2), 3504000U);
    EXPECT_EQ(job.comm.collectives(), 3U);
}

TEST_F(ScTest, RecvWithoutSendIsReportedAsDeadlock)
{
    Job job({{comp(1, 10)}, {recv(1, 0, 9, 64), comp(2, 10, {1})}});
    RunResult result = job.run();
    EXPECT_EQ(result.outcome, RunOutcome::Deadlock);
    EXPECT_TRUE(job.drivers[0]->done());
    EXPECT_FALSE(job.drivers[1]->done());
    try {
        checkFinished(job.driverList());
        FAIL() << "no deadlock reported";
    } catch (const DeadlockError& error) {
        EXPECT_EQ(std::string(error.what()),
                  "deadlock: 1 of 2 ranks cannot finish; stuck nodes per rank:\n"
                  "rank 1: 2 nodes unfinished (1 waiting on dependencies)\n"
                  "  node 1 \"n1\": recv of 64 B from rank 0 tag 9: no matching send posted by "
                  "rank 0");
    }
}

TEST_F(ScTest, CollectiveAMemberNeverJoinsIsReported)
{
    Job job({{coll(1, CollectiveType::AllReduce, 64)},
             {coll(1, CollectiveType::AllReduce, 64)},
             {comp(1, 10)}});
    EXPECT_EQ(job.run().outcome, RunOutcome::Deadlock);
    std::string report = deadlockReport(job.driverList());
    EXPECT_NE(report.find("deadlock: 2 of 3 ranks cannot finish"), std::string::npos) << report;
    EXPECT_NE(report.find("rank 0: 1 nodes unfinished (0 waiting on dependencies)\n  node 1 "
                          "\"n1\": all_reduce of 64 B, all ranks, sequence 0: never joined by "
                          "rank 2"),
              std::string::npos)
        << report;
    EXPECT_THROW(checkFinished(job.driverList()), DeadlockError);
}

// Two receives nobody sends to: the run ends in a deadlock with both in flight, each payload
// referenced by the driver and by the communication target. Teardown gives every reference
// back: under LeakSanitizer (make test-asan) a payload left behind fails this test.
Traces twoOrphanRecvs()
{
    return {{comp(1, 10)}, {recv(1, 0, 9, 64), recv(2, 0, 8, 32)}};
}

int poolReports()
{
    return sc_core::sc_report_handler::get_count(PayloadPool::reportType);
}

TEST_F(ScTest, DeadlockedRunReturnsEveryPayloadToItsPool)
{
    auto job = std::make_unique<Job>(twoOrphanRecvs());
    EXPECT_EQ(job->run().outcome, RunOutcome::Deadlock);
    EXPECT_EQ(job->drivers[0]->pool().inUse(), 0U);
    EXPECT_EQ(job->drivers[1]->pool().inUse(), 2U);
    EXPECT_EQ(job->drivers[1]->pool().stats().acquired, 2U);
    EXPECT_EQ(job->comm.holding(), 2U);
    // Job destroys the targets before the drivers: the target's references come back first,
    // then the drivers' own, so each pool sees all its payloads return and has nothing to
    // report.
    int before = poolReports();
    job.reset();
    EXPECT_EQ(poolReports(), before);
}

TEST_F(ScTest, DeadlockedRunLeaksNothingWhenDriversGoFirst)
{
    auto job = std::make_unique<Job>(twoOrphanRecvs());
    EXPECT_EQ(job->run().outcome, RunOutcome::Deadlock);
    sc_core::sc_report_handler::set_actions(PayloadPool::reportType, sc_core::SC_CACHE_REPORT);
    int before = poolReports();
    // The wrong order: the pool goes while the target still holds the payloads. It says so
    // and detaches them; the target's release at its destruction then deletes them.
    job->drivers.clear();
    EXPECT_EQ(poolReports(), before + 1);
    const sc_core::sc_report* report = sc_core::sc_report_handler::get_cached_report();
    ASSERT_NE(report, nullptr);
    EXPECT_EQ(std::string(report->get_msg()),
              "payload pool 'rank1.pool' destroyed with 2 payload(s) still in use; every "
              "acquire() needs a matching release() (call check() at end_of_simulation to find "
              "leaks earlier)");
    EXPECT_EQ(job->comm.holding(), 2U);
    job.reset();
}

TEST_F(ScTest, DependencyCycleIsReported)
{
    Job job({{comp(1, 10, {2}), comp(2, 10, {1}), comp(3, 10)}});
    EXPECT_EQ(job.run().outcome, RunOutcome::Deadlock);
    EXPECT_EQ(job.finish(0, 3), 10000U);
    std::string report = deadlockReport(job.driverList());
    EXPECT_NE(report.find("rank 0: 2 nodes unfinished (2 waiting on dependencies)"),
              std::string::npos)
        << report;
    EXPECT_NE(report.find("cycle: 1 -> 2 -> 1"), std::string::npos) << report;
}

TEST_F(ScTest, SendRecvSizeMismatchIsAnError)
{
    Job job({{send(1, 1, 1, 100)}, {recv(1, 0, 1, 200)}});
    std::string message = runExpectingReport(job);
    // The report stopped the run inside the target: both payloads are still out, and the
    // target holds a reference on each (released when the job is destroyed).
    EXPECT_EQ(job.drivers[0]->pool().inUse() + job.drivers[1]->pool().inUse(), 2U);
    EXPECT_EQ(job.comm.holding(), 2U);
    EXPECT_NE(message.find("send node 1 of rank 0 (100 B) matches recv node 1 of rank 1 (200 B) "
                           "with tag 1: message sizes differ"),
              std::string::npos)
        << message;
}

TEST_F(ScTest, BadNodeStopsTheRunNamingRankAndNode)
{
    TraceNode bad = node(4, NodeType::CommSend);
    bad.setCommSize(8);
    Job job({{comp(1, 10), bad}});
    std::string message = runExpectingReport(job);
    EXPECT_NE(message.find("rank0 at 0 s: rank 0, node 4 (\"n4\"): COMM_SEND_NODE has no "
                           "comm_dst; give the peer rank"),
              std::string::npos)
        << message;
}

std::vector<std::vector<TraceNode>> slotTraces()
{
    TraceNode load = node(3, NodeType::MemLoad);
    load.setTensorSize(1000);
    TraceNode load1 = node(2, NodeType::MemLoad);
    load1.setTensorSize(1000);
    return {{comp(1, 100), comp(2, 100), load, recv(4, 1, 0, 100)}, {send(1, 0, 0, 100), load1}};
}

TEST_F(ScTest, AstraProfileHasOneSlotPerClass)
{
    RankDriverOptions options;
    options.lowering.profile = SchedulingProfile::Astra;
    options.lowering.eagerThresholdBytes = 0; // ignored: every astra send is eager
    Job job(slotTraces(), options);
    job.run();
    EXPECT_EQ(job.finish(0, 1), 100000U);
    EXPECT_EQ(job.finish(0, 2), 200000U); // one GPU compute at a time
    EXPECT_EQ(job.finish(0, 3), 1000U);   // memory uses the communication slot...
    EXPECT_EQ(job.finish(0, 4), 101000U); // ...which a recv does not occupy
    EXPECT_EQ(job.finish(1, 1), 101000U); // eager send completes when the message arrives
    EXPECT_EQ(job.finish(1, 2), 102000U); // the load waited for the send's slot
    EXPECT_EQ(job.record(1, 2).issuePs, 101000U);
}

TEST_F(ScTest, NativeProfileRunsEnginesConcurrently)
{
    Job job(slotTraces());
    job.run();
    EXPECT_EQ(job.finish(0, 1), 100000U);
    EXPECT_EQ(job.finish(0, 2), 100000U);
    EXPECT_EQ(job.finish(0, 3), 1000U);
    EXPECT_EQ(job.finish(0, 4), 101000U);
    EXPECT_EQ(job.finish(1, 1), 101000U);
    EXPECT_EQ(job.finish(1, 2), 1000U);
}

TEST_F(ScTest, NativeComputeLimitQueuesInIdOrder)
{
    RankDriverOptions options;
    options.computeLimit = 1;
    Job job({{comp(3, 30), comp(1, 10), comp(2, 20)}}, options);
    job.run();
    EXPECT_EQ(job.finish(0, 1), 10000U);
    EXPECT_EQ(job.finish(0, 2), 30000U);
    EXPECT_EQ(job.finish(0, 3), 60000U);
}

TEST_F(ScTest, ModelModeFallbacksHostStreamAndCounts)
{
    TraceNode fromDuration = node(1, NodeType::Comp);
    fromDuration.durationMicros = 3;
    TraceNode neither = node(2, NodeType::Comp);
    TraceNode host = node(3, NodeType::Comp);
    host.setIsCpuOp(true);
    host.durationMicros = 2;
    TraceNode c10d = node(5, NodeType::CommColl, {3});
    c10d.setIsCpuOp(true);
    c10d.durationMicros = 1;
    Job job({{fromDuration, neither, host, comp(4, 500), c10d}});
    job.run();
    EXPECT_EQ(job.finish(0, 1), 3000000U);
    EXPECT_EQ(job.finish(0, 2), 1000U);
    EXPECT_EQ(job.finish(0, 3), 2000000U);
    EXPECT_EQ(job.record(0, 3).engine, Engine::Host);
    EXPECT_EQ(job.finish(0, 4), 500000U); // the host op does not occupy the accelerator
    EXPECT_EQ(job.finish(0, 5), 3000000U);
    EXPECT_EQ(job.record(0, 5).engine, Engine::Host);
    const LoweringFallbacks& fallbacks = job.drivers[0]->fallbacks();
    EXPECT_EQ(fallbacks.computeFromDuration, 1U);
    EXPECT_EQ(fallbacks.computeDefault, 1U);
    EXPECT_EQ(fallbacks.hostCommunication, 1U);
    EXPECT_EQ(fallbacks.total(), 3U);
    std::string log = job.logText.str();
    EXPECT_NE(log.find("[warn] et_driver: compute node without num_ops replays its "
                       "duration_micros (first: rank 0, node 1 (\"n1\"))"),
              std::string::npos)
        << log;
    EXPECT_NE(log.find("communication node with is_cpu_op true replays on the host stream"),
              std::string::npos)
        << log;
}

TEST_F(ScTest, ReplayModeUsesRecordedDurations)
{
    RankDriverOptions options;
    options.lowering.compute = ExecutionMode::Replay;
    options.lowering.communication = ExecutionMode::Replay;
    TraceNode timed = comp(1, 100);
    timed.durationMicros = 7;
    TraceNode allReduce = coll(2, CollectiveType::AllReduce, 1 << 20, {1});
    allReduce.durationMicros = 4;
    Job job({{timed, allReduce}, {}}, options);
    job.run();
    EXPECT_EQ(job.finish(0, 1), 7000000U);
    EXPECT_EQ(job.finish(0, 2), 11000000U); // replayed: the fabric never sees it
    EXPECT_EQ(job.comm.accepted(), 0U);
}

TEST_F(ScTest, SingleRankCollectivesCompleteLocally)
{
    TraceNode allReduce = coll(1, CollectiveType::AllReduce, 1 << 20);
    allReduce.durationMicros = 4;
    Job job({{allReduce, comp(2, 10, {1})}});
    job.run();
    EXPECT_EQ(job.finish(0, 1), 4000000U);
    EXPECT_EQ(job.finish(0, 2), 4010000U);
    EXPECT_EQ(job.drivers[0]->fallbacks().localCollectives, 1U);
    EXPECT_NE(job.logText.str().find("completes locally"), std::string::npos);
}

TEST_F(ScTest, MetadataNodesNeverStallTheRank)
{
    Job job({{node(1, NodeType::Metadata),
              comp(2, 10, {1}),
              node(3, NodeType::Metadata, {2}),
              comp(4, 10, {3})}});
    job.run();
    EXPECT_EQ(job.finish(0, 1), 0U);
    EXPECT_EQ(job.finish(0, 2), 10000U);
    EXPECT_EQ(job.finish(0, 3), 10000U);
    EXPECT_EQ(job.finish(0, 4), 20000U);
    EXPECT_EQ(job.record(0, 3).engine, Engine::Instant);
}

TEST_F(ScTest, SmallWindowStillCompletes)
{
    RankDriverOptions options;
    options.window = 1;
    std::vector<TraceNode> nodes;
    for (std::uint64_t id = 1; id <= 50; ++id)
        nodes.push_back(comp(
            id, 1, id > 1 ? std::vector<std::uint64_t>{id - 1} : std::vector<std::uint64_t>{}));
    Job job({nodes}, options);
    job.run();
    EXPECT_EQ(job.finish(0, 50), 50000U);
}

TEST_F(ScTest, TimelineHasRanksEnginesAndFlows)
{
    etsim::test::TempDir dir;
    std::string path = (dir.path() / "timeline.json").string();
    {
        Timeline timeline(path);
        Simulation simulation;
        LoweringContext context(1);
        etsim::test::FixedTarget compute("compute", {0, 0, 1000});
        etsim::test::FixedTarget memory("memory", {});
        etsim::test::CommTarget comm("comm", {});
        RankDriver driver("rank0",
                          RankId{0},
                          vectorSource({comp(1, 10), comp(2, 10, {1})}),
                          context,
                          simulation,
                          {},
                          nullptr,
                          &timeline);
        driver.computeSocket.bind(compute.socket);
        driver.memorySocket.bind(memory.socket);
        driver.communicationSocket.bind(comm.socket);
        simulation.run();
        timeline.close();
    }
    std::string json = etsim::test::readFile(path);
    EXPECT_NE(json.find("\"rank 0\""), std::string::npos) << json;
    EXPECT_NE(json.find("\"compute\""), std::string::npos) << json;
    EXPECT_NE(json.find("\"ph\":\"s\""), std::string::npos) << json;
    EXPECT_NE(json.find("\"ph\":\"f\""), std::string::npos) << json;
    EXPECT_NE(json.find("\"name\":\"n2\""), std::string::npos) << json;
}

} // namespace
} // namespace etsim::et::test
