#pragma once
// The in-memory form of one Chakra ET node: what the simulation needs, decoded into typed
// fields, plus everything else kept as opaque bytes so that writing the node back reproduces
// the original record.
//
// Size: sizeof(TraceNode) is 472 B on x86-64 with libstdc++ (bounded in TraceNodeTest), plus
// heap for a name longer than 15 characters, the dependency lists (8 B per edge) and the
// preserved bytes. A parsed protobuf Node of a PyTorch trace costs 700-800 B
// (shared/notes/toolchain.md section 8), most of it in one heap object per attribute; here an
// attribute the simulation does not read costs only its wire bytes (typically 10-20 B), and a
// typed one nothing beyond the fixed part.

#include "kernel/NodeInfo.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace etsim::et {

// Chakra NodeType values (spec 2.5). Numbers outside the list are kept as they are; what to do
// with them is decided at execution time, not when reading.
enum class NodeType : int32_t {
    Invalid = 0,
    Metadata = 1,
    MemLoad = 2,
    MemStore = 3,
    Comp = 4,
    CommSend = 5,
    CommRecv = 6,
    CommColl = 7,
};

// Chakra CollectiveCommType values, carried by the comm_type attribute (spec 2.5).
enum class CollectiveType : int32_t {
    AllReduce = 0,
    Reduce = 1,
    AllGather = 2,
    Gather = 3,
    Scatter = 4,
    Broadcast = 5,
    AllToAll = 6,
    ReduceScatter = 7,
    ReduceScatterBlock = 8,
    Barrier = 9,
};

// "COMP_NODE", ... as in the schema; "NodeType(12)" for numbers outside it.
std::string nodeTypeName(NodeType type);
// "ALL_REDUCE", ...; "CollectiveCommType(99)" for numbers outside the enum.
std::string collectiveTypeName(int32_t type);

// The attributes decoded into typed fields. Any other attribute name is preserved as bytes.
enum class Attr : uint8_t {
    IsCpuOp,      // bool: runs on the host CPU thread
    NumOps,       // int64: operation count (FLOPs)
    TensorSize,   // uint64: bytes
    CommType,     // int32: CollectiveCommType value
    CommSize,     // int64: bytes
    CommSrc,      // int32: source rank
    CommDst,      // int32: destination rank
    CommTag,      // int32: point-to-point matching tag
    CommPriority, // int32
    PgName,       // string: process group id as decimal text
    InvolvedDim,  // bool list (at most 32 entries): network dimensions a collective spans
    OpKind,       // string: operator kind ("gemm", ...)
    GemmM,        // int64
    GemmN,        // int64
    GemmK,        // int64
    GemmBatch,    // int64
    Dtype,        // string: element type ("bf16", ...)
};
inline constexpr std::size_t attrCount = 17;

// Attribute name as written in traces ("is_cpu_op", ...).
std::string_view attrName(Attr attr);
// The Attr with that name, or nullopt.
std::optional<Attr> attrFromName(std::string_view name);

class TraceNode {
public:
    uint64_t id = 0;
    std::string name;
    NodeType type = NodeType::Invalid;
    std::vector<uint64_t> ctrlDeps;
    std::vector<uint64_t> dataDeps;
    uint64_t startTimeMicros = 0;
    // Measured or modelled run time, microseconds.
    uint64_t durationMicros = 0;

    // The tensor lists of the node's inputs and outputs (NodeTensors.h), when a reader worked
    // them out ahead of the node's lowering, on the read-ahead thread (TraceReadAhead.h):
    // lowering takes them instead of scanning the preserved bytes a second time. Derived from
    // those bytes, so neither compared nor encoded; reset(), and so every decode, clears it.
    enum class TensorsAhead : uint8_t { Unknown, None, Read };
    TensorsAhead tensorsAhead = TensorsAhead::Unknown;
    NodeTensors tensorsRead; // the lists when tensorsAhead is Read

    bool has(Attr attr) const { return (present >> static_cast<unsigned>(attr)) & 1U; }

    // Each getter is nullopt when the attribute is absent, whatever integer encoding it had.
    std::optional<bool> isCpuOp() const;
    std::optional<int64_t> numOps() const { return integer<int64_t>(Attr::NumOps); }
    std::optional<uint64_t> tensorSize() const
    {
        return integer<uint64_t>(Attr::TensorSize);
    } // bytes
    std::optional<int32_t> commType() const
    {
        return integer<int32_t>(Attr::CommType);
    } // CollectiveCommType value
    std::optional<int64_t> commSize() const { return integer<int64_t>(Attr::CommSize); } // bytes
    std::optional<int32_t> commSrc() const { return integer<int32_t>(Attr::CommSrc); }   // rank
    std::optional<int32_t> commDst() const { return integer<int32_t>(Attr::CommDst); }   // rank
    std::optional<int32_t> commTag() const { return integer<int32_t>(Attr::CommTag); }
    std::optional<int32_t> commPriority() const { return integer<int32_t>(Attr::CommPriority); }
    std::optional<std::string_view> pgName() const;
    std::optional<std::vector<bool>> involvedDim() const;
    std::optional<std::string_view> opKind() const;
    std::optional<int64_t> gemmM() const { return integer<int64_t>(Attr::GemmM); }
    std::optional<int64_t> gemmN() const { return integer<int64_t>(Attr::GemmN); }
    std::optional<int64_t> gemmK() const { return integer<int64_t>(Attr::GemmK); }
    std::optional<int64_t> gemmBatch() const { return integer<int64_t>(Attr::GemmBatch); }
    std::optional<std::string_view> dtype() const;

    // Setters add the attribute after the existing ones (in the encoding spec section 9 asks
    // writers to use) or change its value in place, keeping its position and encoding when the
    // value still fits that encoding.
    void setIsCpuOp(bool value);
    void setNumOps(int64_t value);
    void setTensorSize(uint64_t bytes);
    void setCommType(int32_t value);
    void setCommType(CollectiveType value) { setCommType(static_cast<int32_t>(value)); }
    void setCommSize(int64_t bytes);
    void setCommSrc(int32_t rank);
    void setCommDst(int32_t rank);
    void setCommTag(int32_t tag);
    void setCommPriority(int32_t value);
    void setPgName(std::string value);
    // Throws etsim::Error for more than 32 dimensions.
    void setInvolvedDim(const std::vector<bool>& dims);
    void setOpKind(std::string value);
    void setGemmM(int64_t value);
    void setGemmN(int64_t value);
    void setGemmK(int64_t value);
    void setGemmBatch(int64_t value);
    void setDtype(std::string value);
    void clear(Attr attr);

    // Node fields and attributes that are not decoded above (inputs, outputs, other attributes,
    // unknown fields), as protobuf wire bytes of a Node. Read them with TraceCodec.h.
    const std::string& preserved() const { return rest; }
    // Number of attributes kept in preserved(), in their original order.
    std::size_t otherAttributeCount() const;

    // Resets to a default node, keeping allocated capacity (for reuse while streaming).
    void reset();

    bool operator==(const TraceNode& other) const;
    bool operator!=(const TraceNode& other) const { return !(*this == other); }

private:
    friend class TraceCodec;
    friend class PackedNodes;

    // Integer values of the typed attributes, indexed by Attr; bits of involved_dim for
    // InvolvedDim. Stored wide so any original encoding converts back without loss.
    std::array<int64_t, attrCount> ints{};
    // pg_name, op_kind, dtype in this order.
    std::array<std::string, 3> strings;
    uint32_t present = 0;
    // The attribute list in original order, two bytes per entry: (Attr, oneof field number of
    // the encoding used) or (otherRun, count of consecutive attributes taken from rest).
    std::string layout;
    std::string rest;

    static constexpr char otherRun = static_cast<char>(0xFF);

    template <typename T>
    std::optional<T> integer(Attr attr) const
    {
        if (!has(attr))
            return std::nullopt;
        return static_cast<T>(ints[static_cast<std::size_t>(attr)]);
    }
    void setInt(Attr attr, int64_t value);
    void setString(Attr attr, std::string value);
    int encodingOf(Attr attr) const;
};

} // namespace etsim::et
