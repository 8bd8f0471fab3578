#include "models/hbm/buffer/PerDirectionBuffer.h"

namespace etsim::hbm {

PerDirectionBuffer::PerDirectionBuffer(std::uint32_t readQueue,
                                       std::uint32_t writeQueue,
                                       std::uint32_t pcs)
    : readQueue(readQueue), writeQueue(writeQueue), queued(2 * std::size_t{pcs}, 0)
{
}

bool PerDirectionBuffer::hasRoom(std::uint32_t pc, bool write, std::uint64_t entries) const
{
    return queued[2 * pc + write] + entries <= (write ? writeQueue : readQueue);
}

void PerDirectionBuffer::stored(std::uint32_t pc, std::uint32_t /*bank*/, bool write)
{
    ++queued[2 * pc + write];
}

void PerDirectionBuffer::removed(std::uint32_t pc, std::uint32_t /*bank*/, bool write)
{
    --queued[2 * pc + write];
}

} // namespace etsim::hbm
