#include "et_driver/NodeLimits.h"

#include "et_driver/TraceCodec.h"

#include <initializer_list>
#include <optional>
#include <utility>

namespace etsim::et {

namespace {

const std::string sizeLimitText = "2^50 B (1 PiB)";
const std::string operationLimitText = "2^60 (1152921504606846976)";

bool isCommunication(NodeType type)
{
    return type == NodeType::CommSend || type == NodeType::CommRecv || type == NodeType::CommColl;
}

void checkSize(const char* name,
               std::optional<std::int64_t> value,
               std::vector<LimitViolation>& out)
{
    if (!value)
        return;
    if (*value < 0)
        out.push_back({NodeLimit::NegativeValue,
                       std::string(name) + " is " + std::to_string(*value) + " B",
                       std::string(name) + " is a byte count and must be >= 0"});
    else if (static_cast<std::uint64_t>(*value) > maxNodeBytes)
        out.push_back({NodeLimit::Beyond,
                       std::string(name) + " " + std::to_string(*value) +
                           " B is above etsim's limit of " + sizeLimitText + " per node",
                       "split the transfer into nodes of at most 1 PiB, or fix the producer"});
}

// tensor_size is unsigned; a negative value written as int64 reads as 2^63 B and up.
void checkTensorSize(const TraceNode& node, std::vector<LimitViolation>& out)
{
    std::optional<std::uint64_t> bytes = node.tensorSize();
    if (bytes && *bytes > maxNodeBytes)
        out.push_back({NodeLimit::Beyond,
                       "tensor_size " + std::to_string(*bytes) + " B (" +
                           std::to_string(static_cast<std::int64_t>(*bytes)) +
                           " as a signed integer) is above etsim's limit of " + sizeLimitText +
                           " per node",
                       "give the bytes the node moves, at most 1 PiB"});
}

void checkPeer(const TraceNode& node,
               std::size_t rankCount,
               std::uint32_t rank,
               std::vector<LimitViolation>& out)
{
    const bool send = node.type == NodeType::CommSend;
    const std::optional<std::int32_t> peer = send ? node.commDst() : node.commSrc();
    const std::optional<std::int32_t> self = send ? node.commSrc() : node.commDst();
    const char* peerKey = send ? "comm_dst" : "comm_src";
    const char* selfKey = send ? "comm_src" : "comm_dst";
    if (peer && (*peer < 0 || static_cast<std::size_t>(*peer) >= rankCount))
        out.push_back({NodeLimit::PeerRank,
                       std::string(peerKey) + " " + std::to_string(*peer) +
                           " is not a rank of this " + std::to_string(rankCount) + "-rank job",
                       "give a peer rank from 0 to " + std::to_string(rankCount - 1)});
    if (self && *self != static_cast<std::int32_t>(rank))
        out.push_back({NodeLimit::PeerRank,
                       std::string(selfKey) + " " + std::to_string(*self) +
                           " is not the node's own rank " + std::to_string(rank),
                       std::string("remove ") + selfKey + " or set it to " + std::to_string(rank)});
}

void checkCompute(const TraceNode& node, std::vector<LimitViolation>& out)
{
    if (std::optional<std::int64_t> ops = node.numOps()) {
        if (*ops < 0)
            out.push_back({NodeLimit::NegativeValue,
                           "num_ops is " + std::to_string(*ops),
                           "num_ops counts operations and must be >= 0"});
        else if (static_cast<std::uint64_t>(*ops) > maxNodeOperations)
            out.push_back({NodeLimit::Beyond,
                           "num_ops " + std::to_string(*ops) + " is above etsim's limit of " +
                               operationLimitText + " per node",
                           "split the kernel into several nodes, or fix the producer"});
    }
    // A GEMM's shape decides its time on tiled and systolic engines, so it obeys the same
    // bounds as num_ops: no negative dimension, 2 m n k batch at most the operation limit.
    std::uint64_t product = 2; // saturates at 2^64 - 1, far above the limit
    bool anyDimension = false;
    bool negative = false;
    for (auto [name, value] : {std::pair{"gemm_m", node.gemmM()},
                               std::pair{"gemm_n", node.gemmN()},
                               std::pair{"gemm_k", node.gemmK()},
                               std::pair{"gemm_batch", node.gemmBatch()}}) {
        if (!value)
            continue;
        anyDimension = true;
        if (*value < 0) {
            negative = true;
            out.push_back({NodeLimit::NegativeValue,
                           std::string(name) + " is " + std::to_string(*value),
                           "a GEMM dimension counts elements and must be >= 0"});
            continue;
        }
        if (__builtin_mul_overflow(product, static_cast<std::uint64_t>(*value), &product))
            product = UINT64_MAX;
    }
    if (anyDimension && !negative && product > maxNodeOperations)
        out.push_back({NodeLimit::Beyond,
                       "the GEMM shape (gemm_m x gemm_n x gemm_k x gemm_batch) needs more than " +
                           operationLimitText + " operations, etsim's limit per node",
                       "give the shape of one kernel, or split it into several nodes"});
    checkTensorSize(node, out);
}

} // namespace

std::string missingAttributeText(const TraceNode& node, std::string_view name)
{
    for (const ChakraProtoMsg::AttributeProto& attr : TraceCodec::otherAttributes(node)) {
        if (attr.name() != name)
            continue;
        const google::protobuf::FieldDescriptor* field =
            ChakraProtoMsg::AttributeProto::descriptor()->FindFieldByNumber(
                static_cast<int>(attr.value_case()));
        const std::string encoding = field != nullptr ? field->name() : "no value";
        return "has a " + std::string(name) + " etsim cannot read (" + encoding +
               "): it must be an integer from 0 to 2^63-1 written as int64_val (or another "
               "integer encoding that holds it)";
    }
    return "has no " + std::string(name);
}

std::vector<LimitViolation>
checkNodeLimits(const TraceNode& node, std::size_t rankCount, std::uint32_t rank)
{
    std::vector<LimitViolation> out;
    if (node.durationMicros > maxDurationMicros)
        out.push_back({NodeLimit::Beyond,
                       "duration_micros " + std::to_string(node.durationMicros) +
                           " us is beyond etsim's simulated clock, which ends at 2^64 ps (" +
                           std::to_string(maxDurationMicros) + " us, about 213 days)",
                       "give the node's real duration in microseconds"});
    if (isCommunication(node.type))
        checkSize("comm_size", node.commSize(), out);
    if ((node.type == NodeType::CommSend || node.type == NodeType::CommRecv) && rankCount > 0)
        checkPeer(node, rankCount, rank, out);
    if (node.type == NodeType::Comp)
        checkCompute(node, out);
    if (node.type == NodeType::MemLoad || node.type == NodeType::MemStore)
        checkTensorSize(node, out);
    return out;
}

} // namespace etsim::et
