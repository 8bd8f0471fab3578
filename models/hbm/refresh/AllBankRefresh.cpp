#include "models/hbm/refresh/AllBankRefresh.h"

namespace etsim::hbm {

AllBankRefresh::AllBankRefresh(const Timing& timing)
    : interval(timing.refi), rfc(timing.rfc), due(timing.refi)
{
}

} // namespace etsim::hbm
