#pragma once
// When a pseudo-channel must refresh, which banks the refresh blocks and for how long. The
// controller gives a due refresh priority: it stops new activates (and, for an all-bank
// refresh, all accesses) to the blocked banks, precharges them and issues the refresh.

#include "models/hbm/PcTiming.h"

#include <cstdint>
#include <memory>

namespace etsim::hbm {

class RefreshPolicyIf {
public:
    virtual ~RefreshPolicyIf() = default;
    virtual const char* name() const = 0;
    /// Cycle at which the next refresh becomes due.
    virtual std::uint64_t nextDue() const = 0;
    /// RefAb (blocks every bank) or RefPb (blocks bank()).
    virtual Command command() const = 0;
    /// The bank a per-bank refresh targets.
    virtual std::uint32_t bank() const = 0;
    /// Cycles the refresh keeps its banks busy (tRFC or tRFCpb).
    virtual std::uint32_t duration() const = 0;
    /// The due refresh was issued; the next one is due one interval after the previous due
    /// time, so a late refresh does not shift the schedule.
    virtual void issued() = 0;
    /// Moves the first refresh to `cycle` (before any was issued).
    virtual void firstDueAt(std::uint64_t cycle) = 0;
    /// Skips the refreshes that would have finished by `cycle` while the PC was idle (no
    /// events are spent on an idle device); returns how many.
    std::uint64_t skipIdle(std::uint64_t cycle)
    {
        std::uint64_t skipped = 0;
        while (nextDue() + duration() <= cycle) {
            issued();
            ++skipped;
        }
        return skipped;
    }
};

/// The policy of a kind for a PC of `config`; nullptr for RefreshKind::None.
std::unique_ptr<RefreshPolicyIf> makeRefreshPolicy(const HbmConfig& config);

} // namespace etsim::hbm
