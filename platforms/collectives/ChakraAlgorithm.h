#pragma once
// A collective algorithm as Chakra traces, one per algorithm rank: PREFIX.<rank>.et holding
// COMM_SEND, COMM_RECV and COMP nodes (ASTRA-sim's custom-collective input). Ranks are
// positions in the communicator group; messages match per (source, destination, comm_tag) in
// node order; dependencies are the nodes' data and control dependencies.
//
// Plain traces (as ASTRA-sim's converter writes them) say only who sends how many bytes:
// every message has its comm_size whatever the collective's size, a COMP node only orders
// its dependants, and the verifier can check matching and deadlocks but not the data.
// etsim's own traces (writeChakraAlgorithm) add, on every node, which chunks move:
//   chunk_op    the MSCCL step type (s, r, rrc, rrs, rcs, rrcs, cpy, re, nop); the RECV node of
//               rrs/rcs/rrcs is followed by a SEND node with chunk_op "send" depending on it
//   src_buf, dst_buf ("i", "o", "s"), src_off, dst_off, chunk_count
// and the metadata record carries collective, input_chunks, output_chunks, scratch_chunks and
// in_place. Message sizes are then chunk_count chunks of the phase's chunk, like MSCCL's.

#include "models/net/collectives/CollectiveProgram.h"
#include "models/net/collectives/NodeProgram.h"

#include <cstdint>
#include <string>

namespace etsim::platform {

/// How many threads loadChakraAlgorithm reads with unless told: the cores, at most 4.
unsigned defaultReadThreads();

/// Reads PREFIX.0.et, PREFIX.1.et, ... (as many as exist, gzip or plain); throws etsim::Error
/// naming the file and node, e.g. for a rank file missing from the sequence or a peer with no
/// file. `threads` read rank files at once (1: one after another); the program and the error,
/// the first in rank order, are the same for any number.
net::CollectiveProgram loadChakraAlgorithm(const std::string& prefix,
                                           unsigned threads = defaultReadThreads());

/// The same files node by node, as ASTRA-sim's Collective API runs them (NodeProgram.h): every
/// node's comm_size, comm_tag and duration as written, whatever the chunk attributes. Throws
/// etsim::Error naming the file and node (a missing rank file, a peer outside the algorithm,
/// a node type other than COMM_SEND, COMM_RECV and COMP, a dependency the file lacks).
net::NodeProgram loadChakraNodeProgram(const std::string& prefix);

/// Writes `program` as PREFIX.<rank>.et; comm_size is chunk_count chunks of `bytes` /
/// input_chunks (what ASTRA-sim will send). Each file is written to a temporary name first.
void writeChakraAlgorithm(const net::CollectiveProgram& program,
                          const std::string& prefix,
                          std::uint64_t bytes);

} // namespace etsim::platform
