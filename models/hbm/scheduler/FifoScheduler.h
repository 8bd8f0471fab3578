#pragma once
// Strict first-come first-served: only the oldest request, read or write, gets commands, so a
// row miss holds up every request behind it. The baseline FR-FCFS is measured against.

#include "models/hbm/scheduler/SchedulerIf.h"

namespace etsim::hbm {

class FifoScheduler final : public SchedulerIf {
public:
    const char* name() const override { return "fifo"; }
    std::size_t window(std::size_t queued) const override { return queued == 0 ? 0 : 1; }
    bool arrivalOrder() const override { return true; }
    std::size_t pick(const std::vector<Candidate>& ready) const override;
};

} // namespace etsim::hbm
