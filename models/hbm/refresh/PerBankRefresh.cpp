#include "models/hbm/refresh/PerBankRefresh.h"

namespace etsim::hbm {

PerBankRefresh::PerBankRefresh(const Timing& timing, std::uint32_t banks)
    : interval(timing.refi / banks), rfcPb(timing.rfcPb), banks(banks), due(timing.refi / banks)
{
}

void PerBankRefresh::issued()
{
    due += interval;
    next = (next + 1) % banks;
}

} // namespace etsim::hbm
