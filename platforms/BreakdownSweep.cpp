#include "platforms/BreakdownSweep.h"

#include <algorithm>
#include <utility>

namespace etsim::platform {

bool BreakdownSweep::categoryOf(et::Engine engine, Category& category)
{
    switch (engine) {
    case et::Engine::Compute:
    case et::Engine::Host:
        category = ComputeCat;
        return true;
    case et::Engine::Memory:
        category = MemoryCat;
        return true;
    case et::Engine::Communication:
        category = CommCat;
        return true;
    case et::Engine::Instant:
        break;
    }
    return false;
}

void BreakdownSweep::add(const NodeInterval& interval)
{
    ++sums.nodes;
    Category category = ComputeCat;
    if (!categoryOf(interval.engine, category) || interval.startPs >= interval.endPs)
        return;
    const bool gpu = interval.engine == et::Engine::Compute;
    edges.push_back({interval.startPs, +1, category, gpu});
    edges.push_back({interval.endPs, -1, category, gpu});
}

void BreakdownSweep::add(const NodeInterval& interval, NodeId node)
{
    const auto found = std::find(opened.begin(), opened.end(), node);
    if (found == opened.end()) {
        add(interval);
        return;
    }
    // Its start edge went in when it was opened; an empty interval then ends where it began,
    // which adds no time.
    *found = opened.back();
    opened.pop_back();
    ++sums.nodes;
    Category category = ComputeCat;
    categoryOf(interval.engine, category);
    edges.push_back({interval.endPs, -1, category, interval.engine == et::Engine::Compute});
}

void BreakdownSweep::open(const et::OpenNode& node)
{
    Category category = ComputeCat;
    if (!categoryOf(node.engine, category) ||
        std::find(opened.begin(), opened.end(), node.node) != opened.end())
        return;
    opened.push_back(node.node);
    edges.push_back({node.issuePs, +1, category, node.engine == et::Engine::Compute});
}

void BreakdownSweep::settle(std::uint64_t nowPs)
{
    const auto later = std::partition(
        edges.begin(), edges.end(), [&](const Edge& edge) { return edge.timePs <= nowPs; });
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

RunBreakdowns::RunBreakdowns(std::uint32_t ranks, bool keepIntervals, InFlight inFlight)
    : sweeps(ranks)
    , settleAt(ranks, settleBatch)
    , kept(keepIntervals ? ranks : 0)
    , keepIntervals(keepIntervals)
    , inFlight(std::move(inFlight))
{
}

void RunBreakdowns::follow(const std::vector<const et::RankDriver*>& drivers)
{
    driverOf.assign(sweeps.size(), nullptr);
    for (const et::RankDriver* driver : drivers)
        driverOf[toUnderlying(driver->rank())] = driver;
    inFlight = [this](std::uint32_t rank, std::vector<et::OpenNode>& out) {
        return driverOf[rank]->openNodes(out);
    };
}

void RunBreakdowns::add(std::uint32_t rank, const et::NodeRecord& record)
{
    const NodeInterval interval{record.issuePs, record.finishPs, record.engine};
    if (keepIntervals)
        kept[rank].push_back(interval);
    BreakdownSweep& sweep = sweeps[rank];
    sweep.add(interval, record.node);
    if (sweep.pendingEdges() < settleAt[rank])
        return;
    const std::uint64_t nowPs = inFlight(rank, open);
    // The driver records a node before it frees its flight: the node just added is whole.
    for (const et::OpenNode& node : open)
        if (node.node != record.node)
            sweep.open(node);
    sweep.settle(nowPs);
    // Edges at this very instant may wait for the next settle; should many, settling again
    // before their number doubles would sort them over and over.
    settleAt[rank] = std::max(settleBatch, 2 * sweep.pendingEdges());
}

RankBreakdown RunBreakdowns::finish(std::uint32_t rank, std::uint64_t finishPs)
{
    return sweeps[rank].finish(rank, finishPs);
}

} // namespace etsim::platform
