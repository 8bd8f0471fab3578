#include "et_driver/PendingNodes.h"

#include "kernel/IdHash.h"

#include <utility>

namespace etsim::et {
namespace {

// Fully scrambled: the table is small and looked up by one id at a time, so keeping nearby
// ids together (as the dependency tracker's home slots do) would only lengthen probe runs.
std::size_t homeOf(std::uint64_t id, std::size_t mask)
{
    return static_cast<std::size_t>(mixId(id)) & mask;
}

} // namespace

PendingNodes::PendingNodes() : table(16, none) {}

void PendingNodes::rehash(std::size_t slotCount)
{
    // The pending slots are the ones the table holds.
    const std::vector<std::uint32_t> old = std::move(table);
    table.assign(slotCount, none);
    for (std::uint32_t slot : old)
        if (slot != none)
            place(slot);
}

void PendingNodes::place(std::uint32_t slot)
{
    const std::size_t mask = table.size() - 1;
    std::size_t at = homeOf(ids[slot], mask);
    while (table[at] != none)
        at = (at + 1) & mask;
    table[at] = slot;
}

std::uint32_t PendingNodes::insert(std::uint64_t id)
{
    std::uint32_t slot = 0;
    if (!freeSlots.empty()) {
        slot = freeSlots.back();
        freeSlots.pop_back();
        ids[slot] = id;
    } else {
        slot = static_cast<std::uint32_t>(nodes.size());
        nodes.emplace_back();
        ids.push_back(id);
    }
    // The load stays at or below a half, so probes stay short.
    if ((count + 1) * 2 > table.size())
        rehash(table.size() * 2);
    place(slot);
    ++count;
    return slot;
}

std::uint32_t PendingNodes::find(std::uint64_t id) const
{
    const std::size_t mask = table.size() - 1;
    for (std::size_t at = homeOf(id, mask);; at = (at + 1) & mask) {
        const std::uint32_t slot = table[at];
        if (slot == none || ids[slot] == id)
            return slot;
    }
}

void PendingNodes::erase(std::uint32_t slot)
{
    const std::size_t mask = table.size() - 1;
    std::size_t hole = homeOf(ids[slot], mask);
    while (table[hole] != slot)
        hole = (hole + 1) & mask;
    // Backward shift: move later entries of the probe run into the hole when their home slot
    // does not lie (cyclically) between the hole and them, so every entry stays reachable.
    for (std::size_t next = (hole + 1) & mask; table[next] != none; next = (next + 1) & mask) {
        const std::size_t home = homeOf(ids[table[next]], mask);
        const bool reachable =
            hole <= next ? (hole < home && home <= next) : (hole < home || home <= next);
        if (reachable)
            continue;
        table[hole] = table[next];
        hole = next;
    }
    table[hole] = none;
    freeSlots.push_back(slot);
    --count;
}

} // namespace etsim::et
