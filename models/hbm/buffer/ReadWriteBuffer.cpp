#include "models/hbm/buffer/ReadWriteBuffer.h"

namespace etsim::hbm {

ReadWriteBuffer::ReadWriteBuffer(std::uint32_t readEntries, std::uint32_t writeEntries)
    : readEntries(readEntries), writeEntries(writeEntries)
{
}

bool ReadWriteBuffer::hasRoom(std::uint32_t /*pc*/, bool /*write*/, std::uint64_t entries) const
{
    return reads + entries <= readEntries && writes + entries <= writeEntries;
}

void ReadWriteBuffer::stored(std::uint32_t /*pc*/, std::uint32_t /*bank*/, bool write)
{
    ++(write ? writes : reads);
}

void ReadWriteBuffer::removed(std::uint32_t /*pc*/, std::uint32_t /*bank*/, bool write)
{
    --(write ? writes : reads);
}

} // namespace etsim::hbm
