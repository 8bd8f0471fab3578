#include "models/hbm/buffer/RequestBufferIf.h"

#include "models/hbm/buffer/BankwiseBuffer.h"
#include "models/hbm/buffer/PerDirectionBuffer.h"
#include "models/hbm/buffer/ReadWriteBuffer.h"
#include "models/hbm/buffer/SharedBuffer.h"

namespace etsim::hbm {

std::unique_ptr<RequestBufferIf> makeRequestBuffer(const HbmConfig& config)
{
    const ControllerConfig& c = config.controller;
    switch (c.buffer) {
    case RequestBuffer::Bankwise:
        return std::make_unique<BankwiseBuffer>(
            c.bankBuffer, config.organisation.pcsPerChannel, config.organisation.banksPerPc());
    case RequestBuffer::ReadWrite:
        return std::make_unique<ReadWriteBuffer>(c.readBuffer, c.writeBuffer);
    case RequestBuffer::Shared:
        return std::make_unique<SharedBuffer>(c.sharedBuffer);
    case RequestBuffer::PerDirection:
        break;
    }
    return std::make_unique<PerDirectionBuffer>(
        c.readQueue, c.writeQueue, config.organisation.pcsPerChannel);
}

} // namespace etsim::hbm
