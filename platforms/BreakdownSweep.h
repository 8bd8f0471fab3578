#pragma once
// The per-rank breakdown of a run (compute, memory, exposed communication, idle; docs/report.md)
// swept while the run goes on, so that what it keeps stays flat in the trace's length.
//
// The breakdown is a sweep over the start and end edges of a rank's node intervals in time
// order. A node's interval is known whole when it finishes, but nodes finish out of start order,
// and a posted receive may wait through thousands of other nodes. So when a rank's waiting edges
// pile up, the nodes its driver has in flight are opened: their start edges go in at once, and
// their end edges when they finish. Every edge up to now is then final and is swept; the sweep's
// state (the intervals active per category and the sums so far) carries over. Edges at one
// instant may be swept in any order: time is only accounted when it advances, so the result is
// that of one sweep over every interval at the end.

#include "et_driver/RankDriver.h"
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
    /// The same for node `node`; when it was opened, only its end edge goes in.
    void add(const NodeInterval& interval, NodeId node);
    /// A node in flight since its issue: its start edge goes in now, once however often it is
    /// opened, and it is marked open until its add().
    void open(const et::OpenNode& node);
    /// Every edge still to come is at or after `nowPs`: sweeps the edges up to it.
    void settle(std::uint64_t nowPs);
    /// Edges waiting to be swept.
    std::size_t pendingEdges() const { return edges.size(); }
    /// The breakdown of `rank` finished at `finishPs`, intervals cut at that time (a node still
    /// open then counts up to it). The sweep is spent afterwards.
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
    static bool categoryOf(et::Engine engine, Category& category);

    std::vector<Edge> edges;
    // Nodes opened and not finished yet (a rank's nodes in flight: a handful).
    std::vector<NodeId> opened;
    RankBreakdown sums;
    std::array<int, categoryCount> active{};
    int activeGpu = 0;
    std::uint64_t gpuComputePs = 0;
    std::uint64_t lastPs = 0;
};

// Every rank's sweep for one run, fed the drivers' records as nodes finish. A rank settles when
// its waiting edges double (at least every settleBatch): it opens the nodes its driver has in
// flight and sweeps up to now. With `keepIntervals` (a timeline's utilisation tracks need every
// interval) the intervals are kept as well, and those grow with the trace.
class RunBreakdowns {
public:
    /// For a rank: its nodes in flight into `out` (cleared first), and the time now, ps.
    using InFlight =
        std::function<std::uint64_t(std::uint32_t rank, std::vector<et::OpenNode>& out)>;
    /// `inFlight` may be left empty and set by follow() once the drivers exist.
    RunBreakdowns(std::uint32_t ranks, bool keepIntervals, InFlight inFlight = {});
    /// Asks these drivers (of any of the run's ranks) for their nodes in flight.
    void follow(const std::vector<const et::RankDriver*>& drivers);

    void add(std::uint32_t rank, const et::NodeRecord& record);
    /// The kept intervals by rank (empty unless kept).
    const std::vector<std::vector<NodeInterval>>& intervals() const { return kept; }
    RankBreakdown finish(std::uint32_t rank, std::uint64_t finishPs);

private:
    static constexpr std::size_t settleBatch = 4096;
    std::vector<BreakdownSweep> sweeps;
    std::vector<std::size_t> settleAt;
    std::vector<std::vector<NodeInterval>> kept;
    bool keepIntervals;
    InFlight inFlight;
    std::vector<et::OpenNode> open;
    // By rank, for follow()'s InFlight; null for ranks of other processes.
    std::vector<const et::RankDriver*> driverOf;
};

} // namespace etsim::platform
