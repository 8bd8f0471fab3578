#pragma once
// The per-rank trace driver: streams one rank's Chakra nodes through a DependencyTracker,
// lowers each ready node (NodeLowering) and issues it as a TLM transaction to the engine that
// runs it, following docs/execution-protocol.md (BEGIN_REQ -> END_REQ, BEGIN_RESP ->
// TLM_COMPLETED). When a transaction completes, the node is finished and its dependents are
// released.
//
// Scale: the driver is one SC_METHOD woken by one event (no thread stack), and keeps only the
// reader window's nodes, so 16,384 ranks fit in one process. Everything timed inside the driver
// (host work, replayed communication) and every response shares one completion heap.
//
// Issuing rules (the scheduling profile):
//   native  compute, memory, communication and host run concurrently, each with its own limit
//           on nodes in flight (0 = unlimited);
//   astra   ASTRA-sim's slots: one GPU compute, one host op, and one communication slot
//           shared by collectives, sends and memory nodes.
// In both, receives occupy no slot (a posted receive only waits for its message), and ready
// nodes are issued in ascending id within each slot. Nodes that complete at once (METADATA,
// INVALID) release their dependents in the same step, so they never stall a rank.

#include "et_driver/DependencyTracker.h"
#include "et_driver/NodeLowering.h"
#include "et_driver/TraceNode.h"
#include "kernel/Extensions.h"
#include "kernel/PayloadPool.h"
#include "kernel/Simulation.h"
#include "kernel/SlotTable.h"
#include "kernel/WallProfile.h"

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <queue>
#include <string>
#include <unordered_map>
#include <vector>

namespace etsim {
class Counter;
class Scalar;
class StatGroup;
class Timeline;
} // namespace etsim

namespace etsim::et {

class TraceReader;

/// Where a driver reads its rank's nodes: fills `node` and returns true, or returns false at
/// the end of the trace.
using NodeSource = std::function<bool(TraceNode& node)>;
/// A source reading from `reader` (which must outlive the driver).
NodeSource readerSource(TraceReader& reader);
/// A source handing out `nodes` in order (tests, generated traces).
NodeSource vectorSource(std::vector<TraceNode> nodes);

struct RankDriverOptions {
    LoweringOptions lowering;
    DependencyTrackerOptions dependencies;
    /// Nodes read ahead of completion (DependencyTracker::wantsInput).
    static constexpr std::size_t defaultWindow = 256;
    std::size_t window = defaultWindow;
    /// Native profile: nodes in flight per engine; 0 = unlimited.
    std::uint32_t computeLimit = 0;
    std::uint32_t memoryLimit = 0;
    std::uint32_t communicationLimit = 0;
    std::uint32_t hostLimit = 1;
};

/// What happened to one node; handed to the record callback when it finishes.
struct NodeRecord {
    RankId rank{};
    NodeId node{};
    /// What was issued; valid only during the callback. Null in records made by hand.
    const EtNodeInfo* info = nullptr;
    NodeKind kind = NodeKind::Invalid;
    Engine engine = Engine::Instant;
    /// BEGIN_REQ sent (or local timing started), ps.
    std::uint64_t issuePs = 0;
    /// The engine accepted it (END_REQ), ps.
    std::uint64_t startPs = 0;
    /// BEGIN_RESP arrived (or local timing ended), ps.
    std::uint64_t finishPs = 0;
    std::uint64_t bytes = 0;

    /// The node's name in the trace, or "" (looked up only when asked: most callbacks, such as
    /// the run's breakdowns, never ask, and the lookup reads the node's attribute list, a cache
    /// miss in a run of many ranks).
    std::string_view name() const;
};

/// A node in flight: issued at issuePs on `engine`, not finished.
struct OpenNode {
    NodeId node{};
    std::uint64_t issuePs = 0;
    Engine engine = Engine::Instant;
};

/// A node of a rank that has not finished, as the deadlock report shows it.
struct UnfinishedNode {
    enum class State { InFlight, Held };
    std::uint64_t id = 0;
    std::string name;
    State state = State::InFlight;
    Engine engine = Engine::Instant;
    EtNodeInfo info; // what was issued (InFlight) or will be (Held)
};

/// One rank's view at the end of a run that did not finish.
struct RankStuckState {
    RankId rank{};
    std::size_t unfinished = 0;              // nodes read and not finished
    std::size_t waiting = 0;                 // of those, waiting on dependencies
    std::vector<UnfinishedNode> issued;      // in flight or held for a slot
    std::optional<StuckReport> dependencies; // set when only a dependency cycle is left
};

class RankDriver : public sc_core::sc_module {
public:
    /// Message type of the driver's SC_REPORT_ERRORs.
    static constexpr const char* reportType = "etsim/RankDriver";

    tlm_utils::simple_initiator_socket<RankDriver> computeSocket;
    tlm_utils::simple_initiator_socket<RankDriver> memorySocket;
    tlm_utils::simple_initiator_socket<RankDriver> communicationSocket;

    /// `context` (shared by all ranks), `simulation`, and `stats`/`timeline` when given must
    /// outlive the driver. Stats go to a group "rank<N>" under `stats`. Throws etsim::Error
    /// for a rank outside the context or a zero window.
    RankDriver(const sc_core::sc_module_name& name,
               RankId rank,
               NodeSource source,
               LoweringContext& context,
               Simulation& simulation,
               RankDriverOptions options = {},
               StatGroup* stats = nullptr,
               Timeline* timeline = nullptr);
    /// Releases the driver's reference on every transaction still in flight (a run that ended in
    /// a deadlock or an error). Destroy the targets first (they give back their own references,
    /// see PayloadPool.h), so that every payload returns to the driver's pool.
    ~RankDriver() override;
    RankDriver(const RankDriver&) = delete;
    RankDriver& operator=(const RankDriver&) = delete;

    /// Called for every finished node (after stats and timeline).
    void onRecord(std::function<void(const NodeRecord&)> callback);

    RankId rank() const { return rankId; }
    /// Every node of the trace finished.
    bool done() const { return tracker.done() && completions.empty(); }
    std::uint64_t nodesFinished() const { return finishedCount; }
    /// Time the last node finished, ps.
    std::uint64_t finishPs() const { return lastFinishPs; }
    /// The nodes in flight (issued, not finished) into `out`, cleared first; returns now, ps.
    /// Nodes not yet issued will be issued at or after it.
    std::uint64_t openNodes(std::vector<OpenNode>& out) const;
    const LoweringFallbacks& fallbacks() const { return lowering.fallbacks(); }
    const PayloadPool& pool() const { return payloads; }
    /// What is left, for the deadlock report.
    RankStuckState stuckState() const;

private:
    // The run's wall-time profile (--profile); nullptr when not profiled.
    WallProfile* wall = nullptr;
    // Slots nodes are admitted to; receives have their own, unlimited one.
    enum Slot : std::uint8_t { ComputeSlot, MemorySlot, CommSlot, HostSlot, RecvSlot, slotCount };
    struct Flight {
        std::uint64_t id = 0;
        Engine engine = Engine::Instant;
        Slot slot = ComputeSlot;
        std::uint64_t issuePs = 0;
        std::uint64_t startPs = 0;
        tlm::tlm_generic_payload* payload = nullptr;
        // For local work the node itself; a transaction's node lives in its payload.
        std::unique_ptr<EtNodeExtension> localNode;
        std::uint64_t localPs = 0;
        // The node's kind and bytes for its record, kept here: its info is cold by the end.
        std::uint64_t bytes = 0;
        NodeKind kind = NodeKind::Invalid;
        bool used = false;
    };
    // start + duration, or an Error naming the node when the sum passes 2^64 ps.
    std::uint64_t
    endOf(const Flight& flight, std::uint64_t startPs, std::uint64_t durationPs) const;
    struct Completion {
        std::uint64_t timePs;
        std::uint64_t order;
        std::uint32_t flight;
        bool operator>(const Completion& other) const
        {
            return timePs != other.timePs ? timePs > other.timePs : order > other.order;
        }
    };
    struct EngineStats {
        Counter* nodes = nullptr;
        Scalar* busySeconds = nullptr;
    };

    void step();
    void feed();
    void admitReady();
    bool issueHeld();
    void issue(Slot slot, std::uint32_t pendingSlot);
    void complete(std::uint32_t index);
    // `base` gives the times, kind and bytes; `info` is what was issued.
    void finishNode(std::uint64_t id, Engine engine, const EtNodeInfo& info, NodeRecord record);
    // The payload's EtNodeExtension back to the spares when the driver holds the last
    // reference (so no target can still read it), before the payload's release.
    void recycleExtension(tlm::tlm_generic_payload& payload);
    void schedule(std::uint32_t flight, std::uint64_t timePs);
    Slot slotOf(NodeKind kind, Engine engine) const;
    // An extension to lower a node into: a spent one (keeping its buffers) or a new one.
    std::unique_ptr<EtNodeExtension> spareExtension();
    tlm::tlm_sync_enum
    backward(tlm::tlm_generic_payload& payload, tlm::tlm_phase& phase, sc_core::sc_time& delay);
    tlm_utils::simple_initiator_socket<RankDriver>& socketOf(Engine engine);
    std::uint64_t nowPs() const;
    std::uint64_t toPs(const sc_core::sc_time& time) const;
    void fail(const std::string& message) const;
    void end_of_elaboration() override;

    RankId rankId;
    NodeSource source;
    RankDriverOptions options;
    NodeLowering lowering;
    DependencyTracker tracker;
    ActivityToken activity;
    PayloadPool payloads;
    Timeline* timeline;
    std::function<void(const NodeRecord&)> recordCallback;

    bool sourceEnded = false;
    TraceNode scratch;
    // Nodes read and not yet issued, in reusable slots; the tracker hands a ready node's slot
    // back as its tag. A node is lowered straight into the extension that will carry it, so
    // issuing it hands over a pointer; what admitting, issuing and recording read (id,
    // placement, slot, the info's kind and bytes) stays in the slot itself, a few dozen bytes:
    // in a run of a thousand ranks each pending node is cold by the time it is ready, and
    // every line it spans is a cache miss.
    struct PendingNode {
        std::uint64_t id = 0;
        NodePlacement placement;
        Slot slot = ComputeSlot;
        NodeKind kind = NodeKind::Invalid;
        std::uint64_t bytes = 0;
        std::unique_ptr<EtNodeExtension> extension;
    };
    SlotTable<PendingNode> pending{"rank driver: nodes read and not issued"};
    // Dependencies and where finished nodes ran, kept only for the timeline's flow arrows.
    std::unordered_map<std::uint64_t, std::vector<std::uint64_t>> pendingDeps;
    std::unordered_map<std::uint64_t, std::pair<Engine, std::uint64_t>> ranAt;
    std::uint64_t flowCount = 0;

    // A ready node waiting for its slot: its id (the queue's order) and where it is pending.
    struct HeldNode {
        std::uint64_t id;
        std::uint32_t pendingSlot;
        bool operator>(const HeldNode& other) const { return id > other.id; }
    };
    std::array<std::priority_queue<HeldNode, std::vector<HeldNode>, std::greater<HeldNode>>,
               slotCount>
        held;
    std::array<std::uint32_t, slotCount> limits{};
    std::array<std::uint32_t, slotCount> busy{};
    // Sockets whose target holds END_REQ back (base-protocol request exclusion).
    std::array<bool, 3> awaitingEndRequest{};

    std::vector<Flight> flights;
    std::vector<std::uint32_t> freeFlights;
    // By the payload's number in the pool (PayloadPool::indexOf): its flight, or noFlight.
    static constexpr std::uint32_t noFlight = 0xFFFFFFFFU;
    std::vector<std::uint32_t> flightOfPayload;
    // Extensions of finished transactions, reused by the next ones (no allocation per node).
    std::vector<std::unique_ptr<EtNodeExtension>> spareExtensions;
    std::priority_queue<Completion, std::vector<Completion>, std::greater<Completion>> completions;
    std::uint64_t completionOrder = 0;
    sc_core::sc_event wake;

    std::uint64_t psPerStep = 1;
    std::uint64_t finishedCount = 0;
    std::uint64_t lastFinishPs = 0;

    StatGroup* statGroup = nullptr;
    Counter* nodesStat = nullptr;
    Scalar* finishStat = nullptr;
    std::array<EngineStats, engineCount> engineStats{};
    Counter* fallbackStat = nullptr;
};

/// Which ranks the drivers of a deadlock report are: all of the run's (the default), or part
/// of them, the others simulated elsewhere (a partitioned run, docs/partitioned-runs.md).
struct DeadlockScope {
    /// Ranks of the run; 0 = as many as there are drivers.
    std::uint32_t ranks = 0;
    /// Where a rank without a driver here is simulated ("partition 2"); unset = all are here.
    std::function<std::string(std::uint32_t rank)> elsewhere;
};

/// The report of a run whose ranks did not all finish: per rank the nodes left and what each
/// waits for (a recv without its send, a collective some member never joined, a dependency
/// cycle), naming where a peer simulated elsewhere is. Empty when every driver is done.
std::string deadlockReport(const std::vector<const RankDriver*>& drivers,
                           const DeadlockScope& scope = {});

/// Throws DeadlockError with deadlockReport() unless every driver is done.
void checkFinished(const std::vector<const RankDriver*>& drivers);

} // namespace etsim::et
