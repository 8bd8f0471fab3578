#include "et_driver/NodeView.h"

#include "et_driver/TraceCodec.h"
#include "et_driver/WireVarint.h"
#include "et_driver/proto/et_def.pb.h"

#include <algorithm>
#include <array>
#include <cstring>

namespace etsim::et {

namespace pb = ChakraProtoMsg;

namespace {

enum WireType : std::uint32_t { Varint = 0, Fixed64 = 1, Delimited = 2, Fixed32 = 5 };

// A reader of protobuf wire bytes that gives up (returns false) at anything it does not take
// for certain to be valid; protobuf's parser then decides.
class Wire {
public:
    Wire(const std::uint8_t* begin, const std::uint8_t* end) : p(begin), end(end) {}

    bool done() const { return p == end; }

    bool varint(std::uint64_t& value) { return readVarint(p, end, value); }
    bool tag(std::uint32_t& field, std::uint32_t& type)
    {
        std::uint64_t value = 0;
        if (!varint(value) || value > 0xFFFFFFFFU)
            return false;
        field = static_cast<std::uint32_t>(value >> 3);
        type = static_cast<std::uint32_t>(value & 7);
        return field != 0;
    }
    bool delimited(Wire& body)
    {
        std::uint64_t size = 0;
        if (!varint(size) || size > static_cast<std::uint64_t>(end - p))
            return false;
        body = Wire(p, p + size);
        p += size;
        return true;
    }
    // A length-delimited field of ASCII text (valid UTF-8, as protobuf requires of strings).
    bool ascii(std::string_view& text)
    {
        Wire body(p, p);
        if (!delimited(body))
            return false;
        // Eight bytes at a time: any high bit is a byte beyond ASCII.
        const std::uint8_t* at = body.p;
        for (; body.end - at >= 8; at += 8) {
            std::uint64_t word = 0;
            std::memcpy(&word, at, sizeof word);
            if (word & 0x8080808080808080ULL)
                return false;
        }
        for (; at < body.end; ++at)
            if (*at >= 0x80)
                return false;
        text = std::string_view(reinterpret_cast<const char*>(body.p),
                                static_cast<std::size_t>(body.end - body.p));
        return true;
    }
    bool fixed(std::size_t bytes, std::uint64_t& value)
    {
        if (static_cast<std::size_t>(end - p) < bytes)
            return false;
        value = 0;
        for (std::size_t at = 0; at < bytes; ++at)
            value |= static_cast<std::uint64_t>(p[at]) << (8 * at);
        p += bytes;
        return true;
    }
    // Repeated uint64: one value, or a packed run of them.
    bool repeated(std::uint32_t type, std::vector<std::uint64_t>& out)
    {
        std::uint64_t value = 0;
        if (type == Varint) {
            if (!varint(value))
                return false;
            out.push_back(value);
            return true;
        }
        Wire packed(p, p);
        if (type != Delimited || !delimited(packed))
            return false;
        while (!packed.done()) {
            if (!packed.varint(value))
                return false;
            out.push_back(value);
        }
        return true;
    }

private:
    const std::uint8_t* p;
    const std::uint8_t* end;
};

std::uint64_t signedBits(std::int64_t value)
{
    return static_cast<std::uint64_t>(value);
}

// One AttributeProto; false for lists, unknown fields and anything unexpected.
bool scanAttribute(Wire wire, AttributeView& attr)
{
    std::string_view doc;
    while (!wire.done()) {
        std::uint32_t field = 0;
        std::uint32_t type = 0;
        if (!wire.tag(field, type))
            return false;
        std::uint64_t value = 0;
        // Which wire type the field needs; a value field replaces any earlier one (oneof).
        auto integer = [&](bool isSigned, std::uint64_t bits) {
            attr.valueCase = static_cast<int>(field);
            attr.integer = true;
            attr.isSigned = isSigned;
            attr.bits = bits;
            attr.text = {};
        };
        auto other = [&]() {
            attr.valueCase = static_cast<int>(field);
            attr.integer = false;
            attr.text = {};
        };
        switch (field) {
        case 1:
            if (type != Delimited || !wire.ascii(attr.name))
                return false;
            break;
        case 2:
            if (type != Delimited || !wire.ascii(doc))
                return false;
            break;
        case pb::AttributeProto::kInt32Val:
        case pb::AttributeProto::kInt64Val:
        case pb::AttributeProto::kUint32Val:
        case pb::AttributeProto::kUint64Val:
        case pb::AttributeProto::kSint32Val:
        case pb::AttributeProto::kSint64Val:
        case pb::AttributeProto::kBoolVal: {
            if (type != Varint || !wire.varint(value))
                return false;
            auto low = static_cast<std::uint32_t>(value);
            switch (field) {
            case pb::AttributeProto::kInt32Val:
                integer(true, signedBits(static_cast<std::int32_t>(low)));
                break;
            case pb::AttributeProto::kInt64Val:
                integer(true, value);
                break;
            case pb::AttributeProto::kUint32Val:
                integer(false, low);
                break;
            case pb::AttributeProto::kUint64Val:
                integer(false, value);
                break;
            case pb::AttributeProto::kSint32Val:
                integer(true, signedBits(static_cast<std::int32_t>((low >> 1) ^ (~(low & 1) + 1))));
                break;
            case pb::AttributeProto::kSint64Val:
                integer(true, (value >> 1) ^ (~(value & 1) + 1));
                break;
            default:
                integer(false, value != 0 ? 1 : 0);
                break;
            }
            break;
        }
        case pb::AttributeProto::kFixed32Val:
        case pb::AttributeProto::kSfixed32Val:
        case pb::AttributeProto::kFloatVal:
            if (type != Fixed32 || !wire.fixed(4, value))
                return false;
            if (field == pb::AttributeProto::kFloatVal)
                other();
            else if (field == pb::AttributeProto::kFixed32Val)
                integer(false, value);
            else
                integer(true, signedBits(static_cast<std::int32_t>(value)));
            break;
        case pb::AttributeProto::kFixed64Val:
        case pb::AttributeProto::kSfixed64Val:
        case pb::AttributeProto::kDoubleVal:
            if (type != Fixed64 || !wire.fixed(8, value))
                return false;
            if (field == pb::AttributeProto::kDoubleVal)
                other();
            else
                integer(field == pb::AttributeProto::kSfixed64Val, value);
            break;
        case pb::AttributeProto::kStringVal: {
            std::string_view text;
            if (type != Delimited || !wire.ascii(text))
                return false;
            other();
            attr.text = text;
            break;
        }
        case pb::AttributeProto::kBytesVal: {
            Wire bytes(nullptr, nullptr);
            if (type != Delimited || !wire.delimited(bytes))
                return false;
            other();
            break;
        }
        default:
            return false;
        }
    }
    attr.plain = doc.empty();
    return true;
}

} // namespace

void NodeView::clear()
{
    id = 0;
    name = {};
    type = NodeType::Invalid;
    ctrlDeps.clear();
    dataDeps.clear();
    durationMicros = 0;
    attributes.clear();
}

bool NodeView::scan(std::string_view record)
{
    clear();
    const auto* begin = reinterpret_cast<const std::uint8_t*>(record.data());
    Wire wire(begin, begin + record.size());
    while (!wire.done()) {
        std::uint32_t field = 0;
        std::uint32_t wireType = 0;
        if (!wire.tag(field, wireType))
            return false;
        std::uint64_t value = 0;
        switch (field) {
        case 1:
        case 3:
        case 6:
        case 7:
            if (wireType != Varint || !wire.varint(value))
                return false;
            if (field == 1)
                id = value;
            else if (field == 3)
                type = static_cast<NodeType>(static_cast<std::int32_t>(value));
            else if (field == 7)
                durationMicros = value;
            break;
        case 2:
            if (wireType != Delimited || !wire.ascii(name))
                return false;
            break;
        case 4:
        case 5:
            if (!wire.repeated(wireType, field == 4 ? ctrlDeps : dataDeps))
                return false;
            break;
        case 10: {
            Wire body(nullptr, nullptr);
            if (wireType != Delimited || !wire.delimited(body))
                return false;
            attributes.emplace_back();
            if (!scanAttribute(body, attributes.back()))
                return false;
            break;
        }
        default:
            // inputs, outputs and unknown fields: protobuf's parser.
            return false;
        }
    }
    return true;
}

void NodeView::assign(const pb::Node& message)
{
    clear();
    id = message.id();
    name = message.name();
    type = static_cast<NodeType>(message.type());
    ctrlDeps.assign(message.ctrl_deps().begin(), message.ctrl_deps().end());
    dataDeps.assign(message.data_deps().begin(), message.data_deps().end());
    durationMicros = message.duration_micros();
    for (const pb::AttributeProto& attr : message.attr()) {
        AttributeView& view = attributes.emplace_back();
        view.name = attr.name();
        view.plain =
            attr.doc_string().empty() && attr.GetReflection()->GetUnknownFields(attr).empty();
        view.valueCase = static_cast<int>(attr.value_case());
        if (std::optional<TraceCodec::Integer> value = TraceCodec::integerOf(attr)) {
            view.integer = true;
            view.isSigned = value->isSigned;
            view.bits = value->bits;
        }
        if (attr.value_case() == pb::AttributeProto::kStringVal)
            view.text = attr.string_val();
    }
}

std::optional<std::int64_t> NodeView::integer(Attr attr) const
{
    std::optional<std::int64_t> value;
    integers(&attr, 1, &value);
    return value;
}

void NodeView::integers(const Attr* attrs,
                        std::size_t count,
                        std::optional<std::int64_t>* values) const
{
    std::array<std::string_view, attrCount> names{};
    count = std::min(count, names.size());
    for (std::size_t k = 0; k < count; ++k) {
        values[k].reset();
        names[k] = attrName(attrs[k]);
    }
    for (const AttributeView& view : attributes) {
        if (!view.plain || !view.integer)
            continue;
        for (std::size_t k = 0; k < count; ++k)
            if (!values[k] && named(view, names[k])) {
                values[k] =
                    TraceCodec::typedValue(attrs[k], TraceCodec::Integer{view.isSigned, view.bits});
                break;
            }
    }
}

} // namespace etsim::et
