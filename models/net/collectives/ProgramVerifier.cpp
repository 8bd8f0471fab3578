// Longer than most files (about 740 lines): the four steps of the proof (structure, matching,
// order, data; ProgramVerifier.h) share the program's numbering and the walk's order, and are
// read in sequence.
#include "models/net/collectives/ProgramVerifier.h"

#include "kernel/Error.h"

#include <algorithm>
#include <array>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <optional>
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
    std::uint32_t writer = noPeer;
    RankSet ranks;
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

void checkProgram(const CollectiveProgram& program)
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
}

// Peers, chunk ranges and dependencies of one rank's operations.
void checkRank(const CollectiveProgram& program, std::uint32_t rank)
{
    std::uint32_t ranks = program.rankCount();
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

// What the walk needs beyond the matching, gathered while each rank's operations are in cache
// for the matching: the global number of each rank's first operation, every operation's
// dependents (the reverse of deps: local indices, per rank in one flat array) and how many
// predecessors (dependencies and the matched send) it waits for.
struct WalkIndex {
    std::vector<std::uint64_t> base;
    /// Rank r's dependents start at dependents[edgeBase[r]]; operation i's are from
    /// firstDependent[base[r] + r + i] to firstDependent[base[r] + r + i + 1] of those.
    std::vector<std::uint64_t> edgeBase;
    std::vector<std::uint32_t> firstDependent;
    std::vector<std::uint32_t> dependents;
    std::vector<std::uint32_t> waiting;
};

void indexRank(const CollectiveProgram& program,
               std::uint32_t rank,
               WalkIndex& index,
               std::vector<std::uint32_t>& cursor)
{
    const auto& ops = program.ranks[rank].ops;
    const std::uint64_t first = index.base[rank];
    std::uint32_t* offsets = index.firstDependent.data() + first + rank;
    std::uint64_t edges = 0;
    for (std::uint32_t op = 0; op < ops.size(); ++op) {
        for (std::uint32_t dep : ops[op].deps)
            ++offsets[dep + 1];
        index.waiting[first + op] = static_cast<std::uint32_t>(ops[op].deps.size());
        edges += ops[op].deps.size();
    }
    if (edges > std::numeric_limits<std::uint32_t>::max())
        throw Error(program.source + ": rank " + std::to_string(rank) + " has " +
                    std::to_string(edges) + " dependencies; the verifier handles at most " +
                    std::to_string(std::numeric_limits<std::uint32_t>::max()) + " per rank");
    for (std::size_t op = 0; op < ops.size(); ++op)
        offsets[op + 1] += offsets[op];
    index.edgeBase[rank] = index.dependents.size();
    index.dependents.resize(index.dependents.size() + edges);
    std::uint32_t* dependents = index.dependents.data() + index.edgeBase[rank];
    cursor.assign(offsets, offsets + ops.size());
    // In ascending order of the dependent: the order the walk releases them in.
    for (std::uint32_t op = 0; op < ops.size(); ++op)
        for (std::uint32_t dep : ops[op].deps)
            dependents[cursor[dep]++] = op;
}

// Steps 1 and 2, rank by rank; with `walk`, also what the walk needs (WalkIndex).
ProgramMatching match(const CollectiveProgram& program, WalkIndex* walk)
{
    checkProgram(program);
    std::uint32_t ranks = program.rankCount();
    ProgramMatching matching;
    matching.sendTo.resize(ranks);
    matching.recvFrom.resize(ranks);
    if (walk) {
        walk->base.assign(ranks + 1, 0);
        for (std::uint32_t rank = 0; rank < ranks; ++rank)
            walk->base[rank + 1] = walk->base[rank] + program.ranks[rank].ops.size();
        walk->edgeBase.assign(ranks, 0);
        walk->firstDependent.assign(walk->base[ranks] + ranks, 0);
        walk->waiting.assign(walk->base[ranks], 0);
        walk->dependents.reserve(walk->base[ranks]); // most operations have one
    }
    std::vector<std::uint32_t> cursor;
    // (source, destination, channel) -> sending and receiving operations in order.
    using Key = std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>;
    std::map<Key, std::pair<std::vector<std::uint32_t>, std::vector<std::uint32_t>>> channels;
    for (std::uint32_t rank = 0; rank < ranks; ++rank) {
        checkRank(program, rank);
        if (walk)
            indexRank(program, rank, *walk, cursor);
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
            if (walk)
                ++walk->waiting[walk->base[destination] + received[n]];
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

} // namespace

ProgramMatching matchProgram(const CollectiveProgram& program)
{
    return match(program, nullptr);
}

VerifyResult verifyProgram(const CollectiveProgram& program)
{
    VerifyResult result;
    WalkIndex walk;
    result.matching = match(program, &walk);
    const ProgramMatching& matching = result.matching;
    const std::vector<std::uint64_t>& base = walk.base;
    std::uint32_t ranks = program.rankCount();
    std::uint64_t total = base[ranks];
    result.operations = total;
    for (std::uint32_t rank = 0; rank < ranks; ++rank)
        for (const OpLink& from : matching.recvFrom[rank])
            result.messages += from.rank != noPeer ? 1 : 0;
    // Without chunks (chunksKnown false) only the order is checked: nothing is stored.
    const bool tracking = program.chunksKnown;

    // Storage: per rank, input, output and scratch chunks (aliased when in place).
    std::uint32_t in = program.inputChunks;
    std::uint32_t out = program.outputChunks;
    CollectiveType type = program.type;
    bool aliased = program.inPlace;
    // In place, input and output are one buffer of the larger size: the input sits at
    // rank * in of an all-gather's output, the output at rank * out of a reduce-scatter's input.
    std::uint32_t main = aliased ? std::max(in, out) : in + out;
    std::uint32_t perRank = main + program.scratchChunks;
    std::vector<Content> store(tracking ? static_cast<std::size_t>(perRank) * ranks : 0);
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
    for (std::uint32_t rank = 0; rank < (tracking ? ranks : 0); ++rank)
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
    std::vector<std::uint32_t> bufferOf(tracking ? total : 0, noPeer);
    std::vector<Content> data;
    auto apply = [&](std::uint32_t rank, std::uint32_t index) {
        const ProgramOp& op = program.ranks[rank].ops[index];
        if (op.kind == ProgramOpKind::Nop)
            return;
        data.assign(op.count, Content{});
        if (receives(op.kind)) {
            const OpLink& from = matching.recvFrom[rank][index];
            std::uint32_t buffer = bufferOf[walk.base[from.rank] + from.op];
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
            bufferOf[walk.base[rank] + index] = buffer;
        }
    };

    // Kahn's walk, applying each operation as it is taken. Ready operations wait per rank, and
    // a rank runs up to `burst` of them in a row before the next rank with ready operations
    // has its turn (ranks take turns in the order they became ready). A rank's operations,
    // chunks and counters lie side by side, so a burst reads them in the lines already
    // fetched; a walk that took one operation of every rank in turn (breadth first) missed the
    // cache at nearly every read. The burst also bounds how far a rank runs ahead of the ranks
    // that receive from it, and with it the messages in flight. A data problem is kept until
    // the walk ends, since a dependency cycle elsewhere is reported first.
    constexpr std::uint32_t burst = 64;
    std::vector<std::vector<std::uint32_t>> ready(ranks);
    std::vector<std::size_t> readyHead(ranks, 0);
    std::deque<std::uint32_t> turns;
    std::vector<bool> waitingTurn(ranks, false);
    auto makeReady = [&](std::uint32_t atRank, std::uint32_t atOp) {
        ready[atRank].push_back(atOp);
        if (!waitingTurn[atRank]) {
            waitingTurn[atRank] = true;
            turns.push_back(atRank);
        }
    };
    auto release = [&](std::uint32_t atRank, std::uint32_t atOp) {
        if (--walk.waiting[base[atRank] + atOp] == 0)
            makeReady(atRank, atOp);
    };
    for (std::uint32_t rank = 0; rank < ranks; ++rank)
        for (std::uint32_t op = 0; op < program.ranks[rank].ops.size(); ++op)
            if (walk.waiting[base[rank] + op] == 0)
                makeReady(rank, op);
    std::optional<Error> dataError;
    std::uint64_t done = 0;
    while (!turns.empty()) {
        const std::uint32_t rank = turns.front();
        turns.pop_front();
        std::vector<std::uint32_t>& list = ready[rank];
        std::size_t& head = readyHead[rank];
        const std::uint32_t* dependents = walk.dependents.data() + walk.edgeBase[rank];
        for (std::uint32_t n = 0; n < burst && head < list.size(); ++n) {
            const std::uint32_t op = list[head++];
            ++done;
            if (tracking && !dataError) {
                try {
                    apply(rank, op);
                } catch (const Error& error) {
                    dataError = error;
                }
            }
            const std::uint32_t* offsets = walk.firstDependent.data() + base[rank] + rank + op;
            for (std::uint32_t edge = offsets[0]; edge < offsets[1]; ++edge)
                release(rank, dependents[edge]);
            const OpLink& to = matching.sendTo[rank][op];
            if (to.rank != noPeer)
                release(to.rank, to.op);
        }
        if (head < list.size()) {
            turns.push_back(rank); // still waiting for a turn
        } else {
            list.clear();
            head = 0;
            waitingTurn[rank] = false;
        }
    }
    if (done < total) {
        // Walk back through unfinished predecessors, the lowest numbered first, until an
        // operation repeats: a cycle.
        auto locate = [&](std::uint64_t id) {
            std::uint32_t rank = static_cast<std::uint32_t>(
                std::upper_bound(base.begin(), base.end(), id) - base.begin() - 1);
            return std::make_pair(rank, static_cast<std::uint32_t>(id - base[rank]));
        };
        std::uint64_t at = 0;
        while (walk.waiting[at] == 0)
            ++at;
        std::vector<std::int64_t> seen(total, -1);
        std::vector<std::uint64_t> path;
        std::vector<std::uint64_t> before;
        while (seen[at] < 0) {
            seen[at] = static_cast<std::int64_t>(path.size());
            path.push_back(at);
            auto [rank, op] = locate(at);
            before.clear();
            for (std::uint32_t dep : program.ranks[rank].ops[op].deps)
                before.push_back(base[rank] + dep);
            const OpLink& from = matching.recvFrom[rank][op];
            if (from.rank != noPeer)
                before.push_back(base[from.rank] + from.op);
            std::sort(before.begin(), before.end());
            for (std::uint64_t prev : before)
                if (walk.waiting[prev] != 0) {
                    at = prev;
                    break;
                }
        }
        std::string cycle;
        for (std::size_t n = path.size(); n-- > static_cast<std::size_t>(seen[at]);) {
            auto [rank, op] = locate(path[n]);
            cycle += (cycle.empty() ? "" : " -> ") + program.where(rank, op);
        }
        auto [rank, op] = locate(at);
        fail(program,
             rank,
             op,
             "deadlock: a dependency cycle (each waits for the one before): " + cycle);
    }
    if (dataError)
        throw *dataError;
    if (!tracking)
        return result;
    result.dataChecked = true;

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
