#pragma once
// `etsim run --partitions K` under `mpirun -n K` (docs/partitioned-runs.md): this process's
// part of the run and, on partition 0, the merged report. Built only with MPI.

#include "apps/ExitCode.h"
#include "platforms/Job.h"
#include "platforms/PlatformConfig.h"
#include "platforms/partition/PartitionPlan.h"

#include <chrono>
#include <string>
#include <vector>

namespace etsim::apps {

struct PartitionRunOptions {
    platform::PartitionRequest request;
    std::chrono::milliseconds timeout{60000};
    std::string report;
    bool quiet = false;
};

ExitCode runPartitioned(const PartitionRunOptions& options,
                        const platform::PlatformConfig& config,
                        const platform::JobSpec& job,
                        const platform::JobOptions& jobOptions,
                        const std::vector<std::string>& commandLine);

} // namespace etsim::apps
