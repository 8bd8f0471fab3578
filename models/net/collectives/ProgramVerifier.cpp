// Longer than most files (about 680 lines): the four steps of the proof (structure, matching,
// order, data; ProgramVerifier.h) share the program's numbering and the walk's order, and are
// read in sequence.
#include "models/net/collectives/ProgramVerifier.h"

#include "kernel/Error.h"

#include <algorithm>
#include <array>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>

namespace etsim::net {

namespace {

const char* bufferName(ProgramBuffer buffer)
{
    switch (buffer) {
    case ProgramBuffer::Input:
        return "input";
    case ProgramBuffer::Output:
        return "output";
    case ProgramBuffer::Scratch:
        return "scratch";
    }
    return "?";
}

std::string chunkText(const ChunkRef& ref)
{
    return std::string(bufferName(ref.buffer)) + " chunk " + std::to_string(ref.offset);
}

[[noreturn]] void fail(const CollectiveProgram& program,
                       std::uint32_t rank,
                       std::uint32_t op,
                       const std::string& problem)
{
    throw Error(program.source + ": " + program.where(rank, op) + ": " + problem);
}

using Span = std::pair<std::uint32_t, std::uint32_t>;

// A list of spans stored inline up to two (a ring's partial sums are one or two intervals),
// so copying chunk contents does not allocate; 32 bytes, as millions of them are held.
class SpanList {
public:
    SpanList() = default;
    SpanList(const SpanList& other) { *this = other; }
    SpanList(SpanList&&) noexcept = default;
    SpanList& operator=(SpanList&&) noexcept = default;
    SpanList& operator=(const SpanList& other)
    {
        if (this == &other)
            return *this;
        local = other.local;
        count = other.count;
        heap = other.heap ? std::make_unique<std::vector<Span>>(*other.heap) : nullptr;
        return *this;
    }
    ~SpanList() = default;

    std::size_t size() const { return count; }
    const Span& operator[](std::size_t index) const { return data()[index]; }
    Span& back() { return mutableData()[count - 1]; }
    void push_back(Span span)
    {
        if (count < local.size()) {
            local[count++] = span;
            return;
        }
        if (count == local.size())
            heap = std::make_unique<std::vector<Span>>(local.begin(), local.end());
        heap->push_back(span);
        ++count;
    }

private:
    const Span* data() const { return count <= local.size() ? local.data() : heap->data(); }
    Span* mutableData() { return count <= local.size() ? local.data() : heap->data(); }

    std::array<Span, 2> local{};
    std::unique_ptr<std::vector<Span>> heap;
    std::uint32_t count = 0;
};

// Rank contributions as sorted, disjoint, non-adjacent half-open intervals, so the verifier's
// cost stays linear in the operations for structured algorithms.
class RankSet {
public:
    static RankSet single(std::uint32_t rank)
    {
        RankSet set;
        set.spans.push_back(Span(rank, rank + 1));
        return set;
    }
    bool full(std::uint32_t ranks) const
    {
        return spans.size() == 1 && spans[0].first == 0 && spans[0].second == ranks;
    }
    bool only(std::uint32_t rank) const
    {
        return spans.size() == 1 && spans[0].first == rank && spans[0].second == rank + 1;
    }
    /// Adds `other`; returns a rank both hold, or noPeer when they were disjoint.
    std::uint32_t add(const RankSet& other)
    {
        SpanList merged;
        std::size_t a = 0;
        std::size_t b = 0;
        while (a < spans.size() || b < other.spans.size()) {
            bool takeA = b == other.spans.size() ||
                         (a < spans.size() && spans[a].first < other.spans[b].first);
            Span next = takeA ? spans[a++] : other.spans[b++];
            if (merged.size() > 0 && next.first < merged.back().second)
                return next.first;
            if (merged.size() > 0 && next.first == merged.back().second)
                merged.back().second = next.second;
            else
                merged.push_back(next);
        }
        spans = std::move(merged);
        return noPeer;
    }
    std::string text() const
    {
        std::string out;
        for (std::size_t index = 0; index < spans.size(); ++index) {
            const Span& span = spans[index];
            if (!out.empty())
                out += ",";
            out += std::to_string(span.first);
            if (span.second > span.first + 1)
                out += "-" + std::to_string(span.second - 1);
        }
        return "{" + out + "}";
    }
    /// The ranks below `ranks` it lacks, as text.
    std::string missing(std::uint32_t ranks) const
    {
        RankSet rest;
        std::uint32_t from = 0;
        for (std::size_t index = 0; index < spans.size(); ++index) {
            if (spans[index].first > from)
                rest.spans.push_back(Span(from, spans[index].first));
            from = spans[index].second;
        }
        if (from < ranks)
            rest.spans.push_back(Span(from, ranks));
        return rest.text();
    }

private:
    SpanList spans;
};

// What a chunk holds: contributions of `ranks` to chunk `index` (-1: nothing yet), and the
// operation that wrote it last.
struct Content {
    std::int32_t index = -1;
    RankSet ranks;
    std::uint32_t writer = noPeer;
};

std::uint32_t bufferSize(const CollectiveProgram& program, ProgramBuffer buffer)
{
    switch (buffer) {
    case ProgramBuffer::Input:
        return program.inputChunks;
    case ProgramBuffer::Output:
        return program.outputChunks;
    case ProgramBuffer::Scratch:
        return program.scratchChunks;
    }
    return 0;
}

void checkStructure(const CollectiveProgram& program)
{
    std::uint32_t ranks = program.rankCount();
    if (ranks < 2)
        throw Error(program.source + ": the algorithm has " + std::to_string(ranks) +
                    " ranks; a collective needs at least 2");
    // In place, one buffer holds input and output: an all-gather's input is the rank's part of
    // its output, a reduce-scatter's output the rank's part of its input, so the whole buffer
    // must hold every rank's part.
    if (program.inPlace && (program.type == CollectiveType::AllGather ||
                            program.type == CollectiveType::ReduceScatter)) {
        const bool gather = program.type == CollectiveType::AllGather;
        const std::uint64_t part = gather ? program.inputChunks : program.outputChunks;
        const std::uint64_t whole = gather ? program.outputChunks : program.inputChunks;
        if (part * ranks > whole)
            throw Error(program.source + ": an in-place " +
                        (gather ? "all-gather keeps each rank's input at rank × i_chunks of its "
                                  "output, so o_chunks"
                                : "reduce-scatter keeps each rank's output at rank × o_chunks of "
                                  "its input, so i_chunks") +
                        " must be at least " + std::to_string(ranks) + " × " +
                        std::to_string(part) + " = " + std::to_string(part * ranks) + ", got " +
                        std::to_string(whole));
    }
    for (std::uint32_t rank = 0; rank < ranks; ++rank) {
        const auto& ops = program.ranks[rank].ops;
        for (std::uint32_t index = 0; index < ops.size(); ++index) {
            const ProgramOp& op = ops[index];
            auto peer = [&](std::uint32_t value, const char* role) {
                if (value >= ranks || value == rank)
                    fail(program,
                         rank,
                         index,
                         std::string(mscclName(op.kind)) + " " + role + " rank " +
                             std::to_string(value) + ", which is " +
                             (value == rank ? "the rank itself"
                                            : "out of range (the algorithm has " +
                                                  std::to_string(ranks) + " ranks)"));
            };
            if (sends(op.kind))
                peer(op.sendPeer, "sends to");
            if (receives(op.kind))
                peer(op.recvPeer, "receives from");
            if (op.count == 0 && op.kind != ProgramOpKind::Nop)
                fail(program, rank, index, "cnt must be at least 1");
            if (!program.chunksKnown)
                continue;
            auto range = [&](const ChunkRef& ref, const char* role) {
                std::uint32_t size = bufferSize(program, ref.buffer);
                if (static_cast<std::uint64_t>(ref.offset) + op.count > size)
                    fail(program,
                         rank,
                         index,
                         std::string(role) + " " + chunkText(ref) + " with cnt " +
                             std::to_string(op.count) + " is out of range: the " +
                             bufferName(ref.buffer) + " buffer has " + std::to_string(size) +
                             " chunks");
            };
            bool readsSrc = op.kind == ProgramOpKind::Send || op.kind == ProgramOpKind::Copy ||
                            op.kind == ProgramOpKind::Reduce ||
                            op.kind == ProgramOpKind::RecvReduceCopy ||
                            op.kind == ProgramOpKind::RecvReduceSend ||
                            op.kind == ProgramOpKind::RecvReduceCopySend;
            bool writesDst = op.kind != ProgramOpKind::Send && op.kind != ProgramOpKind::Nop &&
                             op.kind != ProgramOpKind::RecvReduceSend;
            if (readsSrc)
                range(op.src, "source");
            if (writesDst)
                range(op.dst, "destination");
        }
        for (std::uint32_t index = 0; index < ops.size(); ++index)
            for (std::uint32_t dep : ops[index].deps)
                if (dep >= ops.size())
                    fail(program,
                         rank,
                         index,
                         "depends on operation " + std::to_string(dep) + " of rank " +
                             std::to_string(rank) + ", which does not exist");
    }
}

} // namespace

ProgramMatching matchProgram(const CollectiveProgram& program)
{
    checkStructure(program);
    std::uint32_t ranks = program.rankCount();
    ProgramMatching matching;
    matching.sendTo.resize(ranks);
    matching.recvFrom.resize(ranks);
    // (source, destination, channel) -> sending and receiving operations in order.
    using Key = std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>;
    std::map<Key, std::pair<std::vector<std::uint32_t>, std::vector<std::uint32_t>>> channels;
    for (std::uint32_t rank = 0; rank < ranks; ++rank) {
        const auto& ops = program.ranks[rank].ops;
        matching.sendTo[rank].assign(ops.size(), OpLink{});
        matching.recvFrom[rank].assign(ops.size(), OpLink{});
        // A rank's operations mostly talk to the same peers on the same channel: the last
        // connection each way is kept (map entries do not move).
        Key lastSend{noPeer, noPeer, noPeer};
        Key lastRecv{noPeer, noPeer, noPeer};
        std::vector<std::uint32_t>* sendList = nullptr;
        std::vector<std::uint32_t>* recvList = nullptr;
        for (std::uint32_t index = 0; index < ops.size(); ++index) {
            const ProgramOp& op = ops[index];
            if (sends(op.kind)) {
                Key key{rank, op.sendPeer, op.channel};
                if (!sendList || key != lastSend) {
                    sendList = &channels[key].first;
                    lastSend = key;
                }
                sendList->push_back(index);
            }
            if (receives(op.kind)) {
                Key key{op.recvPeer, rank, op.channel};
                if (!recvList || key != lastRecv) {
                    recvList = &channels[key].second;
                    lastRecv = key;
                }
                recvList->push_back(index);
            }
        }
    }
    for (const auto& [key, ends] : channels) {
        auto [source, destination, channel] = key;
        const auto& sent = ends.first;
        const auto& received = ends.second;
        std::size_t common = std::min(sent.size(), received.size());
        for (std::size_t n = 0; n < common; ++n) {
            matching.sendTo[source][sent[n]] = OpLink{destination, received[n]};
            matching.recvFrom[destination][received[n]] = OpLink{source, sent[n]};
            const ProgramOp& send = program.ranks[source].ops[sent[n]];
            const ProgramOp& recv = program.ranks[destination].ops[received[n]];
            if (send.count != recv.count || send.fixedBytes != recv.fixedBytes)
                fail(program,
                     destination,
                     received[n],
                     "receives " +
                         (recv.fixedBytes ? std::to_string(recv.fixedBytes) + " B"
                                          : std::to_string(recv.count) + " chunks") +
                         " but the send it matches (" + program.where(source, sent[n]) +
                         ") sends " +
                         (send.fixedBytes ? std::to_string(send.fixedBytes) + " B"
                                          : std::to_string(send.count) + " chunks"));
        }
        std::string counts =
            "rank " + std::to_string(source) + " sends " + std::to_string(sent.size()) +
            " messages to rank " + std::to_string(destination) + " on channel " +
            std::to_string(channel) + ", which receives " + std::to_string(received.size());
        if (received.size() > common) {
            const ProgramOp& op = program.ranks[destination].ops[received[common]];
            fail(program,
                 destination,
                 received[common],
                 "deadlock: rank " + std::to_string(destination) + " " + mscclName(op.kind) +
                     " into " + chunkText(op.dst) + " waits for a message that no send matches (" +
                     counts + ")");
        }
        if (sent.size() > common) {
            const ProgramOp& op = program.ranks[source].ops[sent[common]];
            fail(program,
                 source,
                 sent[common],
                 "rank " + std::to_string(source) + " " + mscclName(op.kind) + " of " +
                     chunkText(op.src) + " is never received (" + counts + ")");
        }
    }
    return matching;
}

VerifyResult verifyProgram(const CollectiveProgram& program)
{
    VerifyResult result;
    result.matching = matchProgram(program);
    const ProgramMatching& matching = result.matching;
    std::uint32_t ranks = program.rankCount();

    // Global numbering of operations and a topological order over dependencies and messages.
    std::vector<std::uint64_t> base(ranks + 1, 0);
    for (std::uint32_t rank = 0; rank < ranks; ++rank)
        base[rank + 1] = base[rank] + program.ranks[rank].ops.size();
    std::uint64_t total = base[ranks];
    result.operations = total;
    // Successors as one flat array (CSR): millions of operations, a few edges each.
    std::vector<std::uint32_t> waiting(total, 0);
    std::vector<std::uint64_t> firstEdge(total + 1, 0);
    auto forEachEdge = [&](auto&& edge) {
        for (std::uint32_t rank = 0; rank < ranks; ++rank) {
            const auto& ops = program.ranks[rank].ops;
            for (std::uint32_t index = 0; index < ops.size(); ++index) {
                std::uint64_t id = base[rank] + index;
                for (std::uint32_t dep : ops[index].deps)
                    edge(base[rank] + dep, id);
                const OpLink& from = matching.recvFrom[rank][index];
                if (from.rank != noPeer)
                    edge(base[from.rank] + from.op, id);
            }
        }
    };
    forEachEdge([&](std::uint64_t from, std::uint64_t to) {
        ++firstEdge[from + 1];
        ++waiting[to];
    });
    for (std::uint64_t id = 0; id < total; ++id)
        firstEdge[id + 1] += firstEdge[id];
    std::vector<std::uint64_t> edges(firstEdge[total]);
    {
        std::vector<std::uint64_t> fill(firstEdge.begin(), firstEdge.end() - 1);
        forEachEdge([&](std::uint64_t from, std::uint64_t to) { edges[fill[from]++] = to; });
    }
    for (std::uint32_t rank = 0; rank < ranks; ++rank)
        for (const OpLink& from : matching.recvFrom[rank])
            result.messages += from.rank != noPeer ? 1 : 0;
    auto successors = [&](std::uint64_t id) {
        return std::make_pair(edges.begin() + static_cast<std::ptrdiff_t>(firstEdge[id]),
                              edges.begin() + static_cast<std::ptrdiff_t>(firstEdge[id + 1]));
    };
    // Ready operations in the order they become ready (Kahn's walk, breadth first): the walk
    // then advances every rank by about one step at a time, a wavefront whose edges, counters
    // and chunks stay in cache from one step to the next. (Depth first, a walk through a ring
    // runs around it a thousand times ahead and comes back to operations long evicted.)
    std::vector<std::uint64_t> order;
    order.reserve(total);
    for (std::uint64_t id = 0; id < total; ++id)
        if (waiting[id] == 0)
            order.push_back(id);
    for (std::size_t head = 0; head < order.size(); ++head) {
        auto [from, to] = successors(order[head]);
        for (auto next = from; next != to; ++next)
            if (--waiting[*next] == 0)
                order.push_back(*next);
    }
    auto locate = [&](std::uint64_t id) {
        std::uint32_t rank = static_cast<std::uint32_t>(
            std::upper_bound(base.begin(), base.end(), id) - base.begin() - 1);
        return std::make_pair(rank, static_cast<std::uint32_t>(id - base[rank]));
    };
    if (order.size() < total) {
        // Walk back through unfinished predecessors until an operation repeats: a cycle.
        std::vector<std::vector<std::uint64_t>> before(total);
        for (std::uint64_t id = 0; id < total; ++id) {
            auto [from, to] = successors(id);
            for (auto next = from; next != to; ++next)
                before[*next].push_back(id);
        }
        std::uint64_t at = 0;
        while (waiting[at] == 0)
            ++at;
        std::vector<std::int64_t> seen(total, -1);
        std::vector<std::uint64_t> path;
        while (seen[at] < 0) {
            seen[at] = static_cast<std::int64_t>(path.size());
            path.push_back(at);
            for (std::uint64_t prev : before[at])
                if (waiting[prev] != 0) {
                    at = prev;
                    break;
                }
        }
        std::string cycle;
        for (std::size_t n = path.size(); n-- > static_cast<std::size_t>(seen[at]);) {
            auto [rank, index] = locate(path[n]);
            cycle += (cycle.empty() ? "" : " -> ") + program.where(rank, index);
        }
        auto [rank, index] = locate(at);
        fail(program,
             rank,
             index,
             "deadlock: a dependency cycle (each waits for the one before): " + cycle);
    }
    if (!program.chunksKnown)
        return result;
    result.dataChecked = true;

    // Storage: per rank, input, output and scratch chunks (aliased when in place).
    std::uint32_t in = program.inputChunks;
    std::uint32_t out = program.outputChunks;
    CollectiveType type = program.type;
    bool aliased = program.inPlace;
    // In place, input and output are one buffer of the larger size: the input sits at
    // rank * in of an all-gather's output, the output at rank * out of a reduce-scatter's input.
    std::uint32_t main = aliased ? std::max(in, out) : in + out;
    std::uint32_t perRank = main + program.scratchChunks;
    std::vector<Content> store(static_cast<std::size_t>(perRank) * ranks);
    auto slot = [&](std::uint32_t rank, const ChunkRef& ref, std::uint32_t i) -> Content& {
        std::uint32_t offset = ref.offset + i;
        std::size_t at = static_cast<std::size_t>(rank) * perRank;
        if (ref.buffer == ProgramBuffer::Scratch)
            return store[at + main + offset];
        bool input = ref.buffer == ProgramBuffer::Input;
        if (!aliased)
            return store[at + (input ? 0 : in) + offset];
        if (type == CollectiveType::AllGather && input)
            return store[at + rank * in + offset];
        if (type == CollectiveType::ReduceScatter && !input)
            return store[at + rank * out + offset];
        return store[at + offset];
    };
    for (std::uint32_t rank = 0; rank < ranks; ++rank)
        for (std::uint32_t k = 0; k < in; ++k) {
            Content& content = slot(rank, ChunkRef{ProgramBuffer::Input, 0}, k);
            bool reducing =
                type == CollectiveType::AllReduce || type == CollectiveType::ReduceScatter;
            content.index = static_cast<std::int32_t>(reducing ? k : rank * in + k);
            content.ranks = RankSet::single(rank);
        }

    // Messages in flight, in buffers reused once received (a topological order keeps only a
    // wavefront of messages in flight, far fewer than the program sends).
    std::vector<std::vector<Content>> buffers;
    std::vector<std::uint32_t> freeBuffers;
    std::vector<std::uint32_t> bufferOf(total, noPeer);
    std::vector<Content> data;
    // What the walk reads of each operation, side by side in global order (the walk jumps
    // between ranks at every message; this keeps it from a binary search and three arrays).
    struct Step {
        ChunkRef src;
        ChunkRef dst;
        std::uint32_t count = 0;
        std::uint32_t rank = 0;
        std::uint32_t index = 0;
        ProgramOpKind kind = ProgramOpKind::Nop;
        std::uint64_t sender = 0; // the global id of the send a receive matches
    };
    std::vector<Step> steps(total);
    for (std::uint32_t rank = 0; rank < ranks; ++rank) {
        const auto& ops = program.ranks[rank].ops;
        for (std::uint32_t index = 0; index < ops.size(); ++index) {
            const ProgramOp& op = ops[index];
            const OpLink& from = matching.recvFrom[rank][index];
            steps[base[rank] + index] = Step{op.src,
                                             op.dst,
                                             op.count,
                                             rank,
                                             index,
                                             op.kind,
                                             from.rank == noPeer ? 0 : base[from.rank] + from.op};
        }
    }
    for (std::uint64_t id : order) {
        const Step& op = steps[id];
        const std::uint32_t rank = op.rank;
        const std::uint32_t index = op.index;
        if (op.kind == ProgramOpKind::Nop)
            continue;
        data.assign(op.count, Content{});
        if (receives(op.kind)) {
            std::uint32_t buffer = bufferOf[op.sender];
            std::swap(data, buffers[buffer]);
            freeBuffers.push_back(buffer);
        }
        for (std::uint32_t i = 0; i < op.count; ++i) {
            bool readsSrc = op.kind == ProgramOpKind::Send || op.kind == ProgramOpKind::Copy ||
                            reduces(op.kind);
            if (!readsSrc)
                continue;
            ChunkRef srcRef = op.kind == ProgramOpKind::Reduce ? op.dst : op.src;
            const Content& local = slot(rank, srcRef, i);
            if (op.kind == ProgramOpKind::Reduce) {
                // re: dst = dst + src.
                data[i] = local;
                const Content& other = slot(rank, op.src, i);
                if (other.index < 0)
                    fail(program,
                         rank,
                         index,
                         "re reads " + chunkText(ChunkRef{op.src.buffer, op.src.offset + i}) +
                             ", which holds nothing yet");
                if (data[i].index < 0) {
                    data[i] = other;
                    continue;
                }
                if (data[i].index != other.index)
                    fail(program,
                         rank,
                         index,
                         "re adds chunk " + std::to_string(other.index) + " to chunk " +
                             std::to_string(data[i].index));
                std::uint32_t twice = data[i].ranks.add(other.ranks);
                if (twice != noPeer)
                    fail(program,
                         rank,
                         index,
                         "re adds rank " + std::to_string(twice) + "'s contribution to chunk " +
                             std::to_string(data[i].index) + " a second time");
                continue;
            }
            ChunkRef at{srcRef.buffer, srcRef.offset + i};
            if (local.index < 0)
                fail(program,
                     rank,
                     index,
                     std::string(mscclName(op.kind)) + " reads " + chunkText(at) + " of rank " +
                         std::to_string(rank) + ", which holds nothing yet");
            if (!reduces(op.kind)) {
                data[i] = local;
                continue;
            }
            if (data[i].index != local.index)
                fail(program,
                     rank,
                     index,
                     std::string(mscclName(op.kind)) + " adds the received chunk " +
                         std::to_string(data[i].index) + " to chunk " +
                         std::to_string(local.index) + " (" + chunkText(at) + ")");
            std::uint32_t twice = data[i].ranks.add(local.ranks);
            if (twice != noPeer)
                fail(program,
                     rank,
                     index,
                     std::string(mscclName(op.kind)) + " adds rank " + std::to_string(twice) +
                         "'s contribution to chunk " + std::to_string(local.index) +
                         " a second time (" + chunkText(at) + ")");
        }
        bool writesDst = op.kind != ProgramOpKind::Send && op.kind != ProgramOpKind::RecvReduceSend;
        if (writesDst)
            for (std::uint32_t i = 0; i < op.count; ++i) {
                Content& target = slot(rank, op.dst, i);
                target = data[i];
                target.writer = index;
            }
        if (sends(op.kind)) {
            std::uint32_t buffer = 0;
            if (freeBuffers.empty()) {
                buffer = static_cast<std::uint32_t>(buffers.size());
                buffers.emplace_back();
            } else {
                buffer = freeBuffers.back();
                freeBuffers.pop_back();
            }
            std::swap(buffers[buffer], data);
            bufferOf[id] = buffer;
        }
    }

    // Postcondition, rank by rank, chunk by chunk.
    std::uint32_t perSource = type == CollectiveType::AllToAll ? in / ranks : 0;
    for (std::uint32_t rank = 0; rank < ranks; ++rank)
        for (std::uint32_t j = 0; j < out; ++j) {
            const Content& content = slot(rank, ChunkRef{ProgramBuffer::Output, 0}, j);
            std::int32_t index = 0;
            std::uint32_t owner = noPeer; // the only contributor expected, or noPeer for all
            // What should be there, as text only for the message (millions of chunks pass).
            std::uint32_t wantedChunk = 0;
            switch (type) {
            case CollectiveType::AllReduce:
                index = j;
                break;
            case CollectiveType::ReduceScatter:
                index = static_cast<std::int32_t>(rank * out + j);
                break;
            case CollectiveType::AllGather:
                index = j;
                owner = j / in;
                wantedChunk = j % in;
                break;
            case CollectiveType::AllToAll: {
                owner = j / perSource;
                wantedChunk = rank * perSource + j % perSource;
                index = static_cast<std::int32_t>(owner * in + wantedChunk);
                break;
            }
            default:
                throw Error(program.source + ": the verifier knows no postcondition for " +
                            toString(type));
            }
            bool right = content.index == index &&
                         (owner == noPeer ? content.ranks.full(ranks) : content.ranks.only(owner));
            if (right)
                continue;
            std::string wanted = owner == noPeer
                                     ? "chunk " + std::to_string(index) + " reduced over all ranks"
                                     : "input chunk " + std::to_string(wantedChunk) + " of rank " +
                                           std::to_string(owner);
            std::string holds;
            if (content.index < 0)
                holds = "nothing";
            else if (owner == noPeer && content.index == index)
                holds = "chunk " + std::to_string(index) + " reduced over ranks " +
                        content.ranks.text() + " only (missing " + content.ranks.missing(ranks) +
                        ")";
            else
                holds =
                    "chunk " + std::to_string(content.index) + " of ranks " + content.ranks.text();
            std::string step = content.writer == noPeer
                                   ? "no step of rank " + std::to_string(rank) + " writes it"
                                   : "the step that should have produced it: " +
                                         program.where(rank, content.writer);
            throw Error(program.source + ": wrong result: rank " + std::to_string(rank) +
                        ", output chunk " + std::to_string(j) + " holds " + holds + " but the " +
                        toString(type) + " needs " + wanted + " there; " + step);
        }
    return result;
}

} // namespace etsim::net
