#pragma once
// Refresh of one set of banks at a time (per-bank, per-2-bank, same-bank), as DRAMSys's
// per-bank refresh managers do it. The sets take turns: each due refresh goes to the first
// set, in the order not yet refreshed this round, whose banks have no requests, else (when
// it is forced) to the first set of the round. A set's open rows close with one PRE each, or
// with one PRESB for the whole set where the policy has it, then the refresh issues; a forced
// refresh holds its banks' requests back from the moment its banks are closed until it issues.
// Postponing (every set busy) and pulling in (some set idle) follow RefreshSchedule, counted in
// commands of this policy: the configured limits, counted in all-bank intervals, times the sets per
// PC.

#include "models/hbm/refresh/RefreshPolicyIf.h"
#include "models/hbm/refresh/RefreshSchedule.h"

namespace etsim::hbm {

class BankSetRefresh : public RefreshPolicyIf {
public:
    std::uint64_t nextDue() const override { return schedule.due(); }
    void evaluate(std::uint64_t now, const RefreshView& view) override;
    void commands(const PcTiming& device, std::vector<RefreshCommand>& out) const override;
    const std::vector<std::uint8_t>* held() const override { return holding ? &hold : nullptr; }
    bool holdsAll() const override { return false; }
    void issued(Command command, std::uint64_t cycle) override;
    std::uint32_t duration() const override { return rfc; }
    std::uint64_t skipIdle(std::uint64_t cycle) override;

protected:
    /// `sets[i]`: the banks of set i, the first one naming it in the refresh command (and in
    /// `precharge` when that is a set command); `precharge`: Pre (one per open bank) or PreSb
    /// (one for the set when any of its banks is open).
    BankSetRefresh(const HbmConfig& config,
                   std::uint32_t pcInChannel,
                   Command refreshCommand,
                   std::vector<std::vector<std::uint32_t>> sets,
                   Command precharge = Command::Pre);

private:
    bool idle(std::uint32_t set, const RefreshView& view) const;
    void refreshed(std::uint64_t cycle);

    Command refreshCommand;
    Command precharge;
    std::vector<std::vector<std::uint32_t>> sets;
    RefreshSchedule schedule;
    std::uint32_t rfc;
    std::uint32_t rrefd;
    std::vector<std::uint32_t> remaining; // sets not refreshed this round, in order
    std::size_t current = 0;              // index into `remaining` of the chosen set
    bool sticky = false;                  // a forced refresh keeps its set until it issues
    bool wanted = false;
    bool holding = false;
    std::vector<std::uint8_t> hold;     // per bank: held by the chosen set
    std::uint64_t nextFree = 0;         // first cycle the next refresh may issue (tRREFD)
    std::vector<std::uint64_t> setFree; // per set: when its last refresh ends
};

} // namespace etsim::hbm
