#include "models/hbm/refresh/PerBankRefresh.h"

namespace etsim::hbm {

PerBankRefresh::PerBankRefresh(const HbmConfig& config, std::uint32_t pcInChannel)
    : interval(config.timing.refi / config.organisation.banksPerPc())
    , rfcPb(config.timing.rfcPb)
    , banks(config.organisation.banksPerPc())
    , due(firstRefreshDue(config,
                          config.timing.refi / config.organisation.banksPerPc(),
                          pcInChannel,
                          config.organisation.pcsPerChannel))
    , hold(banks, 0)
{
    hold[0] = 1;
}

void PerBankRefresh::evaluate(std::uint64_t now, const RefreshView& /*view*/)
{
    wanted = due <= now;
}

void PerBankRefresh::commands(const PcTiming& device, std::vector<RefreshCommand>& out) const
{
    if (wanted)
        out.push_back(RefreshCommand{
            device.openRow(next) != closedRow ? Command::Pre : Command::RefPb, next});
}

void PerBankRefresh::advance()
{
    due += interval;
    hold[next] = 0;
    next = (next + 1) % banks;
    hold[next] = 1;
}

void PerBankRefresh::issued(Command command, std::uint64_t /*cycle*/)
{
    if (command != Command::RefPb)
        return;
    advance();
    wanted = false;
}

std::uint64_t PerBankRefresh::skipIdle(std::uint64_t cycle)
{
    std::uint64_t skipped = 0;
    while (due + rfcPb <= cycle) {
        advance();
        ++skipped;
    }
    return skipped;
}

} // namespace etsim::hbm
