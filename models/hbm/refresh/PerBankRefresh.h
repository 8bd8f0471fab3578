#pragma once
// Per-bank refresh (HBM REFpb): every tREFI / banks one bank, in turn, is precharged and
// refreshed for tRFCpb while the other banks keep serving.

#include "models/hbm/refresh/RefreshPolicyIf.h"

namespace etsim::hbm {

class PerBankRefresh final : public RefreshPolicyIf {
public:
    PerBankRefresh(const Timing& timing, std::uint32_t banks);

    const char* name() const override { return "per_bank"; }
    std::uint64_t nextDue() const override { return due; }
    Command command() const override { return Command::RefPb; }
    std::uint32_t bank() const override { return next; }
    std::uint32_t duration() const override { return rfcPb; }
    void issued() override;
    void firstDueAt(std::uint64_t cycle) override { due = cycle; }

private:
    std::uint64_t interval;
    std::uint32_t rfcPb;
    std::uint32_t banks;
    std::uint32_t next = 0;
    std::uint64_t due;
};

} // namespace etsim::hbm
