#pragma once
// A read and a write queue per pseudo-channel, of read_queue and write_queue entries: a burst
// enters its PC's queue of its direction while that queue has room, whatever the other PCs
// and the other direction hold.

#include "models/hbm/buffer/RequestBufferIf.h"

#include <vector>

namespace etsim::hbm {

class PerDirectionBuffer final : public RequestBufferIf {
public:
    PerDirectionBuffer(std::uint32_t readQueue, std::uint32_t writeQueue, std::uint32_t pcs);
    const char* name() const override { return "per_direction"; }
    bool perBank() const override { return false; }
    bool hasRoom(std::uint32_t pc, bool write, std::uint64_t entries) const override;
    void stored(std::uint32_t pc, std::uint32_t bank, bool write) override;
    void removed(std::uint32_t pc, std::uint32_t bank, bool write) override;

private:
    std::uint32_t readQueue;
    std::uint32_t writeQueue;
    std::vector<std::uint64_t> queued; // per PC and direction: 2 x pc + write
};

} // namespace etsim::hbm
