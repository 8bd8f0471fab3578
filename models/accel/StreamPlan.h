#pragma once
// The streaming fast path's arithmetic: the times that one node's per-chunk transactions
// (docs/accel.md, SRAM and streaming) would produce when the node has the accelerator's DMA
// engines, its compute engine and its memory to itself. It replays the per-chunk protocol of
// Accelerator.cpp event by event in plain C++ (two staging buffers, a FIFO of loads over
// dma.engines, each load lasting at least bytes / dma.bandwidth, one compute slice per chunk),
// asking the memory (StreamMemory::serve) and the engine (ComputeEngine::place) for their
// times on copies of their state, so no timing rule is written twice.

#include "kernel/Units.h"
#include "models/accel/ComputeEngine.h"
#include "models/accel/StreamMemory.h"

#include <cstdint>
#include <vector>

namespace etsim::accel {

/// One chunk's events, as the per-chunk transactions would have them.
struct ChunkTimes {
    std::uint64_t bytes = 0;
    Time queued;      // the load enters the DMA queue
    Time sent;        // the load reaches the memory
    Time loaded;      // the load completes
    Time computeSent; // compute nodes: the chunk's slice reaches the engine
    Time computed;    // compute nodes: the slice completes
};

struct StreamPlan {
    /// Chunks in order (empty for a compute node that fits in SRAM: one slice, `whole`).
    std::vector<ChunkTimes> chunks;
    /// Compute nodes: the slice of a node that fits (chunks empty).
    ChunkTimes whole;
    bool compute = false;
    bool tensor = false;
    ComputeEstimate estimate;
    /// When the node's last event happens.
    Time done;
    // Scratch space kept between nodes: the engine's free times, the DMA engines' busy ends.
    std::vector<Time> engineFree;
    std::vector<Time> engines;
};

struct StreamShape {
    Time start;
    std::uint64_t streamBytes = 0;
    std::uint64_t chunkBytes = 0;
    std::uint32_t dmaEngines = 1;
    Bandwidth dmaBandwidth;
    /// The chunks are writes (a MemStore node); otherwise reads.
    bool write = false;
};

/// Fills `plan` for a compute node (`engine` non-null: loads and slices) or a memory node
/// (`engine` null: loads only) of `shape`. `plan.chunks` keeps its capacity between calls.
void planStream(StreamPlan& plan,
                const StreamShape& shape,
                const StreamMemory& memory,
                const ComputeEngine* engine,
                const EtNodeInfo& node);

} // namespace etsim::accel
