#include "models/hbm/buffer/SharedBuffer.h"

namespace etsim::hbm {

SharedBuffer::SharedBuffer(std::uint32_t entries) : capacity(entries) {}

bool SharedBuffer::hasRoom(std::uint32_t /*pc*/, bool /*write*/, std::uint64_t entries) const
{
    return queued + entries <= capacity;
}

void SharedBuffer::stored(std::uint32_t /*pc*/, std::uint32_t /*bank*/, bool /*write*/)
{
    ++queued;
}

void SharedBuffer::removed(std::uint32_t /*pc*/, std::uint32_t /*bank*/, bool /*write*/)
{
    --queued;
}

} // namespace etsim::hbm
