#include "models/hbm/page/PagePolicyIf.h"

#include "models/hbm/page/ClosedAdaptivePage.h"
#include "models/hbm/page/ClosedPage.h"
#include "models/hbm/page/OpenAdaptivePage.h"
#include "models/hbm/page/OpenPage.h"

namespace etsim::hbm {

std::unique_ptr<PagePolicyIf> makePagePolicy(PagePolicyKind kind)
{
    switch (kind) {
    case PagePolicyKind::Closed:
        return std::make_unique<ClosedPage>();
    case PagePolicyKind::OpenAdaptive:
        return std::make_unique<OpenAdaptivePage>();
    case PagePolicyKind::ClosedAdaptive:
        return std::make_unique<ClosedAdaptivePage>();
    case PagePolicyKind::Open:
        break;
    }
    return std::make_unique<OpenPage>();
}

} // namespace etsim::hbm
