#pragma once
// Closed page: every access precharges its row, so the next one to the bank never conflicts
// but never hits either.

#include "models/hbm/page/PagePolicyIf.h"

namespace etsim::hbm {

class ClosedPage final : public PagePolicyIf {
public:
    const char* name() const override { return "closed"; }
    bool closeAfterAccess(bool hitsQueued, bool missesQueued) const override;
};

} // namespace etsim::hbm
