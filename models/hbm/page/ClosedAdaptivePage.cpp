#include "models/hbm/page/ClosedAdaptivePage.h"

namespace etsim::hbm {

bool ClosedAdaptivePage::closeAfterAccess(bool hitsQueued, bool /*missesQueued*/) const
{
    return !hitsQueued;
}

} // namespace etsim::hbm
