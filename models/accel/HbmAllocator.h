#pragma once
// Gives tensors a place in HBM. Trace nodes carry no addresses, so the accelerator's DMA asks
// this allocator: a tensor named by an id keeps its region across nodes; an unnamed operand
// gets a fresh region per node (the accelerator is per rank, so per node and rank).
//
// A bump allocator over [base, base + capacity): regions start on `alignment` boundaries and
// are staggered by one channel interleave each, so consecutive regions begin on consecutive
// channels and the HBM model sees accesses spread over channels and rows instead of every
// tensor starting at channel 0, row 0. When the space runs out, allocation wraps to the start
// (old regions are reused, as a caching allocator would recycle freed blocks).

#include "models/accel/AccelConfig.h"

#include <cstdint>
#include <unordered_map>

namespace etsim::accel {

class HbmAllocator {
public:
    /// `config` must be valid.
    explicit HbmAllocator(const MemoryMapConfig& config);

    /// The region of tensor `id`, allocated on first use (or again when it has grown).
    std::uint64_t tensor(std::uint64_t id, std::uint64_t bytes);
    /// A fresh region of `bytes`.
    std::uint64_t fresh(std::uint64_t bytes);
    /// The address `offset` bytes into the region at `regionBase`, wrapping inside the space.
    std::uint64_t address(std::uint64_t regionBase, std::uint64_t offset) const;

    std::uint64_t regions() const { return allocated; }
    /// Bytes of the mapped region, B.
    std::uint64_t capacity() const { return config.capacity.bytes(); }
    std::uint64_t wraps() const { return wrapped; }

private:
    struct Region {
        std::uint64_t base = 0;
        std::uint64_t bytes = 0;
    };

    MemoryMapConfig config;
    std::uint64_t cursor = 0; // offset from config.base
    std::uint64_t allocated = 0;
    std::uint64_t wrapped = 0;
    std::unordered_map<std::uint64_t, Region> named;
};

} // namespace etsim::accel
