#include "platforms/collectives/ChakraAlgorithm.h"

#include "et_driver/TraceCodec.h"
#include "et_driver/TraceReader.h"
#include "et_driver/TraceWriter.h"
#include "kernel/Error.h"
#include "platforms/collectives/ChakraNodeAttrs.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <filesystem>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <system_error>
#include <thread>
#include <unordered_map>

namespace etsim::platform {

namespace {

namespace fs = std::filesystem;
namespace pb = ChakraProtoMsg;
using net::ChunkRef;
using net::CollectiveProgram;
using net::ProgramBuffer;
using net::ProgramOp;
using net::ProgramOpKind;

constexpr std::uint64_t psPerNanosecond = 1000;

std::string rankFile(const std::string& prefix, std::uint32_t rank)
{
    return prefix + "." + std::to_string(rank) + ".et";
}

std::string collectiveName(CollectiveType type)
{
    if (const char* name = net::mscclCollectiveName(type))
        return name;
    throw Error(std::string("an algorithm trace cannot hold a ") + toString(type));
}

// The place of a node in messages: "PREFIX.3.et node 5 (rrs 5)".
std::string nodeWhere(const std::string& file, std::uint64_t id, std::string_view name)
{
    return file + " node " + std::to_string(id) + " (" + std::string(name) + ")";
}

// Node id -> index: a table while the ids are dense (as writers number them), a hash map for
// the ids beyond it.
class NodeIndex {
public:
    std::optional<std::uint32_t> find(std::uint64_t id) const
    {
        if (id < dense.size())
            return dense[id] == absent ? std::nullopt : std::optional<std::uint32_t>(dense[id]);
        auto found = sparse.find(id);
        return found == sparse.end() ? std::nullopt : std::optional<std::uint32_t>(found->second);
    }
    void insert(std::uint64_t id, std::uint32_t index)
    {
        ++count;
        if (id >= dense.size() && id < 2 * count + 1024)
            dense.resize(static_cast<std::size_t>(id) + 1 + dense.size() / 2, absent);
        if (id < dense.size())
            dense[id] = index;
        else
            sparse[id] = index;
    }

private:
    static constexpr std::uint32_t absent = std::numeric_limits<std::uint32_t>::max();
    std::vector<std::uint32_t> dense;
    std::unordered_map<std::uint64_t, std::uint32_t> sparse;
    std::uint64_t count = 0;
};

// `where` gives the node's place, called only for the message.
template <typename Where>
ProgramBuffer bufferOf(std::string_view value, const Where& where)
{
    if (std::optional<ProgramBuffer> buffer = net::bufferFromMscclName(value))
        return *buffer;
    throw Error(where() + ": buffer \"" + std::string(value) + "\" is not i, o or s");
}

template <typename Where>
std::uint32_t chunkIndex(std::int64_t value, const Where& where, const char* what)
{
    if (value < 0 || value > (1 << 24))
        throw Error(where() + ": " + what + "=" + std::to_string(value) + " is out of range");
    return static_cast<std::uint32_t>(value);
}

std::uint32_t metaNumber(const et::TraceMetadata& meta, const char* name, const std::string& file)
{
    std::optional<std::string> text = meta.stringAttr(name);
    if (!text)
        throw Error(file + ": the metadata record has a collective but no " + name);
    try {
        return static_cast<std::uint32_t>(std::stoul(*text));
    } catch (const std::exception&) {
        throw Error(file + ": metadata " + name + "=\"" + *text + "\" is not a number");
    }
}

[[noreturn]] void notAlgorithmNode(const std::string& where, et::NodeType type)
{
    throw Error(where +
                ": an algorithm trace holds only COMM_SEND, COMM_RECV and COMP nodes, "
                "not node type " +
                std::to_string(static_cast<int>(type)));
}

// How many rank files PREFIX.0.et, PREFIX.1.et, ... there are; throws for none or a gap.
std::uint32_t countRankFiles(const std::string& prefix)
{
    std::uint32_t ranks = 0;
    while (fs::exists(rankFile(prefix, ranks)))
        ++ranks;
    if (ranks == 0)
        throw Error(
            rankFile(prefix, 0) +
            ": no such file; an algorithm trace prefix names PREFIX.0.et, PREFIX.1.et, ...");
    // A gap in the numbering is a missing file, not a smaller algorithm.
    for (std::uint32_t later = ranks + 1; later <= ranks + 64; ++later)
        if (fs::exists(rankFile(prefix, later)))
            throw Error(rankFile(prefix, ranks) + ": missing, but " + rankFile(prefix, later) +
                        " exists; the algorithm's rank files must be numbered 0, 1, 2, ... "
                        "without gaps");
    return ranks;
}

// What reading one rank file finds besides its operations.
struct RankFound {
    bool annotated = true;
    // The highest peer a node names, and that node's place.
    std::uint32_t highestPeer = 0;
    std::string highestWhere;
};

// Reads rank `rank`'s file into program.ranks[rank] (and, for rank 0, the program's collective
// and buffers from its metadata). Touches nothing of the other ranks: ranks are read in
// parallel. `expectedOps` is how many operations to make room for.
RankFound readRank(const std::string& prefix,
                   std::uint32_t rank,
                   CollectiveProgram& program,
                   std::size_t expectedOps)
{
    RankFound found;
    bool& annotated = found.annotated;
    std::uint32_t& highestPeer = found.highestPeer;
    std::string& highestWhere = found.highestWhere;
    {
        std::string file = rankFile(prefix, rank);
        et::TraceReader reader(file);
        const et::TraceMetadata& meta = reader.metadata();
        // ASTRA-sim's converter also records the collective, but not the chunk counts that
        // etsim's own traces carry: only those are read as chunk-annotated.
        std::optional<std::string> coll = meta.stringAttr("collective");
        if (!meta.stringAttr("input_chunks"))
            coll.reset();
        if (rank == 0 && coll) {
            std::optional<CollectiveType> type = net::collectiveFromMscclName(*coll);
            if (!type)
                throw Error(file + ": metadata collective=\"" + *coll +
                            "\" is not allreduce, allgather, reduce_scatter or alltoall");
            program.type = *type;
            program.inputChunks = metaNumber(meta, "input_chunks", file);
            program.outputChunks = metaNumber(meta, "output_chunks", file);
            program.scratchChunks = metaNumber(meta, "scratch_chunks", file);
            program.inPlace = meta.stringAttr("in_place").value_or("0") == "1";
            program.chunksPerLoop = std::max(program.inputChunks, program.outputChunks);
        }
        annotated = annotated && coll.has_value();
        net::RankProgram& rankProgram = program.ranks[rank];
        auto& ops = rankProgram.ops;
        // Ranks of a collective usually have as many operations as each other.
        ops.reserve(expectedOps);
        NodeIndex opOfNode;
        // Every operation's dependencies as node ids (from depBegin[op] to depBegin[op + 1])
        // until every node is read.
        std::vector<std::uint64_t> depIds;
        std::vector<std::size_t> depBegin{0};
        et::NodeView node;
        while (reader.next(node)) {
            // Messages are built only on an error: a program has millions of nodes.
            auto where = [&] { return nodeWhere(file, node.id, node.name); };
            if (opOfNode.find(node.id))
                throw Error(where() + ": the node id appears twice in the file");
            ChakraNodeAttrs attrs = chakraNodeAttrs(node);
            annotated = annotated && attrs.op.has_value();
            const std::optional<std::int64_t>& commSrc = attrs.commSrc;
            const std::optional<std::int64_t>& commDst = attrs.commDst;
            // The send half of an rrs/rcs/rrcs joins the receive it depends on.
            if (attrs.op == "send") {
                std::optional<std::uint32_t> joined;
                if (node.type == et::NodeType::CommSend && node.dataDeps.size() == 1)
                    joined = opOfNode.find(node.dataDeps[0]);
                if (!joined)
                    throw Error(where() + ": a chunk_op \"send\" node must be a COMM_SEND that "
                                          "depends on exactly one earlier COMM_RECV (its receive)");
                ProgramOp& op = ops[*joined];
                if (!net::sends(op.kind) || op.sendPeer != net::noPeer)
                    throw Error(where() + ": the receive it depends on is not an rrs, rcs or "
                                          "rrcs waiting for its send");
                op.sendPeer =
                    static_cast<std::uint32_t>(static_cast<std::int32_t>(commDst.value_or(-1)));
                opOfNode.insert(node.id, *joined);
                if (op.sendPeer > highestPeer) {
                    highestPeer = op.sendPeer;
                    highestWhere = where();
                }
                continue;
            }
            ProgramOp op;
            op.origin = node.id;
            op.nameBegin = static_cast<std::uint32_t>(rankProgram.names.size());
            op.nameSize = static_cast<std::uint32_t>(node.name.size());
            switch (node.type) {
            case et::NodeType::CommSend:
                op.kind = ProgramOpKind::Send;
                if (!commDst)
                    throw Error(where() + ": a COMM_SEND node needs comm_dst");
                op.sendPeer = static_cast<std::uint32_t>(static_cast<std::int32_t>(*commDst));
                break;
            case et::NodeType::CommRecv:
                op.kind = ProgramOpKind::Recv;
                if (!commSrc)
                    throw Error(where() + ": a COMM_RECV node needs comm_src");
                op.recvPeer = static_cast<std::uint32_t>(static_cast<std::int32_t>(*commSrc));
                break;
            case et::NodeType::Comp:
                op.kind = ProgramOpKind::Nop;
                break;
            default:
                notAlgorithmNode(where(), node.type);
            }
            op.channel =
                static_cast<std::uint32_t>(static_cast<std::int32_t>(attrs.commTag.value_or(0)));
            if (node.type != et::NodeType::Comp)
                op.fixedBytes = static_cast<std::uint64_t>(attrs.commSize.value_or(0));
            if (attrs.op) {
                std::optional<ProgramOpKind> kind = net::opKindFromMscclName(*attrs.op);
                if (!kind)
                    throw Error(where() + ": unknown chunk_op \"" + std::string(*attrs.op) +
                                "\" (s, r, rrc, rrs, rcs, rrcs, cpy, re, nop, send)");
                bool expectRecv = net::receives(*kind);
                bool expectSend = *kind == ProgramOpKind::Send;
                bool local = !expectRecv && !expectSend;
                if ((expectRecv && node.type != et::NodeType::CommRecv) ||
                    (expectSend && node.type != et::NodeType::CommSend) ||
                    (local && node.type != et::NodeType::Comp))
                    throw Error(where() + ": chunk_op \"" + std::string(*attrs.op) +
                                "\" does not fit the node's type");
                op.kind = *kind;
                if (attrs.srcBuf)
                    op.src = ChunkRef{bufferOf(*attrs.srcBuf, where),
                                      chunkIndex(attrs.srcOff, where, "src_off")};
                if (attrs.dstBuf)
                    op.dst = ChunkRef{bufferOf(*attrs.dstBuf, where),
                                      chunkIndex(attrs.dstOff, where, "dst_off")};
                op.count = chunkIndex(attrs.count, where, "chunk_count");
            }
            for (std::uint32_t peer : {op.sendPeer, op.recvPeer})
                if (peer != net::noPeer && peer > highestPeer) {
                    highestPeer = peer;
                    highestWhere = where();
                }
            rankProgram.names.append(node.name);
            opOfNode.insert(node.id, static_cast<std::uint32_t>(ops.size()));
            ops.push_back(std::move(op));
            depIds.insert(depIds.end(), node.dataDeps.begin(), node.dataDeps.end());
            depIds.insert(depIds.end(), node.ctrlDeps.begin(), node.ctrlDeps.end());
            depBegin.push_back(depIds.size());
        }
        for (std::uint32_t index = 0; index < ops.size(); ++index)
            for (std::size_t at = depBegin[index]; at < depBegin[index + 1]; ++at) {
                std::optional<std::uint32_t> dep = opOfNode.find(depIds[at]);
                if (!dep)
                    throw Error(program.where(rank, index) + ": depends on node " +
                                std::to_string(depIds[at]) + ", which the file does not have");
                if (*dep != index)
                    ops[index].deps.push_back(*dep);
            }
        for (std::uint32_t index = 0; index < ops.size(); ++index)
            if (net::sends(ops[index].kind) && ops[index].sendPeer == net::noPeer)
                throw Error(program.where(rank, index) +
                            ": an rrs, rcs or rrcs receive needs a following "
                            "chunk_op \"send\" node that depends on it");
    }
    return found;
}

// Reads every rank with `threads` workers, each taking the next rank not yet taken. The
// result is the same as reading them in order: each rank's operations go to its own place,
// and of the ranks that fail, the first in order is the error reported (a worker stops once
// a rank before the one it would take has failed).
std::vector<RankFound>
readRanks(const std::string& prefix, CollectiveProgram& program, unsigned threads)
{
    const auto ranks = static_cast<std::uint32_t>(program.ranks.size());
    std::vector<RankFound> found(ranks);
    std::vector<std::exception_ptr> errors(ranks);
    std::atomic<std::uint32_t> next{0};
    std::atomic<std::uint32_t> firstFailed{ranks};
    auto work = [&] {
        std::size_t expectedOps = 0;
        for (;;) {
            std::uint32_t rank = next.fetch_add(1);
            if (rank >= ranks || rank > firstFailed.load())
                return;
            try {
                found[rank] = readRank(prefix, rank, program, expectedOps);
                expectedOps = program.ranks[rank].ops.size();
            } catch (...) {
                errors[rank] = std::current_exception();
                std::uint32_t failed = firstFailed.load();
                while (rank < failed && !firstFailed.compare_exchange_weak(failed, rank)) {
                }
            }
        }
    };
    threads = std::max(1U, std::min<unsigned>(threads, ranks));
    std::vector<std::thread> workers;
    for (unsigned extra = 1; extra < threads; ++extra) {
        try {
            workers.emplace_back(work);
        } catch (const std::system_error&) {
            break; // fewer threads read the same ranks
        }
    }
    work();
    for (std::thread& worker : workers)
        worker.join();
    for (const std::exception_ptr& error : errors)
        if (error)
            std::rethrow_exception(error);
    return found;
}

} // namespace

unsigned defaultReadThreads()
{
    // Reading is per file and memory-bound past a few threads.
    return std::max(1U, std::min(4U, std::thread::hardware_concurrency()));
}

CollectiveProgram loadChakraAlgorithm(const std::string& prefix, unsigned threads)
{
    CollectiveProgram program;
    program.source = prefix;
    program.origin = net::ProgramOrigin::Chakra;
    program.name = fs::path(prefix).filename().string();
    const std::uint32_t ranks = countRankFiles(prefix);
    program.ranks.resize(ranks);
    bool annotated = true;
    std::uint32_t highestPeer = 0;
    std::string highestWhere;
    // In rank order, as a single reader finds them: the first of the highest peers counts.
    for (RankFound& rank : readRanks(prefix, program, threads)) {
        annotated = annotated && rank.annotated;
        if (rank.highestPeer > highestPeer) {
            highestPeer = rank.highestPeer;
            highestWhere = std::move(rank.highestWhere);
        }
    }
    if (highestPeer >= ranks && highestPeer != net::noPeer)
        throw Error(highestWhere + ": talks to rank " + std::to_string(highestPeer) + ", but " +
                    rankFile(prefix, ranks) + " is missing (the algorithm's rank files must be " +
                    "numbered 0.." + std::to_string(highestPeer) + " without gaps)");
    program.chunksKnown = annotated;
    if (!annotated) {
        program.type = CollectiveType::None;
        program.inputChunks = program.outputChunks = program.scratchChunks = 0;
        for (auto& rank : program.ranks)
            for (ProgramOp& op : rank.ops)
                op.count = 1;
    } else {
        for (auto& rank : program.ranks)
            for (ProgramOp& op : rank.ops)
                op.fixedBytes = 0;
    }
    return program;
}

net::NodeProgram loadChakraNodeProgram(const std::string& prefix)
{
    using net::NodeProgramNode;
    net::NodeProgram program;
    program.source = prefix;
    const std::uint32_t ranks = countRankFiles(prefix);
    program.ranks.resize(ranks);
    for (std::uint32_t rank = 0; rank < ranks; ++rank) {
        const std::string file = rankFile(prefix, rank);
        et::TraceReader reader(file);
        std::vector<NodeProgramNode>& nodes = program.ranks[rank];
        std::unordered_map<std::uint64_t, std::uint32_t> indexOfNode;
        std::vector<std::pair<std::uint32_t, std::uint64_t>> edges; // (node index, dependency id)
        et::TraceNode node;
        while (reader.next(node)) {
            const std::string where =
                file + " node " + std::to_string(node.id) + " (" + node.name + ")";
            if (indexOfNode.count(node.id))
                throw Error(where + ": the node id appears twice in the file");
            NodeProgramNode out;
            out.nodeId = node.id;
            auto peer = [&](std::optional<std::int32_t> value, const char* key) {
                if (!value || *value < 0 || static_cast<std::uint32_t>(*value) >= ranks)
                    throw Error(where + ": " + key + " " +
                                (value ? std::to_string(*value) : std::string("missing")) +
                                " is not an algorithm rank of " + prefix + " (0.." +
                                std::to_string(ranks - 1) + ", one PREFIX.<rank>.et each)");
                return static_cast<std::uint32_t>(*value);
            };
            switch (node.type) {
            case et::NodeType::CommSend:
                out.kind = NodeProgramNode::Kind::Send;
                out.peer = peer(node.commDst(), "comm_dst");
                break;
            case et::NodeType::CommRecv:
                out.kind = NodeProgramNode::Kind::Recv;
                out.peer = peer(node.commSrc(), "comm_src");
                break;
            case et::NodeType::Comp:
                out.kind = NodeProgramNode::Kind::Comp;
                // Chakra durations are µs; 0 stands for a reduction of negligible cost.
                out.durationPs =
                    (node.durationMicros == 0 ? 1 : node.durationMicros * 1000) * psPerNanosecond;
                break;
            default:
                notAlgorithmNode(where, node.type);
            }
            if (out.kind != NodeProgramNode::Kind::Comp) {
                if (!node.commSize() || *node.commSize() < 0)
                    throw Error(where + ": a message node needs a comm_size (bytes)");
                out.bytes = static_cast<std::uint64_t>(*node.commSize());
                out.tag = static_cast<std::uint64_t>(node.commTag().value_or(0));
            }
            const auto index = static_cast<std::uint32_t>(nodes.size());
            indexOfNode.emplace(node.id, index);
            for (std::uint64_t dep : node.dataDeps)
                edges.emplace_back(index, dep);
            for (std::uint64_t dep : node.ctrlDeps)
                edges.emplace_back(index, dep);
            nodes.push_back(std::move(out));
        }
        for (const auto& [index, dep] : edges) {
            auto found = indexOfNode.find(dep);
            if (found == indexOfNode.end())
                throw Error(file + " node " + std::to_string(nodes[index].nodeId) +
                            ": depends on node " + std::to_string(dep) +
                            ", which the file does not have");
            nodes[found->second].dependents.push_back(index);
            ++nodes[index].dependencies;
        }
    }
    return program;
}

void writeChakraAlgorithm(const CollectiveProgram& program,
                          const std::string& prefix,
                          std::uint64_t bytes)
{
    std::uint64_t chunk = program.inputChunks == 0 ? 0 : bytes / program.inputChunks;
    pb::GlobalMetadata metadata = et::TraceWriter::defaultMetadata();
    auto meta = [&](const char* name, const std::string& value) {
        pb::AttributeProto* attr = metadata.add_attr();
        attr->set_name(name);
        attr->set_string_val(value);
    };
    meta("collective", collectiveName(program.type));
    meta("input_chunks", std::to_string(program.inputChunks));
    meta("output_chunks", std::to_string(program.outputChunks));
    meta("scratch_chunks", std::to_string(program.scratchChunks));
    meta("in_place", program.inPlace ? "1" : "0");
    for (std::uint32_t rank = 0; rank < program.rankCount(); ++rank) {
        std::string file = rankFile(prefix, rank);
        std::string temporary = file + ".tmp";
        {
            et::TraceWriter writer(temporary, metadata);
            const auto& ops = program.ranks[rank].ops;
            // The node each operation finishes with (its send half for rrs/rcs/rrcs).
            std::vector<std::uint64_t> last(ops.size());
            std::uint64_t nextId = 0;
            auto text = [](et::TraceNode& node, const char* name, const std::string& value) {
                pb::AttributeProto attr;
                attr.set_name(name);
                attr.set_string_val(value);
                et::TraceCodec::addAttribute(node, attr);
            };
            auto number = [](et::TraceNode& node, const char* name, std::int64_t value) {
                pb::AttributeProto attr;
                attr.set_name(name);
                attr.set_int64_val(value);
                et::TraceCodec::addAttribute(node, attr);
            };
            for (std::size_t index = 0; index < ops.size(); ++index) {
                const ProgramOp& op = ops[index];
                et::TraceNode node;
                node.id = nextId++;
                node.name = std::string(net::mscclName(op.kind)) + " " + std::to_string(index);
                for (std::uint32_t dep : op.deps)
                    node.dataDeps.push_back(last[dep]);
                std::uint64_t size = op.count * chunk;
                if (net::receives(op.kind)) {
                    node.type = et::NodeType::CommRecv;
                    node.setCommSrc(static_cast<std::int32_t>(op.recvPeer));
                } else if (op.kind == ProgramOpKind::Send) {
                    node.type = et::NodeType::CommSend;
                    node.setCommDst(static_cast<std::int32_t>(op.sendPeer));
                } else {
                    node.type = et::NodeType::Comp;
                }
                if (node.type != et::NodeType::Comp) {
                    node.setCommSize(static_cast<std::int64_t>(size));
                    node.setCommTag(static_cast<std::int32_t>(op.channel));
                }
                text(node, "chunk_op", net::mscclName(op.kind));
                text(node, "src_buf", net::mscclName(op.src.buffer));
                number(node, "src_off", op.src.offset);
                text(node, "dst_buf", net::mscclName(op.dst.buffer));
                number(node, "dst_off", op.dst.offset);
                number(node, "chunk_count", op.count);
                writer.write(node);
                last[index] = node.id;
                if (net::receives(op.kind) && net::sends(op.kind)) {
                    et::TraceNode send;
                    send.id = nextId++;
                    send.name = "send " + std::to_string(index);
                    send.type = et::NodeType::CommSend;
                    send.dataDeps.push_back(node.id);
                    send.setCommDst(static_cast<std::int32_t>(op.sendPeer));
                    send.setCommSize(static_cast<std::int64_t>(size));
                    send.setCommTag(static_cast<std::int32_t>(op.channel));
                    text(send, "chunk_op", "send");
                    writer.write(send);
                    last[index] = send.id;
                }
            }
            writer.close();
        }
        fs::rename(temporary, file);
    }
}

} // namespace etsim::platform
