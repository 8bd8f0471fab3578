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

private:
    double bytesPerPs;
    std::uint64_t latencyPs;
    std::uint64_t freePs = 0;
    Counter& transactions;
    Counter& bytesMoved;
    Distribution& latency;
};

} // namespace etsim::hbm
