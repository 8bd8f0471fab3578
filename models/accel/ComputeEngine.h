#pragma once
// The compute engine of an accelerator: a TLM target (execution protocol,
// docs/execution-protocol.md) that runs Compute nodes on its units' tensor and vector units.
// It is its own module behind a socket so that a co-simulation proxy can take its place.
//
// Event-driven: on arrival a node reserves the unit whose tensor (or vector) unit frees
// first, its completion time follows arithmetically from the calculators in compute/, and
// one payload event queue delivers the responses. Each unit runs one node at a time on each
// of its tensor and vector units (or, with tensor_vector: shared, one node at a time on the unit:
// a GPU's tensor and vector kernels use the same SMs); independent nodes run concurrently on
// different units.
//
// Stats (in the group passed in): nodes per fidelity level, fallbacks to the roofline,
// FLOPs, busy time of the tensor and vector units (total and per unit), achieved FLOP/s and
// utilisation.

#include "kernel/PayloadPool.h"
#include "kernel/Stats.h"
#include "kernel/TimedQueue.h"
#include "kernel/Timeline.h"
#include "kernel/WallProfile.h"
#include "models/accel/AccelConfig.h"
#include "models/accel/compute/UnitTimings.h"

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace etsim::accel {

class ComputeEngine final : public sc_core::sc_module {
public:
    /// Message type of the engine's SC_REPORT_ERRORs.
    static constexpr const char* reportType = "etsim/accel/ComputeEngine";

    /// Compute transactions (EtNodeExtension, optionally ComputeSliceExtension).
    tlm_utils::simple_target_socket<ComputeEngine> target;

    /// `config` must be valid and outlive the engine; the stats go into `stats`.
    ComputeEngine(sc_core::sc_module_name name, const AccelConfig& config, StatGroup& stats);
    SC_HAS_PROCESS(ComputeEngine);
    ComputeEngine(const ComputeEngine&) = delete;
    ComputeEngine& operator=(const ComputeEngine&) = delete;

    /// Records one slice per node on the timeline: process `processId`, thread 2u for unit
    /// u's tensor unit and 2u + 1 for its vector unit. The timeline must outlive the engine.
    void attachTimeline(Timeline& timeline, std::uint32_t processId);

    /// Nodes (or slices) accepted and not yet answered.
    std::uint64_t inFlight() const { return pending; }
    const UnitTimings& timings() const { return unitTimings; }

    /// When the work of `payload` arriving at `arrival` completes; reserves the unit and
    /// updates the stats. Throws etsim::Error for a payload without a Compute extension.
    Time reserve(const tlm::tlm_generic_payload& payload, Time arrival);

    // The parts of reserve(), for an initiator that plans a node's slices ahead (the
    // accelerator's streaming fast path): one estimate per node, a placement on a copy of the
    // units' free times, and the reservation itself, which is what reserve() does per slice.

    /// The whole node's estimate on its unit kind (usesTensorUnit()).
    ComputeEstimate estimate(const EtNodeInfo& node) const;
    struct Placement {
        std::size_t unit = 0;
        Time start;
        Time end;
    };
    /// The unit whose resource frees first in `freeAt` (the lowest index on a tie) takes work
    /// of `duration` arriving at `arrival`; its entry advances to the end.
    /// Inline: the streaming plan places a slice per DMA chunk.
    static Placement place(std::vector<Time>& freeAt, Time arrival, Time duration)
    {
        std::size_t chosen = 0;
        for (std::size_t u = 1; u < freeAt.size(); ++u)
            if (freeAt[u] < freeAt[chosen])
                chosen = u;
        Placement placement;
        placement.unit = chosen;
        placement.start = std::max(arrival, freeAt[chosen]);
        placement.end = placement.start + duration;
        freeAt[chosen] = placement.end;
        return placement;
    }
    /// When each unit's tensor (or vector) unit is next free; with tensor_vector: shared both
    /// are one resource, the unit's cores.
    const std::vector<Time>& freeTimes(bool tensor) const
    {
        return tensor || shared ? tensorFreeAt : vectorFreeAt;
    }
    /// Reserves slice `index` of `count` of `node` (whose estimate is `whole`) arriving at
    /// `arrival` and returns its end; updates the stats and the timeline.
    Time reserveSlice(const EtNodeInfo& node,
                      const ComputeEstimate& whole,
                      std::uint64_t index,
                      std::uint64_t count,
                      Time arrival);
    /// reserveSlice() for a slice whose share `duration` of the node's time (sliceShare) the
    /// caller has worked out already, on the tensor unit when `tensor` (usesTensorUnit).
    Time reserveSliceLasting(const EtNodeInfo& node,
                             const ComputeEstimate& whole,
                             bool tensor,
                             std::uint64_t index,
                             std::uint64_t count,
                             Time arrival,
                             Time duration);
    /// Reserves every slice of a node whose estimate is `whole`, the last ending at `end`, on
    /// an engine of one unit without a timeline: what reserveSliceLasting() does for each of
    /// them (their shares add up to the node's time), with the unit free at `end` afterwards.
    /// The streaming plan commits a node that ran alone with it (StreamPlan.h). Throws
    /// etsim::Error (internal) on an engine of several units or with a timeline.
    void reserveWholeNode(const ComputeEstimate& whole, bool tensor, Time end);
    /// Whether reserveWholeNode() may be used: one unit and no timeline.
    bool reservesWholeNodes() const { return units.size() == 1 && timeline == nullptr; }
    /// Answers `payload` (a slice already reserved with reserveSlice) on the backward path at
    /// `end`, as if it had come through the socket: the accelerator's fast path hands over a
    /// slice in progress when it falls back to per-chunk transactions.
    void adopt(tlm::tlm_generic_payload& payload, Time end);
    /// Whether a timeline records the engine's slices.
    bool hasTimeline() const { return timeline != nullptr; }

private:
    // The run's wall-time profile (--profile); nullptr when not profiled.
    WallProfile* wall = nullptr;
    struct Unit {
        Scalar* tensorBusy = nullptr;
        Scalar* vectorBusy = nullptr;
    };

    tlm::tlm_sync_enum nbTransportFw(tlm::tlm_generic_payload& payload,
                                     tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);
    void bTransport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);
    void respond();
    void fail(tlm::tlm_generic_payload& payload, const std::string& problem);

    /// Counts a node (its fidelity, fallback, bound and FLOPs) when its first slice starts.
    void countNode(const ComputeEstimate& whole);
    /// Adds `ps` of busy time to the tensor (or vector) totals and to `unit`'s.
    void countBusy(bool tensor, Unit& unit, std::uint64_t ps);
    std::vector<Time>& freeFor(bool tensor)
    {
        return tensor || shared ? tensorFreeAt : vectorFreeAt;
    }

    const AccelConfig& config;
    // Tensor and vector work of a unit take turns on one free time (UnitSharing::Shared).
    bool shared = false;
    UnitTimings unitTimings;
    std::vector<Unit> units;
    std::vector<Time> tensorFreeAt;
    std::vector<Time> vectorFreeAt;
    TimedQueue<tlm::tlm_generic_payload*> done{"done"};
    // The references taken on transactions in `done`; given back on completion, or when the
    // engine is destroyed with a run abandoned mid-transaction.
    HeldPayloads held;
    std::uint64_t pending = 0;
    Timeline* timeline = nullptr;
    std::uint32_t timelineProcess = 0;

    Counter& roofline;
    Counter& gpuTiles;
    Counter& systolic;
    Counter& vector;
    Counter& fallbacks;
    Counter& memoryBound;
    Scalar& flops;
    Scalar& tensorBusy;
    Scalar& vectorBusy;
};

} // namespace etsim::accel
