#pragma once
// Open adaptive: keep the row open unless the queue holds requests for the bank and all of
// them need another row (DRAMSys OpenAdaptive).

#include "models/hbm/page/PagePolicyIf.h"

namespace etsim::hbm {

class OpenAdaptivePage final : public PagePolicyIf {
public:
    const char* name() const override { return "open_adaptive"; }
    bool closeAfterAccess(bool hitsQueued, bool missesQueued) const override;
};

} // namespace etsim::hbm
