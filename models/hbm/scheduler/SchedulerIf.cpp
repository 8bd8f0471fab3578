#include "models/hbm/scheduler/SchedulerIf.h"

#include "models/hbm/scheduler/FifoScheduler.h"
#include "models/hbm/scheduler/FrFcfsScheduler.h"

namespace etsim::hbm {

std::unique_ptr<SchedulerIf> makeScheduler(SchedulerKind kind)
{
    switch (kind) {
    case SchedulerKind::Fifo:
        return std::make_unique<FifoScheduler>();
    case SchedulerKind::FrFcfs:
        break;
    }
    return std::make_unique<FrFcfsScheduler>();
}

} // namespace etsim::hbm
