#include "models/accel/residency/EvictionOrder.h"

#include "kernel/FreeSlots.h"

namespace etsim::accel {

void EvictionOrder::unlink(std::uint32_t link)
{
    const Link& at = links[link];
    (at.prev == none ? oldest : links[at.prev].next) = at.next;
    (at.next == none ? newest : links[at.next].prev) = at.prev;
}

void EvictionOrder::append(std::uint32_t link)
{
    links[link].prev = newest;
    links[link].next = none;
    (newest == none ? oldest : links[newest].next) = link;
    newest = link;
}

void EvictionOrder::inserted(std::uint64_t id)
{
    if (const std::uint32_t* found = where.find(id)) {
        unlink(*found);
        append(*found);
        return;
    }
    const std::uint32_t link = takeSlot(freeLinks, links);
    links[link].id = id;
    append(link);
    where.set(id, link);
}

void EvictionOrder::moveToNewest(std::uint64_t id)
{
    if (const std::uint32_t* found = where.find(id)) {
        unlink(*found);
        append(*found);
    }
}

void EvictionOrder::removed(std::uint64_t id)
{
    const std::uint32_t* found = where.find(id);
    if (found == nullptr)
        return;
    const std::uint32_t link = *found;
    unlink(link);
    freeLinks.push_back(link);
    where.erase(id);
}

std::optional<std::uint64_t>
EvictionOrder::victim(const std::function<bool(std::uint64_t)>& evictable) const
{
    // The ids `evictable` refuses are the current node's, few and (under LRU) at the newest
    // end, so the walk stops early unless the node's own tensors fill the memory.
    for (std::uint32_t link = oldest; link != none; link = links[link].next)
        if (evictable(links[link].id))
            return links[link].id;
    return std::nullopt;
}

} // namespace etsim::accel
