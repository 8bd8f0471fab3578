#pragma once
// What a run adds to its timeline beside the models' own slices (docs/report.md, Timeline):
// which ranks are drawn node by node, their slices when only some are, and the utilisation
// counters per rank and per node of ranks. A single-process run (Job.cpp) and each process
// of a partitioned run (partition/PartitionedJob.cpp) share it; the second draws only the
// ranks it owns, which `local` says.

#include "platforms/Job.h"

#include <cstdint>
#include <vector>

namespace etsim {
class Timeline;
}

namespace etsim::platform {

class Platform;

/// Process id of the fabric in the timeline: after the ranks.
std::uint32_t timelineFabricProcess(const PlatformConfig& platform);

/// Per rank, whether TimelineSpec::ranks draws it node by node. Throws etsim::Error naming a
/// rank the platform lacks.
std::vector<bool> drawnRanks(const PlatformConfig& platform, const TimelineSpec& spec);

/// Whether every rank is drawn: then the drivers write their slices themselves (with the
/// dependency arrows), and the fabric's link tracks are on unless TimelineSpec says otherwise.
bool drawsEveryRank(const std::vector<bool>& drawn);

/// With a rank filter the drivers do not write the timeline: names the drawn ranks of
/// `local` and writes a slice for each of their nodes from the platform's records.
void drawRecords(Platform& built,
                 Timeline& timeline,
                 const std::vector<bool>& drawn,
                 const std::vector<bool>& local);

/// The utilisation counters of the drawn ranks of `local`, and of every node of ranks whose
/// ranks are all local (with TimelineSpec::nodeTracks), over [spec.startPs, min(spec.endPs,
/// simulatedPs)); `intervals` holds the nodes of every local rank.
void writeUtilisationTracks(Timeline& timeline,
                            const PlatformConfig& platform,
                            const TimelineSpec& spec,
                            const std::vector<bool>& drawn,
                            const std::vector<bool>& local,
                            const std::vector<std::vector<NodeInterval>>& intervals,
                            std::uint64_t simulatedPs);

} // namespace etsim::platform
