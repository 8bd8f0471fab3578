#pragma once
// The on-chip memory of one accelerator as a residency model (docs/accel.md, On-chip memory):
// which tensors are on chip, by the trace's tensor ids, within `capacity` bytes, evicting by a
// replacement policy. Plain C++; the accelerator asks it, node by node in the order the nodes
// start, what each node's tensors cost in HBM traffic.
//
// Rules, per node:
//   - an input is a hit when an earlier node on this accelerator read or wrote it and it has
//     not been evicted since; otherwise it is read from HBM (a miss) and stays resident;
//   - an output is written on chip and stays resident, dirty: write-back, so it reaches HBM
//     only when it is evicted (a later node pays that write);
//   - a tensor that does not fit beside the node's tensors placed before it (the node's
//     working set exceeds the capacity) is not kept: an input streams from HBM, an output is
//     written straight to HBM;
//   - the node's own tensors are never evicted to make room for each other.
// Dirty tensors still resident when the run ends are not written back (no node pays for them).
// Time is not modelled here; the accelerator streams the bytes this returns through its DMA.

#include "kernel/FlatMap.h"
#include "kernel/NodeInfo.h"
#include "kernel/Stats.h"
#include "models/accel/residency/ReplacementPolicyIf.h"

#include <cstdint>
#include <memory>

namespace etsim::accel {

/// The HBM traffic of one node's tensors.
struct ResidencyTraffic {
    /// Bytes read from HBM (missed inputs).
    std::uint64_t readBytes = 0;
    /// Bytes written to HBM (dirty tensors evicted to make room, outputs that did not fit).
    std::uint64_t writeBytes = 0;
};

class OnChipMemory {
public:
    /// `policy` must not be null. The counters go into `stats`.
    OnChipMemory(std::uint64_t capacity,
                 std::unique_ptr<ReplacementPolicyIf> policy,
                 StatGroup& stats);

    /// A compute node that reads `tensors.inputs` and writes `tensors.outputs`.
    ResidencyTraffic compute(const NodeTensors& tensors);
    /// A MemLoad node: its tensors (inputs and outputs alike) come from HBM and become resident,
    /// clean. Returns the write-backs of the dirty tensors evicted for them (the node's own
    /// bytes are the load itself).
    ResidencyTraffic load(const NodeTensors& tensors);
    /// A MemStore node: its tensors are written to HBM, so resident copies become clean.
    void store(const NodeTensors& tensors);
    /// A compute node of `bytes` that names no tensors: everything comes from HBM.
    void untracked(std::uint64_t bytes);

    bool resident(std::uint64_t id) const { return entries.find(id) != nullptr; }
    bool dirty(std::uint64_t id) const;
    std::uint64_t residentBytes() const { return used; }
    std::uint64_t capacity() const { return size; }
    const ReplacementPolicyIf& policy() const { return *order; }

private:
    struct Entry {
        std::uint64_t bytes = 0;
        bool dirty = false;
        std::uint64_t node = 0; // the last node that placed or used it (pinned while current)
    };
    enum class Use : std::uint8_t { Read, Write, Load };

    void beginNode()
    {
        ++currentNode;
        pinned = 0;
    }
    void use(const TensorUse& tensor, Use how, ResidencyTraffic& traffic);
    // Makes `tensor` resident, evicting others of earlier nodes; false when it does not fit
    // beside the current node's tensors.
    bool place(const TensorUse& tensor, bool dirty, ResidencyTraffic& traffic);
    void evict(std::uint64_t id, ResidencyTraffic& traffic);

    std::uint64_t size;
    std::unique_ptr<ReplacementPolicyIf> order;
    FlatMap<std::uint64_t, Entry> entries;
    std::uint64_t used = 0;
    std::uint64_t pinned = 0; // bytes of the current node's resident tensors
    std::uint64_t currentNode = 0;

    Counter& hits;
    Counter& hitBytes;
    Counter& misses;
    Counter& missBytes;
    Counter& writtenBytes;
    Counter& evictions;
    Counter& evictedBytes;
    Counter& writebackBytes;
    Counter& bypassBytes;
    Counter& untrackedNodes;
    Counter& untrackedBytes;
};

} // namespace etsim::accel
