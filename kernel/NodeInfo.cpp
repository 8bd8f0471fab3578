#include "kernel/NodeInfo.h"

#include <algorithm>
#include <memory>
#include <utility>

namespace etsim {

// The switches have no default so that -Wswitch flags a new enumerator without a name.

const char* toString(NodeKind kind)
{
    switch (kind) {
    case NodeKind::Invalid:
        return "invalid";
    case NodeKind::Compute:
        return "compute";
    case NodeKind::MemLoad:
        return "mem_load";
    case NodeKind::MemStore:
        return "mem_store";
    case NodeKind::Send:
        return "send";
    case NodeKind::Recv:
        return "recv";
    case NodeKind::Collective:
        return "collective";
    case NodeKind::Metadata:
        return "metadata";
    }
    return "?";
}

const char* toString(CollectiveType type)
{
    switch (type) {
    case CollectiveType::None:
        return "none";
    case CollectiveType::AllReduce:
        return "all_reduce";
    case CollectiveType::AllGather:
        return "all_gather";
    case CollectiveType::ReduceScatter:
        return "reduce_scatter";
    case CollectiveType::AllToAll:
        return "all_to_all";
    case CollectiveType::Broadcast:
        return "broadcast";
    case CollectiveType::Reduce:
        return "reduce";
    case CollectiveType::Gather:
        return "gather";
    case CollectiveType::Scatter:
        return "scatter";
    case CollectiveType::Barrier:
        return "barrier";
    }
    return "?";
}

const char* toString(DataType type)
{
    switch (type) {
    case DataType::Unknown:
        return "unknown";
    case DataType::Fp64:
        return "fp64";
    case DataType::Fp32:
        return "fp32";
    case DataType::Fp16:
        return "fp16";
    case DataType::Bf16:
        return "bf16";
    case DataType::Fp8E4M3:
        return "fp8_e4m3";
    case DataType::Fp8E5M2:
        return "fp8_e5m2";
    case DataType::Int64:
        return "int64";
    case DataType::Int32:
        return "int32";
    case DataType::Int8:
        return "int8";
    case DataType::UInt8:
        return "uint8";
    case DataType::Bool:
        return "bool";
    }
    return "?";
}

const char* toString(OperatorKind kind)
{
    switch (kind) {
    case OperatorKind::Unknown:
        return "unknown";
    case OperatorKind::Gemm:
        return "gemm";
    case OperatorKind::Convolution:
        return "convolution";
    case OperatorKind::Elementwise:
        return "elementwise";
    case OperatorKind::Reduction:
        return "reduction";
    case OperatorKind::Softmax:
        return "softmax";
    case OperatorKind::Normalization:
        return "normalization";
    case OperatorKind::Attention:
        return "attention";
    case OperatorKind::Embedding:
        return "embedding";
    case OperatorKind::Copy:
        return "copy";
    }
    return "?";
}

const char* toString(ReduceOp op)
{
    switch (op) {
    case ReduceOp::None:
        return "none";
    case ReduceOp::Sum:
        return "sum";
    case ReduceOp::Product:
        return "product";
    case ReduceOp::Min:
        return "min";
    case ReduceOp::Max:
        return "max";
    case ReduceOp::Average:
        return "average";
    }
    return "?";
}

unsigned dataTypeBytes(DataType type)
{
    switch (type) {
    case DataType::Unknown:
        return 0;
    case DataType::Fp64:
    case DataType::Int64:
        return 8;
    case DataType::Fp32:
    case DataType::Int32:
        return 4;
    case DataType::Fp16:
    case DataType::Bf16:
        return 2;
    case DataType::Fp8E4M3:
    case DataType::Fp8E5M2:
    case DataType::Int8:
    case DataType::UInt8:
    case DataType::Bool:
        return 1;
    }
    return 0;
}

const NodeAttribute::Value* EtNodeInfo::findAttribute(std::string_view key) const
{
    auto found = std::find_if(attributes.begin(), attributes.end(), [key](const auto& attribute) {
        return attribute.key == key;
    });
    return found == attributes.end() ? nullptr : &found->value;
}

void EtNodeInfo::setAttributeValue(std::string_view key, NodeAttribute::Value value)
{
    for (auto& attribute : attributes)
        if (attribute.key == key) {
            attribute.value = std::move(value);
            return;
        }
    attributes.push_back(NodeAttribute{std::string(key), std::move(value)});
}

namespace {

// Shared lists (member ranks, tensors) compare by content: two transactions of one node or
// collective share the list, but an equal list built elsewhere describes the same thing.
template <typename T>
bool sameContent(const std::shared_ptr<const T>& a, const std::shared_ptr<const T>& b)
{
    if (a == b)
        return true;
    return a != nullptr && b != nullptr && *a == *b;
}

} // namespace

bool EtNodeInfo::operator==(const EtNodeInfo& other) const
{
    return rank == other.rank && node == other.node && kind == other.kind &&
           onHost == other.onHost && bytes == other.bytes && flops == other.flops &&
           collective == other.collective && peer == other.peer && tag == other.tag &&
           group == other.group && sameContent(groupRanks, other.groupRanks) &&
           groupSequence == other.groupSequence && involvedDims == other.involvedDims &&
           durationPs == other.durationPs && dataType == other.dataType && op == other.op &&
           reduceOp == other.reduceOp && gemm == other.gemm &&
           sameContent(tensors, other.tensors) && attributes == other.attributes;
}

} // namespace etsim
