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

    /// A slot for `id`, which must not be pending (the tracker refuses duplicate ids; a caller
    /// that learns of one after the insertion erases the slot again). The slot's node is what
    /// was erased from it before (or a default node): the caller lowers the new node into it,
    /// reusing its buffers.
    std::uint32_t insert(std::uint64_t id);
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
