#include "models/accel/residency/OnChipMemory.h"

namespace etsim::accel {

OnChipMemory::OnChipMemory(std::uint64_t capacity,
                           std::unique_ptr<ReplacementPolicyIf> policy,
                           StatGroup& stats)
    : size(capacity)
    , order(std::move(policy))
    , hits(stats.addCounter("hits", "", "input tensors found on chip"))
    , hitBytes(stats.addCounter("hit_bytes", "B", "bytes of input tensors found on chip"))
    , misses(stats.addCounter("misses", "", "input tensors read from HBM"))
    , missBytes(stats.addCounter("miss_bytes", "B", "bytes of input tensors read from HBM"))
    , writtenBytes(
          stats.addCounter("written_bytes", "B", "bytes of output tensors written on chip"))
    , evictions(stats.addCounter("evictions", "", "tensors evicted to make room"))
    , evictedBytes(stats.addCounter("evicted_bytes", "B", "bytes of tensors evicted"))
    , writebackBytes(stats.addCounter(
          "writeback_bytes", "B", "bytes of dirty tensors written back to HBM on eviction"))
    , bypassBytes(stats.addCounter("bypass_bytes",
                                   "B",
                                   "bytes of tensors that did not fit beside their node's other "
                                   "tensors and went straight between HBM and the units"))
    , untrackedNodes(stats.addCounter(
          "untracked_nodes", "", "compute nodes naming no tensors (all their bytes from HBM)"))
    , untrackedBytes(
          stats.addCounter("untracked_bytes", "B", "bytes of compute nodes naming no tensors"))
{
    stats.addFormula("resident_bytes", "B", "bytes on chip at the end of the window", [this](auto) {
        return static_cast<double>(used);
    });
}

bool OnChipMemory::dirty(std::uint64_t id) const
{
    const Entry* found = entries.find(id);
    return found != nullptr && found->dirty;
}

ResidencyTraffic OnChipMemory::compute(const NodeTensors& tensors)
{
    beginNode();
    ResidencyTraffic traffic;
    for (const TensorUse& tensor : tensors.inputs)
        use(tensor, Use::Read, traffic);
    for (const TensorUse& tensor : tensors.outputs)
        use(tensor, Use::Write, traffic);
    return traffic;
}

ResidencyTraffic OnChipMemory::load(const NodeTensors& tensors)
{
    beginNode();
    ResidencyTraffic traffic;
    for (const auto* list : {&tensors.inputs, &tensors.outputs})
        for (const TensorUse& tensor : *list)
            use(tensor, Use::Load, traffic);
    return traffic;
}

void OnChipMemory::store(const NodeTensors& tensors)
{
    for (const auto* list : {&tensors.inputs, &tensors.outputs})
        for (const TensorUse& tensor : *list) {
            if (Entry* found = entries.find(tensor.id))
                found->dirty = false;
        }
}

void OnChipMemory::untracked(std::uint64_t bytes)
{
    ++untrackedNodes;
    untrackedBytes += bytes;
}

void OnChipMemory::use(const TensorUse& tensor, Use how, ResidencyTraffic& traffic)
{
    Entry* found = entries.find(tensor.id);
    if (found != nullptr && found->bytes >= tensor.bytes) {
        Entry& entry = *found;
        if (how == Use::Read) {
            ++hits;
            hitBytes += tensor.bytes;
        }
        if (how == Use::Write) {
            entry.dirty = true;
            writtenBytes += tensor.bytes;
        }
        if (entry.node != currentNode) {
            entry.node = currentNode;
            pinned += entry.bytes;
        }
        order->accessed(tensor.id);
        return;
    }
    // A tensor that has grown since it was placed (a trace reusing an id for a larger tensor)
    // is placed again whole.
    if (found != nullptr)
        evict(tensor.id, traffic);
    if (how == Use::Read) {
        ++misses;
        missBytes += tensor.bytes;
        traffic.readBytes += tensor.bytes;
    }
    if (place(tensor, how == Use::Write, traffic)) {
        if (how == Use::Write)
            writtenBytes += tensor.bytes;
        return;
    }
    bypassBytes += tensor.bytes;
    if (how == Use::Write)
        traffic.writeBytes += tensor.bytes;
}

bool OnChipMemory::place(const TensorUse& tensor, bool dirty, ResidencyTraffic& traffic)
{
    if (tensor.bytes > size - pinned)
        return false;
    // What is not pinned is evictable, and it is at least what the tensor lacks, so this ends.
    while (size - used < tensor.bytes) {
        std::optional<std::uint64_t> victim = order->victim(
            [this](std::uint64_t id) { return entries.find(id)->node != currentNode; });
        if (!victim)
            return false; // unreachable while `pinned` is right; keeps the loop bounded
        evict(*victim, traffic);
    }
    entries.set(tensor.id, Entry{tensor.bytes, dirty, currentNode});
    used += tensor.bytes;
    pinned += tensor.bytes;
    order->inserted(tensor.id);
    return true;
}

void OnChipMemory::evict(std::uint64_t id, ResidencyTraffic& traffic)
{
    const Entry entry = *entries.find(id);
    entries.erase(id);
    order->removed(id);
    used -= entry.bytes;
    if (entry.node == currentNode)
        pinned -= entry.bytes;
    ++evictions;
    evictedBytes += entry.bytes;
    if (entry.dirty) {
        writebackBytes += entry.bytes;
        traffic.writeBytes += entry.bytes;
    }
}

} // namespace etsim::accel
