#pragma once
// The policy that picks which queued request of a pseudo-channel gets the next command.
// The controller lists, for the requests the policy looks at, the command each needs next and
// the cycle it becomes legal; the policy picks among those legal now. One file pair per policy.

#include "models/hbm/PcTiming.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace etsim::hbm {

/// One request's next command.
struct Candidate {
    std::uint32_t slot = 0; ///< index of the request in its queue
    std::uint32_t bank = 0; ///< PcTiming bank index
    bool write = false;     ///< the request is in the write queue
    Command command = Command::Act;
    std::uint64_t ready = 0;    ///< first cycle the command is legal
    std::uint64_t sequence = 0; ///< arrival order: lower is older
    bool rowHit = false;        ///< the command is a column access to an open row
};

class SchedulerIf {
public:
    virtual ~SchedulerIf() = default;
    /// The name used in configs ("fr_fcfs").
    virtual const char* name() const = 0;
    /// How many requests, from the oldest, the policy considers when `queued` wait.
    virtual std::size_t window(std::size_t queued) const = 0;
    /// True: reads and writes are served in arrival order from one logical queue. False: the
    /// controller batches writes between its high and low watermarks.
    virtual bool arrivalOrder() const = 0;
    /// Index into `ready` (all legal now, never empty) of the candidate to issue.
    virtual std::size_t pick(const std::vector<Candidate>& ready) const = 0;
};

/// The scheduler of a kind.
std::unique_ptr<SchedulerIf> makeScheduler(SchedulerKind kind);

} // namespace etsim::hbm
