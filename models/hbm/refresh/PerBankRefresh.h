#pragma once
// Per-bank refresh (HBM REFpb): every tREFI / banks one bank, in turn, is precharged and
// refreshed for tRFCpb while the other banks keep serving.

#include "models/hbm/refresh/RefreshPolicyIf.h"

namespace etsim::hbm {

class PerBankRefresh final : public RefreshPolicyIf {
public:
    PerBankRefresh(const HbmConfig& config, std::uint32_t pcInChannel);

    const char* name() const override { return "per_bank"; }
    std::uint64_t nextDue() const override { return due; }
    void evaluate(std::uint64_t now, const RefreshView& view) override;
    void commands(const PcTiming& device, std::vector<RefreshCommand>& out) const override;
    const std::vector<std::uint8_t>* held() const override { return wanted ? &hold : nullptr; }
    bool holdsAll() const override { return false; }
    void issued(Command command, std::uint64_t cycle) override;
    std::uint32_t duration() const override { return rfcPb; }
    std::uint64_t skipIdle(std::uint64_t cycle) override;

private:
    void advance();

    std::uint64_t interval;
    std::uint32_t rfcPb;
    std::uint32_t banks;
    std::uint32_t next = 0;
    std::uint64_t due;
    bool wanted = false;
    std::vector<std::uint8_t> hold; // 1 for `next` only
};

} // namespace etsim::hbm
