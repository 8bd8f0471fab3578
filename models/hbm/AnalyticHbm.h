#pragma once
// The analytic fidelity as plain C++: one FIFO server per device that moves a transaction's
// bytes at the device peak × the preset's calibrated efficiency, then adds a fixed latency.
// completion = max(arrival, server free) + bytes / (peak × efficiency) + latency.

#include "kernel/Stats.h"
#include "models/hbm/HbmConfig.h"

#include <cstdint>

namespace etsim::hbm {

class AnalyticHbm {
public:
    /// `config` must be validated; stats go into `stats`.
    AnalyticHbm(const HbmConfig& config, StatGroup& stats);
    AnalyticHbm(const AnalyticHbm&) = delete;
    AnalyticHbm& operator=(const AnalyticHbm&) = delete;

    /// Accepts a transaction of `bytes` arriving at `arrivalPs` (ps) and returns its
    /// completion time, ps. Transactions are served in call order.
    std::uint64_t complete(std::uint64_t arrivalPs, std::uint64_t bytes);

    /// When the server is next free, ps (the end of the last transaction's data transfer).
    std::uint64_t freeAt() const { return freePs; }
    /// The completion, ps, of a transaction of `bytes` arriving at `arrivalPs` at a server that
    /// is free from `serverFreePs`, which it advances; nothing is recorded. complete() is this
    /// on the server's own state plus the stats, so a caller that plans transactions ahead
    /// (the accelerator's streaming fast path) uses the model's own arithmetic.
    std::uint64_t
    serve(std::uint64_t& serverFreePs, std::uint64_t arrivalPs, std::uint64_t bytes) const;

private:
    double bytesPerPs;
    std::uint64_t latencyPs;
    std::uint64_t freePs = 0;
    Counter& transactions;
    Counter& bytesMoved;
    Distribution& latency;
};

} // namespace etsim::hbm
