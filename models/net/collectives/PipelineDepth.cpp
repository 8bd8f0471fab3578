#include "models/net/collectives/PipelineDepth.h"

#include <algorithm>
#include <map>

namespace etsim::net {

namespace {

// The deepest pipeline tried, as a multiple of `chunks`: beyond it the estimate gains little
// on any collective seen (docs/network.md), while every chunk adds its messages to the run.
constexpr std::uint32_t deepestMultiple = 16;

} // namespace

double pipelineSeconds(const std::vector<PhaseCost>& phases,
                       std::uint32_t chunks,
                       std::uint32_t activeChunks)
{
    // Whole rounds: 5 chunks with 2 in flight pay the latency 3 times.
    const std::uint32_t wholeRounds = (chunks + activeChunks - 1) / activeChunks;
    const auto rounds = static_cast<double>(wholeRounds);
    std::map<std::uint32_t, std::pair<double, double>> perDim; // dim -> (work, work + latency)
    double allWork = 0;
    for (const PhaseCost& phase : phases) {
        auto& [work, busy] = perDim[phase.dim];
        work += phase.wholeSeconds;
        busy += phase.wholeSeconds + rounds * phase.chunkLatencySeconds;
        allWork += phase.wholeSeconds;
    }
    double busiest = 0;
    double busiestWork = 0;
    for (const auto& [dim, sums] : perDim)
        if (sums.second > busiest) {
            busiest = sums.second;
            busiestWork = sums.first;
        }
    return busiest + (allWork - busiestWork) / chunks;
}

std::uint32_t pipelineDepth(const std::vector<PhaseCost>& phases,
                            std::uint32_t chunks,
                            std::uint32_t activeChunks,
                            std::uint32_t limit)
{
    const bool severalDims = std::any_of(phases.begin(), phases.end(), [&](const PhaseCost& phase) {
        return phase.dim != phases.front().dim;
    });
    if (!severalDims || chunks == 0 || activeChunks == 0)
        return chunks;
    std::uint32_t best = chunks;
    double bestSeconds = pipelineSeconds(phases, chunks, activeChunks);
    for (std::uint32_t multiple = 2; multiple <= deepestMultiple; multiple *= 2) {
        const std::uint64_t depth = static_cast<std::uint64_t>(chunks) * multiple;
        if (depth > limit)
            break;
        const double seconds =
            pipelineSeconds(phases, static_cast<std::uint32_t>(depth), activeChunks);
        if (seconds < bestSeconds) {
            bestSeconds = seconds;
            best = static_cast<std::uint32_t>(depth);
        }
    }
    return best;
}

} // namespace etsim::net
