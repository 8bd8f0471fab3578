#pragma once
// All-bank refresh (REFab): once per tREFI the whole PC is closed and refreshed for tRFC.
// A forced refresh holds every request back; the open rows close with one PRE each or one
// PREA (refresh_precharge). Postponing and pulling in follow RefreshSchedule, counted in
// all-bank refreshes; a refresh is postponed only while some bank has requests.

#include "models/hbm/refresh/RefreshPolicyIf.h"
#include "models/hbm/refresh/RefreshSchedule.h"

namespace etsim::hbm {

class AllBankRefresh final : public RefreshPolicyIf {
public:
    AllBankRefresh(const HbmConfig& config, std::uint32_t pcInChannel);

    const char* name() const override { return "all_bank"; }
    std::uint64_t nextDue() const override { return schedule.due(); }
    void evaluate(std::uint64_t now, const RefreshView& view) override;
    void commands(const PcTiming& device, std::vector<RefreshCommand>& out) const override;
    const std::vector<std::uint8_t>* held() const override { return holding ? &all : nullptr; }
    bool holdsAll() const override { return true; }
    void issued(Command command, std::uint64_t cycle) override;
    std::uint32_t duration() const override { return rfc; }
    std::uint64_t skipIdle(std::uint64_t cycle) override;

private:
    RefreshSchedule schedule;
    std::uint32_t rfc;
    std::uint32_t banks;
    bool precharges; // one PREA instead of one PRE per open bank
    std::vector<std::uint8_t> all;
    bool wanted = false;
    bool holding = false;
    std::uint64_t lastEnd = 0; // when the last refresh lets the next one issue
};

} // namespace etsim::hbm
