#pragma once
// The common part of the list-based replacement policies: an ordered set of the resident tensor
// ids, oldest first, with O(1) insert, remove and move-to-newest. The victim is the oldest one
// that may go; what "oldest" means is the policy's: LRU moves a tensor on every use, FIFO never.

#include "kernel/FlatMap.h"
#include "models/accel/residency/ReplacementPolicyIf.h"

#include <cstdint>
#include <vector>

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
    static constexpr std::uint32_t none = 0xFFFFFFFFU;
    // A doubly linked list in a vector of reused links (a node-based list and map allocated
    // twice per tensor placed), and the link of each id.
    struct Link {
        std::uint64_t id = 0;
        std::uint32_t prev = none;
        std::uint32_t next = none;
    };
    void unlink(std::uint32_t link);
    void append(std::uint32_t link);

    std::vector<Link> links;
    std::vector<std::uint32_t> freeLinks;
    std::uint32_t oldest = none;
    std::uint32_t newest = none;
    FlatMap<std::uint64_t, std::uint32_t> where;
};

} // namespace etsim::accel
