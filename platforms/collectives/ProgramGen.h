#pragma once
// The built-in algorithms written out as CollectivePrograms (for `etsim gen collective`):
// starting points to edit, and independent inputs for tests. Each program moves the same
// bytes in the same step pattern as its built-in counterpart in models/net/collectives/.
//   ring              all-reduce (p chunks, in place), reduce-scatter, all-gather
//   direct            all-reduce, reduce-scatter, all-gather, all-to-all (one threadblock per
//                     peer)
//   halving_doubling  all-reduce, reduce-scatter, all-gather on a power-of-two group
//   double_binary_tree  all-reduce: half the data up and down each of the built-in algorithm's
//                     two trees (chunk t on tree t and channel t); each rank runs its part of
//                     tree 1 after its part of tree 0, so the program takes longer than the
//                     built-in algorithm, whose trees carry separate chunks side by side
// writeMsccl() prints a program as MSCCL XML (threadblocks as recorded in the operations).

#include "models/net/NetConfig.h"
#include "models/net/collectives/CollectiveProgram.h"

#include <string>

namespace etsim::platform {

/// Throws etsim::Error for an algorithm or collective not listed above, or a bad rank count.
net::CollectiveProgram
generateProgram(net::AlgorithmKind algorithm, CollectiveType type, std::uint32_t ranks);

/// MSCCL XML text; throws etsim::Error for a program that MSCCL cannot express (an operation
/// with more than one dependency outside its threadblock).
std::string writeMsccl(const net::CollectiveProgram& program);

} // namespace etsim::platform
