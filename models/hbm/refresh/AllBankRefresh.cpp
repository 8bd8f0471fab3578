#include "models/hbm/refresh/AllBankRefresh.h"

#include <algorithm>

namespace etsim::hbm {

AllBankRefresh::AllBankRefresh(const HbmConfig& config, std::uint32_t pcInChannel)
    : schedule(config.timing.refi,
               config.controller.refreshMaxPostponed,
               config.controller.refreshMaxPulledIn,
               firstRefreshDue(
                   config, config.timing.refi, pcInChannel, config.organisation.pcsPerChannel))
    , rfc(config.timing.rfc)
    , banks(config.organisation.banksPerPc())
    , precharges(config.controller.refreshPrecharge == RefreshPrecharge::AllBank)
    , all(banks, 1)
{
}

void AllBankRefresh::evaluate(std::uint64_t now, const RefreshView& view)
{
    wanted = false;
    holding = false;
    if (now < schedule.due())
        return;
    schedule.catchUp(now);
    bool busy = view.total > 0;
    if (!schedule.pulledIn()) {
        if (schedule.forced()) {
            holding = true;
        } else if (busy) {
            schedule.postpone();
            return;
        }
    } else if (busy) {
        schedule.endPullIn();
        return;
    }
    wanted = true;
}

void AllBankRefresh::commands(const PcTiming& device, std::vector<RefreshCommand>& out) const
{
    if (!wanted)
        return;
    bool anyOpen = false;
    for (std::uint32_t b = 0; b < banks && !(precharges && anyOpen); ++b)
        if (device.openRow(b) != closedRow) {
            if (!precharges)
                out.push_back(RefreshCommand{Command::Pre, b});
            anyOpen = true;
        }
    if (precharges && anyOpen)
        out.push_back(RefreshCommand{Command::PreAb, 0});
    if (!anyOpen)
        out.push_back(RefreshCommand{Command::RefAb, 0});
}

void AllBankRefresh::issued(Command command, std::uint64_t cycle)
{
    if (command != Command::RefAb)
        return;
    schedule.refreshed();
    lastEnd = cycle + rfc;
    wanted = false;
    holding = false;
}

std::uint64_t AllBankRefresh::skipIdle(std::uint64_t cycle)
{
    // An idle PC refreshes when each refresh falls due, and a pulled-in one as soon as the
    // previous one has finished.
    std::uint64_t skipped = 0;
    while (true) {
        std::uint64_t at = schedule.pulledIn() ? lastEnd : std::max(schedule.due(), lastEnd);
        if (at + rfc > cycle)
            break;
        schedule.refreshed();
        lastEnd = at + rfc;
        ++skipped;
    }
    return skipped;
}

} // namespace etsim::hbm
