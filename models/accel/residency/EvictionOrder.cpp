#include "models/accel/residency/EvictionOrder.h"

namespace etsim::accel {

void EvictionOrder::inserted(std::uint64_t id)
{
    auto found = where.find(id);
    if (found != where.end()) {
        order.splice(order.end(), order, found->second);
        return;
    }
    where.emplace(id, order.insert(order.end(), id));
}

void EvictionOrder::moveToNewest(std::uint64_t id)
{
    auto found = where.find(id);
    if (found != where.end())
        order.splice(order.end(), order, found->second);
}

void EvictionOrder::removed(std::uint64_t id)
{
    auto found = where.find(id);
    if (found == where.end())
        return;
    order.erase(found->second);
    where.erase(found);
}

std::optional<std::uint64_t>
EvictionOrder::victim(const std::function<bool(std::uint64_t)>& evictable) const
{
    // The ids `evictable` refuses are the current node's, few and (under LRU) at the newest
    // end, so the walk stops early unless the node's own tensors fill the memory.
    for (std::uint64_t id : order)
        if (evictable(id))
            return id;
    return std::nullopt;
}

} // namespace etsim::accel
