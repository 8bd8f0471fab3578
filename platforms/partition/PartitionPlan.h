#pragma once
// Which ranks each process of a partitioned run owns, and the lookahead the processes may use
// to synchronise conservatively (docs/partitioned-runs.md). Plain C++: the plan is made, and
// printed by `etsim run --explain-partition`, in builds with and without MPI.
//
// A message between ranks of two partitions crosses at least one link of a dimension that
// the split cuts (a dimension along whose lines the owner changes), so it arrives no earlier
// than that dimension's route latency plus the per-message delay after it left. The smallest
// such figure over the cut dimensions is the lookahead: no process can affect another sooner.
// The default split cuts only the outermost dimensions (whole slices of the inner ones, e.g.
// whole nodes of an HGX cluster), which are usually the slowest links and so give the largest
// lookahead.

#include "platforms/PlatformConfig.h"

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace etsim::platform {

/// What `--partitions` and `--partition-by` ask for.
struct PartitionRequest {
    /// Processes the ranks are split over (>= 1).
    std::uint32_t partitions = 1;
    /// auto (the outermost dimensions), nodes (whole nodes of ranks_per_node), ranks
    /// (contiguous blocks of ranks) or dim:N (ranges of dimension N's coordinate).
    std::string by = "auto";
};

/// The split of a platform's ranks over processes.
struct PartitionPlan {
    std::uint32_t partitions = 1;
    std::uint32_t ranks = 0;
    /// The split in words, e.g. "by the outermost dimension (dimension 2)".
    std::string scheme;
    /// Partition of every rank.
    std::vector<std::uint32_t> owner;
    /// Dimensions along whose lines the owner changes (a fat tree counts as dimension 0).
    std::vector<std::uint32_t> cutDims;
    /// Earliest a message can arrive in another partition after it left, ps; 0 with one
    /// partition (nothing crosses).
    std::uint64_t lookaheadPs = 0;
    /// How the lookahead was found, e.g. "2 links of dimension 2 (switch) at 2 us".
    std::string lookaheadReason;

    std::uint32_t partitionOf(std::uint32_t rank) const { return owner.at(rank); }
    /// The ranks of `partition`, ascending.
    std::vector<std::uint32_t> ranksOf(std::uint32_t partition) const;
};

/// Makes the plan. Throws etsim::Error naming the option and the fix for a partition count
/// of 0 or above the rank count, an unknown or impossible --partition-by, or a cut whose
/// links have no latency (a lookahead of 0 cannot synchronise).
PartitionPlan planPartitions(const PlatformConfig& config, const PartitionRequest& request);

/// Why `--partitions K` cannot run in this build (`mpiBuilt`: etsim was built with MPI), or
/// nullopt: a build without MPI runs one process only (K <= 1).
std::optional<std::string> partitionsRefusal(std::uint32_t partitions, bool mpiBuilt);

/// Ascending ranks as ranges: "0-255,512-767".
std::string formatRankRanges(const std::vector<std::uint32_t>& ranks);

/// The plan for people (`etsim run --explain-partition`): the split, every partition's
/// ranks, the cut dimensions and the lookahead.
void writePartitionPlan(std::ostream& out, const PartitionPlan& plan);

} // namespace etsim::platform
