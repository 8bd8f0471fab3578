#pragma once
// Open page: rows stay open until a request for another row needs the bank.

#include "models/hbm/page/PagePolicyIf.h"

namespace etsim::hbm {

class OpenPage final : public PagePolicyIf {
public:
    const char* name() const override { return "open"; }
    bool closeAfterAccess(bool hitsQueued, bool missesQueued) const override;
};

} // namespace etsim::hbm
