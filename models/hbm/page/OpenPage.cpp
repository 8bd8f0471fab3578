#include "models/hbm/page/OpenPage.h"

namespace etsim::hbm {

bool OpenPage::closeAfterAccess(bool /*hitsQueued*/, bool /*missesQueued*/) const
{
    return false;
}

} // namespace etsim::hbm
