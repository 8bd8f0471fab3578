#pragma once
// The nodes a RankDriver has read and not yet issued, by id. The lowered nodes live in a slab
// of slots that are reused as nodes leave, and an open-addressing table (linear probing,
// backward-shift deletion, so no tombstones) maps an id to its slot. Both are sized by the
// reader window, not by the trace, and after warm-up a node costs no allocation: a node-based
// hash map cost an allocation and a pointer chase per node (bench/README.md,
// etsim_bench_driver).

#include "et_driver/NodeLowering.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace etsim::et {

class PendingNodes {
public:
    static constexpr std::uint32_t none = 0xFFFFFFFFU;

    PendingNodes();

    /// Stores `node` under `id`, which must not be pending (the tracker has refused duplicate
    /// ids before); returns its slot.
    std::uint32_t insert(std::uint64_t id, LoweredNode&& node);
    /// The slot of `id`, or none.
    std::uint32_t find(std::uint64_t id) const;
    LoweredNode& at(std::uint32_t slot) { return nodes[slot]; }
    const LoweredNode& at(std::uint32_t slot) const { return nodes[slot]; }
    std::uint64_t idAt(std::uint32_t slot) const { return ids[slot]; }
    /// Removes the node in `slot`; its LoweredNode stays as the caller left it (usually moved
    /// from) until the slot is reused.
    void erase(std::uint32_t slot);
    std::size_t size() const { return count; }

private:
    void rehash(std::size_t slotCount);
    void place(std::uint32_t slot);

    std::vector<LoweredNode> nodes;
    std::vector<std::uint64_t> ids;
    std::vector<std::uint32_t> freeSlots;
    std::vector<std::uint32_t> table; // a power of two of entries; each a slot or none
    std::size_t count = 0;
};

} // namespace etsim::et
