#include "models/hbm/refresh/BankSetRefresh.h"

#include <algorithm>
#include <numeric>

namespace etsim::hbm {

namespace {

std::uint32_t scaled(std::uint32_t intervals, std::size_t sets)
{
    return static_cast<std::uint32_t>(intervals * sets);
}

} // namespace

BankSetRefresh::BankSetRefresh(const HbmConfig& config,
                               std::uint32_t pcInChannel,
                               Command refreshCommand,
                               std::vector<std::vector<std::uint32_t>> bankSets,
                               Command precharge)
    : refreshCommand(refreshCommand)
    , precharge(precharge)
    , sets(std::move(bankSets))
    , schedule(refreshInterval(config.controller.refresh, config.timing, config.organisation),
               scaled(config.controller.refreshMaxPostponed, sets.size()),
               scaled(config.controller.refreshMaxPulledIn, sets.size()),
               firstRefreshDue(
                   config,
                   refreshInterval(config.controller.refresh, config.timing, config.organisation),
                   pcInChannel,
                   config.organisation.pcsPerChannel))
    , rfc(refreshDuration(config.controller.refresh, config.timing))
    , rrefd(config.timing.rrefd)
    , remaining(sets.size())
    , hold(config.organisation.banksPerPc(), 0)
    , setFree(sets.size(), 0)
{
    std::iota(remaining.begin(), remaining.end(), 0U);
}

bool BankSetRefresh::idle(std::uint32_t set, const RefreshView& view) const
{
    return std::all_of(sets[set].begin(), sets[set].end(), [&](std::uint32_t bank) {
        return view.queued[bank] == 0;
    });
}

void BankSetRefresh::evaluate(std::uint64_t now, const RefreshView& view)
{
    wanted = false;
    if (now < schedule.due())
        return;
    schedule.catchUp(now);
    bool forced = !schedule.pulledIn() && schedule.forced();
    if (!sticky) {
        // The first idle set of the round; none idle: the round's first (forced only).
        bool found = false;
        for (std::size_t i = 0; i < remaining.size() && !found; ++i)
            if (view.total == 0 || idle(remaining[i], view)) {
                current = i;
                found = true;
            }
        if (!found) {
            current = 0;
            if (schedule.pulledIn()) {
                schedule.endPullIn();
                return;
            }
            if (!forced) {
                schedule.postpone();
                return;
            }
        }
    }
    wanted = true;
    const std::vector<std::uint32_t>& banks = sets[remaining[current]];
    bool closed = std::all_of(banks.begin(), banks.end(), [&](std::uint32_t bank) {
        return view.device.openRow(bank) == closedRow;
    });
    if (forced && closed && !holding) {
        // From here the set's banks wait for the refresh (DRAMSys blocks their machines).
        holding = true;
        sticky = true;
        for (std::uint32_t bank : banks)
            hold[bank] = 1;
    }
}

void BankSetRefresh::commands(const PcTiming& device, std::vector<RefreshCommand>& out) const
{
    if (!wanted)
        return;
    const std::vector<std::uint32_t>& banks = sets[remaining[current]];
    bool anyOpen = false;
    for (std::uint32_t bank : banks)
        if (device.openRow(bank) != closedRow) {
            if (precharge == Command::Pre)
                out.push_back(RefreshCommand{Command::Pre, bank});
            anyOpen = true;
        }
    if (anyOpen && precharge != Command::Pre)
        out.push_back(RefreshCommand{precharge, banks.front()});
    if (!anyOpen)
        out.push_back(RefreshCommand{refreshCommand, banks.front()});
}

void BankSetRefresh::refreshed(std::uint64_t cycle)
{
    std::uint32_t set = remaining[current];
    setFree[set] = cycle + rfc;
    nextFree = cycle + rrefd;
    for (std::uint32_t bank : sets[set])
        hold[bank] = 0;
    remaining.erase(remaining.begin() + static_cast<std::ptrdiff_t>(current));
    if (remaining.empty()) {
        remaining.resize(sets.size());
        std::iota(remaining.begin(), remaining.end(), 0U);
    }
    current = 0;
    sticky = false;
    holding = false;
    wanted = false;
    schedule.refreshed();
}

void BankSetRefresh::issued(Command command, std::uint64_t cycle)
{
    if (command == refreshCommand)
        refreshed(cycle);
}

std::uint64_t BankSetRefresh::skipIdle(std::uint64_t cycle)
{
    // An idle PC refreshes the round's next set when a refresh falls due and, pulled in, as
    // soon as tRREFD and that set's previous refresh allow.
    std::uint64_t skipped = 0;
    while (true) {
        std::uint32_t set = remaining.front();
        std::uint64_t at = std::max(nextFree, setFree[set]);
        if (!schedule.pulledIn())
            at = std::max(at, schedule.due());
        if (at + rfc > cycle)
            break;
        current = 0;
        refreshed(at);
        ++skipped;
    }
    return skipped;
}

} // namespace etsim::hbm
