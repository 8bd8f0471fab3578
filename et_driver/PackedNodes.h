#pragma once
// Decoded nodes packed one after another into one buffer, and unpacked in the same order.
// TraceReadAhead hands nodes decoded on one thread to the simulation's thread this way: a
// decoded TraceNode spreads over a dozen cache lines (its fields, and the heap blocks of its
// name, dependencies and preserved bytes), all of them cold by the time a run of a thousand
// ranks comes back to the rank, while a packed run of nodes is read front to back, which the
// processor prefetches. Unpacking copies each part into the caller's node, over its buffers.

#include "et_driver/TraceNode.h"

#include <cstddef>
#include <vector>

namespace etsim::et {

class PackedNodes {
public:
    /// Drops every node, keeping the buffer's capacity.
    void clear();
    /// Drops every node and frees the buffer.
    void release();
    /// Bytes the buffer holds (its capacity).
    std::size_t capacity() const { return bytes.capacity(); }
    /// Packs a copy of `node` after the others.
    void append(const TraceNode& node);
    /// Nodes appended since the last clear().
    std::size_t size() const { return count; }
    /// Nodes not yet taken.
    std::size_t left() const { return count - taken; }
    /// The next node into `node`, equal to the one appended; false when none is left.
    bool take(TraceNode& node);

private:
    std::vector<char> bytes;
    std::size_t count = 0;
    std::size_t taken = 0;
    std::size_t readAt = 0;
};

} // namespace etsim::et
