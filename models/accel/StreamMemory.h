#pragma once
// What the accelerator's streaming fast path needs of its memory: the memory's own timing
// arithmetic, callable ahead of time. The platform hands it over only for a memory that the
// accelerator alone uses and whose timing is fixed at arrival (the analytic HBM); with any
// other memory (the detailed HBM, a co-simulation peer, shared remote memory) the accelerator
// sends one TLM transaction per DMA chunk.
//
// Contract: serve() is a pure function of its arguments and the model's parameters, invariant
// under a shift of time (arrival and server state d later give a completion and a state d
// later), and complete() is serve() on the memory's own state plus its stats. The fast path plans a
// node's chunks with serve() on a copy of freeAt(), then commits the chunks that happened with
// complete() in the same order, so the memory ends in the state (and with the stats) that the
// per-chunk transactions would have left.

#include <cstdint>

namespace etsim::accel {

/// What the memory's timing depends on between transactions.
struct MemoryServer {
    /// When the memory is next free, ps.
    std::uint64_t freePs = 0;
    /// The direction of the last transaction (a read/write turnaround costs time), and
    /// whether there was one.
    bool lastWrite = false;
    bool used = false;
};

class StreamMemory {
public:
    virtual ~StreamMemory() = default;
    /// The memory's state now.
    virtual MemoryServer state() const = 0;
    /// Completion, ps, of `bytes` (a write when `write`) arriving at `arrivalPs` on a memory
    /// in `server` (advanced); records nothing.
    virtual std::uint64_t
    serve(MemoryServer& server, std::uint64_t arrivalPs, std::uint64_t bytes, bool write) const = 0;
    /// The state that serves every arrival at or after `fromPs` as `server` does, written one
    /// way: a server idle for such arrivals (free, turnaround included, by `fromPs`) becomes
    /// {fromPs, unused}, any other keeps its times. The streaming plan's cache
    /// (StreamPlanCache.h) compares states in this form.
    virtual MemoryServer settled(const MemoryServer& server, std::uint64_t fromPs) const = 0;
    /// Accepts `bytes` arriving at `arrivalPs` and returns their completion, ps.
    virtual std::uint64_t complete(std::uint64_t arrivalPs, std::uint64_t bytes, bool write) = 0;
    /// Records `times` transactions of `bytes`, each completing `latencyPs` after its arrival,
    /// none turning the direction around, as complete() would for each,
    /// and leaves the memory in state `after`: the streaming plan commits a run of repeating
    /// chunks (StreamPlan.h) with one call per chunk of its period.
    virtual void completeRepeated(std::uint64_t bytes,
                                  std::uint64_t latencyPs,
                                  std::uint64_t times,
                                  const MemoryServer& after) = 0;
};

} // namespace etsim::accel
