#pragma once
// Items that fall due at a simulated time, taken out in time order (equal times in the order
// they were put in) by a process sensitive to event(): what tlm_utils::peq_with_get does for
// payloads, without its allocation per item (a std::multimap node). A binary heap over a
// vector, so a steady run allocates nothing; the item may carry what the taker needs besides
// the payload (the socket it came through).
//
//     queue.put(item, delay);                 // due at now + delay; event() fires then
//     while (std::optional<Item> item = queue.next()) handle(*item);   // in the process

#include <systemc>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace etsim {

template <typename Item>
class TimedQueue {
public:
    explicit TimedQueue(const char* name) : due(name) {}

    /// Puts `item` in, due `delay` from now, and notifies event() for then (an earlier pending
    /// notification stands, as sc_event::notify keeps the earliest).
    void put(Item item, const sc_core::sc_time& delay)
    {
        entries.push_back(Entry{sc_core::sc_time_stamp() + delay, order++, std::move(item)});
        std::push_heap(entries.begin(), entries.end(), later);
        due.notify(delay);
    }

    /// The earliest item due now or before, taken out; none if there is none, in which case
    /// event() is notified for the next item's time.
    std::optional<Item> next()
    {
        if (entries.empty())
            return std::nullopt;
        const sc_core::sc_time now = sc_core::sc_time_stamp();
        if (entries.front().when > now) {
            due.notify(entries.front().when - now);
            return std::nullopt;
        }
        std::pop_heap(entries.begin(), entries.end(), later);
        Item item = std::move(entries.back().item);
        entries.pop_back();
        return item;
    }

    const sc_core::sc_event& event() const { return due; }
    std::size_t size() const { return entries.size(); }

private:
    struct Entry {
        sc_core::sc_time when;
        std::uint64_t order;
        Item item;
    };
    // The heap's top is the earliest entry, the first put among equal times.
    static bool later(const Entry& a, const Entry& b)
    {
        return a.when != b.when ? a.when > b.when : a.order > b.order;
    }

    std::vector<Entry> entries;
    std::uint64_t order = 0;
    sc_core::sc_event due;
};

} // namespace etsim
