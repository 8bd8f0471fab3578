#pragma once
// The per-rank breakdown of a run (compute, memory, exposed communication, idle; docs/report.md)
// swept while the run goes on, so that what it keeps stays flat in the trace's length.
//
// The breakdown is a sweep over the start and end edges of a rank's node intervals in time
// order. Nodes finish out of start order, so an edge can be swept only once no interval still to
// come starts before it: the caller says when with settle(watermark), from what its driver has
// in flight (RankDriver::openSincePs). Edges after the watermark wait; the sweep's state (the
// intervals active per category and the sums so far) carries over. Edges at one instant may be
// swept in any order: time is only accounted when it advances, so the result is the same as one
// sweep over every interval at the end.

#include "platforms/Job.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace etsim::platform {

class BreakdownSweep {
public:
    /// One finished node's interval; Instant nodes and empty intervals count as nodes only.
    void add(const NodeInterval& interval);
    /// Every interval still to be added starts at or after `watermarkPs`: sweeps the edges up to
    /// it and keeps only the later ones.
    void settle(std::uint64_t watermarkPs);
    /// Edges waiting for a watermark past them.
    std::size_t pendingEdges() const { return edges.size(); }
    /// The breakdown of `rank` finished at `finishPs`, intervals cut at that time. The sweep is
    /// spent afterwards.
    RankBreakdown finish(std::uint32_t rank, std::uint64_t finishPs);

private:
    // Categories in precedence order; host work counts as compute.
    enum Category : std::uint8_t { ComputeCat, MemoryCat, CommCat, categoryCount };
    struct Edge {
        std::uint64_t timePs;
        int delta;
        Category category;
        // Accelerator compute, not host work: ASTRA-sim's exposed communication counts CPU ops
        // as exposed.
        bool gpu;
    };
    void sweep(const Edge& edge);
    void account(std::uint64_t untilPs);

    std::vector<Edge> edges;
    RankBreakdown sums;
    std::array<int, categoryCount> active{};
    int activeGpu = 0;
    std::uint64_t gpuComputePs = 0;
    std::uint64_t lastPs = 0;
};

// Every rank's sweep for one run, fed the drivers' records as nodes finish. A rank settles when
// its waiting edges double (at least every settleBatch), at the watermark its driver gives.
// With `keepIntervals` (a timeline's utilisation tracks need every interval) the intervals are
// kept as well, and those grow with the trace.
class RunBreakdowns {
public:
    /// For a rank: the time at or after which every node it has not finished was issued.
    using Watermark = std::function<std::uint64_t(std::uint32_t rank)>;
    RunBreakdowns(std::uint32_t ranks, bool keepIntervals, Watermark watermark);

    void add(std::uint32_t rank, const NodeInterval& interval);
    /// The kept intervals by rank (empty unless kept).
    const std::vector<std::vector<NodeInterval>>& intervals() const { return kept; }
    RankBreakdown finish(std::uint32_t rank, std::uint64_t finishPs);

private:
    static constexpr std::size_t settleBatch = 4096;
    std::vector<BreakdownSweep> sweeps;
    std::vector<std::size_t> settleAt;
    std::vector<std::vector<NodeInterval>> kept;
    bool keepIntervals;
    Watermark watermark;
};

} // namespace etsim::platform
