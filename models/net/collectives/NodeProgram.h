#pragma once
// A custom collective as ASTRA-sim's Collective API runs it (the system file's
// `*-implementation-custom` keys, docs/astra-compat.md): every algorithm rank's Chakra nodes as
// written, each issued as soon as its dependencies are done, with no steps, chunks or barrier.
// A COMM_SEND is a point-to-point message of its comm_size to comm_dst, a COMM_RECV a receive
// from comm_src (matched on comm_tag), a COMP node a delay. The fabric times the messages
// exactly as the point-to-point messages of the workload (CommEngine). Loaded by
// platforms/collectives/ChakraAlgorithm.h.

#include <cstdint>
#include <string>
#include <vector>

namespace etsim::net {

struct NodeProgramNode {
    enum class Kind : std::uint8_t { Send, Recv, Comp };
    Kind kind = Kind::Comp;
    /// Send: comm_dst; Recv: comm_src; an algorithm rank (a position in the group).
    std::uint32_t peer = 0;
    std::uint64_t tag = 0;
    /// comm_size, B (messages only).
    std::uint64_t bytes = 0;
    /// Comp: duration_micros x 1000 ns, or 1 ns when it is 0; ps.
    std::uint64_t durationPs = 0;
    /// The Chakra node id, for messages.
    std::uint64_t nodeId = 0;
    /// Nodes of the same rank (indices) that wait for this one.
    std::vector<std::uint32_t> dependents;
    /// How many nodes this one waits for.
    std::uint32_t dependencies = 0;
};

struct NodeProgram {
    /// The trace prefix as the system file gives it.
    std::string source;
    /// [algorithm rank][node], in file order.
    std::vector<std::vector<NodeProgramNode>> ranks;

    std::uint32_t rankCount() const { return static_cast<std::uint32_t>(ranks.size()); }
};

} // namespace etsim::net
