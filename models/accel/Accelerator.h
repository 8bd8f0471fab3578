#pragma once
// One accelerator: a TLM target for the work a rank's driver sends it (Compute, MemLoad and
// MemStore nodes, execution protocol of docs/execution-protocol.md, nb and b transport), a
// compute engine behind an internal socket, on-chip SRAM and a DMA engine with an initiator
// socket to HBM.
//
// Compute nodes: the on-chip memory (residency/OnChipMemory.h) says which of the node's
// tensors are resident (read or written by an earlier node on this accelerator and not evicted
// since); the missed inputs, the write-backs and the outputs that do not fit stream between
// HBM and the chip through the DMA in chunks of dma.chunk with two staging buffers. With
// sram.policy legacy, the first sram.capacity bytes of every node count as resident instead.
// Chunk i + 1 moves while chunk i computes, so with transfer time L and compute time C per
// chunk, n chunks take L + (n − 1)·max(L, C) + C rather than n·(L + C) (for a memory without
// latency; both buffers may be loading at once, which hides latency behind the other buffer's
// transfer). The engine receives one transaction per chunk, each a slice of the node
// (ComputeSlice.h). A node with nothing to move goes to the engine in one piece.
//
// Memory nodes: MemLoad reads, MemStore writes the node's bytes in chunks (a MemLoad naming
// tensors makes them resident, and writes back the dirty tensors it evicts); up to dma.engines
// transfers are in flight, each lasting at least chunk / dma.bandwidth.
//
// A node with a recorded duration (EtNodeInfo::durationPs, replay mode) completes after exactly
// that time without using the engine, SRAM or DMA (docs/execution-protocol.md).
//
// Streaming fast path (docs/accel.md): when the platform hands over the memory's timing
// (useStreamMemory: an analytic HBM that only this accelerator uses), the engine is internal
// and no timeline watches its slices, a node that starts while no other compute or memory node
// is in flight is not split into transactions: StreamPlan computes its chunks' times, and one
// event completes the node. The chunks are committed to the memory and the engine (same
// calls, same order, same stats) when the node ends, or when another node arrives while it
// runs: then the chunks that have happened are committed and the rest continue as per-chunk
// transactions, so overlapping streams interleave exactly as before.
//
// Addresses come from an HbmAllocator: by the node's "tensor_id" attribute when it has one,
// otherwise a fresh region per node.

#include "kernel/PayloadPool.h"
#include "kernel/SlotTable.h"
#include "kernel/Stats.h"
#include "kernel/TimedQueue.h"
#include "kernel/WallProfile.h"
#include "models/accel/AccelConfig.h"
#include "models/accel/ComputeEngine.h"
#include "models/accel/HbmAllocator.h"
#include "models/accel/StreamMemory.h"
#include "models/accel/StreamPlan.h"
#include "models/accel/StreamPlanCache.h"
#include "models/accel/residency/OnChipMemory.h"

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/simple_initiator_socket.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

namespace etsim::accel {

/// Whether the accelerator builds and binds its own compute engine, or leaves its engine
/// socket for the platform to bind (e.g. to a co-simulation proxy).
enum class EngineBinding : std::uint8_t { Internal, External };

class Accelerator final : public sc_core::sc_module {
public:
    /// Message type of the accelerator's SC_REPORT_ERRORs.
    static constexpr const char* reportType = "etsim/accel/Accelerator";
    /// Integer node attribute naming the tensor a node works on; nodes with the same id share
    /// one HBM region.
    static constexpr const char* tensorIdAttribute = "tensor_id";

    /// Work from the rank's driver: Compute, MemLoad, MemStore. Any number of initiators may
    /// bind (a driver's compute and memory sockets both reach the accelerator).
    tlm_utils::multi_passthrough_target_socket<Accelerator> target;
    /// To the compute engine (bound internally unless EngineBinding::External).
    tlm_utils::simple_initiator_socket<Accelerator> engineSocket;
    /// DMA transfers to HBM.
    tlm_utils::simple_initiator_socket<Accelerator> memory;

    /// `config` must be valid (validateAccelConfig) and outlive the module. The stats go into
    /// `stats` (the engine's into its child group "compute").
    Accelerator(sc_core::sc_module_name name,
                const AccelConfig& config,
                StatGroup& stats,
                EngineBinding binding = EngineBinding::Internal);
    SC_HAS_PROCESS(Accelerator);
    /// Gives back every reference still held after an abandoned run: the requests it was
    /// working on, and its own sub-transactions (its compute engine is destroyed first, so
    /// they all return to the pool before the pool goes).
    ~Accelerator() override;
    Accelerator(const Accelerator&) = delete;
    Accelerator& operator=(const Accelerator&) = delete;

    /// The internal compute engine; nullptr with EngineBinding::External.
    ComputeEngine* engine() { return ownEngine.get(); }
    const HbmAllocator& allocator() const { return hbm; }
    /// Lets streaming nodes use the fast path with `memory`, the timing of the target bound to
    /// `memory` (the socket); call before the run. Only for a memory that this accelerator
    /// alone uses and that fixes a transaction's timing at its arrival. `sharedPlans` (which
    /// must outlive the accelerator): a plan cache shared with other accelerators, whose
    /// plans then serve this one too; null keeps its own.
    void useStreamMemory(StreamMemory& timing, StreamPlanCache* sharedPlans = nullptr)
    {
        streamMemory = &timing;
        plans = sharedPlans != nullptr ? sharedPlans : &ownPlans;
    }
    /// Nodes completed by the fast path (the rest went as per-chunk transactions).
    std::uint64_t fastNodes() const { return fastCompleted; }
    /// Nodes accepted and not yet complete.
    std::uint64_t inFlight() const { return jobs.size(); }

private:
    // The run's wall-time profile (--profile); nullptr when not profiled.
    WallProfile* wall = nullptr;
    struct Job {
        tlm::tlm_generic_payload* request = nullptr;
        sc_core::sc_event* finished = nullptr; // set for b_transport callers
        int socketId = 0;                      // the target binding it came through
        // The node, in the request's extension (alive until the request is answered); null
        // for a request without one.
        const EtNodeInfo* info = nullptr;
        // The DMA stream (StreamPiece): bytes read from HBM, then bytes written, and the HBM
        // regions they go to.
        std::uint64_t readBytes = 0;
        std::uint64_t writeBytes = 0;
        std::uint64_t readRegion = 0;
        std::uint64_t writeRegion = 0;
        std::uint64_t chunks = 0; // DMA chunks (0: a compute node with nothing to move)
        std::uint64_t loadsIssued = 0;
        std::uint64_t loadsDone = 0;
        std::uint64_t computesIssued = 0;
        std::uint64_t computesDone = 0;
        bool computeInFlight = false;
        bool failed = false;
        bool streams = false; // a compute or memory node, counted in `streaming`
    };
    struct SubTask {
        std::uint64_t job = 0;
        bool compute = false;
        sc_core::sc_time earliestEnd; // DMA: issue time + bytes / DMA bandwidth
    };
    // A socket's outgoing requests under the base protocol's request exclusion.
    struct Outbox {
        std::deque<tlm::tlm_generic_payload*> queue;
        bool awaitingEndReq = false;
        std::uint64_t inFlight = 0;
    };

    tlm::tlm_sync_enum targetFw(int socketId,
                                tlm::tlm_generic_payload& payload,
                                tlm::tlm_phase& phase,
                                sc_core::sc_time& delay);
    void targetB(int socketId, tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);
    tlm::tlm_sync_enum
    engineBw(tlm::tlm_generic_payload& payload, tlm::tlm_phase& phase, sc_core::sc_time& delay);
    tlm::tlm_sync_enum
    memoryBw(tlm::tlm_generic_payload& payload, tlm::tlm_phase& phase, sc_core::sc_time& delay);

    void onArrival();
    void onSubDone();
    void onFastDone();
    void onFastFinish();
    bool fastEligible() const;
    void planFast(std::uint64_t id, Job& job);
    void commitFast(Job& job, Time upTo);
    // commitFast() of a node whose every chunk has happened: at once, not chunk by chunk.
    void commitWholeFast(Job& job);
    // The fast node's compute slices that reached the engine by `upTo`, one by one.
    void reserveSlicesUpTo(Job& job, Time upTo);
    void leaveFastPath();
    void resumePerChunk(std::uint64_t id, Job& job, Time now);
    tlm::tlm_generic_payload& makeLoad(std::uint64_t id, Job& job, std::uint64_t chunk);
    tlm::tlm_generic_payload& makeCompute(std::uint64_t id, Job& job);
    void onReplayed();
    void pump();
    void start(tlm::tlm_generic_payload& request, sc_core::sc_event* finished, int socketId);
    void advance(std::uint64_t id);
    void finish(std::uint64_t id);
    void queueLoad(std::uint64_t id, Job& job, std::uint64_t chunk);
    // The HBM traffic of a node's tensors (residency or the legacy shortcut), into job's
    // readBytes / writeBytes.
    void stageCompute(Job& job);
    void stageMemory(Job& job);
    void queueCompute(std::uint64_t id, Job& job);
    void send(tlm_utils::simple_initiator_socket<Accelerator>& socket,
              Outbox& outbox,
              std::uint64_t limit);
    void subResponse(tlm::tlm_generic_payload& payload, const sc_core::sc_time& delay);
    std::uint64_t regionFor(const EtNodeInfo& info, std::uint64_t bytes);
    void report(const std::string& problem);

    const AccelConfig& config;
    std::unique_ptr<ComputeEngine> ownEngine;
    HbmAllocator hbm;
    // Which tensors are on chip; null with sram.policy legacy.
    std::unique_ptr<OnChipMemory> onChip;
    PayloadPool pool;
    // References on the initiators' requests this accelerator is working on (non-blocking
    // path); given back when each is answered, or at destruction after an abandoned run.
    HeldPayloads requests;
    // Requests waiting for their BEGIN_REQ delay, with the target binding each came through.
    struct Arrival {
        tlm::tlm_generic_payload* payload;
        int socket;
    };
    TimedQueue<Arrival> arrivals{"arrivals"};
    TimedQueue<tlm::tlm_generic_payload*> subDone{"subDone"};
    // Nodes with a recorded duration (replay), by job: they take exactly that long, no model
    // runs.
    TimedQueue<std::uint64_t> replayed{"replayed"};
    sc_core::sc_event pumpEvent;
    // Nodes in flight by small integer id (kernel/SlotTable.h).
    SlotTable<Job> jobs{"accelerator"};
    // This accelerator's own payloads in flight (one reference each, from `pool`).
    std::unordered_map<tlm::tlm_generic_payload*, SubTask> subTasks;
    Outbox dmaOutbox;
    Outbox engineOutbox;
    // Compute and memory nodes in flight (replayed nodes use no resource and do not count).
    std::uint64_t streaming = 0;
    // The fast path: at most one node at a time, since it runs only with nothing else in flight.
    StreamMemory* streamMemory = nullptr;
    StreamPlan fastPlan;
    // Earlier nodes' plans: a step's kernels recur, each layer and micro-batch, and on every
    // rank alike, so a platform hands its accelerators one shared cache (useStreamMemory).
    StreamPlanCache ownPlans;
    StreamPlanCache* plans = &ownPlans;
    // Running: the plan's chunks are not committed yet, and the node can still leave the fast
    // path. Ending: committed, its completion event is still to come.
    enum class FastState : std::uint8_t { None, Running, Ending };
    FastState fastState = FastState::None;
    std::uint64_t fastJob = 0;
    sc_core::sc_event fastEvent;
    std::vector<std::uint64_t> fastFinishing;
    sc_core::sc_event fastFinishEvent;
    std::uint64_t fastCompleted = 0;

    Counter& computeNodes;
    Counter& memoryNodes;
    Counter& streamedNodes;
    Counter& streamedBytes;
    Counter& readBytes;
    Counter& writeBytes;
    Counter& transfers;
};

} // namespace etsim::accel
