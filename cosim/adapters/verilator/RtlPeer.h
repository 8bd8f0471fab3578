#pragma once
// The RTL peer: serves a co-simulation session (cosim/peer/PeerSession.h) for an
// accelerator's compute engine by running each GEMM transaction on the Verilated tile engine
// (GemmTile.h), clock by clock, and answering at arrival + cycles / clock. etsim-rtl is this
// loop behind a command line; tests run it on a thread.
//
// One engine: GEMMs run one after another in arrival order (a GEMM starts when it arrives or
// when the previous one ends), as a compute unit's tensor unit does in the local model. A GEMM
// with batch B runs as B commands. A transaction that is one slice of a streamed node (the
// node attributes etsim.slice / etsim.slices, set by the platform) takes its share of the
// node's time. A transaction without a GEMM shape is answered with an error status: the
// platform sends only GEMMs here.

#include "cosim/adapters/verilator/GemmTile.h"
#include "cosim/peer/PeerSession.h"

#include <cstdint>
#include <string>

namespace etsim::rtl {

/// Node attributes marking one slice of a streamed node (see ComputeSlice.h).
inline constexpr const char* sliceAttribute = "etsim.slice";
inline constexpr const char* slicesAttribute = "etsim.slices";

struct RtlPeerOptions {
    std::uint32_t rows = 16;
    std::uint32_t cols = 16;
    /// Tile clock, Hz.
    double clockHz = 1e9;
    /// Operand memory read latency, cycles (>= 1).
    std::uint32_t memoryLatency = 2;
    FoldMode folds = FoldMode::Sampled;
};

/// Reads the CONFIG text the platform sends ("key: value" lines: rows, cols, clock_hz) over
/// `options`; unknown keys are ignored. Throws CosimError for a value that is not a number.
RtlPeerOptions applyDescription(RtlPeerOptions options, const std::string& description);

/// Smallest time any GEMM takes on the tile (1x1x1: L + 3 cycles), ps: the longest lookahead
/// the peer accepts.
std::uint64_t minimumGemmPs(const RtlPeerOptions& options);

/// Cycles to ps at `clockHz`, rounded to the nearest ps.
std::uint64_t cyclesToPs(std::uint64_t cycles, double clockHz);

struct RtlPeerReport {
    std::uint64_t requests = 0;
    std::uint64_t gemms = 0;
    /// Transactions without a GEMM shape (answered with an error status).
    std::uint64_t refused = 0;
    /// Cycles charged to GEMMs (after fold sampling and batch).
    std::uint64_t cycles = 0;
    /// Clock edges actually simulated, and the wall time spent in the RTL, seconds.
    std::uint64_t simulatedEdges = 0;
    double rtlSeconds = 0.0;
    std::uint64_t lastEventPs = 0;
};

/// Serves `session` until the host terminates it; throws CosimError on link failures.
RtlPeerReport
runRtlPeer(cosim::PeerSession& session, GemmTile& tile, const RtlPeerOptions& options);

} // namespace etsim::rtl
