#pragma once
// The streaming fast path's arithmetic: the times that one node's per-chunk transactions
// (docs/accel.md, SRAM and streaming) would produce when the node has the accelerator's DMA
// engines, its compute engine and its memory to itself. It replays the per-chunk protocol of
// Accelerator.cpp event by event in plain C++ (two staging buffers, a FIFO of loads over
// dma.engines, each load lasting at least bytes / dma.bandwidth, one compute slice per chunk),
// asking the memory (StreamMemory::serve) and the engine (ComputeEngine::place) for their
// times on copies of their state, so no timing rule is written twice.
//
// Stepping over periods. Every rule of that replay is a max or a sum of times, so the
// pipeline is invariant under a shift of time: two states that differ only by a shift d
// (every time in them d later) evolve alike, d apart, as long as the chunks fed to them are
// alike. Over a run of equal chunks (full chunks of one direction with equal slices, which is
// all of a stream but the last chunk of each direction) the state settles into a cycle: the
// state after chunk i is the state after chunk i - p shifted by d. From there on it repeats
// every p chunks, d later each time, so the plan records the rest of the run as a ChunkRun
// (chunk j = chunk j - p, d later) and goes on from the run's end: exact, and the cost
// follows the chunks before the pipeline settles, not the node's size.

#include "kernel/Units.h"
#include "models/accel/ComputeEngine.h"
#include "models/accel/StreamMemory.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace etsim::accel {

/// A node's DMA stream is `readBytes` read from HBM, then `writeBytes` written to it, each cut
/// into chunks of `chunkBytes` (the last chunk of each part may be shorter). A memory node
/// moves its own bytes one way (plus, for a load, the write-backs it causes); a compute node
/// reads what is not on chip and writes what the on-chip memory gives back
/// (residency/OnChipMemory.h). Its write chunks take their turn in the same pipeline of two
/// staging buffers as its reads: the model prices how transfers and compute overlap, not which
/// byte moves first.
struct StreamPiece {
    std::uint64_t offset = 0; // from the start of its part
    std::uint64_t bytes = 0;
    bool write = false;
};
/// Chunks of a stream.
std::uint64_t
streamChunks(std::uint64_t readBytes, std::uint64_t writeBytes, std::uint64_t chunkBytes);
/// Chunk `index` (< streamChunks) of a stream.
StreamPiece streamPiece(std::uint64_t readBytes,
                        std::uint64_t writeBytes,
                        std::uint64_t chunkBytes,
                        std::uint64_t index);
/// The same, given the stream's read chunks ceilDiv(readBytes, chunkBytes), for a caller that
/// walks every chunk (no division per chunk).
StreamPiece streamPiece(std::uint64_t readBytes,
                        std::uint64_t writeBytes,
                        std::uint64_t chunkBytes,
                        std::uint64_t reads,
                        std::uint64_t index);

/// One chunk's events, as the per-chunk transactions would have them.
struct ChunkTimes {
    std::uint64_t bytes = 0;
    bool write = false;
    Time queued;      // the load enters the DMA queue
    Time sent;        // the load reaches the memory
    Time served;      // the memory's completion of it
    Time loaded;      // the load completes (served, or later when the DMA is slower)
    Time computeSent; // compute nodes: the chunk's slice reaches the engine
    Time computed;    // compute nodes: the slice completes
    Time sliceTime;   // compute nodes: the slice's share of the node's time
};

/// Chunks first..last (a whole number of periods) repeat the `period` chunks before them,
/// `shift` later at each repetition: chunk j is chunk j - period, shift later.
struct ChunkRun {
    std::uint64_t first = 0;
    std::uint64_t last = 0;
    std::uint64_t period = 1;
    Time shift;
    /// Where chunk first - period sits in StreamPlan::chunks (the period's chunks follow it).
    std::uint64_t base = 0;
    /// The memory's state after chunk `last`.
    MemoryServer memoryAfter;
    /// Repetitions of each of the period's chunks.
    std::uint64_t repetitions() const { return (last + 1 - first) / period; }
};

struct StreamPlan {
    /// The node has `chunkCount` chunks (none for a compute node that fits in SRAM: one
    /// slice, `whole`); chunk(i) gives any of them. `chunks` holds, in order, those that are
    /// not inside a run, so its size follows the chunks walked, not the node's size. The
    /// vector only grows, so a node after a longer walk re-initialises nothing.
    std::vector<ChunkTimes> chunks;
    std::size_t chunkCount = 0;
    /// The runs of repeating chunks, in order (StreamPlan.h, "Stepping over periods").
    std::vector<ChunkRun> runs;
    /// Chunk i's times.
    ChunkTimes chunk(std::uint64_t i) const;
    /// The run that holds chunk i, or nullptr.
    const ChunkRun* runOf(std::uint64_t i) const;
    /// Whether planStream steps over periods (on by default; tests compare with it off).
    bool stepOverPeriods = true;
    /// Compute nodes: the slice of a node that fits (chunkCount 0).
    ChunkTimes whole;
    bool compute = false;
    bool tensor = false;
    ComputeEstimate estimate;
    /// When the node's last event happens.
    Time done;
    /// Every chunk's transaction by size and memory latency, and the memory's state after the
    /// last: what committing the whole node records (StreamMemory::completeStream).
    std::vector<TransferGroup> transfers;
    MemoryServer memoryEnd;
    // Scratch space kept between nodes: the engine's free times, the DMA engines' busy ends.
    std::vector<Time> engineFree;
    std::vector<Time> engines;
};

struct StreamShape {
    Time start;
    /// Read first, then written (StreamPiece).
    std::uint64_t readBytes = 0;
    std::uint64_t writeBytes = 0;
    std::uint64_t chunkBytes = 0;
    std::uint32_t dmaEngines = 1;
    Bandwidth dmaBandwidth;
};

/// Fills `plan` for a compute node (`engine` non-null: loads and slices) or a memory node
/// (`engine` null: loads only) of `shape`. `plan.chunks` keeps its entries between calls.
void planStream(StreamPlan& plan,
                const StreamShape& shape,
                const StreamMemory& memory,
                const ComputeEngine* engine,
                const EtNodeInfo& node);

/// The same with the engine's part given: for a compute node `estimate` (the whole node's),
/// whether it runs on the tensor unit, and the units' free times (ComputeEngine::freeTimes);
/// `estimate` null for a memory node.
void planStream(StreamPlan& plan,
                const StreamShape& shape,
                const StreamMemory& memory,
                const ComputeEstimate* estimate,
                bool tensor,
                const std::vector<Time>& unitsFreeAt);

} // namespace etsim::accel
