#include "et_driver/TraceCodec.h"

#include "et_driver/WireScan.h"
#include "et_driver/WireVarint.h"
#include "kernel/Error.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/unknown_field_set.h>
#include <google/protobuf/wire_format_lite.h>

#include <limits>
#include <utility>

namespace etsim::et {

namespace pb = ChakraProtoMsg;
using google::protobuf::internal::WireFormatLite;
using google::protobuf::io::CodedOutputStream;

namespace {

constexpr int inputsField = 8;
constexpr int outputsField = 9;
constexpr int attrField = 10;

// Appends a length-delimited field holding `message` to `out`.
void appendMessageField(std::string& out, int field, const google::protobuf::MessageLite& message)
{
    std::size_t size = message.ByteSizeLong();
    uint8_t header[16];
    uint8_t* end =
        WireFormatLite::WriteTagToArray(field, WireFormatLite::WIRETYPE_LENGTH_DELIMITED, header);
    end = CodedOutputStream::WriteVarint32ToArray(static_cast<uint32_t>(size), end);
    out.append(reinterpret_cast<const char*>(header), static_cast<std::size_t>(end - header));
    std::size_t body = out.size();
    out.resize(body + size);
    message.SerializeWithCachedSizesToArray(reinterpret_cast<uint8_t*>(&out[body]));
}

const google::protobuf::UnknownFieldSet& unknownFields(const google::protobuf::Message& message)
{
    return message.GetReflection()->GetUnknownFields(message);
}

using RawInteger = TraceCodec::Integer;

std::optional<RawInteger> rawInteger(const pb::AttributeProto& attr)
{
    using Case = pb::AttributeProto::ValueCase;
    auto fromSigned = [](int64_t v) { return RawInteger{true, static_cast<uint64_t>(v)}; };
    auto fromUnsigned = [](uint64_t v) { return RawInteger{false, v}; };
    switch (attr.value_case()) {
    case Case::kInt32Val:
        return fromSigned(attr.int32_val());
    case Case::kInt64Val:
        return fromSigned(attr.int64_val());
    case Case::kUint32Val:
        return fromUnsigned(attr.uint32_val());
    case Case::kUint64Val:
        return fromUnsigned(attr.uint64_val());
    case Case::kSint32Val:
        return fromSigned(attr.sint32_val());
    case Case::kSint64Val:
        return fromSigned(attr.sint64_val());
    case Case::kFixed32Val:
        return fromUnsigned(attr.fixed32_val());
    case Case::kFixed64Val:
        return fromUnsigned(attr.fixed64_val());
    case Case::kSfixed32Val:
        return fromSigned(attr.sfixed32_val());
    case Case::kSfixed64Val:
        return fromSigned(attr.sfixed64_val());
    case Case::kBoolVal:
        return fromUnsigned(attr.bool_val() ? 1 : 0);
    default:
        return std::nullopt;
    }
}

// The value as the typed field stores it, or nullopt when the field cannot hold it.
std::optional<int64_t> toTarget(Attr attr, RawInteger raw)
{
    auto asSigned = static_cast<int64_t>(raw.bits);
    bool negative = raw.isSigned && asSigned < 0;
    switch (attr) {
    case Attr::IsCpuOp:
        if (negative || raw.bits > 1)
            return std::nullopt;
        return asSigned;
    case Attr::TensorSize:
        if (negative)
            return std::nullopt;
        return asSigned;
    case Attr::CommType:
    case Attr::CommSrc:
    case Attr::CommDst:
    case Attr::CommTag:
    case Attr::CommPriority:
        if (raw.isSigned ? (asSigned < std::numeric_limits<int32_t>::min() ||
                            asSigned > std::numeric_limits<int32_t>::max())
                         : raw.bits > static_cast<uint64_t>(std::numeric_limits<int32_t>::max()))
            return std::nullopt;
        return asSigned;
    default:
        if (!raw.isSigned && raw.bits > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
            return std::nullopt;
        return asSigned;
    }
}

void setEncoded(pb::AttributeProto& attr, int field, int64_t value)
{
    switch (field) {
    case pb::AttributeProto::kInt32Val:
        attr.set_int32_val(static_cast<int32_t>(value));
        break;
    case pb::AttributeProto::kInt64Val:
        attr.set_int64_val(value);
        break;
    case pb::AttributeProto::kUint32Val:
        attr.set_uint32_val(static_cast<uint32_t>(value));
        break;
    case pb::AttributeProto::kUint64Val:
        attr.set_uint64_val(static_cast<uint64_t>(value));
        break;
    case pb::AttributeProto::kSint32Val:
        attr.set_sint32_val(static_cast<int32_t>(value));
        break;
    case pb::AttributeProto::kSint64Val:
        attr.set_sint64_val(value);
        break;
    case pb::AttributeProto::kFixed32Val:
        attr.set_fixed32_val(static_cast<uint32_t>(value));
        break;
    case pb::AttributeProto::kFixed64Val:
        attr.set_fixed64_val(static_cast<uint64_t>(value));
        break;
    case pb::AttributeProto::kSfixed32Val:
        attr.set_sfixed32_val(static_cast<int32_t>(value));
        break;
    case pb::AttributeProto::kSfixed64Val:
        attr.set_sfixed64_val(value);
        break;
    default:
        attr.set_bool_val(value != 0);
        break;
    }
}

} // namespace

std::optional<TraceCodec::Integer> TraceCodec::integerOf(const pb::AttributeProto& attr)
{
    return rawInteger(attr);
}

std::optional<int64_t> TraceCodec::typedValue(Attr attr, Integer value)
{
    return toTarget(attr, value);
}

AttributeView TraceCodec::attributeView(const pb::AttributeProto& attr)
{
    AttributeView view;
    view.name = attr.name();
    view.plain = attr.doc_string().empty() && unknownFields(attr).empty();
    view.valueCase = static_cast<int>(attr.value_case());
    if (std::optional<Integer> value = rawInteger(attr)) {
        view.integer = true;
        view.isSigned = value->isSigned;
        view.bits = value->bits;
    }
    if (attr.value_case() == pb::AttributeProto::kStringVal)
        view.text = attr.string_val();
    if (attr.value_case() == pb::AttributeProto::kBoolList) {
        const auto& values = attr.bool_list().values();
        view.listSize = static_cast<std::uint64_t>(values.size());
        for (int i = 0; i < values.size() && i < 32; ++i)
            if (values[i])
                view.listBits |= std::uint32_t{1} << i;
        view.plainList = unknownFields(attr.bool_list()).empty();
    }
    return view;
}

bool TraceCodec::decodeAttribute(const AttributeView& attr, TraceNode& node)
{
    std::optional<Attr> known = attrFromName(attr.name);
    if (!known || node.has(*known) || !attr.plain)
        return false;
    Attr key = *known;
    auto index = static_cast<std::size_t>(key);
    auto bit = 1U << static_cast<unsigned>(key);
    switch (key) {
    case Attr::PgName:
    case Attr::OpKind:
    case Attr::Dtype: {
        if (attr.valueCase != pb::AttributeProto::kStringVal)
            return false;
        std::size_t slot = key == Attr::PgName ? 0 : key == Attr::OpKind ? 1 : 2;
        node.strings[slot].assign(attr.text);
        break;
    }
    case Attr::InvolvedDim: {
        if (attr.valueCase != pb::AttributeProto::kBoolList || attr.listSize > 32 ||
            !attr.plainList)
            return false;
        node.ints[index] = static_cast<int64_t>((attr.listSize << 32) | attr.listBits);
        break;
    }
    default: {
        if (!attr.integer)
            return false;
        std::optional<int64_t> value = toTarget(key, RawInteger{attr.isSigned, attr.bits});
        if (!value)
            return false;
        node.ints[index] = *value;
        break;
    }
    }
    node.present |= bit;
    node.layout += static_cast<char>(key);
    node.layout += static_cast<char>(attr.valueCase);
    return true;
}

void TraceCodec::preserveAttribute(const pb::AttributeProto& attr, TraceNode& node)
{
    appendMessageField(node.rest, attrField, attr);
    addOtherRun(node);
}

void TraceCodec::addOtherRun(TraceNode& node)
{
    std::string& layout = node.layout;
    std::size_t size = layout.size();
    if (size >= 2 && layout[size - 2] == TraceNode::otherRun &&
        static_cast<unsigned char>(layout[size - 1]) < 255) {
        layout[size - 1] = static_cast<char>(static_cast<unsigned char>(layout[size - 1]) + 1);
    } else {
        layout += TraceNode::otherRun;
        layout += static_cast<char>(1);
    }
}

void TraceCodec::decodeFields(pb::Node& message, TraceNode& node)
{
    node.reset();
    node.id = message.id();
    node.name.swap(*message.mutable_name());
    node.type = static_cast<NodeType>(message.type());
    node.ctrlDeps.assign(message.ctrl_deps().begin(), message.ctrl_deps().end());
    node.dataDeps.assign(message.data_deps().begin(), message.data_deps().end());
    node.startTimeMicros = message.start_time_micros();
    node.durationMicros = message.duration_micros();
}

void TraceCodec::decode(pb::Node& message, TraceNode& node)
{
    decodeFields(message, node);
    if (message.has_inputs())
        appendMessageField(node.rest, inputsField, message.inputs());
    if (message.has_outputs())
        appendMessageField(node.rest, outputsField, message.outputs());
    for (const pb::AttributeProto& attr : message.attr()) {
        if (!decodeAttribute(attributeView(attr), node))
            preserveAttribute(attr, node);
    }
    if (!unknownFields(message).empty()) {
        std::string unknown;
        unknownFields(message).SerializeToString(&unknown);
        node.rest += unknown;
    }
}

void TraceCodec::decode(pb::Node& message, std::string_view wire, TraceNode& node)
{
    if (wire.empty()) {
        decode(message, node);
        return;
    }
    if (decodeFromWire(message, wire, node))
        return;
    // decodeFromWire gave up after decodeFields had moved the name out of the message (a
    // swap, not a copy); put it back before decoding again from the message alone.
    message.mutable_name()->swap(node.name);
    decode(message, node);
}

namespace {

// Whether protobuf parses a field with this number and wire type into Node's own fields;
// anything else lands in the unknown fields.
bool knownNodeField(uint32_t field, WireFormatLite::WireType wireType)
{
    switch (field) {
    case 1:
    case 3:
    case 6:
    case 7:
        return wireType == WireFormatLite::WIRETYPE_VARINT;
    case 4:
    case 5:
        return wireType == WireFormatLite::WIRETYPE_VARINT ||
               wireType == WireFormatLite::WIRETYPE_LENGTH_DELIMITED;
    case 2:
    case 8:
    case 9:
    case 10:
        return wireType == WireFormatLite::WIRETYPE_LENGTH_DELIMITED;
    default:
        return false;
    }
}

} // namespace

namespace {

// Moves p past the value of a field of the given wire type; false for groups (rare and
// deprecated: the caller falls back to the general path) and malformed input.
inline bool skipValue(const uint8_t*& p, const uint8_t* end, uint32_t wireType)
{
    uint64_t value = 0;
    switch (wireType) {
    case WireFormatLite::WIRETYPE_VARINT:
        return readVarint(p, end, value);
    case WireFormatLite::WIRETYPE_FIXED64:
        value = 8;
        break;
    case WireFormatLite::WIRETYPE_LENGTH_DELIMITED:
        if (!readVarint(p, end, value))
            return false;
        break;
    case WireFormatLite::WIRETYPE_FIXED32:
        value = 4;
        break;
    default:
        return false;
    }
    if (value > static_cast<uint64_t>(end - p))
        return false;
    p += value;
    return true;
}

} // namespace

bool TraceCodec::decodeFromWire(pb::Node& message, std::string_view wire, TraceNode& node)
{
    decodeFields(message, node);
    // One pass over the record's fields in file order: attributes are matched with the parsed
    // ones by position, and the bytes of every part not decoded are copied as they are.
    const auto* p = reinterpret_cast<const uint8_t*>(wire.data());
    const uint8_t* end = p + wire.size();
    int attrIndex = 0;
    while (p < end) {
        const uint8_t* start = p;
        uint64_t tag = 0;
        if (!readVarint(p, end, tag))
            return false;
        auto field = static_cast<uint32_t>(tag >> 3);
        auto wireType = static_cast<WireFormatLite::WireType>(tag & 7);
        if (!skipValue(p, end, wireType))
            return false;
        bool known = knownNodeField(field, wireType);
        if (known && field == attrField) {
            if (attrIndex >= message.attr_size())
                return false;
            if (decodeAttribute(attributeView(message.attr(attrIndex++)), node))
                continue;
            addOtherRun(node);
        } else if (known && field != inputsField && field != outputsField) {
            continue;
        }
        node.rest.append(reinterpret_cast<const char*>(start), static_cast<std::size_t>(p - start));
    }
    return attrIndex == message.attr_size();
}

bool TraceCodec::decodeRecord(std::string_view record, TraceNode& node)
{
    node.reset();
    // The fields in file order, as decodeFromWire() walks them after protobuf's parse: a
    // scalar given twice keeps the last value, repeated ids append, and the bytes of every
    // part not decoded are copied as they are.
    Wire wire(record);
    NodeScalars scalars;
    while (!wire.done()) {
        const std::uint8_t* start = wire.at();
        std::uint32_t field = 0;
        std::uint32_t wireType = 0;
        if (!wire.tag(field, wireType))
            return false;
        if (NodeScalars::holds(field)) {
            if (!scalars.read(wire, field, wireType))
                return false;
            continue;
        }
        std::string_view text;
        Wire body(nullptr, nullptr);
        switch (field) {
        case 2:
            if (wireType != Delimited || !wire.ascii(text))
                return false;
            node.name.assign(text);
            continue;
        case 4:
        case 5:
            if (!wire.repeated(wireType, field == 4 ? node.ctrlDeps : node.dataDeps))
                return false;
            continue;
        case inputsField:
        case outputsField:
            if (wireType != Delimited || !wire.delimited(body) || !scanIoInfo(body))
                return false;
            break;
        case attrField: {
            AttributeView attr;
            if (wireType != Delimited || !wire.delimited(body) || !scanAttribute(body, attr))
                return false;
            if (decodeAttribute(attr, node))
                continue;
            addOtherRun(node);
            break;
        }
        default:
            // Unknown fields: protobuf's parser.
            return false;
        }
        node.rest.append(reinterpret_cast<const char*>(start),
                         static_cast<std::size_t>(wire.at() - start));
    }
    node.id = scalars.id;
    node.type = scalars.type;
    node.startTimeMicros = scalars.startTimeMicros;
    node.durationMicros = scalars.durationMicros;
    return true;
}

pb::Node TraceCodec::parsePreserved(const TraceNode& node)
{
    pb::Node preserved;
    if (!node.rest.empty() && !preserved.ParseFromString(node.rest))
        throw Error("node " + std::to_string(node.id) +
                    ": preserved attribute bytes do not parse (internal error)");
    return preserved;
}

void TraceCodec::encode(const TraceNode& node, pb::Node& message)
{
    message.Clear();
    google::protobuf::RepeatedPtrField<pb::AttributeProto> others;
    if (!node.rest.empty()) {
        if (!message.ParseFromString(node.rest))
            throw Error("node " + std::to_string(node.id) +
                        ": preserved attribute bytes do not parse (internal error)");
        others.Swap(message.mutable_attr());
    }
    message.set_id(node.id);
    message.set_name(node.name);
    message.set_type(static_cast<pb::NodeType>(node.type));
    message.mutable_ctrl_deps()->Add(node.ctrlDeps.begin(), node.ctrlDeps.end());
    message.mutable_data_deps()->Add(node.dataDeps.begin(), node.dataDeps.end());
    message.set_start_time_micros(node.startTimeMicros);
    message.set_duration_micros(node.durationMicros);

    int nextOther = 0;
    const std::string& layout = node.layout;
    for (std::size_t i = 0; i + 1 < layout.size(); i += 2) {
        auto count = static_cast<unsigned char>(layout[i + 1]);
        if (layout[i] == TraceNode::otherRun) {
            for (unsigned k = 0; k < count; ++k) {
                if (nextOther >= others.size())
                    throw Error("node " + std::to_string(node.id) +
                                ": fewer preserved attributes than recorded (internal error)");
                message.add_attr()->Swap(others.Mutable(nextOther++));
            }
            continue;
        }
        auto key = static_cast<Attr>(layout[i]);
        int field = count;
        pb::AttributeProto* attr = message.add_attr();
        attr->set_name(std::string(attrName(key)));
        auto index = static_cast<std::size_t>(key);
        switch (key) {
        case Attr::PgName:
        case Attr::OpKind:
        case Attr::Dtype:
            attr->set_string_val(node.strings[key == Attr::PgName   ? 0
                                              : key == Attr::OpKind ? 1
                                                                    : 2]);
            break;
        case Attr::InvolvedDim: {
            auto packed = static_cast<uint64_t>(node.ints[index]);
            auto dims = static_cast<unsigned>(packed >> 32);
            auto* list = attr->mutable_bool_list();
            for (unsigned d = 0; d < dims; ++d)
                list->add_values(((packed >> d) & 1U) != 0);
            break;
        }
        default:
            setEncoded(*attr, field, node.ints[index]);
            break;
        }
    }
}

std::vector<pb::AttributeProto> TraceCodec::otherAttributes(const TraceNode& node)
{
    pb::Node preserved = parsePreserved(node);
    return {preserved.attr().begin(), preserved.attr().end()};
}

void TraceCodec::addAttribute(TraceNode& node, const pb::AttributeProto& attr)
{
    if (!decodeAttribute(attributeView(attr), node))
        preserveAttribute(attr, node);
}

std::optional<pb::IOInfo> TraceCodec::inputs(const TraceNode& node)
{
    return io(node).inputs;
}

std::optional<pb::IOInfo> TraceCodec::outputs(const TraceNode& node)
{
    return io(node).outputs;
}

TraceCodec::Io TraceCodec::io(const TraceNode& node)
{
    Io io;
    if (node.rest.empty())
        return io; // nothing preserved: no message to build
    pb::Node preserved = parsePreserved(node);
    if (preserved.has_inputs())
        io.inputs = std::move(*preserved.mutable_inputs());
    if (preserved.has_outputs())
        io.outputs = std::move(*preserved.mutable_outputs());
    return io;
}

namespace {

// One field of wire bytes: its number, its wire type, and for a length-delimited field its
// bytes.
struct WireField {
    uint32_t number = 0;
    uint32_t wireType = 0;
    std::string_view body;
};

// Reads the field at p and moves past it; false for a group or malformed bytes.
bool nextField(const uint8_t*& p, const uint8_t* end, WireField& field)
{
    uint64_t tag = 0;
    if (!readVarint(p, end, tag))
        return false;
    field.number = static_cast<uint32_t>(tag >> 3);
    field.wireType = static_cast<uint32_t>(tag & 7);
    const uint8_t* value = p;
    if (field.number == 0 || !skipValue(p, end, field.wireType))
        return false;
    field.body = {};
    if (field.wireType == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
        uint64_t size = 0;
        readVarint(value, end, size);
        field.body =
            std::string_view(reinterpret_cast<const char*>(value), static_cast<std::size_t>(size));
    }
    return true;
}

bool lengthDelimited(const WireField& field)
{
    return field.wireType == WireFormatLite::WIRETYPE_LENGTH_DELIMITED;
}

// One IOInfo's values and types (fields 1 and 3); false where protobuf would merge or drop
// parts: a string given twice, a group, malformed bytes.
bool scanIoInfo(std::string_view bytes, TraceCodec::IoTextPart& part)
{
    const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
    const uint8_t* end = p + bytes.size();
    bool values = false;
    bool types = false;
    WireField field;
    while (p < end) {
        if (!nextField(p, end, field))
            return false;
        if (!lengthDelimited(field) || (field.number != 1 && field.number != 3))
            continue; // shapes, and what protobuf keeps as unknown fields
        bool& seen = field.number == 1 ? values : types;
        if (seen)
            return false;
        seen = true;
        (field.number == 1 ? part.values : part.types) = field.body;
    }
    part.present = true;
    return true;
}

} // namespace

std::optional<TraceCodec::IoText> TraceCodec::ioText(const TraceNode& node)
{
    IoText text;
    const auto* p = reinterpret_cast<const uint8_t*>(node.rest.data());
    const uint8_t* end = p + node.rest.size();
    WireField field;
    while (p < end) {
        if (!nextField(p, end, field))
            return std::nullopt;
        if (!lengthDelimited(field) ||
            (field.number != inputsField && field.number != outputsField))
            continue;
        IoTextPart& part = field.number == inputsField ? text.inputs : text.outputs;
        if (part.present || !scanIoInfo(field.body, part))
            return std::nullopt;
    }
    return text;
}

void TraceCodec::setInputs(TraceNode& node, const pb::IOInfo& info)
{
    pb::Node preserved = parsePreserved(node);
    *preserved.mutable_inputs() = info;
    node.rest = preserved.SerializeAsString();
}

void TraceCodec::setOutputs(TraceNode& node, const pb::IOInfo& info)
{
    pb::Node preserved = parsePreserved(node);
    *preserved.mutable_outputs() = info;
    node.rest = preserved.SerializeAsString();
}

} // namespace etsim::et
