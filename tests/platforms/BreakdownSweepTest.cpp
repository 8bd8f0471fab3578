// The per-rank breakdown swept while a run goes on (platforms/BreakdownSweep.h) must equal one
// sweep over every interval at the end, and settle whatever a long node holds back.

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
// instants; some long, and one receive posted at the start that waits through the whole run),
// each recorded when it finishes, with the nodes in flight at that moment.
TEST(BreakdownSweep, SweptAsNodesFinishEqualsOneSweepAtTheEnd)
{
    std::mt19937_64 random(7);
    const Engine engines[] = {
        Engine::Compute, Engine::Memory, Engine::Communication, Engine::Host, Engine::Instant};
    std::vector<NodeInterval> nodes;
    std::uint64_t issue = 0;
    for (int i = 0; i < 40'000; ++i) {
        issue += random() % 3 == 0 ? 0 : random() % 1000; // ties at one instant
        const std::uint64_t duration = random() % 50 == 0 ? random() % 2'000'000 : random() % 3000;
        const Engine engine = engines[random() % 5];
        nodes.push_back({issue, engine == Engine::Instant ? issue : issue + duration, engine});
    }
    nodes.push_back({0, issue + 5000, Engine::Communication});
    std::vector<std::size_t> byFinish(nodes.size());
    for (std::size_t i = 0; i < nodes.size(); ++i)
        byFinish[i] = i;
    std::stable_sort(byFinish.begin(), byFinish.end(), [&](std::size_t a, std::size_t b) {
        return nodes[a].endPs < nodes[b].endPs;
    });
    std::uint64_t finishPs = 0;
    for (const NodeInterval& node : nodes)
        finishPs = std::max(finishPs, node.endPs);

    // In flight at `now`: issued by then and not yet recorded, the one being recorded included
    // (RankDriver::complete records a node before it frees its flight).
    std::size_t recorded = 0;
    std::size_t settles = 0;
    auto inFlight = [&](std::uint32_t, std::vector<et::OpenNode>& open) {
        ++settles;
        open.clear();
        const std::uint64_t now = nodes[byFinish[recorded]].endPs;
        for (std::size_t k = recorded; k < byFinish.size(); ++k) {
            const NodeInterval& node = nodes[byFinish[k]];
            if (node.startPs <= now && node.engine != Engine::Instant)
                open.push_back({NodeId{byFinish[k]}, node.startPs, node.engine});
        }
        return now;
    };
    RunBreakdowns run(2, false, inFlight);
    for (; recorded < byFinish.size(); ++recorded) {
        const NodeInterval& node = nodes[byFinish[recorded]];
        et::NodeRecord record;
        record.node = NodeId{byFinish[recorded]};
        record.engine = node.engine;
        record.issuePs = node.startPs;
        record.finishPs = node.endPs;
        run.add(1, record);
    }
    expectSame(run.finish(1, finishPs), breakdown(1, finishPs, nodes));
    // 80,000 edges went in, settled about every 4,096 whatever the receive held back.
    EXPECT_GE(settles, 15U);
    EXPECT_LE(settles, 30U);
    EXPECT_TRUE(run.intervals().empty());
    // The rank that recorded nothing: all idle.
    const RankBreakdown idle = run.finish(0, 5000);
    EXPECT_EQ(idle.idlePs, 5000U);
    EXPECT_EQ(idle.nodes, 0U);
}

// A node opened while in flight counts from its start, and its record adds its end only.
TEST(BreakdownSweep, AnOpenedNodeCountsOnceFromItsStart)
{
    BreakdownSweep sweep;
    sweep.open({NodeId{1}, 1000, Engine::Communication});
    sweep.open({NodeId{1}, 1000, Engine::Communication}); // once
    sweep.add({2000, 3000, Engine::Compute}, NodeId{2});
    sweep.settle(3000);
    EXPECT_EQ(sweep.pendingEdges(), 0U);
    sweep.add({1000, 5000, Engine::Communication}, NodeId{1});
    const RankBreakdown b = sweep.finish(0, 6000);
    EXPECT_EQ(b.idlePs, 1000U + 1000U); // 0..1 us, 5..6 us
    EXPECT_EQ(b.computePs, 1000U);      // 2..3 us
    EXPECT_EQ(b.exposedCommPs, 3000U);  // 1..2 and 3..5 us
    EXPECT_EQ(b.commPs, 4000U);
    EXPECT_EQ(b.overlapPs, 1000U);
    EXPECT_EQ(b.nodes, 2U);
}

// Cut at the finish: an interval past it counts up to it, one starting at it adds nothing, as
// in one sweep; and kept intervals are there for the timeline.
TEST(BreakdownSweep, IntervalsAreCutAtTheFinishAndKeptWhenAsked)
{
    const std::vector<NodeInterval> intervals = {{0, 10'000, Engine::Compute},
                                                 {8'000, 40'000, Engine::Communication},
                                                 {30'000, 50'000, Engine::Memory},
                                                 {12'000, 12'000, Engine::Compute}};
    RunBreakdowns run(1, true, [](std::uint32_t, std::vector<et::OpenNode>& open) {
        open.clear();
        return std::uint64_t{9'000};
    });
    for (std::size_t i = 0; i < intervals.size(); ++i) {
        et::NodeRecord record;
        record.node = NodeId{i};
        record.engine = intervals[i].engine;
        record.issuePs = intervals[i].startPs;
        record.finishPs = intervals[i].endPs;
        run.add(0, record);
    }
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
