#pragma once
// First-ready, first-come first-served: among the commands legal now, column accesses to open
// rows first, then the oldest request. Looks at the whole queue and batches writes.

#include "models/hbm/scheduler/SchedulerIf.h"

namespace etsim::hbm {

class FrFcfsScheduler final : public SchedulerIf {
public:
    const char* name() const override { return "fr_fcfs"; }
    std::size_t window(std::size_t queued) const override { return queued; }
    bool arrivalOrder() const override { return false; }
    std::size_t pick(const std::vector<Candidate>& ready) const override;
};

} // namespace etsim::hbm
