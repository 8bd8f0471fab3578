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
#include <vector>

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

/// Transactions of one size that each completed `latencyPs` after their arrival.
struct TransferGroup {
    std::uint64_t bytes = 0;
    std::uint64_t latencyPs = 0;
    std::uint64_t count = 0;
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
    /// Whether `other` serves every transaction as this memory does (the same parameters), so
    /// that a plan made on one holds on the other: the accelerators of a platform share their
    /// plans (StreamPlanCache.h) while their memories are alike.
    virtual bool sameTiming(const StreamMemory& other) const = 0;
    /// Accepts `bytes` arriving at `arrivalPs` and returns their completion, ps.
    virtual std::uint64_t complete(std::uint64_t arrivalPs, std::uint64_t bytes, bool write) = 0;
    /// Records a node's whole stream at once, as complete() for each of its transactions in
    /// turn would: the transactions of each group, `turnarounds` changes of direction, and the
    /// memory left in `after`. The streaming fast path commits a node that ran alone with it.
    virtual void completeStream(const std::vector<TransferGroup>& transfers,
                                std::uint64_t turnarounds,
                                const MemoryServer& after) = 0;
};

} // namespace etsim::accel
