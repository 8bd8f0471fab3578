#pragma once
// Hashing of 64-bit node ids for the driver's open-addressing table (DependencyTracker, for ids
// outside its direct table). Header-only and free of SystemC.

#include <cstddef>
#include <cstdint>

namespace etsim {

/// splitmix64's finaliser: ids are often dense or strided, which plain masking would cluster.
constexpr std::uint64_t mixId(std::uint64_t x)
{
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ULL;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBULL;
    x ^= x >> 31;
    return x;
}

/// Home slot of `id` in a table of mask + 1 (a power of two) slots. The low bits stay in place
/// so that ids close together (traces number nodes in creation order) share cache lines, both
/// in the table and in the lookups of recent dependencies; the rest is scrambled so strided or
/// clustered ids still spread.
constexpr std::size_t idHomeSlot(std::uint64_t id, std::size_t mask)
{
    return static_cast<std::size_t>((mixId(id >> 3) << 3) | (id & 7)) & mask;
}

} // namespace etsim
