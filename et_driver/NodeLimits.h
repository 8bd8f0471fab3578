#pragma once
// The limits a trace node must respect to be simulated at all, shared by `etsim trace
// validate` (TraceValidator) and the run (NodeLowering), so that both apply the same rules:
// peers that are ranks of the job, sizes, operation counts, GEMM shapes and durations whose
// simulated time fits etsim's clock (2^64 ps, about 213 days), no negative counts.
// docs/cli.md lists the limits.

#include "et_driver/TraceNode.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace etsim::et {

/// Largest comm_size or tensor_size of one node: 2^50 B (1 PiB), 10^5 times the largest
/// tensor of any real model, yet small enough that every byte count etsim derives from it
/// (ring steps, chunks, reductions) stays exact in 64 bits.
inline constexpr std::uint64_t maxNodeBytes = std::uint64_t{1} << 50;
/// Largest num_ops of one node (and 2 x m x n x k x batch of its GEMM): 2^60, about 10^18
/// operations, 20 minutes of a 10^15 FLOP/s accelerator.
inline constexpr std::uint64_t maxNodeOperations = std::uint64_t{1} << 60;
/// Largest duration_micros: etsim's simulated clock ends at 2^64 ps, 18,446,744,073,709 us.
inline constexpr std::uint64_t maxDurationMicros = UINT64_MAX / 1'000'000;

enum class NodeLimit {
    PeerRank,      // comm_src / comm_dst not a rank of the job
    NegativeValue, // a count or size below zero
    Beyond,        // a size, count, shape or duration above its limit
};

struct LimitViolation {
    NodeLimit limit = NodeLimit::Beyond;
    std::string problem; ///< "comm_size 4611686018427387904 B is above the limit of 1 PiB"
    std::string fix;     ///< what to do about it
};

/// Every limit `node` breaks. `rankCount` is the job's rank count (0 when unknown: peers are
/// then not checked); `rank` the node's own rank, to check comm_src of a send and comm_dst of
/// a recv when they are given (ignored when rankCount is 0).
std::vector<LimitViolation>
checkNodeLimits(const TraceNode& node, std::size_t rankCount, std::uint32_t rank);

/// Why a typed attribute the node needs is not there: "has no comm_size" when the node holds
/// no attribute of that name, or "has a comm_size etsim cannot read (double_val): ..." when it
/// holds one in an encoding or range the typed reader refused.
std::string missingAttributeText(const TraceNode& node, std::string_view name);

} // namespace etsim::et
