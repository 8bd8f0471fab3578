#include "models/hbm/refresh/RefreshPolicyIf.h"

#include "models/hbm/refresh/AllBankRefresh.h"
#include "models/hbm/refresh/PerBankRefresh.h"

namespace etsim::hbm {

std::unique_ptr<RefreshPolicyIf> makeRefreshPolicy(const HbmConfig& config)
{
    switch (config.controller.refresh) {
    case RefreshKind::AllBank:
        return std::make_unique<AllBankRefresh>(config.timing);
    case RefreshKind::PerBank:
        return std::make_unique<PerBankRefresh>(config.timing, config.organisation.banksPerPc());
    case RefreshKind::None:
        break;
    }
    return nullptr;
}

} // namespace etsim::hbm
