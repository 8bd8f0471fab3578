#include "models/hbm/page/ClosedPage.h"

namespace etsim::hbm {

bool ClosedPage::closeAfterAccess(bool /*hitsQueued*/, bool /*missesQueued*/) const
{
    return true;
}

} // namespace etsim::hbm
