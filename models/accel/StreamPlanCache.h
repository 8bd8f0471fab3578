#pragma once
// Plans of earlier nodes, reused. A training step runs the same kernels over and over (every
// layer, every micro-batch), and a node's streaming plan (StreamPlan.h) depends only on its
// shape and on the state it starts in, relative to its start: the plan is invariant under a
// shift of time. So a node whose shape, compute time and relative starting state equal an
// earlier node's gets that node's plan, moved to its own start, instead of a new walk.
//
// The starting state is compared as a next chunk sees it, so states that differ only in ways
// no chunk of the node can observe count as one: a unit free before the node starts is as
// free as one free at its start (ComputeEngine::place takes the later of the two), and the
// memory's state is the one StreamMemory::settled() gives for arrivals from the start on.
// tests/models/accel/StreamPlanTest.cpp checks reused plans against new ones on random nodes.

#include "models/accel/StreamPlan.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace etsim::accel {

class StreamPlanCache {
public:
    /// Keeps the plans of up to `capacity` distinct (shape, state) pairs; when it is full the
    /// next new one empties it (a step's kernels recur in a fixed order, so what is dropped
    /// comes back within a cycle).
    explicit StreamPlanCache(std::size_t capacity = 256) : capacity(capacity) {}

    /// Fills `plan` exactly as planStream() with the same arguments would. Plans made on one
    /// memory serve another of the same timing (StreamMemory::sameTiming).
    void plan(StreamPlan& plan,
              const StreamShape& shape,
              const StreamMemory& memory,
              const ComputeEstimate* estimate,
              bool tensor,
              const std::vector<Time>& unitsFreeAt);

    /// Plans served from the cache, and planned anew.
    std::uint64_t hits() const { return hitCount; }
    std::uint64_t misses() const { return missCount; }
    std::size_t size() const { return entries.size(); }

private:
    // Units compared in a key; an engine with more is planned anew every time.
    static constexpr std::size_t maxUnits = 8;
    struct Key {
        std::uint64_t readBytes = 0;
        std::uint64_t writeBytes = 0;
        std::uint64_t chunkBytes = 0;
        std::uint64_t dmaBytesPerSecond = 0; // the DMA bandwidth's bits
        std::uint64_t computePs = 0;
        std::int64_t memoryFree = 0; // the settled memory's free time minus the start
        std::uint32_t dmaEngines = 0;
        std::uint32_t units = 0;
        std::array<std::uint64_t, maxUnits> unitFree{}; // after the start, sorted
        bool compute = false;
        bool tensor = false;
        bool memoryUsed = false;
        bool memoryLastWrite = false;
        bool stepOverPeriods = true;
        bool operator==(const Key& other) const;
    };
    struct KeyHash {
        std::size_t operator()(const Key& key) const;
    };
    // A plan with every time relative to its node's start.
    struct Entry {
        std::vector<ChunkTimes> chunks; // the walked ones (StreamPlan::chunks)
        std::vector<ChunkRun> runs;
        std::size_t chunkCount = 0;
        ChunkTimes whole;
        Time done;
        std::vector<TransferGroup> transfers;
        MemoryServer memoryEnd; // freePs relative
    };
    static bool makeKey(Key& key,
                        const StreamShape& shape,
                        const StreamMemory& memory,
                        const ComputeEstimate* estimate,
                        bool tensor,
                        const std::vector<Time>& unitsFreeAt,
                        bool stepOverPeriods);
    static Entry relative(const StreamPlan& plan, Time start);
    static void place(const Entry& entry, StreamPlan& plan, Time start);

    std::size_t capacity;
    const StreamMemory* plannedFor = nullptr;
    std::unordered_map<Key, Entry, KeyHash> entries;
    std::uint64_t hitCount = 0;
    std::uint64_t missCount = 0;
};

} // namespace etsim::accel
