#include "models/net/astra/AstraCollective.h"

#include "kernel/Error.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <queue>
#include <string>
#include <tuple>

namespace etsim::models::net::astra {

namespace {

std::uint64_t floorNs(double ns)
{
    return static_cast<std::uint64_t>(std::floor(ns));
}

// The ring algorithm's cost of one phase on `p` NPUs with per-chunk input `d` (section 3.4).
Phase ringPhase(Collective type,
                std::size_t dimIndex,
                const Dim& dim,
                std::uint64_t d,
                const SystemParams& system)
{
    const std::uint64_t p = dim.npus;
    const std::uint64_t e = system.endpointDelayNs;
    const std::uint64_t m = d / p;
    Phase phase{type, dimIndex, d, d, 0};
    switch (type) {
    case Collective::AllReduce:
        phase.durationNs =
            e + 2 * (p - 1) * (messageNs(dim, m) + e) + (p - 1) * reductionNs(system, m);
        break;
    case Collective::ReduceScatter:
        phase.durationNs = e + (p - 1) * (messageNs(dim, m) + e + reductionNs(system, m));
        phase.outputBytes = m;
        break;
    case Collective::AllGather:
        // Each step forwards a whole input: comm_size is the per-rank input.
        phase.durationNs = e + (p - 1) * (messageNs(dim, d) + e);
        phase.outputBytes = p * d;
        break;
    case Collective::AllToAll:
        phase.durationNs = e + p * (p - 1) / 2 * (messageNs(dim, m) + e);
        break;
    }
    return phase;
}

} // namespace

std::uint32_t hops(DimTopology topology)
{
    return topology == DimTopology::Switch ? 2 : 1;
}

std::uint64_t messageNs(const Dim& dim, std::uint64_t bytes)
{
    return floorNs(hops(dim.topology) * dim.latencyNs +
                   static_cast<double>(bytes) / dim.bytesPerNs);
}

std::uint64_t reductionNs(const SystemParams& system, std::uint64_t bytes)
{
    return 3 * floorNs(static_cast<double>(bytes) / system.localMemBytesPerNs);
}

CollectivePlan planCollective(Collective type,
                              std::uint64_t bytes,
                              const std::vector<Dim>& dims,
                              std::uint64_t totalNpus,
                              const SystemParams& system)
{
    if (system.datasetSplits == 0 || system.activeChunks == 0)
        throw Error("astra collective: preferred-dataset-splits and active-chunks-per-dimension "
                    "must be at least 1");
    if (bytes == 0)
        throw Error("astra collective: a collective of 0 bytes has nothing to time; check the "
                    "node's comm_size");
    CollectivePlan plan;
    // Chunking (section 3.1), including the inflation of small collectives.
    plan.effectiveBytes = bytes;
    plan.chunkBytes = bytes / system.datasetSplits;
    if (type != Collective::AllGather && totalNpus > plan.chunkBytes) {
        plan.chunkBytes = totalNpus;
        plan.effectiveBytes = system.datasetSplits * plan.chunkBytes;
    }
    if (plan.chunkBytes == 0)
        plan.chunkBytes = 1;
    plan.chunks = (plan.effectiveBytes + plan.chunkBytes - 1) / plan.chunkBytes;

    std::vector<std::size_t> busy;
    for (std::size_t i = 0; i < dims.size(); ++i)
        if (dims[i].npus > 1)
            busy.push_back(i);
    if (busy.empty())
        return plan; // one NPU: nothing to exchange

    // Phases per chunk (section 3.2).
    std::uint64_t d = plan.chunkBytes;
    auto add = [&](Collective phaseType, std::size_t dim) {
        Phase phase = ringPhase(phaseType, dim, dims[dim], d, system);
        d = phase.outputBytes;
        plan.phases.push_back(phase);
    };
    if (type == Collective::AllReduce && system.localBwAware) {
        for (std::size_t i = 0; i + 1 < busy.size(); ++i)
            add(Collective::ReduceScatter, busy[i]);
        add(Collective::AllReduce, busy.back());
        for (std::size_t i = busy.size() - 1; i-- > 0;)
            add(Collective::AllGather, busy[i]);
    } else if (type == Collective::AllGather) {
        for (std::size_t i = busy.size(); i-- > 0;)
            add(type, busy[i]);
    } else {
        for (std::size_t dim : busy)
            add(type, dim);
    }

    std::vector<std::size_t> phaseDims;
    std::vector<std::uint64_t> phaseNs;
    for (const Phase& phase : plan.phases) {
        phaseDims.push_back(phase.dim);
        phaseNs.push_back(phase.durationNs);
    }
    plan.finishNs = flowShopFinishNs(phaseDims, phaseNs, plan.chunks, system.activeChunks);
    return plan;
}

std::uint64_t flowShopFinishNs(const std::vector<std::size_t>& phaseDims,
                               const std::vector<std::uint64_t>& phaseNs,
                               std::uint64_t chunks,
                               std::uint32_t activeChunks)
{
    if (phaseDims.size() != phaseNs.size())
        throw Error("astra flow shop: one duration per phase is needed");
    if (phaseDims.empty() || chunks == 0)
        return 0;

    // Events: a chunk arrives at the queue of its next phase, or finishes a phase. At equal
    // times finishes go first (a freed slot is then handed to the longest waiter), then
    // arrivals in chunk order.
    enum Kind { Finish = 0, Arrive = 1 };
    using Event = std::tuple<std::uint64_t, int, std::uint64_t>; // time, kind, chunk
    std::priority_queue<Event, std::vector<Event>, std::greater<>> events;
    std::vector<std::size_t> phaseOf(chunks, 0);
    struct Queue {
        std::uint32_t running = 0;
        std::deque<std::uint64_t> waiting;
    };
    std::map<std::size_t, Queue> queues;
    for (std::uint64_t chunk = 0; chunk < chunks; ++chunk)
        events.emplace(0, Arrive, chunk);

    std::uint64_t finish = 0;
    auto start = [&](std::uint64_t chunk, std::uint64_t now) {
        events.emplace(now + phaseNs[phaseOf[chunk]], Finish, chunk);
    };
    while (!events.empty()) {
        auto [now, kind, chunk] = events.top();
        events.pop();
        Queue& queue = queues[phaseDims[phaseOf[chunk]]];
        if (kind == Arrive) {
            if (queue.running < activeChunks) {
                ++queue.running;
                start(chunk, now);
            } else {
                queue.waiting.push_back(chunk);
            }
            continue;
        }
        // The chunk leaves this queue: its slot goes to the first waiter, if any.
        if (queue.waiting.empty()) {
            --queue.running;
        } else {
            std::uint64_t next = queue.waiting.front();
            queue.waiting.pop_front();
            start(next, now);
        }
        if (++phaseOf[chunk] == phaseDims.size())
            finish = std::max(finish, now);
        else
            events.emplace(now, Arrive, chunk);
    }
    return finish;
}

} // namespace etsim::models::net::astra
