#pragma once
// First in, first out: the tensor evicted is the one that became resident first, however often
// it was used since. A baseline against LRU (what a staging buffer without reuse tracking would
// keep).

#include "models/accel/residency/EvictionOrder.h"

namespace etsim::accel {

class FifoPolicy final : public EvictionOrder {
public:
    const char* name() const override { return "fifo"; }
    void accessed(std::uint64_t id) override;
};

} // namespace etsim::accel
