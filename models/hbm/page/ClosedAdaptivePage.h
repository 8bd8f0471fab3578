#pragma once
// Closed adaptive: close the row unless a queued request hits it (DRAMSys ClosedAdaptive).

#include "models/hbm/page/PagePolicyIf.h"

namespace etsim::hbm {

class ClosedAdaptivePage final : public PagePolicyIf {
public:
    const char* name() const override { return "closed_adaptive"; }
    bool closeAfterAccess(bool hitsQueued, bool missesQueued) const override;
};

} // namespace etsim::hbm
