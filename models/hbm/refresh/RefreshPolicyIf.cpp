#include "models/hbm/refresh/RefreshPolicyIf.h"

#include "models/hbm/refresh/AllBankRefresh.h"
#include "models/hbm/refresh/Per2BankRefresh.h"
#include "models/hbm/refresh/PerBankRefresh.h"
#include "models/hbm/refresh/SameBankRefresh.h"

namespace etsim::hbm {

std::uint64_t firstRefreshDue(const HbmConfig& config,
                              std::uint64_t interval,
                              std::uint32_t index,
                              std::uint32_t count)
{
    if (config.controller.refreshStart != RefreshStart::Staggered || count < 2)
        return interval;
    // DRAMSys spreads the refreshes of a channel's ranks (here its PCs) in bit-reversed
    // order so that they never refresh together.
    std::uint32_t bits = 0;
    while ((1U << bits) < count)
        ++bits;
    std::uint32_t reversed = 0;
    for (std::uint32_t b = 0; b < bits; ++b)
        if (index & (1U << b))
            reversed |= 1U << (bits - 1 - b);
    std::uint64_t offset = std::uint64_t{reversed} * interval;
    return interval - offset / count;
}

std::unique_ptr<RefreshPolicyIf> makeRefreshPolicy(const HbmConfig& config,
                                                   std::uint32_t pcInChannel)
{
    switch (config.controller.refresh) {
    case RefreshKind::AllBank:
        return std::make_unique<AllBankRefresh>(config, pcInChannel);
    case RefreshKind::PerBank:
        return std::make_unique<PerBankRefresh>(config, pcInChannel);
    case RefreshKind::Per2Bank:
        return std::make_unique<Per2BankRefresh>(config, pcInChannel);
    case RefreshKind::SameBank:
        return std::make_unique<SameBankRefresh>(config, pcInChannel);
    case RefreshKind::None:
        break;
    }
    return nullptr;
}

} // namespace etsim::hbm
