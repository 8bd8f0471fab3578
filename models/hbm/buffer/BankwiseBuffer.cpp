#include "models/hbm/buffer/BankwiseBuffer.h"

namespace etsim::hbm {

BankwiseBuffer::BankwiseBuffer(std::uint32_t perBankEntries,
                               std::uint32_t pcs,
                               std::uint32_t banksPerPc)
    : perBankEntries(perBankEntries)
    , banksPerPc(banksPerPc)
    , queued(std::size_t{pcs} * banksPerPc, 0)
{
}

bool BankwiseBuffer::hasRoom(std::uint32_t /*pc*/, bool /*write*/, std::uint64_t entries) const
{
    return !any || queued[last] + entries <= perBankEntries;
}

void BankwiseBuffer::stored(std::uint32_t pc, std::uint32_t bank, bool /*write*/)
{
    last = std::size_t{pc} * banksPerPc + bank;
    any = true;
    ++queued[last];
}

void BankwiseBuffer::removed(std::uint32_t pc, std::uint32_t bank, bool /*write*/)
{
    --queued[std::size_t{pc} * banksPerPc + bank];
}

} // namespace etsim::hbm
