#pragma once
// DRAMSys's bank-wise buffer: bank_buffer entries per bank, but the room it checks is that of
// the bank it stored the last request for, not that of the arriving request's bank. A burst
// of requests to one bank therefore stops the channel's front end for every bank until that
// bank drains (head-of-line admission).

#include "models/hbm/buffer/RequestBufferIf.h"

#include <vector>

namespace etsim::hbm {

class BankwiseBuffer final : public RequestBufferIf {
public:
    BankwiseBuffer(std::uint32_t perBankEntries, std::uint32_t pcs, std::uint32_t banksPerPc);
    const char* name() const override { return "bankwise"; }
    bool perBank() const override { return true; }
    bool hasRoom(std::uint32_t pc, bool write, std::uint64_t entries) const override;
    void stored(std::uint32_t pc, std::uint32_t bank, bool write) override;
    void removed(std::uint32_t pc, std::uint32_t bank, bool write) override;

private:
    std::uint32_t perBankEntries;
    std::uint32_t banksPerPc;
    std::vector<std::uint64_t> queued; // per bank of the channel: pc x banksPerPc + bank
    std::size_t last = 0;              // the bank stored last
    bool any = false;                  // whether anything was stored yet
};

} // namespace etsim::hbm
