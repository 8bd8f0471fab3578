#pragma once
// All-bank refresh: every tREFI the whole PC is precharged and refreshed for tRFC.

#include "models/hbm/refresh/RefreshPolicyIf.h"

namespace etsim::hbm {

class AllBankRefresh final : public RefreshPolicyIf {
public:
    explicit AllBankRefresh(const Timing& timing);

    const char* name() const override { return "all_bank"; }
    std::uint64_t nextDue() const override { return due; }
    Command command() const override { return Command::RefAb; }
    std::uint32_t bank() const override { return 0; }
    std::uint32_t duration() const override { return rfc; }
    void issued() override { due += interval; }
    void firstDueAt(std::uint64_t cycle) override { due = cycle; }

private:
    std::uint64_t interval;
    std::uint32_t rfc;
    std::uint64_t due;
};

} // namespace etsim::hbm
