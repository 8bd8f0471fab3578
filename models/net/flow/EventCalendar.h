#pragma once
// The fabric's own event calendar, in integer picoseconds, ordered by time and then by
// insertion, so runs are deterministic. The fabric has one SystemC event for the calendar's
// next time; messages and flows never become SystemC events.
//
// Collectives keep ranks in lock step: thousands of events fall on the same few instants. So
// the calendar keeps one bucket (a FIFO of small records) per instant and a binary heap of the
// buckets, not of the events: scheduling at an instant that already has a bucket is an append,
// popping is a read, and the heap only moves when an instant opens or closes. A small
// direct-mapped table (time -> newest bucket of that time) finds the bucket; when it misses, a
// second bucket for the same time is opened, and the heap orders equal times by opening order,
// so the pop order is still exactly time, then insertion.

#include "kernel/FreeSlots.h"

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
    std::uint32_t index = 0;
    std::uint32_t version = 0;
    EventKind kind = EventKind::FlowFinish;
};

class EventCalendar {
public:
    EventCalendar() : recent(recentSlots, noBucket) {}

    /// Current time, ps: the time of the last event popped or the last advance().
    std::uint64_t now() const { return nowPs; }
    /// Moves the clock forward to `timePs` (never back) without running anything.
    void advance(std::uint64_t timePs)
    {
        if (timePs > nowPs)
            nowPs = timePs;
    }

    /// Schedules an event at `timePs` (>= now()); it runs after every event already scheduled
    /// for the same time.
    void schedule(std::uint64_t timePs, EventKind kind, std::uint32_t index, std::uint32_t version)
    {
        std::uint32_t& slot = recent[slotOf(timePs)];
        if (slot == noBucket || !buckets[slot].open || buckets[slot].timePs != timePs)
            slot = openBucket(timePs);
        // Written in place: an Entry built aside and copied in would be read back wider than
        // it was written (a store-forwarding stall on every event).
        Entry& entry = buckets[slot].events.emplace_back();
        entry.index = index;
        entry.version = version;
        entry.kind = kind;
        ++count;
    }
    bool empty() const { return count == 0; }
    std::size_t size() const { return count; }
    /// Time of the earliest event; only valid when !empty().
    std::uint64_t nextTime() const { return heap.front().timePs; }
    /// Removes and returns the earliest event and moves now() to its time.
    CalendarEvent pop()
    {
        Bucket& bucket = buckets[heap.front().bucket];
        const Entry& entry = bucket.events[bucket.head++];
        CalendarEvent event{bucket.timePs, entry.index, entry.version, entry.kind};
        --count;
        nowPs = bucket.timePs;
        if (bucket.head == bucket.events.size())
            closeFront();
        return event;
    }

private:
    struct Entry {
        std::uint32_t index;
        std::uint32_t version;
        EventKind kind;
    };
    struct Bucket {
        std::uint64_t timePs = 0;
        std::vector<Entry> events;
        std::size_t head = 0;
        bool open = false;
    };
    struct HeapEntry {
        std::uint64_t timePs;
        std::uint64_t opened;
        std::uint32_t bucket;
    };

    static constexpr std::uint32_t noBucket = UINT32_MAX;
    static constexpr unsigned recentBits = 10;
    static constexpr std::size_t recentSlots = std::size_t{1} << recentBits;

    static std::size_t slotOf(std::uint64_t timePs)
    {
        return static_cast<std::size_t>((timePs * 0x9E3779B97F4A7C15ULL) >> (64 - recentBits));
    }
    static bool earlier(const HeapEntry& a, const HeapEntry& b)
    {
        return a.timePs != b.timePs ? a.timePs < b.timePs : a.opened < b.opened;
    }

    std::uint32_t openBucket(std::uint64_t timePs)
    {
        const std::uint32_t index = takeSlot(spare, buckets);
        Bucket& bucket = buckets[index];
        bucket.timePs = timePs;
        bucket.head = 0;
        bucket.open = true;
        heap.push_back(HeapEntry{timePs, nextOpened++, index});
        siftUp(heap.size() - 1);
        return index;
    }
    void closeFront()
    {
        std::uint32_t index = heap.front().bucket;
        Bucket& bucket = buckets[index];
        bucket.events.clear(); // keeps the capacity for the next instant
        bucket.head = 0;
        bucket.open = false;
        spare.push_back(index);
        heap.front() = heap.back();
        heap.pop_back();
        if (!heap.empty())
            siftDown(0);
    }
    void siftUp(std::size_t at)
    {
        HeapEntry moving = heap[at];
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
        HeapEntry moving = heap[at];
        std::size_t total = heap.size();
        for (;;) {
            std::size_t child = 2 * at + 1;
            if (child >= total)
                break;
            if (child + 1 < total && earlier(heap[child + 1], heap[child]))
                ++child;
            if (!earlier(heap[child], moving))
                break;
            heap[at] = heap[child];
            at = child;
        }
        heap[at] = moving;
    }

    std::vector<Bucket> buckets;
    std::vector<std::uint32_t> spare;
    std::vector<HeapEntry> heap;
    // Time slot -> the newest bucket opened for a time of that slot (or a stale index).
    std::vector<std::uint32_t> recent;
    std::size_t count = 0;
    std::uint64_t nextOpened = 0;
    std::uint64_t nowPs = 0;
};

} // namespace etsim::net
