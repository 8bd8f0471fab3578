#include "models/hbm/scheduler/CommandMuxIf.h"

#include "models/hbm/scheduler/OldestMux.h"
#include "models/hbm/scheduler/SchedulerMux.h"

namespace etsim::hbm {

bool finishesFirst(const Candidate& a, const Candidate& b)
{
    std::uint64_t endA = a.ready + commandLength(a.command);
    std::uint64_t endB = b.ready + commandLength(b.command);
    return endA != endB ? endA < endB : a.sequence < b.sequence;
}

const Candidate& readyFirst(const Candidate& a, const Candidate& b)
{
    if (a.ready != b.ready)
        return a.ready < b.ready ? a : b;
    return a.sequence <= b.sequence ? a : b;
}

std::unique_ptr<CommandMuxIf> makeCommandMux(CommandMux kind)
{
    switch (kind) {
    case CommandMux::Oldest:
        return std::make_unique<OldestMux>();
    case CommandMux::Scheduler:
        break;
    }
    return std::make_unique<SchedulerMux>();
}

} // namespace etsim::hbm
