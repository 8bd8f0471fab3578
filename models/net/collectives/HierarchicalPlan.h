#pragma once
// How a collective becomes chunks and phases (ASTRA-sim's system layer, section 3 of
// astra-sim-semantics.md), independent of timing:
//
// Chunks: c = floor(S / k) for k configured chunks; unless the collective is an all-gather,
// a chunk is raised to at least one byte per rank (c = ranks, S = k * c); the collective then
// runs ceil(S / c) independent chunks of c bytes.
//
// Phases over dimensions (dimensions of one member are skipped): with local_bw_aware an
// all-reduce becomes RS(d0), RS(d1), ..., AR(last), AG(second last), ..., AG(d0), the payload
// shrinking by n_d at every reduce-scatter and growing back at every all-gather; any other
// collective (or baseline) runs its own type in every dimension, all-gather in reverse
// dimension order. Each phase uses the algorithm configured for its dimension (the reduce-scatter
// and all-gather phases of a local_bw_aware all-reduce may have their own, all_reduce_phases).

#include "models/net/NetConfig.h"
#include "models/net/collectives/CollectiveAlgorithmIf.h"

#include <memory>
#include <vector>

namespace etsim::net {

/// One phase of a chunk: the dimension it runs in (0 for flat groups), its shape and
/// algorithm, and the index of its first step among the chunk's steps.
struct Phase {
    std::uint32_t dim = 0;
    /// The phase runs over every member of the collective, in rank order, not over the lines
    /// of dimension `dim` (a custom program spanning all dimensions).
    bool flat = false;
    PhaseShape shape;
    const CollectiveAlgorithmIf* algorithm = nullptr;
    std::uint32_t steps = 0;
    std::uint32_t firstStep = 0;
};

struct ChunkSplit {
    std::uint32_t count = 1;
    std::uint64_t bytes = 0;
};

/// Splits `bytes` into chunks as above. Barriers and empty collectives get one empty chunk.
ChunkSplit splitIntoChunks(CollectiveType type,
                           std::uint64_t bytes,
                           std::uint32_t chunks,
                           std::uint32_t totalRanks);

/// A dimension a collective spans: its index and member count.
struct PlanDim {
    std::uint32_t dim = 0;
    std::uint32_t size = 0;
    const CollectiveAlgorithmIf* algorithm = nullptr;
    /// The algorithm of the reduce-scatter and all-gather phases of a local_bw_aware
    /// all-reduce in this dimension; nullptr = `algorithm`.
    const CollectiveAlgorithmIf* scatterGather = nullptr;
    /// Phase::flat for the phases of this entry.
    bool flat = false;
};

/// The phases of one chunk of `chunkBytes` over `dims` (in dimension order); each algorithm
/// checks its phase (throws etsim::Error naming the dimension when it does not fit).
std::vector<Phase> planPhases(CollectiveType type,
                              std::uint64_t chunkBytes,
                              const std::vector<PlanDim>& dims,
                              CollectiveOptimization optimization);

/// One instance of every algorithm, looked up by kind.
class AlgorithmSet {
public:
    AlgorithmSet();
    ~AlgorithmSet();
    AlgorithmSet(const AlgorithmSet&) = delete;
    AlgorithmSet& operator=(const AlgorithmSet&) = delete;

    const CollectiveAlgorithmIf& get(AlgorithmKind kind) const;
    /// The algorithm `kind` names in a list for collectives of type `listType`: in_switch
    /// listed for reduce-scatter or all-gather is the reduce-scatter/all-gather role of
    /// InSwitchAlgorithm, elsewhere the whole all-reduce one.
    const CollectiveAlgorithmIf& get(AlgorithmKind kind, CollectiveType listType) const;

private:
    std::vector<std::unique_ptr<CollectiveAlgorithmIf>> algorithms;
};

} // namespace etsim::net
