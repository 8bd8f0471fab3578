#include "models/net/flow/EventCalendar.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <tuple>
#include <vector>

namespace etsim::net {
namespace {

std::vector<std::uint32_t> drain(EventCalendar& calendar)
{
    std::vector<std::uint32_t> order;
    while (!calendar.empty())
        order.push_back(calendar.pop().index);
    return order;
}

TEST(EventCalendar, PopsByTimeThenInsertion)
{
    EventCalendar calendar;
    calendar.schedule(300, EventKind::Deliver, 0, 0);
    calendar.schedule(100, EventKind::Hop, 1, 7);
    calendar.schedule(300, EventKind::EngineTask, 2, 0);
    calendar.schedule(100, EventKind::FlowFinish, 3, 0);
    calendar.schedule(200, EventKind::Deliver, 4, 0);
    EXPECT_EQ(calendar.size(), 5u);
    EXPECT_EQ(calendar.nextTime(), 100u);
    CalendarEvent first = calendar.pop();
    EXPECT_EQ(first.timePs, 100u);
    EXPECT_EQ(first.index, 1u);
    EXPECT_EQ(first.version, 7u);
    EXPECT_EQ(first.kind, EventKind::Hop);
    EXPECT_EQ(calendar.now(), 100u);
    EXPECT_EQ(drain(calendar), (std::vector<std::uint32_t>{3, 4, 0, 2}));
    EXPECT_EQ(calendar.now(), 300u);
}

TEST(EventCalendar, EventsForTheCurrentInstantRunAfterThoseAlreadyThere)
{
    EventCalendar calendar;
    calendar.schedule(50, EventKind::Deliver, 0, 0);
    calendar.schedule(50, EventKind::Deliver, 1, 0);
    EXPECT_EQ(calendar.pop().index, 0u);
    calendar.schedule(50, EventKind::Deliver, 2, 0);
    EXPECT_EQ(calendar.pop().index, 1u);
    // The instant's bucket is now empty and closed: a new event at the same time opens another.
    EXPECT_EQ(calendar.pop().index, 2u);
    EXPECT_TRUE(calendar.empty());
    calendar.schedule(50, EventKind::Deliver, 3, 0);
    calendar.schedule(60, EventKind::Deliver, 4, 0);
    EXPECT_EQ(drain(calendar), (std::vector<std::uint32_t>{3, 4}));
}

TEST(EventCalendar, AdvanceMovesTheClockOnlyForward)
{
    EventCalendar calendar;
    calendar.advance(1000);
    calendar.advance(10);
    EXPECT_EQ(calendar.now(), 1000u);
}

// Thousands of distinct times (far more than the direct-mapped table has slots, so buckets of
// equal times collide and split) interleaved with pops: the order must equal a stable sort by
// time of the insertion order.
TEST(EventCalendar, MatchesAStableSortUnderCollisions)
{
    EventCalendar calendar;
    std::vector<std::tuple<std::uint64_t, std::uint64_t, std::uint32_t>> pending; // time, seq, id
    std::vector<std::uint32_t> expected;
    std::vector<std::uint32_t> actual;
    std::uint64_t state = 12345;
    auto next = [&state]() {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        return state >> 33;
    };
    std::uint64_t sequence = 0;
    std::uint32_t id = 0;
    for (int round = 0; round < 200; ++round) {
        for (int add = 0; add < 50; ++add) {
            // Few distinct near times (many equal) and many distinct far ones.
            std::uint64_t offset = next() % 2 == 0 ? next() % 8 : next() % 100000;
            std::uint64_t time = calendar.now() + offset;
            calendar.schedule(time, EventKind::Deliver, id, 0);
            pending.emplace_back(time, sequence++, id++);
        }
        for (int take = 0; take < 40 && !calendar.empty(); ++take) {
            auto earliest = std::min_element(pending.begin(), pending.end());
            expected.push_back(std::get<2>(*earliest));
            pending.erase(earliest);
            actual.push_back(calendar.pop().index);
        }
    }
    std::sort(pending.begin(), pending.end());
    for (const auto& entry : pending)
        expected.push_back(std::get<2>(entry));
    std::vector<std::uint32_t> rest = drain(calendar);
    actual.insert(actual.end(), rest.begin(), rest.end());
    EXPECT_EQ(actual, expected);
    EXPECT_EQ(actual.size(), 10000u);
}

} // namespace
} // namespace etsim::net
