#pragma once
// The scheduler decides: a refresh command legal now goes first and alone; otherwise the
// scheduler picks among the request commands legal now (row hits first for fr_fcfs).

#include "models/hbm/scheduler/CommandMuxIf.h"

namespace etsim::hbm {

class SchedulerMux final : public CommandMuxIf {
public:
    const char* name() const override { return "scheduler"; }
    void offer(std::uint64_t cycle,
               const std::vector<Candidate>& candidates,
               const SchedulerIf& scheduler,
               std::uint64_t refreshWake,
               std::vector<Candidate>& scratch,
               Offer& out) const override;
};

} // namespace etsim::hbm
