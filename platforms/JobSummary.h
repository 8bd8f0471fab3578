#pragma once
// The parts of a run's summary that a partitioned run computes from the shares of its
// processes (platforms/partition/PartitionedJob.cpp) exactly as a single process does
// (Job.cpp): the same inputs in the same order give the same figures, to the last bit.

#include "models/net/CommEngine.h"
#include "platforms/Components.h"
#include "platforms/Job.h"

#include <string>
#include <vector>

namespace etsim::platform {

/// Throws etsim::Error when the trace's rank count is not the platform's.
void checkTraceRanks(std::size_t traceRanks, const PlatformConfig& platform, const JobSpec& job);

/// Per collective type: count, bytes and time, from the finished collectives.
std::vector<CollectiveSummary> summariseCollectives(const std::vector<net::CollectiveRecord>& all);

/// What one rank's accelerator and HBM did, from the stats tree.
struct RankResources {
    double tensorBusy = 0.0;
    double flops = 0.0;
    double hbmBytes = 0.0;
    OnChipSummary onChip;
};
RankResources rankResources(const StatGroup& stats, std::uint32_t rank);

/// Utilisation over the run from every rank's resources (in rank order) and every link.
void summariseResources(ResourceSummary& resources,
                        const PlatformConfig& platform,
                        std::uint64_t simulatedPs,
                        const std::vector<RankResources>& ranks,
                        const std::vector<LinkUsage>& links,
                        const std::string& linksUnavailable);

} // namespace etsim::platform
