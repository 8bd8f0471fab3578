#pragma once
// Least recently used: the tensor evicted is the one whose last read or write is oldest. The
// default policy: a kernel's output is usually read by the next few kernels and then not again
// (activations), or again only a layer later (weights), which recency captures.

#include "models/accel/residency/EvictionOrder.h"

namespace etsim::accel {

class LruPolicy final : public EvictionOrder {
public:
    const char* name() const override { return "lru"; }
    void accessed(std::uint64_t id) override;
};

} // namespace etsim::accel
