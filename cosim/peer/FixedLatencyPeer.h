#pragma once
// The reference peer: a fixed-latency component written against PeerSession, used by the
// tests and as the example for adapter writers. A transaction that reaches it at t completes
// at t + latency + bytes × psPerByte (bytes from the node info; a recorded durationPs, when
// set, replaces the formula but never goes below the latency), the same rule as a local
// FixedTarget-like model, so local and proxied runs can be compared.

#include "cosim/peer/PeerSession.h"

#include <cstdint>

namespace etsim::cosim {

struct FixedLatencyOptions {
    std::uint64_t latencyPs = 1000000; // 1 us
    std::uint64_t psPerByte = 0;
    /// Fault injection for tests: after this many requests stop answering (stall) or send a
    /// malformed frame; 0 = never.
    std::uint64_t stallAfter = 0;
    std::uint64_t badFrameAfter = 0;
};

struct FixedLatencyReport {
    std::uint64_t requests = 0;
    std::uint64_t responses = 0;
    /// Conservative sync: requests that arrived with a time before the peer's clock (must
    /// stay 0).
    std::uint64_t causalityViolations = 0;
    std::uint64_t lastEventPs = 0;
};

/// Serves one session until the host terminates it; throws CosimError on link failures.
FixedLatencyReport runFixedLatencyPeer(PeerSession& session, const FixedLatencyOptions& options);

} // namespace etsim::cosim
