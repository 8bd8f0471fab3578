#include "models/accel/HbmAllocator.h"

namespace etsim::accel {

HbmAllocator::HbmAllocator(const MemoryMapConfig& config) : config(config) {}

std::uint64_t HbmAllocator::fresh(std::uint64_t bytes)
{
    const std::uint64_t capacity = config.capacity.bytes();
    const std::uint64_t alignment = config.alignment.bytes();
    const std::uint64_t stagger = (allocated % config.channels) * config.interleave.bytes();
    std::uint64_t start = (cursor + alignment - 1) / alignment * alignment + stagger;
    if (start + bytes > capacity) {
        // Wrap: reuse the space from the start; a region larger than the space wraps inside it
        // (address() folds its offsets).
        ++wrapped;
        start = stagger;
    }
    cursor = start + bytes;
    if (cursor > capacity)
        cursor = capacity;
    ++allocated;
    return config.base + start;
}

std::uint64_t HbmAllocator::tensor(std::uint64_t id, std::uint64_t bytes)
{
    auto found = named.find(id);
    if (found != named.end() && found->second.bytes >= bytes)
        return found->second.base;
    std::uint64_t base = fresh(bytes);
    named[id] = Region{base, bytes};
    return base;
}

std::uint64_t HbmAllocator::address(std::uint64_t regionBase, std::uint64_t offset) const
{
    return config.base + (regionBase - config.base + offset) % config.capacity.bytes();
}

} // namespace etsim::accel
