#include "models/hbm/page/OpenAdaptivePage.h"

namespace etsim::hbm {

bool OpenAdaptivePage::closeAfterAccess(bool hitsQueued, bool missesQueued) const
{
    return missesQueued && !hitsQueued;
}

} // namespace etsim::hbm
