#pragma once
// DRAMSys's "Oldest" command mux: every bank's command takes part, legal now or not (a
// refresh command counts as the oldest request); the best row and the best column command are
// those finishing first (ready + length, a command legal since earlier being ready now), then
// the older request. The device issues the
// winner only if it is legal now.

#include "models/hbm/scheduler/CommandMuxIf.h"

namespace etsim::hbm {

class OldestMux final : public CommandMuxIf {
public:
    const char* name() const override { return "oldest"; }
    void offer(std::uint64_t cycle,
               const std::vector<Candidate>& candidates,
               const SchedulerIf& scheduler,
               std::uint64_t refreshWake,
               std::vector<Candidate>& scratch,
               Offer& out) const override;
};

} // namespace etsim::hbm
