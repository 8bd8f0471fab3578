#include "et_driver/TraceNode.h"

#include "kernel/Error.h"

#include <algorithm>

namespace etsim::et {

namespace {

constexpr std::array<std::string_view, attrCount> attrNames = {
    "is_cpu_op",
    "num_ops",
    "tensor_size",
    "comm_type",
    "comm_size",
    "comm_src",
    "comm_dst",
    "comm_tag",
    "comm_priority",
    "pg_name",
    "involved_dim",
    "op_kind",
    "gemm_m",
    "gemm_n",
    "gemm_k",
    "gemm_batch",
    "dtype",
};

// Oneof field numbers of AttributeProto (spec 2.6), the encodings spec section 9 asks writers
// to use for each attribute.
constexpr int int32Field = 7;
constexpr int int64Field = 9;
constexpr int uint64Field = 13;
constexpr int boolField = 27;
constexpr int boolListField = 28;
constexpr int stringField = 29;

int canonicalEncoding(Attr attr)
{
    switch (attr) {
    case Attr::IsCpuOp:
        return boolField;
    case Attr::TensorSize:
        return uint64Field;
    case Attr::CommType:
    case Attr::NumOps:
    case Attr::CommSize:
    case Attr::GemmM:
    case Attr::GemmN:
    case Attr::GemmK:
    case Attr::GemmBatch:
        return int64Field;
    case Attr::CommSrc:
    case Attr::CommDst:
    case Attr::CommTag:
    case Attr::CommPriority:
        return int32Field;
    case Attr::InvolvedDim:
        return boolListField;
    case Attr::PgName:
    case Attr::OpKind:
    case Attr::Dtype:
        return stringField;
    }
    return int64Field;
}

int stringSlot(Attr attr)
{
    switch (attr) {
    case Attr::PgName:
        return 0;
    case Attr::OpKind:
        return 1;
    default:
        return 2;
    }
}

} // namespace

std::string nodeTypeName(NodeType type)
{
    static constexpr std::array<const char*, 8> names = {"INVALID_NODE",
                                                         "METADATA_NODE",
                                                         "MEM_LOAD_NODE",
                                                         "MEM_STORE_NODE",
                                                         "COMP_NODE",
                                                         "COMM_SEND_NODE",
                                                         "COMM_RECV_NODE",
                                                         "COMM_COLL_NODE"};
    auto value = static_cast<int32_t>(type);
    if (value >= 0 && value < static_cast<int32_t>(names.size()))
        return names[static_cast<std::size_t>(value)];
    return "NodeType(" + std::to_string(value) + ")";
}

std::string collectiveTypeName(int32_t type)
{
    static constexpr std::array<const char*, 10> names = {"ALL_REDUCE",
                                                          "REDUCE",
                                                          "ALL_GATHER",
                                                          "GATHER",
                                                          "SCATTER",
                                                          "BROADCAST",
                                                          "ALL_TO_ALL",
                                                          "REDUCE_SCATTER",
                                                          "REDUCE_SCATTER_BLOCK",
                                                          "BARRIER"};
    if (type >= 0 && type < static_cast<int32_t>(names.size()))
        return names[static_cast<std::size_t>(type)];
    return "CollectiveCommType(" + std::to_string(type) + ")";
}

std::string_view attrName(Attr attr)
{
    return attrNames[static_cast<std::size_t>(attr)];
}

std::optional<Attr> attrFromName(std::string_view name)
{
    // Most attributes of PyTorch traces are not well-known ones (rf_id, seq_id, ...): reject
    // those by length before comparing strings. Known names are 5 to 13 characters long.
    constexpr uint32_t knownLengths = (1U << 5) | (1U << 6) | (1U << 7) | (1U << 8) | (1U << 9) |
                                      (1U << 10) | (1U << 11) | (1U << 12) | (1U << 13);
    if (name.size() > 13 || ((knownLengths >> name.size()) & 1U) == 0)
        return std::nullopt;
    char first = name[0];
    if (first != 'i' && first != 'n' && first != 't' && first != 'c' && first != 'p' &&
        first != 'o' && first != 'g' && first != 'd')
        return std::nullopt;
    for (std::size_t i = 0; i < attrNames.size(); ++i) {
        if (attrNames[i] == name)
            return static_cast<Attr>(i);
    }
    return std::nullopt;
}

std::optional<bool> TraceNode::isCpuOp() const
{
    if (!has(Attr::IsCpuOp))
        return std::nullopt;
    return ints[static_cast<std::size_t>(Attr::IsCpuOp)] != 0;
}

std::optional<std::string_view> TraceNode::pgName() const
{
    if (!has(Attr::PgName))
        return std::nullopt;
    return std::string_view(strings[0]);
}

std::optional<std::string_view> TraceNode::opKind() const
{
    if (!has(Attr::OpKind))
        return std::nullopt;
    return std::string_view(strings[1]);
}

std::optional<std::string_view> TraceNode::dtype() const
{
    if (!has(Attr::Dtype))
        return std::nullopt;
    return std::string_view(strings[2]);
}

std::optional<std::vector<bool>> TraceNode::involvedDim() const
{
    if (!has(Attr::InvolvedDim))
        return std::nullopt;
    auto packed = static_cast<uint64_t>(ints[static_cast<std::size_t>(Attr::InvolvedDim)]);
    auto count = static_cast<std::size_t>(packed >> 32);
    std::vector<bool> dims(count);
    for (std::size_t i = 0; i < count; ++i)
        dims[i] = ((packed >> i) & 1U) != 0;
    return dims;
}

void TraceNode::setIsCpuOp(bool value)
{
    setInt(Attr::IsCpuOp, value ? 1 : 0);
}
void TraceNode::setNumOps(int64_t value)
{
    setInt(Attr::NumOps, value);
}
void TraceNode::setTensorSize(uint64_t bytes)
{
    setInt(Attr::TensorSize, static_cast<int64_t>(bytes));
}
void TraceNode::setCommType(int32_t value)
{
    setInt(Attr::CommType, value);
}
void TraceNode::setCommSize(int64_t bytes)
{
    setInt(Attr::CommSize, bytes);
}
void TraceNode::setCommSrc(int32_t rank)
{
    setInt(Attr::CommSrc, rank);
}
void TraceNode::setCommDst(int32_t rank)
{
    setInt(Attr::CommDst, rank);
}
void TraceNode::setCommTag(int32_t tag)
{
    setInt(Attr::CommTag, tag);
}
void TraceNode::setCommPriority(int32_t value)
{
    setInt(Attr::CommPriority, value);
}
void TraceNode::setGemmM(int64_t value)
{
    setInt(Attr::GemmM, value);
}
void TraceNode::setGemmN(int64_t value)
{
    setInt(Attr::GemmN, value);
}
void TraceNode::setGemmK(int64_t value)
{
    setInt(Attr::GemmK, value);
}
void TraceNode::setGemmBatch(int64_t value)
{
    setInt(Attr::GemmBatch, value);
}
void TraceNode::setPgName(std::string value)
{
    setString(Attr::PgName, std::move(value));
}
void TraceNode::setOpKind(std::string value)
{
    setString(Attr::OpKind, std::move(value));
}
void TraceNode::setDtype(std::string value)
{
    setString(Attr::Dtype, std::move(value));
}

void TraceNode::setInvolvedDim(const std::vector<bool>& dims)
{
    if (dims.size() > 32)
        throw Error("node " + std::to_string(id) + ": involved_dim has " +
                    std::to_string(dims.size()) + " entries; at most 32 are supported");
    uint64_t packed = static_cast<uint64_t>(dims.size()) << 32;
    for (std::size_t i = 0; i < dims.size(); ++i) {
        if (dims[i])
            packed |= uint64_t{1} << i;
    }
    // A bool_list holds any length, so an existing entry keeps its encoding.
    if (!has(Attr::InvolvedDim)) {
        layout += static_cast<char>(Attr::InvolvedDim);
        layout += static_cast<char>(boolListField);
        present |= 1U << static_cast<unsigned>(Attr::InvolvedDim);
    }
    ints[static_cast<std::size_t>(Attr::InvolvedDim)] = static_cast<int64_t>(packed);
}

namespace {

// Whether an integer attribute value can be written with the given oneof encoding; unsigned
// targets (tensor_size) hold the value's bits in an int64.
bool fitsEncoding(int field, bool unsignedTarget, int64_t bits)
{
    auto u = static_cast<uint64_t>(bits);
    bool negative = !unsignedTarget && bits < 0;
    switch (field) {
    case 7:  // int32
    case 15: // sint32
    case 23: // sfixed32
        return unsignedTarget ? u <= INT32_MAX : (bits >= INT32_MIN && bits <= INT32_MAX);
    case 9:  // int64
    case 17: // sint64
    case 25: // sfixed64
        return !unsignedTarget || u <= INT64_MAX;
    case 11: // uint32
    case 19: // fixed32
        return !negative && u <= UINT32_MAX;
    case 13: // uint64
    case 21: // fixed64
        return !negative;
    case 27: // bool
        return !negative && u <= 1;
    default:
        return false;
    }
}

} // namespace

void TraceNode::setInt(Attr attr, int64_t value)
{
    auto index = static_cast<std::size_t>(attr);
    bool unsignedTarget = attr == Attr::TensorSize;
    if (has(attr)) {
        for (std::size_t i = 0; i + 1 < layout.size(); i += 2) {
            if (layout[i] == static_cast<char>(attr)) {
                if (!fitsEncoding(static_cast<unsigned char>(layout[i + 1]), unsignedTarget, value))
                    layout[i + 1] = static_cast<char>(canonicalEncoding(attr));
                break;
            }
        }
    } else {
        layout += static_cast<char>(attr);
        layout += static_cast<char>(canonicalEncoding(attr));
        present |= 1U << static_cast<unsigned>(attr);
    }
    ints[index] = value;
}

void TraceNode::setString(Attr attr, std::string value)
{
    if (!has(attr)) {
        layout += static_cast<char>(attr);
        layout += static_cast<char>(stringField);
        present |= 1U << static_cast<unsigned>(attr);
    }
    strings[static_cast<std::size_t>(stringSlot(attr))] = std::move(value);
}

void TraceNode::clear(Attr attr)
{
    if (!has(attr))
        return;
    for (std::size_t i = 0; i + 1 < layout.size(); i += 2) {
        if (layout[i] == static_cast<char>(attr)) {
            layout.erase(i, 2);
            break;
        }
    }
    present &= ~(1U << static_cast<unsigned>(attr));
    ints[static_cast<std::size_t>(attr)] = 0;
    if (canonicalEncoding(attr) == stringField)
        strings[static_cast<std::size_t>(stringSlot(attr))].clear();
}

int TraceNode::encodingOf(Attr attr) const
{
    for (std::size_t i = 0; i + 1 < layout.size(); i += 2) {
        if (layout[i] == static_cast<char>(attr))
            return static_cast<unsigned char>(layout[i + 1]);
    }
    return canonicalEncoding(attr);
}

std::size_t TraceNode::otherAttributeCount() const
{
    std::size_t count = 0;
    for (std::size_t i = 0; i + 1 < layout.size(); i += 2) {
        if (layout[i] == otherRun)
            count += static_cast<unsigned char>(layout[i + 1]);
    }
    return count;
}

void TraceNode::reset()
{
    id = 0;
    name.clear();
    type = NodeType::Invalid;
    ctrlDeps.clear();
    dataDeps.clear();
    startTimeMicros = 0;
    durationMicros = 0;
    ints.fill(0);
    for (std::string& text : strings)
        text.clear();
    present = 0;
    layout.clear();
    rest.clear();
    tensorsAhead = TensorsAhead::Unknown;
}

bool TraceNode::operator==(const TraceNode& other) const
{
    return id == other.id && name == other.name && type == other.type &&
           ctrlDeps == other.ctrlDeps && dataDeps == other.dataDeps &&
           startTimeMicros == other.startTimeMicros && durationMicros == other.durationMicros &&
           ints == other.ints && strings == other.strings && present == other.present &&
           layout == other.layout && rest == other.rest;
}

} // namespace etsim::et
