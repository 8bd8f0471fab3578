// The per-rank breakdown swept while a run goes on (platforms/BreakdownSweep.h) must equal one
// sweep over every interval at the end, and keep only the edges a watermark holds back.

#include "platforms/BreakdownSweep.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

namespace etsim::platform {
namespace {

using et::Engine;

void expectSame(const RankBreakdown& swept, const RankBreakdown& whole)
{
    EXPECT_EQ(swept.rank, whole.rank);
    EXPECT_EQ(swept.finishPs, whole.finishPs);
    EXPECT_EQ(swept.computePs, whole.computePs);
    EXPECT_EQ(swept.memoryPs, whole.memoryPs);
    EXPECT_EQ(swept.exposedCommPs, whole.exposedCommPs);
    EXPECT_EQ(swept.idlePs, whole.idlePs);
    EXPECT_EQ(swept.commPs, whole.commPs);
    EXPECT_EQ(swept.overlapPs, whole.overlapPs);
    EXPECT_EQ(swept.astraExposedCommPs, whole.astraExposedCommPs);
    EXPECT_EQ(swept.nodes, whole.nodes);
}

// A rank's nodes as a driver reports them: issued over time on every engine (many at the same
// instants, some long-running), each recorded when it finishes, with the watermark a driver
// gives at that moment (the oldest issue among the nodes still in flight, or now).
TEST(BreakdownSweep, SweptAsNodesFinishEqualsOneSweepAtTheEnd)
{
    std::mt19937_64 random(7);
    const Engine engines[] = {
        Engine::Compute, Engine::Memory, Engine::Communication, Engine::Host, Engine::Instant};
    std::vector<NodeInterval> nodes;
    std::uint64_t issue = 0;
    for (int i = 0; i < 40'000; ++i) {
        issue += random() % 3 == 0 ? 0 : random() % 1000; // ties at one instant
        const std::uint64_t duration = random() % 50 == 0 ? random() % 200'000 : random() % 3000;
        const Engine engine = engines[random() % 5];
        nodes.push_back({issue, engine == Engine::Instant ? issue : issue + duration, engine});
    }
    std::vector<NodeInterval> byFinish = nodes;
    std::stable_sort(byFinish.begin(), byFinish.end(), [](const auto& a, const auto& b) {
        return a.endPs < b.endPs;
    });
    std::uint64_t finishPs = 0;
    for (const NodeInterval& node : nodes)
        finishPs = std::max(finishPs, node.endPs);

    // In flight at `now`: issued by then and not yet recorded (the one being recorded counts,
    // as in RankDriver::complete).
    std::size_t recorded = 0;
    auto watermark = [&](std::uint32_t) {
        const std::uint64_t now = byFinish[recorded].endPs;
        std::uint64_t oldest = now;
        for (std::size_t i = recorded; i < byFinish.size(); ++i)
            if (byFinish[i].startPs <= now)
                oldest = std::min(oldest, byFinish[i].startPs);
        return oldest;
    };
    RunBreakdowns run(2, false, watermark);
    std::size_t mostPending = 0;
    BreakdownSweep probe;
    for (; recorded < byFinish.size(); ++recorded) {
        run.add(1, byFinish[recorded]);
        probe.add(byFinish[recorded]);
        if (probe.pendingEdges() >= 4096)
            probe.settle(watermark(1));
        mostPending = std::max(mostPending, probe.pendingEdges());
    }
    expectSame(run.finish(1, finishPs), breakdown(1, finishPs, nodes));
    // What waits is bounded by what ran beside the oldest node in flight (the longest node spans
    // about 300 others here), not by the trace: 80,000 edges went in.
    EXPECT_LT(mostPending, 4096U + 1000U);
    EXPECT_TRUE(run.intervals().empty());
    // The rank that recorded nothing: all idle.
    const RankBreakdown idle = run.finish(0, 5000);
    EXPECT_EQ(idle.idlePs, 5000U);
    EXPECT_EQ(idle.nodes, 0U);
}

// Cut at the finish: an interval past it counts up to it, one starting at it adds nothing, as
// in one sweep; and kept intervals are there for the timeline.
TEST(BreakdownSweep, IntervalsAreCutAtTheFinishAndKeptWhenAsked)
{
    const std::vector<NodeInterval> intervals = {{0, 10'000, Engine::Compute},
                                                 {8'000, 40'000, Engine::Communication},
                                                 {30'000, 50'000, Engine::Memory},
                                                 {12'000, 12'000, Engine::Compute}};
    RunBreakdowns run(1, true, [](std::uint32_t) { return std::uint64_t{9'000}; });
    for (const NodeInterval& interval : intervals)
        run.add(0, interval);
    ASSERT_EQ(run.intervals().size(), 1U);
    EXPECT_EQ(run.intervals()[0].size(), intervals.size());
    const RankBreakdown swept = run.finish(0, 30'000);
    expectSame(swept, breakdown(0, 30'000, intervals));
    EXPECT_EQ(swept.computePs, 10'000U);
    EXPECT_EQ(swept.exposedCommPs, 20'000U);
    EXPECT_EQ(swept.memoryPs, 0U);
    EXPECT_EQ(swept.nodes, 4U);
}

} // namespace
} // namespace etsim::platform
