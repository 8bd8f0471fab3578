#pragma once
// The fabric's own event calendar: a binary heap of small records in integer picoseconds,
// ordered by time and then by insertion, so runs are deterministic. The fabric has one
// SystemC event for the calendar's next time; messages and flows never become SystemC events.

#include <cstdint>
#include <vector>

namespace etsim::net {

/// Who handles an event (the network core or the communication engine) and what it means.
enum class EventKind : std::uint8_t {
    /// A flow may have sent its last byte (index = flow, version guards stale entries).
    FlowFinish,
    /// A message reaches its destination endpoint (index = flow record).
    Deliver,
    /// A store-and-forward message reaches the next link of its route (index = flow record).
    Hop,
    /// A collective member's delay (endpoint delay, reduction) has passed (index = task).
    EngineTask,
};

struct CalendarEvent {
    std::uint64_t timePs = 0;
    std::uint64_t sequence = 0;
    std::uint32_t index = 0;
    std::uint32_t version = 0;
    EventKind kind = EventKind::FlowFinish;
};

class EventCalendar {
public:
    /// Current time, ps: the time of the last event popped or the last advance().
    std::uint64_t now() const { return nowPs; }
    /// Moves the clock forward to `timePs` (never back) without running anything.
    void advance(std::uint64_t timePs)
    {
        if (timePs > nowPs)
            nowPs = timePs;
    }

    /// Schedules an event at `timePs` (>= now()).
    void schedule(std::uint64_t timePs, EventKind kind, std::uint32_t index, std::uint32_t version)
    {
        heap.push_back(CalendarEvent{timePs, nextSequence++, index, version, kind});
        siftUp(heap.size() - 1);
    }
    bool empty() const { return heap.empty(); }
    std::size_t size() const { return heap.size(); }
    /// Time of the earliest event; only valid when !empty().
    std::uint64_t nextTime() const { return heap.front().timePs; }
    /// Removes and returns the earliest event and moves now() to its time.
    CalendarEvent pop()
    {
        CalendarEvent top = heap.front();
        heap.front() = heap.back();
        heap.pop_back();
        if (!heap.empty())
            siftDown(0);
        nowPs = top.timePs;
        return top;
    }

private:
    static bool earlier(const CalendarEvent& a, const CalendarEvent& b)
    {
        return a.timePs != b.timePs ? a.timePs < b.timePs : a.sequence < b.sequence;
    }
    void siftUp(std::size_t at)
    {
        CalendarEvent moving = heap[at];
        while (at > 0) {
            std::size_t parent = (at - 1) / 2;
            if (!earlier(moving, heap[parent]))
                break;
            heap[at] = heap[parent];
            at = parent;
        }
        heap[at] = moving;
    }
    void siftDown(std::size_t at)
    {
        CalendarEvent moving = heap[at];
        std::size_t count = heap.size();
        for (;;) {
            std::size_t child = 2 * at + 1;
            if (child >= count)
                break;
            if (child + 1 < count && earlier(heap[child + 1], heap[child]))
                ++child;
            if (!earlier(heap[child], moving))
                break;
            heap[at] = heap[child];
            at = child;
        }
        heap[at] = moving;
    }

    std::vector<CalendarEvent> heap;
    std::uint64_t nextSequence = 0;
    std::uint64_t nowPs = 0;
};

} // namespace etsim::net
