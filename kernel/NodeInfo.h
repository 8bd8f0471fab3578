#pragma once
// What one transaction stands for, as plain values: which ET node of which rank, what kind of
// work, how many bytes and operations. The TLM extension that carries it is in
// kernel/Extensions.h (SystemC runtime); this header is part of the SystemC-free core, so the
// fabric's topology code and the peer side can speak of nodes and collectives.
//
// All fields live in one value struct (EtNodeInfo) so that the extension's clone() and
// copy_from() copy it as a whole: a field added later is copied without touching them.
// Rarely used, model-specific data goes into the attribute list instead of new fields.

#include "kernel/Ids.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

namespace etsim {

/// What an ET node asks of the hardware. Invalid marks an extension nobody filled in.
enum class NodeKind : std::uint8_t {
    Invalid,
    Compute,
    MemLoad,
    MemStore,
    Send,
    Recv,
    Collective,
    Metadata,
};

/// The collective operation of a Collective node (Chakra's CollectiveCommType).
enum class CollectiveType : std::uint8_t {
    None,
    AllReduce,
    AllGather,
    ReduceScatter,
    AllToAll,
    Broadcast,
    Reduce,
    Gather,
    Scatter,
    Barrier,
};

/// Element type of the tensors a node works on.
enum class DataType : std::uint8_t {
    Unknown,
    Fp64,
    Fp32,
    Fp16,
    Bf16,
    Fp8E4M3,
    Fp8E5M2,
    Int64,
    Int32,
    Int8,
    UInt8,
    Bool,
};

/// The class of operator a Compute node runs; picks the compute model (GEMM engine, vector
/// unit, ...).
enum class OperatorKind : std::uint8_t {
    Unknown,
    Gemm,
    Convolution,
    Elementwise,
    Reduction,
    Softmax,
    Normalization,
    Attention,
    Embedding,
    Copy,
};

/// The combining operation of a reducing collective.
enum class ReduceOp : std::uint8_t {
    None,
    Sum,
    Product,
    Min,
    Max,
    Average,
};

/// Lower-case names for reports and timelines ("all_reduce", "bf16"); "?" for values outside
/// the enum.
const char* toString(NodeKind kind);
const char* toString(CollectiveType type);
const char* toString(DataType type);
const char* toString(OperatorKind kind);
const char* toString(ReduceOp op);

/// Size of one element in bytes; 0 for DataType::Unknown.
unsigned dataTypeBytes(DataType type);

/// Shape of a (batched) GEMM: batch × (m×k · k×n).
struct GemmShape {
    std::uint64_t m = 0;
    std::uint64_t n = 0;
    std::uint64_t k = 0;
    std::uint64_t batch = 1;

    /// Multiply-adds counted as two operations: 2·m·n·k·batch.
    std::uint64_t flops() const { return 2 * m * n * k * batch; }

    bool operator==(const GemmShape& other) const
    {
        return m == other.m && n == other.n && k == other.k && batch == other.batch;
    }
    bool operator!=(const GemmShape& other) const { return !(*this == other); }
};

/// A named extra value of a node (a Chakra attribute without a field of its own).
struct NodeAttribute {
    using Value = std::variant<std::int64_t, double, std::string>;
    std::string key;
    Value value;

    bool operator==(const NodeAttribute& other) const
    {
        return key == other.key && value == other.value;
    }
    bool operator!=(const NodeAttribute& other) const { return !(*this == other); }
};

/// One tensor a node reads or writes, named as the trace names it: Chakra's tensor tuples in
/// Node.inputs / Node.outputs give its `tensor_id` and `num_elem × elem_bytes`.
struct TensorUse {
    std::uint64_t id = 0;
    /// Bytes of the tensor, B.
    std::uint64_t bytes = 0;

    bool operator==(const TensorUse& other) const { return id == other.id && bytes == other.bytes; }
    bool operator!=(const TensorUse& other) const { return !(*this == other); }
};

/// The tensors of a node, in trace order. The accelerator's on-chip residency model keys on
/// them (docs/accel.md, On-chip memory).
struct NodeTensors {
    std::vector<TensorUse> inputs;
    std::vector<TensorUse> outputs;

    bool operator==(const NodeTensors& other) const
    {
        return inputs == other.inputs && outputs == other.outputs;
    }
    bool operator!=(const NodeTensors& other) const { return !(*this == other); }
};

/// The attribute of a Send that names its protocol: 1 = eager (the message leaves at once),
/// 0 = rendezvous (it leaves when the matching Recv is posted); absent means eager. Part of the
/// driver/fabric contract of docs/execution-protocol.md.
inline constexpr const char* eagerAttribute = "eager";

/// Everything a model needs to know about the ET node behind a transaction.
struct EtNodeInfo {
    RankId rank{};
    NodeId node{};
    NodeKind kind = NodeKind::Invalid;
    /// The node runs on the host CPU rather than on the accelerator.
    bool onHost = false;
    /// Bytes the node moves (loads, stores, sends, or the collective's message size), B.
    std::uint64_t bytes = 0;
    /// Arithmetic operations (a count, not a rate). Integer because Chakra records operation
    /// counts as integers, sums of them stay exact (stats and golden reports compare
    /// equal across runs), and 2^64 ≈ 1.8e19 is far above any single kernel's count.
    std::uint64_t flops = 0;
    CollectiveType collective = CollectiveType::None;
    /// Send: the destination; Recv: the source; empty for other kinds.
    std::optional<RankId> peer;
    /// Matches a Send with its Recv between the same pair of ranks.
    std::uint64_t tag = 0;
    /// The communicator of a collective or point-to-point node; empty means all ranks.
    std::optional<ProcessGroupId> group;
    /// Collective: the member ranks of `group` in group order (shared by every transaction of
    /// the group, so no copy per transaction); null means all ranks.
    std::shared_ptr<const std::vector<RankId>> groupRanks;
    /// Collective: how many collectives of the same group this rank issued before this one.
    /// The fabric matches the members' transactions of one collective by (group, sequence).
    std::uint64_t groupSequence = 0;
    /// Collective: bit i set = the collective spans network dimension i (Chakra's
    /// involved_dim); 0 means every dimension.
    std::uint32_t involvedDims = 0;
    /// Replay: a recorded duration to reproduce instead of asking a model, ps; 0 = none.
    std::uint64_t durationPs = 0;
    DataType dataType = DataType::Unknown;
    OperatorKind op = OperatorKind::Unknown;
    ReduceOp reduceOp = ReduceOp::None;
    /// Set for GEMM-like compute nodes.
    std::optional<GemmShape> gemm;
    /// The tensors the node reads and writes (shared by every transaction of the node, so no
    /// copy per transaction); null when the trace names none.
    std::shared_ptr<const NodeTensors> tensors;
    /// Further values, looked up by key; kept short, so a linear search is the fastest.
    std::vector<NodeAttribute> attributes;

    /// Sets (or replaces) an attribute. Integers are stored as int64, floating-point values
    /// as double, anything convertible to a string_view as a string.
    template <typename V>
    void setAttribute(std::string_view key, V&& value)
    {
        setAttributeValue(key, toAttributeValue(std::forward<V>(value)));
    }
    /// The attribute named `key`, or nullptr.
    const NodeAttribute::Value* findAttribute(std::string_view key) const;

    // Compares every field; a new field must be added here (and only here).
    bool operator==(const EtNodeInfo& other) const;
    bool operator!=(const EtNodeInfo& other) const { return !(*this == other); }

private:
    template <typename V>
    static NodeAttribute::Value toAttributeValue(V&& value)
    {
        using Plain = std::decay_t<V>;
        if constexpr (std::is_same_v<Plain, bool> || std::is_integral_v<Plain>)
            return NodeAttribute::Value(std::in_place_type<std::int64_t>,
                                        static_cast<std::int64_t>(value));
        else if constexpr (std::is_floating_point_v<Plain>)
            return NodeAttribute::Value(std::in_place_type<double>, static_cast<double>(value));
        else
            return NodeAttribute::Value(std::in_place_type<std::string>,
                                        std::string(std::string_view(value)));
    }
    void setAttributeValue(std::string_view key, NodeAttribute::Value value);
};

} // namespace etsim
