#pragma once
// A job run by several processes, each simulating the ranks a PartitionPlan gives it
// (docs/partitioned-runs.md): its drivers, accelerators, HBM and its share of the fabric.
// Messages to ranks of other processes leave through the fabric's partition link with their
// arrival time (astra_aware: at the first link another process times); PartitionSync decides
// how far each process may run. At the end partition 0 merges the processes' shares into one
// RunReport, the same as the single-process run's for the analytical and astra fidelities.

#include "platforms/Job.h"
#include "platforms/partition/PartitionPlan.h"
#include "platforms/partition/PartitionTransport.h"

namespace etsim::platform {

/// Runs this process's part of the job. Partition 0 returns the merged report; the others
/// return the report of their own part (outcome, problem, their ranks), which is for exit
/// codes, not for writing. Partition 0 writes the timeline, with every process's ranks
/// (PartitionTimeline). Throws etsim::Error for inputs that cannot run partitioned (a
/// co-simulated fabric, node tracks of a node split between processes, a plan for another
/// number of processes) and
/// PartitionFailure when another process dies, stalls or breaks the protocol.
RunReport runPartitionedJob(const PlatformConfig& platform,
                            const JobSpec& job,
                            const JobOptions& options,
                            const PartitionPlan& plan,
                            PartitionTransport& transport);

} // namespace etsim::platform
