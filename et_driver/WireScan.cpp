#include "et_driver/WireScan.h"

#include "et_driver/proto/et_def.pb.h"

namespace etsim::et {

namespace pb = ChakraProtoMsg;

namespace {

std::uint64_t signedBits(std::int64_t value)
{
    return static_cast<std::uint64_t>(value);
}

// A BoolList's values, packed or not; false for anything but its one field.
bool scanBoolList(Wire wire, AttributeView& attr)
{
    auto add = [&attr](std::uint64_t value) {
        if (value != 0 && attr.listSize < 32)
            attr.listBits |= std::uint32_t{1} << attr.listSize;
        ++attr.listSize;
    };
    while (!wire.done()) {
        std::uint32_t field = 0;
        std::uint32_t type = 0;
        std::uint64_t value = 0;
        if (!wire.tag(field, type) || field != 1)
            return false;
        if (type == Varint) {
            if (!wire.varint(value))
                return false;
            add(value);
            continue;
        }
        Wire packed(nullptr, nullptr);
        if (type != Delimited || !wire.delimited(packed))
            return false;
        while (!packed.done()) {
            if (!packed.varint(value))
                return false;
            add(value);
        }
    }
    return true;
}

} // namespace

bool NodeScalars::read(Wire& wire, std::uint32_t field, std::uint32_t type)
{
    std::uint64_t value = 0;
    if (type != Varint || !wire.varint(value))
        return false;
    if (field == 1)
        id = value;
    else if (field == 3)
        this->type = static_cast<NodeType>(static_cast<std::int32_t>(value));
    else if (field == 6)
        startTimeMicros = value;
    else
        durationMicros = value;
    return true;
}

bool scanAttribute(Wire wire, AttributeView& attr)
{
    std::string_view doc;
    while (!wire.done()) {
        std::uint32_t field = 0;
        std::uint32_t type = 0;
        if (!wire.tag(field, type))
            return false;
        // A value after a list, or a list after a value, would make protobuf switch or merge
        // the oneof: left to it.
        if (field >= pb::AttributeProto::kDoubleVal &&
            attr.valueCase == pb::AttributeProto::kBoolList)
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
        case pb::AttributeProto::kBoolList: {
            Wire list(nullptr, nullptr);
            if (type != Delimited || attr.valueCase != 0 || !wire.delimited(list) ||
                !scanBoolList(list, attr))
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

bool scanIoInfo(Wire wire)
{
    while (!wire.done()) {
        std::uint32_t field = 0;
        std::uint32_t type = 0;
        std::string_view text;
        if (!wire.tag(field, type) || field > 3 || type != Delimited || !wire.ascii(text))
            return false;
    }
    return true;
}

} // namespace etsim::et
