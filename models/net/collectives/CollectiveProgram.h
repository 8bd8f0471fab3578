#pragma once
// A custom collective algorithm as plain data: for every rank of the algorithm (a position in
// the communicator group), a list of operations with their dependencies. Loaders (MSCCL XML,
// Chakra algorithm traces; platforms/collectives/) fill it; CustomAlgorithm times it and
// verifyProgram() proves what it computes.
//
// The data model is MSCCL's: every rank has an input, an output and a scratch buffer, each a
// row of equal chunks; an operation moves `count` consecutive chunks. Operations of one rank
// run as soon as their dependencies are done (a threadblock's steps depend on the step before;
// other ordering is explicit). Messages between two ranks on one channel match in order.

#include "kernel/Extensions.h"

#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace etsim::net {

inline constexpr std::uint32_t noPeer = std::numeric_limits<std::uint32_t>::max();

enum class ProgramBuffer : std::uint8_t { Input, Output, Scratch };

/// What an operation does; names are MSCCL's step types.
enum class ProgramOpKind : std::uint8_t {
    Send,               ///< s: send src to sendPeer
    Recv,               ///< r: receive from recvPeer into dst
    RecvReduceCopy,     ///< rrc: dst = src + received
    RecvReduceSend,     ///< rrs: send src + received (nothing stored)
    RecvCopySend,       ///< rcs: dst = received, and send it on
    RecvReduceCopySend, ///< rrcs: dst = src + received, and send it on
    Copy,               ///< cpy: dst = src
    Reduce,             ///< re: dst = dst + src
    Nop,                ///< nop: only orders other operations
};

const char* mscclName(ProgramOpKind kind);
/// The kind of an MSCCL step type ("rrc"), or nullopt.
std::optional<ProgramOpKind> opKindFromMscclName(std::string_view name);
/// "i", "o", "s" and back.
const char* mscclName(ProgramBuffer buffer);
std::optional<ProgramBuffer> bufferFromMscclName(std::string_view name);
/// MSCCL's coll names (allreduce, allgather, reduce_scatter, alltoall) and back; nullptr /
/// nullopt for other collectives.
const char* mscclCollectiveName(CollectiveType type);
std::optional<CollectiveType> collectiveFromMscclName(std::string_view name);
bool receives(ProgramOpKind kind);
bool sends(ProgramOpKind kind);
/// Whether the operation adds two chunks (reduction cost, verifier's union).
bool reduces(ProgramOpKind kind);

struct ChunkRef {
    ProgramBuffer buffer = ProgramBuffer::Input;
    std::uint32_t offset = 0;
};

/// An operation's dependencies: two inline (nearly every operation has one or two), more on
/// the heap, so that a program of millions of operations does not allocate for each.
class OpDeps {
public:
    OpDeps() = default;
    OpDeps(const OpDeps& other) { *this = other; }
    OpDeps(OpDeps&&) noexcept = default;
    OpDeps& operator=(const OpDeps& other);
    OpDeps& operator=(OpDeps&&) noexcept = default;
    ~OpDeps() = default;

    void push_back(std::uint32_t dep);
    void clear() { count = 0; }
    std::size_t size() const { return count; }
    bool empty() const { return count == 0; }
    const std::uint32_t* begin() const { return heap ? heap.get() : local.data(); }
    const std::uint32_t* end() const { return begin() + count; }
    std::uint32_t operator[](std::size_t index) const { return begin()[index]; }

private:
    std::array<std::uint32_t, 2> local{};
    std::uint32_t count = 0;
    std::uint32_t capacity = 2;
    std::unique_ptr<std::uint32_t[]> heap;
};

struct ProgramOp {
    ProgramOpKind kind = ProgramOpKind::Nop;
    std::uint32_t sendPeer = noPeer;
    std::uint32_t recvPeer = noPeer;
    /// Messages match per (source, destination, channel) in operation order.
    std::uint32_t channel = 0;
    /// The MSCCL threadblock it belongs to (kept so that a program can be written back).
    std::uint32_t threadblock = 0;
    ChunkRef src;
    ChunkRef dst;
    std::uint32_t count = 1;
    /// Operations of the same rank (indices into RankProgram::ops) that must be done first.
    OpDeps deps;
    /// Message bytes fixed by the file (Chakra comm_size without chunk attributes); 0 = count
    /// chunks of the phase's chunk size.
    std::uint64_t fixedBytes = 0;
    /// Where the operation was written (CollectiveProgram::where tells it): the line of the
    /// MSCCL step, the id of the Chakra node, or the operation's index when generated. Kept as
    /// numbers, not text: programs hold millions of operations and messages name a few.
    std::uint64_t origin = 0;
    /// The MSCCL step's number in its threadblock.
    std::uint32_t step = 0;
    /// The Chakra node's name: RankProgram::names from nameBegin, nameSize bytes.
    std::uint32_t nameBegin = 0;
    std::uint32_t nameSize = 0;
};

struct RankProgram {
    std::vector<ProgramOp> ops;
    /// The Chakra nodes' names, one after another (ProgramOp::nameBegin).
    std::string names;
};

/// What `origin` of the operations means.
enum class ProgramOrigin : std::uint8_t {
    Generated, ///< "SOURCE gpu 0 op 3 (rrs)"
    Msccl,     ///< "ring.xml:14 (gpu 0 tb 0 step 3 rrs)"
    Chakra,    ///< "PREFIX.0.et node 5 (rrs 5)"
};

struct CollectiveProgram {
    std::string name;
    /// The file (or trace prefix) it was read from.
    std::string source;
    CollectiveType type = CollectiveType::AllReduce;
    /// Chunks of each rank's input and output buffers, and the scratch buffer's size.
    std::uint32_t inputChunks = 0;
    std::uint32_t outputChunks = 0;
    std::uint32_t scratchChunks = 0;
    /// MSCCL nchunksperloop: the collective's size divided by it is the chunk size.
    std::uint32_t chunksPerLoop = 0;
    /// Input and output are one buffer (the input sits at rank * inputChunks of the output for
    /// all-gather, at rank * outputChunks of the input for reduce-scatter).
    bool inPlace = false;
    /// False when the file says what is sent but not which chunks (plain Chakra traces): the
    /// verifier then checks matching and deadlocks only.
    bool chunksKnown = true;
    std::vector<RankProgram> ranks;
    ProgramOrigin origin = ProgramOrigin::Generated;

    std::uint32_t rankCount() const { return static_cast<std::uint32_t>(ranks.size()); }
    /// Where operation `op` of `rank` was written, for messages (see ProgramOrigin).
    std::string where(std::uint32_t rank, std::uint32_t op) const;
};

} // namespace etsim::net
