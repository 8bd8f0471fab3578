#pragma once
// How many chunks a collective of several phases runs as (`collectives.pipeline_depth: auto`,
// docs/network.md "Pipeline depth").
//
// The chunks of a collective are its pipeline: chunk c may run its second phase while chunk
// c + 1 runs its first. With K chunks the phases overlap except for a fill and a drain of
// about one chunk's work in the phases that are not the bottleneck, so more chunks bring the
// collective closer to its busiest dimension's time. But every chunk runs every step of its
// phase as its own messages, and a dimension runs only `active_chunks` chunks at once, so
// each further round of chunks pays the phase's per-step latencies again. A collective
// library picks its pipeline (NCCL: fixed-size slices through a ring of step buffers) so that
// neither cost dominates; `auto` does the same with the model's own numbers, estimating for
// K = chunks, 2 chunks, 4 chunks, ... (up to 16 times `chunks`):
//
//   T(K) = max over dimensions d of  sum over the phases i on d of (W_i + ceil(K / a) L_i)
//          + (sum over all phases of W_i - the busiest dimension's sum of W_i) / K
//
// where W_i is phase i's bandwidth time for the whole collective (what one member sends in
// it, over its dimension's effective bandwidth), L_i its latency per chunk (steps times the
// route, NIC, step latency and endpoint delay), and a = active_chunks; and takes the K of the
// smallest T(K), the smallest K on a tie. A collective of one phase keeps `chunks`: its fill
// is nothing and deeper pipelines only add latency. The estimate only chooses K; the run
// then times those chunks message by message like any other.

#include <cstdint>
#include <vector>

namespace etsim::net {

/// One phase of a collective as the depth choice sees it.
struct PhaseCost {
    /// The dimension the phase runs in.
    std::uint32_t dim = 0;
    /// Bandwidth time of the phase for the whole collective, s.
    double wholeSeconds = 0;
    /// Latency of the phase for one chunk, s.
    double chunkLatencySeconds = 0;
};

/// Deepest multiple of `chunks` (chunks x 2^j, j <= 4, at most `limit`) that minimizes the
/// estimate above; `chunks` when `phases` spans a single dimension.
std::uint32_t pipelineDepth(const std::vector<PhaseCost>& phases,
                            std::uint32_t chunks,
                            std::uint32_t activeChunks,
                            std::uint32_t limit);

/// The estimate T(K) of the file comment, s.
double pipelineSeconds(const std::vector<PhaseCost>& phases,
                       std::uint32_t chunks,
                       std::uint32_t activeChunks);

} // namespace etsim::net
