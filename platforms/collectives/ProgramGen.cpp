#include "platforms/collectives/ProgramGen.h"

#include "kernel/Error.h"

#include <map>
#include <sstream>

namespace etsim::platform {

namespace {

using net::ChunkRef;
using net::CollectiveProgram;
using net::ProgramBuffer;
using net::ProgramOp;
using net::ProgramOpKind;

constexpr ProgramBuffer in = ProgramBuffer::Input;
constexpr ProgramBuffer out = ProgramBuffer::Output;

// Appends an operation to threadblock `tb` of `rank`; it depends on the threadblock's
// previous operation and on `extra` (an operation index, or noPeer).
std::uint32_t add(CollectiveProgram& program,
                  std::uint32_t rank,
                  std::uint32_t tb,
                  ProgramOp op,
                  std::uint32_t extra = net::noPeer)
{
    auto& ops = program.ranks[rank].ops;
    for (std::size_t index = ops.size(); index-- > 0;)
        if (ops[index].threadblock == tb) {
            op.deps.push_back(static_cast<std::uint32_t>(index));
            break;
        }
    if (extra != net::noPeer)
        op.deps.push_back(extra);
    op.threadblock = tb;
    op.origin = ops.size();
    ops.push_back(std::move(op));
    return static_cast<std::uint32_t>(ops.size() - 1);
}

ProgramOp step(ProgramOpKind kind,
               ChunkRef src,
               ChunkRef dst,
               std::uint32_t count,
               std::uint32_t sendPeer,
               std::uint32_t recvPeer)
{
    ProgramOp op;
    op.kind = kind;
    op.src = src;
    op.dst = dst;
    op.count = count;
    op.sendPeer = net::sends(kind) ? sendPeer : net::noPeer;
    op.recvPeer = net::receives(kind) ? recvPeer : net::noPeer;
    return op;
}

void ring(CollectiveProgram& program)
{
    std::uint32_t p = program.rankCount();
    auto mod = [p](std::int64_t value) {
        return static_cast<std::uint32_t>(((value % p) + p) % p);
    };
    for (std::uint32_t r = 0; r < p; ++r) {
        std::uint32_t next = mod(r + 1);
        std::uint32_t prev = mod(static_cast<std::int64_t>(r) - 1);
        auto op = [&](ProgramOpKind kind, ChunkRef src, ChunkRef dst) {
            add(program, r, 0, step(kind, src, dst, 1, next, prev));
        };
        switch (program.type) {
        case CollectiveType::AllReduce: {
            // Reduce-scatter then all-gather round the ring, partial sums forwarded unstored.
            op(ProgramOpKind::Send, {in, r}, {in, r});
            for (std::uint32_t k = 0; k + 2 < p; ++k) {
                std::uint32_t c = mod(static_cast<std::int64_t>(r) - k - 1);
                op(ProgramOpKind::RecvReduceSend, {in, c}, {in, c});
            }
            std::uint32_t done = mod(r + 1);
            op(ProgramOpKind::RecvReduceCopySend, {in, done}, {in, done});
            for (std::uint32_t k = 0; k + 1 < p; ++k) {
                std::uint32_t c = mod(static_cast<std::int64_t>(r) - k);
                op(k + 2 < p ? ProgramOpKind::RecvCopySend : ProgramOpKind::Recv, {in, c}, {in, c});
            }
            break;
        }
        case CollectiveType::ReduceScatter: {
            op(ProgramOpKind::Send, {in, mod(static_cast<std::int64_t>(r) - 1)}, {in, 0});
            for (std::uint32_t k = 0; k + 2 < p; ++k) {
                std::uint32_t c = mod(static_cast<std::int64_t>(r) - k - 2);
                op(ProgramOpKind::RecvReduceSend, {in, c}, {in, c});
            }
            op(ProgramOpKind::RecvReduceCopy, {in, r}, {out, 0});
            break;
        }
        case CollectiveType::AllGather: {
            op(ProgramOpKind::Copy, {in, 0}, {out, r});
            op(ProgramOpKind::Send, {out, r}, {out, r});
            for (std::uint32_t k = 0; k + 1 < p; ++k) {
                std::uint32_t c = mod(static_cast<std::int64_t>(r) - 1 - k);
                op(k + 2 < p ? ProgramOpKind::RecvCopySend : ProgramOpKind::Recv,
                   {out, c},
                   {out, c});
            }
            break;
        }
        default:
            throw Error(std::string("ring is written for all_reduce, "
                                    "reduce_scatter and all_gather, not ") +
                        toString(program.type));
        }
    }
}

void halvingDoubling(CollectiveProgram& program)
{
    std::uint32_t p = program.rankCount();
    std::uint32_t levels = 0;
    while ((1U << levels) < p)
        ++levels;
    if ((1U << levels) != p)
        throw Error("halving_doubling needs a power-of-two rank count, not " + std::to_string(p));
    CollectiveType type = program.type;
    bool halve = type == CollectiveType::AllReduce || type == CollectiveType::ReduceScatter;
    bool doubling = type == CollectiveType::AllReduce || type == CollectiveType::AllGather;
    if (!halve && !doubling)
        throw Error(std::string("halving_doubling is written for all_reduce, "
                                "reduce_scatter and all_gather, not ") +
                    toString(type));
    for (std::uint32_t r = 0; r < p; ++r) {
        // Threadblock s talks to the partner at distance p >> (s + 1) (halving level s, and the
        // doubling level that undoes it).
        std::uint32_t last = net::noPeer;
        std::uint32_t lo = 0;
        std::uint32_t size = p;
        std::vector<std::uint32_t> kept(levels);
        if (halve)
            for (std::uint32_t s = 0; s < levels; ++s) {
                std::uint32_t distance = p >> (s + 1);
                std::uint32_t partner = r ^ distance;
                size /= 2;
                bool upper = (r & distance) != 0;
                std::uint32_t keep = upper ? lo + size : lo;
                std::uint32_t give = upper ? lo : lo + size;
                add(program,
                    r,
                    s,
                    step(ProgramOpKind::Send, {in, give}, {in, give}, size, partner, partner),
                    last);
                bool final = s + 1 == levels && type == CollectiveType::ReduceScatter;
                last = add(program,
                           r,
                           s,
                           step(ProgramOpKind::RecvReduceCopy,
                                {in, keep},
                                final ? ChunkRef{out, 0} : ChunkRef{in, keep},
                                size,
                                partner,
                                partner));
                lo = keep;
                kept[s] = keep;
            }
        if (!doubling)
            continue;
        ProgramBuffer buffer = type == CollectiveType::AllReduce ? in : out;
        if (type == CollectiveType::AllGather) {
            last = add(program, r, levels, step(ProgramOpKind::Copy, {in, 0}, {out, r}, 1, 0, 0));
            for (std::uint32_t s = 0; s < levels; ++s)
                kept[s] = r & ~((p >> (s + 1)) - 1);
        }
        for (std::uint32_t s = levels; s-- > 0;) {
            std::uint32_t distance = p >> (s + 1);
            std::uint32_t partner = r ^ distance;
            std::uint32_t block = distance; // chunks held before this level
            std::uint32_t mine = kept[s];
            std::uint32_t theirs = mine ^ distance;
            add(program,
                r,
                s,
                step(ProgramOpKind::Send, {buffer, mine}, {buffer, mine}, block, partner, partner),
                last);
            last = add(program,
                       r,
                       s,
                       step(ProgramOpKind::Recv,
                            {buffer, theirs},
                            {buffer, theirs},
                            block,
                            partner,
                            partner));
        }
    }
}

void doubleBinaryTree(CollectiveProgram& program)
{
    if (program.type != CollectiveType::AllReduce)
        throw Error(std::string("double_binary_tree is written for all_reduce, not ") +
                    toString(program.type));
    std::uint32_t p = program.rankCount();
    for (std::uint32_t r = 0; r < p; ++r) {
        // Chunk t travels tree t, on channel t: tree 0 in heap order (position j has children
        // 2j+1, 2j+2), tree 1 its mirror image (position j is rank p-1-j), as the built-in
        // algorithm's trees. A threadblock per (tree, peer), numbered in order of first use.
        // A rank runs tree 1 after its part of tree 0: the steps of a rank advance together
        // (docs/network.md, "Timing"), and a rank waiting in one tree for a message that a
        // rank waiting in the other tree has yet to send would never go on.
        std::uint32_t gate = net::noPeer;
        std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> blocks;
        for (std::uint32_t t = 0; t < 2; ++t) {
            auto rankAt = [&](std::uint32_t position) {
                return t == 0 ? position : p - 1 - position;
            };
            std::uint32_t position = t == 0 ? r : p - 1 - r;
            std::vector<std::uint32_t> children;
            for (std::uint32_t child = 2 * position + 1; child <= 2 * position + 2 && child < p;
                 ++child)
                children.push_back(rankAt(child));
            auto op = [&](ProgramOpKind kind, std::uint32_t peer, std::uint32_t after) {
                ProgramOp made = step(kind, {in, t}, {in, t}, 1, peer, peer);
                made.channel = t;
                auto found = blocks.try_emplace({t, peer}, blocks.size()).first;
                std::uint32_t tb = found->second;
                // A dependency on the threadblock's own previous operation is implicit.
                const auto& ops = program.ranks[r].ops;
                if (after != net::noPeer && ops[after].threadblock == tb)
                    after = net::noPeer;
                return add(program, r, tb, made, after);
            };
            // Up: the children's partial sums, reduced one after the other, then to the parent.
            std::uint32_t reduced = gate;
            for (std::uint32_t k = 0; k < children.size(); ++k)
                reduced = op(ProgramOpKind::RecvReduceCopy, children[k], reduced);
            std::uint32_t result = reduced;
            if (position > 0) {
                std::uint32_t parent = rankAt((position - 1) / 2);
                op(ProgramOpKind::Send, parent, reduced);
                result = op(ProgramOpKind::Recv, parent, net::noPeer);
            }
            // Down: the full sum to the children.
            for (std::uint32_t k = 0; k < children.size(); ++k)
                op(ProgramOpKind::Send, children[k], result);
            gate = static_cast<std::uint32_t>(program.ranks[r].ops.size() - 1);
        }
    }
}

void direct(CollectiveProgram& program)
{
    std::uint32_t p = program.rankCount();
    CollectiveType type = program.type;
    for (std::uint32_t r = 0; r < p; ++r) {
        // Threadblock k talks to peer r + k + 1; reductions into one chunk are chained through
        // the threadblocks so that they never race.
        auto peerOf = [&](std::uint32_t k) { return (r + k + 1) % p; };
        std::uint32_t local = p - 1; // the threadblock of local copies
        std::uint32_t copied = net::noPeer;
        if (type == CollectiveType::AllGather)
            copied = add(program, r, local, step(ProgramOpKind::Copy, {in, 0}, {out, r}, 1, 0, 0));
        if (type == CollectiveType::AllToAll)
            copied = add(program, r, local, step(ProgramOpKind::Copy, {in, r}, {out, r}, 1, 0, 0));
        std::uint32_t last = net::noPeer;
        for (std::uint32_t k = 0; k + 1 < p; ++k) {
            std::uint32_t q = peerOf(k);
            switch (type) {
            case CollectiveType::AllReduce:
            case CollectiveType::ReduceScatter: {
                add(program, r, k, step(ProgramOpKind::Send, {in, q}, {in, q}, 1, q, q));
                bool scatter = type == CollectiveType::ReduceScatter;
                ChunkRef mine = scatter && k > 0 ? ChunkRef{out, 0} : ChunkRef{in, r};
                ChunkRef into = scatter ? ChunkRef{out, 0} : ChunkRef{in, r};
                last = add(
                    program, r, k, step(ProgramOpKind::RecvReduceCopy, mine, into, 1, q, q), last);
                break;
            }
            case CollectiveType::AllGather:
                add(program, r, k, step(ProgramOpKind::Send, {out, r}, {out, r}, 1, q, q), copied);
                add(program, r, k, step(ProgramOpKind::Recv, {out, q}, {out, q}, 1, q, q));
                break;
            case CollectiveType::AllToAll:
                add(program, r, k, step(ProgramOpKind::Send, {in, q}, {in, q}, 1, q, q));
                add(program, r, k, step(ProgramOpKind::Recv, {out, q}, {out, q}, 1, q, q));
                break;
            default:
                throw Error(std::string("direct is written for all_reduce, "
                                        "reduce_scatter, all_gather and all_to_all, not ") +
                            toString(type));
            }
        }
        if (type != CollectiveType::AllReduce)
            continue;
        // Then the reduced chunk r to every peer, after the last reduction.
        for (std::uint32_t k = 0; k + 1 < p; ++k) {
            std::uint32_t q = peerOf(k);
            add(program, r, k, step(ProgramOpKind::Send, {in, r}, {in, r}, 1, q, q), last);
            add(program, r, k, step(ProgramOpKind::Recv, {in, q}, {in, q}, 1, q, q));
        }
    }
}

} // namespace

CollectiveProgram
generateProgram(net::AlgorithmKind algorithm, CollectiveType type, std::uint32_t ranks)
{
    if (ranks < 2)
        throw Error("a collective needs at least 2 ranks, not " + std::to_string(ranks));
    CollectiveProgram program;
    program.type = type;
    program.ranks.resize(ranks);
    program.name = std::string(enumName(net::algorithmNames, algorithm)) + "_" + toString(type) +
                   "_" + std::to_string(ranks);
    program.source = program.name;
    switch (type) {
    case CollectiveType::AllReduce:
        program.inputChunks = program.outputChunks = ranks;
        program.inPlace = true;
        break;
    case CollectiveType::ReduceScatter:
        program.inputChunks = ranks;
        program.outputChunks = 1;
        break;
    case CollectiveType::AllGather:
        program.inputChunks = 1;
        program.outputChunks = ranks;
        break;
    case CollectiveType::AllToAll:
        program.inputChunks = program.outputChunks = ranks;
        break;
    default:
        break;
    }
    program.chunksPerLoop = std::max(program.inputChunks, program.outputChunks);
    switch (algorithm) {
    case net::AlgorithmKind::Ring:
        ring(program);
        break;
    case net::AlgorithmKind::HalvingDoubling:
        halvingDoubling(program);
        break;
    case net::AlgorithmKind::Direct:
        direct(program);
        break;
    case net::AlgorithmKind::DoubleBinaryTree:
        // Two halves, one per tree.
        program.inputChunks = program.outputChunks = program.chunksPerLoop = 2;
        doubleBinaryTree(program);
        break;
    default:
        throw Error(std::string(enumName(net::algorithmNames, algorithm)) +
                    " is not written as a program (ring, direct, halving_doubling, "
                    "double_binary_tree are)");
    }
    return program;
}

std::string writeMsccl(const CollectiveProgram& program)
{
    const char* coll = net::mscclCollectiveName(program.type);
    if (!coll)
        throw Error(std::string("MSCCL has no collective ") + toString(program.type));
    std::ostringstream xml;
    xml << "<algo name=\"" << program.name
        << "\" proto=\"Simple\" nchannels=\"1\" nchunksperloop=\"" << program.chunksPerLoop
        << "\" ngpus=\"" << program.rankCount() << "\" coll=\"" << coll << "\" inplace=\""
        << (program.inPlace ? 1 : 0) << "\">\n";
    for (std::uint32_t rank = 0; rank < program.rankCount(); ++rank) {
        const auto& ops = program.ranks[rank].ops;
        xml << "  <gpu id=\"" << rank << "\" i_chunks=\"" << program.inputChunks << "\" o_chunks=\""
            << program.outputChunks << "\" s_chunks=\"" << program.scratchChunks << "\">\n";
        // Threadblock -> its operations in order; each operation's (tb, step).
        std::map<std::uint32_t, std::vector<std::uint32_t>> blocks;
        std::vector<std::pair<std::uint32_t, std::uint32_t>> position(ops.size());
        for (std::uint32_t index = 0; index < ops.size(); ++index) {
            auto& list = blocks[ops[index].threadblock];
            position[index] = {ops[index].threadblock, static_cast<std::uint32_t>(list.size())};
            list.push_back(index);
        }
        for (const auto& [tb, list] : blocks) {
            std::int64_t send = -1;
            std::int64_t recv = -1;
            for (std::uint32_t index : list) {
                if (net::sends(ops[index].kind))
                    send = ops[index].sendPeer;
                if (net::receives(ops[index].kind))
                    recv = ops[index].recvPeer;
            }
            xml << "    <tb id=\"" << tb << "\" send=\"" << send << "\" recv=\"" << recv
                << "\" chan=\"" << ops[list.front()].channel << "\">\n";
            for (std::uint32_t s = 0; s < list.size(); ++s) {
                const ProgramOp& op = ops[list[s]];
                std::int64_t depTb = -1;
                std::int64_t depStep = -1;
                for (std::uint32_t dep : op.deps) {
                    if (position[dep].first == tb && position[dep].second + 1 == s)
                        continue;
                    if (depTb >= 0)
                        throw Error(program.where(rank, list[s]) +
                                    ": MSCCL steps have one dependency outside their "
                                    "threadblock, this one has more");
                    depTb = position[dep].first;
                    depStep = position[dep].second;
                }
                xml << "      <step s=\"" << s << "\" type=\"" << net::mscclName(op.kind)
                    << "\" srcbuf=\"" << net::mscclName(op.src.buffer) << "\" srcoff=\""
                    << op.src.offset << "\" dstbuf=\"" << net::mscclName(op.dst.buffer)
                    << "\" dstoff=\"" << op.dst.offset << "\" cnt=\"" << op.count << "\" depid=\""
                    << depTb << "\" deps=\"" << depStep << "\" hasdep=\"0\"/>\n";
            }
            xml << "    </tb>\n";
        }
        xml << "  </gpu>\n";
    }
    xml << "</algo>\n";
    return xml.str();
}

} // namespace etsim::platform
