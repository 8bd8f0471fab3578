#pragma once
// DRAMSys's shared buffer: shared_buffer requests over the channel, reads and writes, any bank.

#include "models/hbm/buffer/RequestBufferIf.h"

namespace etsim::hbm {

class SharedBuffer final : public RequestBufferIf {
public:
    explicit SharedBuffer(std::uint32_t entries);
    const char* name() const override { return "shared"; }
    bool perBank() const override { return true; }
    bool hasRoom(std::uint32_t pc, bool write, std::uint64_t entries) const override;
    void stored(std::uint32_t pc, std::uint32_t bank, bool write) override;
    void removed(std::uint32_t pc, std::uint32_t bank, bool write) override;

private:
    std::uint32_t capacity;
    std::uint64_t queued = 0;
};

} // namespace etsim::hbm
