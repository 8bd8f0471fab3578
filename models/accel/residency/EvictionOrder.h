#pragma once
// The common part of the list-based replacement policies: an ordered set of the resident tensor
// ids, oldest first, with O(1) insert, remove and move-to-newest. The victim is the oldest one
// that may go; what "oldest" means is the policy's: LRU moves a tensor on every use, FIFO never.

#include "models/accel/residency/ReplacementPolicyIf.h"

#include <cstdint>
#include <list>
#include <unordered_map>

namespace etsim::accel {

class EvictionOrder : public ReplacementPolicyIf {
public:
    void inserted(std::uint64_t id) override;
    void removed(std::uint64_t id) override;
    std::optional<std::uint64_t>
    victim(const std::function<bool(std::uint64_t)>& evictable) const override;

protected:
    /// Moves `id` to the newest place; nothing when absent.
    void moveToNewest(std::uint64_t id);

private:
    std::list<std::uint64_t> order; // front: oldest
    std::unordered_map<std::uint64_t, std::list<std::uint64_t>::iterator> where;
};

} // namespace etsim::accel
