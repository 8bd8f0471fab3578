#pragma once
// Proves what a CollectiveProgram computes, without timing.
//
// 1. Structure: peers, chunk ranges and dependencies in range.
// 2. Matching: per (source, destination, channel) the n-th sending operation meets the n-th
//    receiving one; a receive that no send matches (a deadlock) or a send nobody receives is
//    named with its rank, chunk and step.
// 3. Order: operations plus message edges must form a DAG; a cycle (a deadlock) is named.
// 4. Data: every chunk is tracked symbolically as (which chunk, whose contributions), the
//    contributions as sets of rank intervals. Operations run in a topological order; a
//    reduction that adds a contribution twice or adds different chunks fails at once, and at
//    the end every rank's output must hold what the collective requires (all-reduce: every
//    chunk reduced over all ranks; reduce-scatter: the rank's shard reduced over all ranks;
//    all-gather: every rank's input; all-to-all: chunk j of source s is s's chunk for this
//    rank). The first wrong rank and chunk are named with the step that last wrote it.
//
// Every failure throws etsim::Error starting with the program's source.

#include "models/net/collectives/CollectiveProgram.h"

#include <cstdint>
#include <vector>

namespace etsim::net {

/// For every operation: the (rank, op) its message goes to / comes from (noPeer if none).
struct OpLink {
    std::uint32_t rank = noPeer;
    std::uint32_t op = noPeer;
};
struct ProgramMatching {
    /// [rank][op]: the receiving end of the op's send.
    std::vector<std::vector<OpLink>> sendTo;
    /// [rank][op]: the sending end of the op's receive.
    std::vector<std::vector<OpLink>> recvFrom;
};

/// Steps 1 and 2 above; throws etsim::Error.
ProgramMatching matchProgram(const CollectiveProgram& program);

struct VerifyResult {
    std::uint64_t operations = 0;
    std::uint64_t messages = 0;
    /// False when the program does not say which chunks move (see chunksKnown).
    bool dataChecked = false;
    ProgramMatching matching;
};

/// Steps 1-4; throws etsim::Error naming the first problem.
VerifyResult verifyProgram(const CollectiveProgram& program);

} // namespace etsim::net
