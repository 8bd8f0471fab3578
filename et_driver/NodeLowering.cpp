#include "et_driver/NodeLowering.h"

#include "et_driver/NodeLimits.h"
#include "et_driver/NodeTensors.h"
#include "et_driver/OperatorInfo.h"
#include "et_driver/TraceCodec.h"
#include "kernel/Error.h"
#include "kernel/Log.h"

#include <limits>

namespace etsim::et {
namespace {

constexpr std::uint64_t psPerMicro = 1000000;
constexpr std::uint64_t psPerNano = 1000;

enum WarningKind : unsigned {
    WarnComputeFromDuration,
    WarnComputeDefault,
    WarnZeroDuration,
    WarnHostCommunication,
    WarnLocalCollective,
    WarnBadGroupList,
};

etsim::CollectiveType collectiveType(std::int32_t type)
{
    switch (static_cast<CollectiveType>(type)) {
    case CollectiveType::AllReduce:
        return etsim::CollectiveType::AllReduce;
    case CollectiveType::Reduce:
        return etsim::CollectiveType::Reduce;
    case CollectiveType::AllGather:
        return etsim::CollectiveType::AllGather;
    case CollectiveType::Gather:
        return etsim::CollectiveType::Gather;
    case CollectiveType::Scatter:
        return etsim::CollectiveType::Scatter;
    case CollectiveType::Broadcast:
        return etsim::CollectiveType::Broadcast;
    case CollectiveType::AllToAll:
        return etsim::CollectiveType::AllToAll;
    case CollectiveType::ReduceScatter:
    case CollectiveType::ReduceScatterBlock:
        return etsim::CollectiveType::ReduceScatter;
    case CollectiveType::Barrier:
        return etsim::CollectiveType::Barrier;
    }
    return etsim::CollectiveType::None;
}

etsim::DataType dataType(DataType type)
{
    switch (type) {
    case DataType::Fp64:
        return etsim::DataType::Fp64;
    case DataType::Fp32:
    case DataType::Tf32:
        return etsim::DataType::Fp32;
    case DataType::Bf16:
        return etsim::DataType::Bf16;
    case DataType::Fp16:
        return etsim::DataType::Fp16;
    case DataType::Fp8:
        return etsim::DataType::Fp8E4M3;
    case DataType::Int8:
        return etsim::DataType::Int8;
    case DataType::Unknown:
        break;
    }
    return etsim::DataType::Unknown;
}

OperatorKind operatorKind(OpKind kind)
{
    switch (kind) {
    case OpKind::Gemm:
    case OpKind::Bmm:
        return OperatorKind::Gemm;
    case OpKind::Conv2d:
        return OperatorKind::Convolution;
    case OpKind::Attention:
        return OperatorKind::Attention;
    case OpKind::Elementwise:
        return OperatorKind::Elementwise;
    case OpKind::Reduce:
        return OperatorKind::Reduction;
    case OpKind::Unknown:
        break;
    }
    return OperatorKind::Unknown;
}

std::uint64_t nonNegative(std::int64_t value)
{
    return value < 0 ? 0 : static_cast<std::uint64_t>(value);
}

// Makes `info` a default node named `name` (its only attribute), keeping the heap buffers of
// its attribute list and of a name it already had.
void reuse(EtNodeInfo& info, const std::string& name)
{
    std::vector<NodeAttribute> attributes = std::move(info.attributes);
    info = EtNodeInfo{};
    std::string* text = attributes.empty() || attributes.front().key != nameAttribute
                            ? nullptr
                            : std::get_if<std::string>(&attributes.front().value);
    if (text == nullptr) {
        attributes.clear();
        info.attributes = std::move(attributes);
        info.setAttribute(nameAttribute, name);
        return;
    }
    text->assign(name);
    attributes.erase(attributes.begin() + 1, attributes.end());
    info.attributes = std::move(attributes);
}

} // namespace

const char* engineName(Engine engine)
{
    switch (engine) {
    case Engine::Compute:
        return "compute";
    case Engine::Memory:
        return "memory";
    case Engine::Communication:
        return "communication";
    case Engine::Host:
        return "host";
    case Engine::Instant:
        return "instant";
    }
    return "?";
}

std::optional<ExecutionMode> parseExecutionMode(std::string_view text)
{
    if (text == "replay")
        return ExecutionMode::Replay;
    if (text == "model")
        return ExecutionMode::Model;
    return std::nullopt;
}

std::optional<SchedulingProfile> parseSchedulingProfile(std::string_view text)
{
    if (text == "native")
        return SchedulingProfile::Native;
    if (text == "astra")
        return SchedulingProfile::Astra;
    return std::nullopt;
}

const char* executionModeName(ExecutionMode mode)
{
    return mode == ExecutionMode::Replay ? "replay" : "model";
}

const char* schedulingProfileName(SchedulingProfile profile)
{
    return profile == SchedulingProfile::Astra ? "astra" : "native";
}

LoweringContext::LoweringContext(std::size_t rankCount, const Logger* log)
    : ranks(rankCount), log(log)
{
    if (rankCount == 0)
        throw Error("node lowering: the job needs at least one rank");
}

void LoweringContext::addGroup(const ProcessGroup& group)
{
    if (group.id < 0)
        throw Error("process group " + std::to_string(group.id) +
                    ": group ids must be >= 0 (pg_name is a decimal id)");
    Group entry;
    if (!group.ranks.empty()) {
        auto members = std::make_shared<std::vector<RankId>>();
        members->reserve(group.ranks.size());
        for (std::int64_t rank : group.ranks) {
            if (rank < 0 || rank > std::numeric_limits<std::uint32_t>::max())
                throw Error("process group " + std::to_string(group.id) + ": rank " +
                            std::to_string(rank) + " is not a valid rank number");
            if (static_cast<std::uint64_t>(rank) >= ranks)
                entry.beyondJob = true;
            members->push_back(static_cast<RankId>(rank));
        }
        entry.members = std::move(members);
    }
    auto found = groups.find(group.id);
    // Every rank of a PyTorch job repeats the same list: keep the vector already shared.
    if (found != groups.end() && found->second.members && entry.members &&
        *found->second.members == *entry.members)
        return;
    groups[group.id] = std::move(entry);
}

void LoweringContext::addGroups(const std::vector<ProcessGroup>& groups)
{
    for (const ProcessGroup& group : groups)
        addGroup(group);
}

LoweringContext::ResolvedGroup LoweringContext::resolve(std::string_view pgName) const
{
    ResolvedGroup resolved;
    std::optional<std::int64_t> id = groupId(pgName);
    if (!id && !isDefaultGroup(pgName))
        throw Error("pg_name \"" + std::string(pgName) +
                    "\" is not a process-group id; write the decimal id of a group");
    auto found = id ? groups.find(*id) : groups.end();
    if (found == groups.end()) {
        if (isDefaultGroup(pgName))
            return resolved; // all ranks
        throw Error("pg_name \"" + std::string(pgName) +
                    "\" names no known process group; give a communicator-group file or a "
                    "process-group METADATA node that defines it");
    }
    if (*id < 0 || *id > std::numeric_limits<std::uint32_t>::max())
        throw Error("pg_name \"" + std::string(pgName) + "\" is out of range");
    resolved.id = static_cast<ProcessGroupId>(*id);
    resolved.members = found->second.members;
    resolved.beyondJob = found->second.beyondJob;
    return resolved;
}

void LoweringContext::warnOnce(unsigned kind, const std::string& message)
{
    unsigned bit = 1U << kind;
    if ((warned & bit) != 0)
        return;
    warned |= bit;
    if (log != nullptr)
        log->warn(message);
}

NodeLowering::NodeLowering(RankId rank, LoweringOptions options, LoweringContext& context)
    : rankId(rank), settings(options), context(context)
{
    if (toUnderlying(rank) >= context.rankCount())
        throw Error("node lowering: " + toString(rank) + " is outside the job's " +
                    std::to_string(context.rankCount()) + " ranks");
}

std::string NodeLowering::where(const TraceNode& node) const
{
    return toString(rankId) + ", node " + std::to_string(node.id) + " (\"" + node.name + "\")";
}

std::uint64_t NodeLowering::replayPs(const TraceNode& node)
{
    if (node.durationMicros != 0)
        return node.durationMicros * psPerMicro;
    ++counts.zeroDuration;
    context.warnOnce(WarnZeroDuration,
                     "replayed node with duration_micros 0 takes 1 ns, as in ASTRA-sim (first: " +
                         where(node) + ")");
    return psPerNano;
}

LoweredNode NodeLowering::lower(const TraceNode& node)
{
    LoweredNode out;
    lower(node, out);
    return out;
}

void NodeLowering::lower(const TraceNode& node, LoweredNode& out)
{
    static_cast<NodePlacement&>(out) = lower(node, out.info);
}

NodePlacement NodeLowering::lower(const TraceNode& node, EtNodeInfo& info)
{
    // The only owner may write it: every NodeTensors is made non-const (readTensors below).
    if (info.tensors && info.tensors.use_count() == 1 && !spareTensors) {
        spareTensors = std::const_pointer_cast<NodeTensors>(info.tensors);
        info.tensors.reset();
    }
    reuse(info, node.name);
    NodePlacement out;
    info.rank = rankId;
    info.node = static_cast<NodeId>(node.id);
    info.onHost = node.isCpuOp().value_or(false);
    // The same rules as `etsim trace validate` (NodeLimits.h): what breaks them cannot be
    // simulated, or would overflow the clock or a byte count.
    std::vector<LimitViolation> violations =
        checkNodeLimits(node, context.rankCount(), toUnderlying(rankId));
    if (!violations.empty())
        throw Error(where(node) + ": " + violations.front().problem + "; " +
                    violations.front().fix);

    switch (node.type) {
    case NodeType::Invalid:
        info.kind = NodeKind::Metadata;
        return out;
    case NodeType::Metadata:
        info.kind = NodeKind::Metadata;
        readProcessGroups(node);
        return out;
    case NodeType::Comp:
        lowerCompute(node, info, out);
        return out;
    case NodeType::MemLoad:
    case NodeType::MemStore:
        lowerMemory(node, info, out);
        return out;
    case NodeType::CommSend:
    case NodeType::CommRecv:
        lowerPointToPoint(node, info, out);
        return out;
    case NodeType::CommColl:
        lowerCollective(node, info, out);
        return out;
    }
    throw Error(where(node) + ": unknown node type " + nodeTypeName(node.type) +
                "; only the Chakra node types 0..7 can run");
}

void NodeLowering::hostReplay(const TraceNode& node, EtNodeInfo& info, NodePlacement& out)
{
    out.engine = Engine::Host;
    out.local = true;
    out.localPs = replayPs(node);
    info.onHost = true;
}

void NodeLowering::lowerCompute(const TraceNode& node, EtNodeInfo& info, NodePlacement& out)
{
    info.kind = NodeKind::Compute;
    // Older converters keep the process-group list in a COMP node of that name.
    if (node.name.find("process_group:init") != std::string::npos)
        readProcessGroups(node);
    if (info.onHost) {
        hostReplay(node, info, out);
        return;
    }
    out.engine = Engine::Compute;
    info.flops = nonNegative(node.numOps().value_or(0));
    info.bytes = node.tensorSize().value_or(0);
    OperatorInfo& op = operatorScratch;
    operatorInfo(node, op);
    info.op = operatorKind(op.kind);
    info.dataType = dataType(op.dtype);
    if (!op.gemms.empty()) {
        const GemmShape& first = op.gemms.front();
        info.gemm = etsim::GemmShape{nonNegative(first.m),
                                     nonNegative(first.n),
                                     nonNegative(first.k),
                                     nonNegative(first.batch)};
    }
    if (settings.compute == ExecutionMode::Replay) {
        info.durationPs = replayPs(node);
        return;
    }
    if (node.numOps()) {
        readTensors(node, info);
        return;
    }
    if (node.durationMicros != 0) {
        ++counts.computeFromDuration;
        context.warnOnce(WarnComputeFromDuration,
                         "compute node without num_ops replays its duration_micros (first: " +
                             where(node) + ")");
        info.durationPs = node.durationMicros * psPerMicro;
        return;
    }
    ++counts.computeDefault;
    context.warnOnce(WarnComputeDefault,
                     "compute node with neither num_ops nor duration_micros takes 1 ns, as in "
                     "ASTRA-sim (first: " +
                         where(node) + ")");
    info.durationPs = psPerNano;
}

void NodeLowering::lowerMemory(const TraceNode& node, EtNodeInfo& info, NodePlacement& out)
{
    info.kind = node.type == NodeType::MemLoad ? NodeKind::MemLoad : NodeKind::MemStore;
    std::optional<std::uint64_t> bytes = node.tensorSize();
    if (!bytes)
        throw Error(where(node) + ": " + nodeTypeName(node.type) +
                    " has no tensor_size; give the bytes it moves");
    info.bytes = *bytes;
    out.engine = Engine::Memory;
    if (settings.memory == ExecutionMode::Replay)
        info.durationPs = replayPs(node);
    else
        readTensors(node, info);
}

void NodeLowering::readTensors(const TraceNode& node, EtNodeInfo& info)
{
    try {
        std::shared_ptr<NodeTensors> tensors =
            spareTensors ? std::move(spareTensors) : std::make_shared<NodeTensors>();
        bool present = false;
        if (node.tensorsAhead == TraceNode::TensorsAhead::Unknown) {
            present = nodeTensors(node, *tensors);
        } else if (node.tensorsAhead == TraceNode::TensorsAhead::Read) {
            // Worked out on the read-ahead thread; copied over this object's buffers.
            tensors->inputs = node.tensorsRead.inputs;
            tensors->outputs = node.tensorsRead.outputs;
            present = true;
        }
        if (present)
            info.tensors = std::move(tensors);
        else
            spareTensors = std::move(tensors);
    } catch (const Error& error) {
        throw Error(toString(rankId) + ", " + error.what());
    }
}

void NodeLowering::lowerPointToPoint(const TraceNode& node, EtNodeInfo& info, NodePlacement& out)
{
    bool send = node.type == NodeType::CommSend;
    info.kind = send ? NodeKind::Send : NodeKind::Recv;
    if (info.onHost) {
        ++counts.hostCommunication;
        context.warnOnce(WarnHostCommunication,
                         "communication node with is_cpu_op true replays on the host stream "
                         "(first: " +
                             where(node) + ")");
        hostReplay(node, info, out);
        return;
    }
    // The peer's range and comm_src/comm_dst of the node's own rank were checked in lower()
    // (NodeLimits); only a missing peer is left.
    std::optional<std::int32_t> peer = send ? node.commDst() : node.commSrc();
    const char* peerKey = send ? "comm_dst" : "comm_src";
    if (!peer)
        throw Error(where(node) + ": " + nodeTypeName(node.type) + " has no " + peerKey +
                    "; give the peer rank");
    std::optional<std::int64_t> size = node.commSize();
    if (!size || *size < 0)
        throw Error(where(node) + ": " + nodeTypeName(node.type) + " " +
                    (size ? "has a negative comm_size" : missingAttributeText(node, "comm_size")) +
                    "; give the message size in bytes");
    info.peer = static_cast<RankId>(*peer);
    info.tag = static_cast<std::uint64_t>(static_cast<std::uint32_t>(node.commTag().value_or(0)));
    info.bytes = static_cast<std::uint64_t>(*size);
    if (std::optional<std::string_view> pg = node.pgName()) {
        LoweringContext::ResolvedGroup group = context.resolve(*pg);
        info.group = group.id;
    }
    if (send) {
        bool eager = settings.profile == SchedulingProfile::Astra ||
                     info.bytes <= settings.eagerThresholdBytes;
        info.setAttribute(eagerAttribute, eager ? 1 : 0);
    }
    out.engine = Engine::Communication;
    if (settings.communication == ExecutionMode::Replay) {
        out.local = true;
        out.localPs = replayPs(node);
    }
}

void NodeLowering::lowerCollective(const TraceNode& node, EtNodeInfo& info, NodePlacement& out)
{
    info.kind = NodeKind::Collective;
    if (info.onHost) {
        ++counts.hostCommunication;
        context.warnOnce(WarnHostCommunication,
                         "communication node with is_cpu_op true replays on the host stream "
                         "(first: " +
                             where(node) + ")");
        hostReplay(node, info, out);
        return;
    }
    std::optional<std::int32_t> type = node.commType();
    if (!type)
        throw Error(where(node) + ": COMM_COLL_NODE has no comm_type; give the collective "
                                  "(ALL_REDUCE = 0, ...)");
    info.collective = collectiveType(*type);
    if (info.collective == etsim::CollectiveType::None)
        throw Error(where(node) + ": comm_type " + collectiveTypeName(*type) +
                    " is not a collective etsim knows");
    std::optional<std::int64_t> size = node.commSize();
    if (!size || *size < 0)
        throw Error(where(node) + ": COMM_COLL_NODE " +
                    (size ? "has a negative comm_size" : missingAttributeText(node, "comm_size")) +
                    "; give the collective's size in bytes");
    info.bytes = static_cast<std::uint64_t>(*size);
    if (std::optional<std::vector<bool>> dims = node.involvedDim()) {
        std::uint32_t bits = 0;
        for (std::size_t dim = 0; dim < dims->size(); ++dim)
            if ((*dims)[dim])
                bits |= 1U << dim;
        info.involvedDims = bits;
    }
    LoweringContext::ResolvedGroup group = context.resolve(node.pgName().value_or(""));
    info.group = group.id;
    info.groupRanks = group.members;
    out.engine = Engine::Communication;
    bool alone = context.rankCount() == 1 || group.beyondJob;
    if (alone) {
        ++counts.localCollectives;
        context.warnOnce(WarnLocalCollective,
                         "collective whose members are not all ranks of this job completes "
                         "locally from its duration (first: " +
                             where(node) + ")");
    }
    // ASTRA-sim replays broadcasts instead of simulating them.
    bool astraReplay = settings.profile == SchedulingProfile::Astra &&
                       info.collective == etsim::CollectiveType::Broadcast;
    if (alone || astraReplay || settings.communication == ExecutionMode::Replay) {
        out.local = true;
        out.localPs = node.durationMicros * psPerMicro;
        if (!alone)
            out.localPs = replayPs(node);
    }
}

void NodeLowering::readProcessGroups(const TraceNode& node)
{
    std::optional<ChakraProtoMsg::IOInfo> inputs = TraceCodec::inputs(node);
    if (!inputs || inputs->values().empty())
        return;
    try {
        context.addGroups(parsePytorchProcessGroups(inputs->values()));
    } catch (const Error& error) {
        context.warnOnce(WarnBadGroupList,
                         where(node) + ": process-group list ignored: " + error.what());
    }
}

std::uint64_t NodeLowering::nextSequence(const std::optional<ProcessGroupId>& group)
{
    std::uint32_t key = group ? toUnderlying(*group) + 1 : 0;
    return sequences[key]++;
}

} // namespace etsim::et
