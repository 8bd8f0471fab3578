#pragma once
// When the controller closes a row after a column access: it then issues the access with
// auto-precharge (RDA/WRA) instead of leaving the row open for later hits.

#include "models/hbm/HbmConfig.h"

#include <memory>

namespace etsim::hbm {

class PagePolicyIf {
public:
    virtual ~PagePolicyIf() = default;
    virtual const char* name() const = 0;
    /// Whether the access closes its row, given whether other queued requests hit the same
    /// row of the bank (`hitsQueued`) or need another row of it (`missesQueued`).
    virtual bool closeAfterAccess(bool hitsQueued, bool missesQueued) const = 0;
};

/// The policy of a kind.
std::unique_ptr<PagePolicyIf> makePagePolicy(PagePolicyKind kind);

} // namespace etsim::hbm
