#pragma once
// Records in flight, named by small integer ids: a model keeps its transactions or jobs here
// instead of a hash map, so a steady run allocates nothing per record (a freed slot is reused)
// and a lookup is an index. The slots live in a deque, so a reference to a record stays valid
// while others are added (a model's callback can start the next record before the caller is
// done with its own).

#include "kernel/Error.h"
#include "kernel/FreeSlots.h"

#include <cstdint>
#include <deque>
#include <string>
#include <utility>
#include <vector>

namespace etsim {

template <typename Record>
class SlotTable {
public:
    /// `owner` names the model in the errors (an id not in flight is an internal error).
    explicit SlotTable(std::string owner) : owner(std::move(owner)) {}

    /// Stores `record` and returns its id (a freed one first).
    std::uint64_t add(Record record)
    {
        const std::uint64_t id = acquire();
        slots[id] = std::move(record);
        return id;
    }
    /// A free slot's id (a freed one first), its record as its last user left it, or a
    /// default one in a new slot: a caller that rebuilds the record in place keeps its buffers.
    std::uint64_t acquire()
    {
        ++live;
        const std::uint64_t id = takeSlot(freeIds, slots);
        if (id == inUse.size())
            inUse.push_back(1); // a new slot
        else
            inUse[id] = 1;
        return id;
    }

    /// The record `id`; throws etsim::Error when `id` is not in flight.
    Record& at(std::uint64_t id)
    {
        check(id);
        return slots[id];
    }
    const Record& at(std::uint64_t id) const
    {
        check(id);
        return slots[id];
    }
    /// Frees `id` (its record stays in place until the slot is reused); throws etsim::Error
    /// when `id` is not in flight.
    void remove(std::uint64_t id)
    {
        (void)at(id);
        inUse[id] = 0;
        freeIds.push_back(id);
        --live;
    }
    /// Records in flight.
    std::uint64_t size() const { return live; }

private:
    // Inline and cheap: every lookup passes here (several per trace node in the driver).
    void check(std::uint64_t id) const
    {
        if (__builtin_expect(id >= inUse.size() || inUse[id] == 0, 0))
            notInFlight(id);
    }
    [[noreturn]] void notInFlight(std::uint64_t id) const
    {
        throw Error(owner + ": internal: no record in flight has id " + std::to_string(id));
    }

    std::string owner;
    std::deque<Record> slots;
    std::vector<std::uint8_t> inUse; // 1 while in flight (not vector<bool>: a byte is one load)
    std::vector<std::uint64_t> freeIds;
    std::uint64_t live = 0;
};

} // namespace etsim
