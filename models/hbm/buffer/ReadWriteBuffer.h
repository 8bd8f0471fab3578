#pragma once
// DRAMSys's read/write buffer: read_buffer reads and write_buffer writes over the channel. As
// DRAMSys checks it, a request needs room in both counts, whatever its own direction: a full
// write buffer holds reads back too, until a write's column command frees an entry.

#include "models/hbm/buffer/RequestBufferIf.h"

namespace etsim::hbm {

class ReadWriteBuffer final : public RequestBufferIf {
public:
    ReadWriteBuffer(std::uint32_t readEntries, std::uint32_t writeEntries);
    const char* name() const override { return "read_write"; }
    bool perBank() const override { return true; }
    bool hasRoom(std::uint32_t pc, bool write, std::uint64_t entries) const override;
    void stored(std::uint32_t pc, std::uint32_t bank, bool write) override;
    void removed(std::uint32_t pc, std::uint32_t bank, bool write) override;

private:
    std::uint32_t readEntries;
    std::uint32_t writeEntries;
    std::uint64_t reads = 0;
    std::uint64_t writes = 0;
};

} // namespace etsim::hbm
