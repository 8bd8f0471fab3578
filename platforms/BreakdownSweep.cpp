#include "platforms/BreakdownSweep.h"

#include <algorithm>
#include <utility>

namespace etsim::platform {

void BreakdownSweep::add(const NodeInterval& interval)
{
    ++sums.nodes;
    Category category = ComputeCat;
    switch (interval.engine) {
    case et::Engine::Compute:
    case et::Engine::Host:
        category = ComputeCat;
        break;
    case et::Engine::Memory:
        category = MemoryCat;
        break;
    case et::Engine::Communication:
        category = CommCat;
        break;
    case et::Engine::Instant:
        return;
    }
    if (interval.startPs >= interval.endPs)
        return;
    const bool gpu = interval.engine == et::Engine::Compute;
    edges.push_back({interval.startPs, +1, category, gpu});
    edges.push_back({interval.endPs, -1, category, gpu});
}

void BreakdownSweep::settle(std::uint64_t watermarkPs)
{
    const auto later = std::partition(
        edges.begin(), edges.end(), [&](const Edge& edge) { return edge.timePs <= watermarkPs; });
    std::sort(
        edges.begin(), later, [](const Edge& a, const Edge& b) { return a.timePs < b.timePs; });
    std::for_each(edges.begin(), later, [this](const Edge& edge) { sweep(edge); });
    edges.erase(edges.begin(), later);
}

RankBreakdown BreakdownSweep::finish(std::uint32_t rank, std::uint64_t finishPs)
{
    // An interval is cut at the rank's finish; one that starts there adds nothing.
    for (Edge& edge : edges)
        edge.timePs = std::min(edge.timePs, finishPs);
    settle(finishPs);
    if (finishPs > lastPs)
        account(finishPs);
    RankBreakdown result = sums;
    result.rank = rank;
    result.finishPs = finishPs;
    result.astraExposedCommPs = finishPs - gpuComputePs;
    return result;
}

void BreakdownSweep::sweep(const Edge& edge)
{
    if (edge.timePs > lastPs)
        account(edge.timePs);
    active[edge.category] += edge.delta;
    if (edge.gpu)
        activeGpu += edge.delta;
}

void BreakdownSweep::account(std::uint64_t untilPs)
{
    const std::uint64_t span = untilPs - lastPs;
    if (active[ComputeCat] > 0)
        sums.computePs += span;
    else if (active[MemoryCat] > 0)
        sums.memoryPs += span;
    else if (active[CommCat] > 0)
        sums.exposedCommPs += span;
    else
        sums.idlePs += span;
    if (active[CommCat] > 0)
        sums.commPs += span;
    if (active[CommCat] > 0 && active[ComputeCat] > 0)
        sums.overlapPs += span;
    if (activeGpu > 0)
        gpuComputePs += span;
    lastPs = untilPs;
}

RunBreakdowns::RunBreakdowns(std::uint32_t ranks, bool keepIntervals, Watermark watermark)
    : sweeps(ranks)
    , settleAt(ranks, settleBatch)
    , kept(keepIntervals ? ranks : 0)
    , keepIntervals(keepIntervals)
    , watermark(std::move(watermark))
{
}

void RunBreakdowns::add(std::uint32_t rank, const NodeInterval& interval)
{
    if (keepIntervals)
        kept[rank].push_back(interval);
    BreakdownSweep& sweep = sweeps[rank];
    sweep.add(interval);
    if (sweep.pendingEdges() < settleAt[rank])
        return;
    sweep.settle(watermark(rank));
    // Edges held back by a long-running node wait for it; settling again before their number
    // doubles would sort them over and over.
    settleAt[rank] = std::max(settleBatch, 2 * sweep.pendingEdges());
}

RankBreakdown RunBreakdowns::finish(std::uint32_t rank, std::uint64_t finishPs)
{
    return sweeps[rank].finish(rank, finishPs);
}

} // namespace etsim::platform
