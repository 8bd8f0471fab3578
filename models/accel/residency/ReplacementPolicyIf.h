#pragma once
// Which resident tensor the on-chip memory gives up when a new one needs room (docs/accel.md,
// On-chip memory). A policy sees tensors by id only: OnChipMemory keeps their sizes and dirty
// bits, and says which ones may not go (those of the node being placed). Plain C++, one file
// pair per policy: LruPolicy (the default), FifoPolicy.

#include "models/accel/AccelConfig.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

namespace etsim::accel {

class ReplacementPolicyIf {
public:
    virtual ~ReplacementPolicyIf() = default;
    /// The policy's name in reports ("lru").
    virtual const char* name() const = 0;
    /// Tensor `id` became resident.
    virtual void inserted(std::uint64_t id) = 0;
    /// Resident tensor `id` was read or written again.
    virtual void accessed(std::uint64_t id) = 0;
    /// Tensor `id` left the memory.
    virtual void removed(std::uint64_t id) = 0;
    /// The tensor to evict next among those `evictable` accepts; nullopt when it accepts none.
    virtual std::optional<std::uint64_t>
    victim(const std::function<bool(std::uint64_t)>& evictable) const = 0;
};

/// The policy `policy` names; nullptr for SramPolicy::Legacy (no residency model).
std::unique_ptr<ReplacementPolicyIf> makeReplacementPolicy(SramPolicy policy);

} // namespace etsim::accel
