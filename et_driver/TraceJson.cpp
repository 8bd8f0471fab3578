#include "et_driver/TraceJson.h"

#include "et_driver/TraceCodec.h"
#include "kernel/InputLimits.h"

#include <google/protobuf/unknown_field_set.h>
#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>
#include <zlib.h>

namespace etsim::et {

namespace pb = ChakraProtoMsg;
namespace gp = google::protobuf;
using Json = nlohmann::ordered_json;

namespace {

// Thrown inside the conversions and turned into a TraceJsonError by whoever knows the file,
// the line and the node.
struct JsonProblem {
    std::string path;
    std::string problem;
};

[[noreturn]] void problemAt(const std::string& path, std::string text)
{
    throw JsonProblem{path, std::move(text)};
}

std::string jsonTypeName(const Json& json)
{
    switch (json.type()) {
    case Json::value_t::object:
        return "an object";
    case Json::value_t::array:
        return "an array";
    case Json::value_t::string:
        return "a string";
    case Json::value_t::boolean:
        return "a boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
        return "an integer";
    case Json::value_t::number_float:
        return "a number with a fraction";
    case Json::value_t::null:
        return "null";
    default:
        return "an unsupported value";
    }
}

// "a string ("abc")" with long values shortened, for messages.
std::string describe(const Json& json)
{
    std::string text = json.dump(-1, ' ', false, Json::error_handler_t::replace);
    if (text.size() > 40)
        text = text.substr(0, 37) + "...";
    if (json.is_object() || json.is_array())
        return jsonTypeName(json);
    return jsonTypeName(json) + " (" + text + ")";
}

// JSON pointer escaping of one key (RFC 6901).
std::string pointerKey(const std::string& key)
{
    std::string out;
    for (char c : key) {
        if (c == '~')
            out += "~0";
        else if (c == '/')
            out += "~1";
        else
            out += c;
    }
    return out;
}

// --- base64 (RFC 4648, with padding) ---

constexpr const char* base64Alphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string base64Encode(const std::string& bytes)
{
    std::string out;
    out.reserve((bytes.size() + 2) / 3 * 4);
    std::size_t i = 0;
    for (; i + 2 < bytes.size(); i += 3) {
        uint32_t v = static_cast<uint32_t>(static_cast<unsigned char>(bytes[i])) << 16 |
                     static_cast<uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8 |
                     static_cast<unsigned char>(bytes[i + 2]);
        for (int s = 18; s >= 0; s -= 6)
            out += base64Alphabet[(v >> s) & 0x3F];
    }
    std::size_t left = bytes.size() - i;
    if (left > 0) {
        uint32_t v = static_cast<uint32_t>(static_cast<unsigned char>(bytes[i])) << 16;
        if (left == 2)
            v |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8;
        out += base64Alphabet[(v >> 18) & 0x3F];
        out += base64Alphabet[(v >> 12) & 0x3F];
        out += left == 2 ? base64Alphabet[(v >> 6) & 0x3F] : '=';
        out += '=';
    }
    return out;
}

std::optional<std::string> base64Decode(const std::string& text)
{
    if (text.size() % 4 != 0)
        return std::nullopt;
    std::string out;
    out.reserve(text.size() / 4 * 3);
    for (std::size_t i = 0; i < text.size(); i += 4) {
        uint32_t v = 0;
        int pad = 0;
        for (std::size_t k = 0; k < 4; ++k) {
            char c = text[i + k];
            const char* at = c == '\0' ? nullptr : std::strchr(base64Alphabet, c);
            if (c == '=' && i + 4 == text.size() && k >= 2) {
                ++pad;
                v <<= 6;
                continue;
            }
            if (at == nullptr || pad > 0)
                return std::nullopt;
            v = v << 6 | static_cast<uint32_t>(at - base64Alphabet);
        }
        out += static_cast<char>((v >> 16) & 0xFF);
        if (pad < 2)
            out += static_cast<char>((v >> 8) & 0xFF);
        if (pad < 1)
            out += static_cast<char>(v & 0xFF);
    }
    return out;
}

// --- floating point: JSON numbers, non-finite values as strings ---

Json doubleToJson(double value)
{
    if (std::isfinite(value))
        return value;
    if (std::isinf(value))
        return value > 0 ? "Infinity" : "-Infinity";
    uint64_t bits = 0;
    std::memcpy(&bits, &value, sizeof bits);
    if (bits == 0x7FF8000000000000ULL)
        return "NaN";
    char text[32];
    std::snprintf(text, sizeof text, "NaN:0x%016llx", static_cast<unsigned long long>(bits));
    return text;
}

Json floatToJson(float value)
{
    if (std::isfinite(value))
        return static_cast<double>(value);
    if (std::isinf(value))
        return value > 0 ? "Infinity" : "-Infinity";
    uint32_t bits = 0;
    std::memcpy(&bits, &value, sizeof bits);
    if (bits == 0x7FC00000U)
        return "NaN";
    char text[24];
    std::snprintf(text, sizeof text, "NaN:0x%08x", bits);
    return text;
}

// The value of a double or float field; `isFloat` selects the bit width of "NaN:0x..." forms.
double floatingFromJson(const Json& json, const std::string& path, bool isFloat, float& asFloat)
{
    constexpr const char* expected = "expected a number, or \"NaN\", \"Infinity\" or \"-Infinity\"";
    if (json.is_number()) {
        double value = json.get<double>();
        asFloat = static_cast<float>(value);
        return value;
    }
    if (!json.is_string())
        problemAt(path, std::string(expected) + ", found " + describe(json));
    const std::string& text = json.get_ref<const std::string&>();
    if (text == "Infinity" || text == "-Infinity") {
        double value = text[0] == '-' ? -std::numeric_limits<double>::infinity()
                                      : std::numeric_limits<double>::infinity();
        asFloat = static_cast<float>(value);
        return value;
    }
    if (text == "NaN") {
        asFloat = std::numeric_limits<float>::quiet_NaN();
        return std::numeric_limits<double>::quiet_NaN();
    }
    if (text.rfind("NaN:0x", 0) == 0 && text.size() == (isFloat ? 14U : 22U)) {
        char* end = nullptr;
        errno = 0;
        unsigned long long bits = std::strtoull(text.c_str() + 6, &end, 16);
        if (errno == 0 && end != nullptr && *end == '\0') {
            double value = 0;
            auto narrow = static_cast<uint32_t>(bits);
            std::memcpy(&asFloat, &narrow, sizeof asFloat);
            auto wide = static_cast<uint64_t>(bits);
            std::memcpy(&value, &wide, sizeof value);
            return value;
        }
    }
    problemAt(path,
              std::string(expected) + " (or \"NaN:0x\" and " + (isFloat ? "8" : "16") +
                  " hex digits), found " + describe(json));
}

// --- integers with range checks ---

int64_t signedFromJson(
    const Json& json, const std::string& path, int64_t low, int64_t high, const char* type)
{
    if (!json.is_number_integer())
        problemAt(path,
                  std::string("expected an integer (") + type + "), found " + describe(json) +
                      "; write a JSON integer without quotes or fraction");
    bool inRange = true;
    int64_t value = 0;
    if (json.is_number_unsigned()) {
        auto u = json.get<uint64_t>();
        inRange = u <= static_cast<uint64_t>(high);
        value = static_cast<int64_t>(u);
    } else {
        value = json.get<int64_t>();
        inRange = value >= low && value <= high;
    }
    if (!inRange)
        problemAt(path,
                  std::string("value ") + json.dump() + " does not fit " + type + " (" +
                      std::to_string(low) + " .. " + std::to_string(high) + ")");
    return value;
}

uint64_t
unsignedFromJson(const Json& json, const std::string& path, uint64_t high, const char* type)
{
    if (!json.is_number_integer())
        problemAt(path,
                  std::string("expected a non-negative integer (") + type + "), found " +
                      describe(json) + "; write a JSON integer without quotes or fraction");
    if (!json.is_number_unsigned())
        problemAt(path,
                  std::string("value ") + json.dump() + " is negative, but " + type +
                      " is unsigned");
    auto value = json.get<uint64_t>();
    if (value > high)
        problemAt(path,
                  std::string("value ") + json.dump() + " does not fit " + type + " (0 .. " +
                      std::to_string(high) + ")");
    return value;
}

// --- generic protobuf <-> JSON by reflection (etsim's form) ---

// DoubleList, BoolList, ...: one repeated scalar field `values`; written as a bare array.
bool isListWrapper(const gp::Descriptor* descriptor)
{
    return descriptor->field_count() == 1 && descriptor->field(0)->is_repeated() &&
           descriptor->field(0)->name() == "values" &&
           descriptor->field(0)->cpp_type() != gp::FieldDescriptor::CPPTYPE_MESSAGE;
}

// Node fields written even at their default value, so every node reads alike.
bool alwaysWritten(const gp::FieldDescriptor* field)
{
    if (field->containing_type() != pb::Node::descriptor())
        return false;
    int number = field->number();
    return number == pb::Node::kIdFieldNumber || number == pb::Node::kNameFieldNumber ||
           number == pb::Node::kTypeFieldNumber || number == pb::Node::kCtrlDepsFieldNumber ||
           number == pb::Node::kDataDepsFieldNumber ||
           number == pb::Node::kDurationMicrosFieldNumber;
}

Json messageToJson(const gp::Message& message);

// One value of `field` (element `index` of a repeated field, or the singular value for -1).
Json fieldToJson(const gp::Message& message, const gp::FieldDescriptor* field, int index)
{
    const gp::Reflection* r = message.GetReflection();
    bool repeated = index >= 0;
    switch (field->cpp_type()) {
    case gp::FieldDescriptor::CPPTYPE_INT32:
        return repeated ? r->GetRepeatedInt32(message, field, index) : r->GetInt32(message, field);
    case gp::FieldDescriptor::CPPTYPE_INT64:
        return repeated ? r->GetRepeatedInt64(message, field, index) : r->GetInt64(message, field);
    case gp::FieldDescriptor::CPPTYPE_UINT32:
        return repeated ? r->GetRepeatedUInt32(message, field, index)
                        : r->GetUInt32(message, field);
    case gp::FieldDescriptor::CPPTYPE_UINT64:
        return repeated ? r->GetRepeatedUInt64(message, field, index)
                        : r->GetUInt64(message, field);
    case gp::FieldDescriptor::CPPTYPE_BOOL:
        return repeated ? r->GetRepeatedBool(message, field, index) : r->GetBool(message, field);
    case gp::FieldDescriptor::CPPTYPE_DOUBLE:
        return doubleToJson(repeated ? r->GetRepeatedDouble(message, field, index)
                                     : r->GetDouble(message, field));
    case gp::FieldDescriptor::CPPTYPE_FLOAT:
        return floatToJson(repeated ? r->GetRepeatedFloat(message, field, index)
                                    : r->GetFloat(message, field));
    case gp::FieldDescriptor::CPPTYPE_ENUM: {
        int value = repeated ? r->GetRepeatedEnumValue(message, field, index)
                             : r->GetEnumValue(message, field);
        const gp::EnumValueDescriptor* known = field->enum_type()->FindValueByNumber(value);
        if (known != nullptr)
            return known->name();
        return value;
    }
    case gp::FieldDescriptor::CPPTYPE_STRING: {
        std::string value =
            repeated ? r->GetRepeatedString(message, field, index) : r->GetString(message, field);
        if (field->type() == gp::FieldDescriptor::TYPE_BYTES)
            return base64Encode(value);
        return value;
    }
    case gp::FieldDescriptor::CPPTYPE_MESSAGE:
        return messageToJson(repeated ? r->GetRepeatedMessage(message, field, index)
                                      : r->GetMessage(message, field));
    }
    return nullptr;
}

Json messageToJson(const gp::Message& message)
{
    const gp::Descriptor* descriptor = message.GetDescriptor();
    const gp::Reflection* r = message.GetReflection();
    const gp::UnknownFieldSet& unknown = r->GetUnknownFields(message);
    if (isListWrapper(descriptor) && unknown.empty()) {
        Json values = Json::array();
        const gp::FieldDescriptor* field = descriptor->field(0);
        for (int i = 0; i < r->FieldSize(message, field); ++i)
            values.push_back(fieldToJson(message, field, i));
        return values;
    }
    Json out = Json::object();
    for (int f = 0; f < descriptor->field_count(); ++f) {
        const gp::FieldDescriptor* field = descriptor->field(f);
        if (field->is_repeated()) {
            int size = r->FieldSize(message, field);
            if (size == 0 && !alwaysWritten(field))
                continue;
            Json values = Json::array();
            for (int i = 0; i < size; ++i)
                values.push_back(fieldToJson(message, field, i));
            out[field->name()] = std::move(values);
        } else if (r->HasField(message, field) || alwaysWritten(field)) {
            out[field->name()] = fieldToJson(message, field, -1);
        }
    }
    if (!unknown.empty()) {
        std::string bytes;
        unknown.SerializeToString(&bytes);
        out["unknown_fields"] = base64Encode(bytes);
    }
    return out;
}

void messageFromJson(const Json& json, gp::Message& message, const std::string& path);

// Sets (or, for a repeated field, appends) one value.
void setField(gp::Message& message,
              const gp::FieldDescriptor* field,
              const Json& json,
              const std::string& path)
{
    const gp::Reflection* r = message.GetReflection();
    bool add = field->is_repeated();
    switch (field->cpp_type()) {
    case gp::FieldDescriptor::CPPTYPE_INT32: {
        auto v = static_cast<int32_t>(signedFromJson(json,
                                                     path,
                                                     std::numeric_limits<int32_t>::min(),
                                                     std::numeric_limits<int32_t>::max(),
                                                     "32-bit signed"));
        add ? r->AddInt32(&message, field, v) : r->SetInt32(&message, field, v);
        break;
    }
    case gp::FieldDescriptor::CPPTYPE_INT64: {
        int64_t v = signedFromJson(json,
                                   path,
                                   std::numeric_limits<int64_t>::min(),
                                   std::numeric_limits<int64_t>::max(),
                                   "64-bit signed");
        add ? r->AddInt64(&message, field, v) : r->SetInt64(&message, field, v);
        break;
    }
    case gp::FieldDescriptor::CPPTYPE_UINT32: {
        auto v = static_cast<uint32_t>(
            unsignedFromJson(json, path, std::numeric_limits<uint32_t>::max(), "32-bit unsigned"));
        add ? r->AddUInt32(&message, field, v) : r->SetUInt32(&message, field, v);
        break;
    }
    case gp::FieldDescriptor::CPPTYPE_UINT64: {
        uint64_t v =
            unsignedFromJson(json, path, std::numeric_limits<uint64_t>::max(), "64-bit unsigned");
        add ? r->AddUInt64(&message, field, v) : r->SetUInt64(&message, field, v);
        break;
    }
    case gp::FieldDescriptor::CPPTYPE_BOOL: {
        if (!json.is_boolean())
            problemAt(path, "expected true or false, found " + describe(json));
        bool v = json.get<bool>();
        add ? r->AddBool(&message, field, v) : r->SetBool(&message, field, v);
        break;
    }
    case gp::FieldDescriptor::CPPTYPE_DOUBLE: {
        float unused = 0;
        double v = floatingFromJson(json, path, false, unused);
        add ? r->AddDouble(&message, field, v) : r->SetDouble(&message, field, v);
        break;
    }
    case gp::FieldDescriptor::CPPTYPE_FLOAT: {
        float v = 0;
        floatingFromJson(json, path, true, v);
        add ? r->AddFloat(&message, field, v) : r->SetFloat(&message, field, v);
        break;
    }
    case gp::FieldDescriptor::CPPTYPE_ENUM: {
        int value = 0;
        if (json.is_string()) {
            const gp::EnumValueDescriptor* known =
                field->enum_type()->FindValueByName(json.get<std::string>());
            if (known == nullptr) {
                std::string names;
                for (int i = 0; i < field->enum_type()->value_count(); ++i)
                    names += (i > 0 ? ", " : "") + field->enum_type()->value(i)->name();
                problemAt(path,
                          "unknown " + field->enum_type()->name() + " " + describe(json) +
                              "; use one of " + names + ", or an integer");
            }
            value = known->number();
        } else {
            value = static_cast<int>(signedFromJson(json,
                                                    path,
                                                    std::numeric_limits<int32_t>::min(),
                                                    std::numeric_limits<int32_t>::max(),
                                                    "enum number"));
        }
        add ? r->AddEnumValue(&message, field, value) : r->SetEnumValue(&message, field, value);
        break;
    }
    case gp::FieldDescriptor::CPPTYPE_STRING: {
        if (!json.is_string())
            problemAt(path,
                      std::string("expected a string") +
                          (field->type() == gp::FieldDescriptor::TYPE_BYTES ? " (base64)" : "") +
                          ", found " + describe(json));
        std::string v = json.get<std::string>();
        if (field->type() == gp::FieldDescriptor::TYPE_BYTES) {
            std::optional<std::string> bytes = base64Decode(v);
            if (!bytes)
                problemAt(path,
                          "is not base64 (A-Z a-z 0-9 + /, padded with = to a multiple of 4 "
                          "characters): " +
                              describe(json));
            v = std::move(*bytes);
        }
        add ? r->AddString(&message, field, std::move(v))
            : r->SetString(&message, field, std::move(v));
        break;
    }
    case gp::FieldDescriptor::CPPTYPE_MESSAGE: {
        gp::Message* child =
            add ? r->AddMessage(&message, field) : r->MutableMessage(&message, field);
        messageFromJson(json, *child, path);
        break;
    }
    }
}

std::string allowedKeys(const gp::Descriptor* descriptor)
{
    std::string names;
    for (int i = 0; i < descriptor->field_count(); ++i)
        names += descriptor->field(i)->name() + ", ";
    return names + "unknown_fields";
}

void messageFromJson(const Json& json, gp::Message& message, const std::string& path)
{
    const gp::Descriptor* descriptor = message.GetDescriptor();
    const gp::Reflection* r = message.GetReflection();
    bool list = isListWrapper(descriptor);
    if (list && json.is_array()) {
        for (std::size_t i = 0; i < json.size(); ++i)
            setField(message, descriptor->field(0), json[i], path + "/" + std::to_string(i));
        return;
    }
    if (!json.is_object())
        problemAt(path,
                  std::string("expected ") + (list ? "an array or an object" : "an object") + " (" +
                      descriptor->name() + "), found " + describe(json));
    std::vector<std::pair<const gp::OneofDescriptor*, std::string>> oneofsSet;
    std::optional<std::string> unknownBytes;
    for (auto it = json.begin(); it != json.end(); ++it) {
        const std::string& key = it.key();
        std::string at = path + "/" + pointerKey(key);
        if (key == "unknown_fields") {
            if (!it.value().is_string())
                problemAt(at, "expected a base64 string, found " + describe(it.value()));
            unknownBytes = base64Decode(it.value().get<std::string>());
            if (!unknownBytes)
                problemAt(at, "is not base64; copy it unchanged from the converted trace");
            continue;
        }
        const gp::FieldDescriptor* field = descriptor->FindFieldByName(key);
        if (field == nullptr)
            problemAt(at,
                      "unknown key \"" + key + "\" in " + descriptor->name() +
                          "; allowed keys: " + allowedKeys(descriptor));
        if (const gp::OneofDescriptor* oneof = field->containing_oneof()) {
            for (const auto& [other, otherKey] : oneofsSet) {
                if (other == oneof)
                    problemAt(at,
                              descriptor->name() + " holds one value, but both \"" + otherKey +
                                  "\" and \"" + key + "\" are given; keep one");
            }
            oneofsSet.emplace_back(oneof, key);
        }
        if (it.value().is_null())
            problemAt(at, "null is not a value; remove the key to leave the field unset");
        if (field->is_repeated()) {
            if (!it.value().is_array())
                problemAt(at, "expected an array, found " + describe(it.value()));
            for (std::size_t i = 0; i < it.value().size(); ++i)
                setField(message, field, it.value()[i], at + "/" + std::to_string(i));
        } else {
            setField(message, field, it.value(), at);
        }
    }
    if (unknownBytes && !r->MutableUnknownFields(&message)->ParseFromString(*unknownBytes))
        problemAt(path + "/unknown_fields",
                  "is not valid protobuf wire data; copy it unchanged from the converted trace "
                  "or remove it");
}

// --- legacy feeder form ---

// An attribute for a JSON value that has no field of its own (extra keys of the legacy form).
pb::AttributeProto inferredAttribute(const std::string& name, const Json& value)
{
    pb::AttributeProto attr;
    attr.set_name(name);
    if (value.is_boolean()) {
        attr.set_bool_val(value.get<bool>());
    } else if (value.is_number_unsigned() &&
               value.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
        attr.set_uint64_val(value.get<uint64_t>());
    } else if (value.is_number_integer()) {
        attr.set_int64_val(value.get<int64_t>());
    } else if (value.is_number_float()) {
        attr.set_double_val(value.get<double>());
    } else if (value.is_string()) {
        attr.set_string_val(value.get<std::string>());
    } else if (value.is_array() && !value.empty() &&
               std::all_of(value.begin(), value.end(), [](const Json& v) {
                   return v.is_number_integer() &&
                          !(v.is_number_unsigned() &&
                            v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX));
               })) {
        for (const Json& v : value)
            attr.mutable_int64_list()->add_values(v.get<int64_t>());
    } else if (value.is_array() && !value.empty() &&
               std::all_of(
                   value.begin(), value.end(), [](const Json& v) { return v.is_string(); })) {
        for (const Json& v : value)
            attr.mutable_string_list()->add_values(v.get<std::string>());
    } else {
        attr.set_string_val(value.dump());
    }
    return attr;
}

std::vector<uint64_t> idList(const Json& json, const std::string& path)
{
    if (!json.is_array())
        problemAt(path, "expected an array of node ids, found " + describe(json));
    std::vector<uint64_t> ids;
    ids.reserve(json.size());
    for (std::size_t i = 0; i < json.size(); ++i)
        ids.push_back(unsignedFromJson(json[i],
                                       path + "/" + std::to_string(i),
                                       std::numeric_limits<uint64_t>::max(),
                                       "node id"));
    return ids;
}

int32_t int32FromJson(const Json& json, const std::string& path)
{
    return static_cast<int32_t>(signedFromJson(json,
                                               path,
                                               std::numeric_limits<int32_t>::min(),
                                               std::numeric_limits<int32_t>::max(),
                                               "32-bit signed"));
}

void legacyNodeFromJson(const Json& json, TraceNode& node, const std::string& path)
{
    if (!json.is_object())
        problemAt(path, "expected a node object {\"Id\": ..., ...}, found " + describe(json));
    node.reset();
    constexpr uint64_t u64 = std::numeric_limits<uint64_t>::max();
    for (auto it = json.begin(); it != json.end(); ++it) {
        const std::string& key = it.key();
        const Json& value = it.value();
        std::string at = path + "/" + pointerKey(key);
        if (key == "Id") {
            node.id = unsignedFromJson(value, at, u64, "node id");
        } else if (key == "Name") {
            if (!value.is_string())
                problemAt(at, "expected a string, found " + describe(value));
            node.name = value.get<std::string>();
        } else if (key == "NodeType") {
            node.type = static_cast<NodeType>(int32FromJson(value, at));
        } else if (key == "data_deps") {
            node.dataDeps = idList(value, at);
        } else if (key == "ctrlDeps") {
            node.ctrlDeps = idList(value, at);
        } else if (key == "runtime") {
            node.durationMicros = unsignedFromJson(value, at, u64, "microseconds");
        } else if (key == "is_cpu_op") {
            if (!value.is_boolean())
                problemAt(at, "expected true or false, found " + describe(value));
            node.setIsCpuOp(value.get<bool>());
        } else if (key == "tensor_size") {
            node.setTensorSize(unsignedFromJson(value, at, u64, "bytes"));
        } else if (key == "comm_type") {
            node.setCommType(int32FromJson(value, at));
        } else if (key == "comm_priority") {
            node.setCommPriority(int32FromJson(value, at));
        } else if (key == "comm_size") {
            node.setCommSize(signedFromJson(value, at, 0, INT64_MAX, "bytes"));
        } else if (key == "comm_src") {
            node.setCommSrc(int32FromJson(value, at));
        } else if (key == "comm_dst") {
            node.setCommDst(int32FromJson(value, at));
        } else if (key == "comm_tag") {
            node.setCommTag(int32FromJson(value, at));
        } else {
            // The legacy feeder ignores other keys; keep them as attributes instead of losing
            // them.
            TraceCodec::addAttribute(node, inferredAttribute(key, value));
        }
    }
}

constexpr std::array<const char*, 4> legacyTopKeys = {
    "workload_graph", "workload_name", "ngpus", "soc"};

bool isLegacyTopKey(const std::string& key)
{
    return std::find(legacyTopKeys.begin(), legacyTopKeys.end(), key) != legacyTopKeys.end();
}

// "syntax error while parsing ..." from nlohmann's message, without its own position prefix.
std::string parseErrorText(const Json::parse_error& error)
{
    std::string text = error.what();
    std::size_t at = text.find("syntax error");
    if (at == std::string::npos)
        at = text.find("] ");
    return at == std::string::npos ? text : text.substr(at);
}

std::string composeMessage(uint64_t line,
                           int64_t nodeIndex,
                           const std::optional<uint64_t>& nodeId,
                           const std::string& jsonPath,
                           const std::string& problem)
{
    std::string text;
    if (line > 0)
        text += "line " + std::to_string(line) + ": ";
    if (nodeIndex >= 0) {
        text += "node " + std::to_string(nodeIndex);
        if (nodeId)
            text += " (id " + std::to_string(*nodeId) + ")";
        text += ": ";
    }
    if (!jsonPath.empty())
        text += jsonPath + ": ";
    return text + problem;
}

} // namespace

const char* jsonFormName(JsonForm form)
{
    switch (form) {
    case JsonForm::Etsim:
        return "etsim";
    case JsonForm::LegacyFeeder:
        return "legacy-feeder";
    case JsonForm::ProtobufJson:
        return "protobuf-json";
    }
    return "?";
}

TraceJsonError::TraceJsonError(std::string file,
                               uint64_t line,
                               int64_t nodeIndex,
                               std::optional<uint64_t> nodeId,
                               std::string jsonPath,
                               std::string problem)
    : TraceError(std::move(file), composeMessage(line, nodeIndex, nodeId, jsonPath, problem))
    , lineNumber(line)
    , index(nodeIndex)
    , id(nodeId)
    , path(std::move(jsonPath))
{
}

// --- public tree conversions ---

Json nodeToJson(const TraceNode& node)
{
    pb::Node message;
    TraceCodec::encode(node, message);
    return messageToJson(message);
}

Json metadataToJson(const TraceMetadata& metadata)
{
    if (!metadata.present)
        return nullptr;
    return messageToJson(metadata.message);
}

void nodeFromJson(const Json& json,
                  TraceNode& node,
                  const std::string& file,
                  int64_t nodeIndex,
                  const std::string& jsonPath)
{
    pb::Node message;
    try {
        messageFromJson(json, message, jsonPath);
    } catch (const JsonProblem& problem) {
        std::optional<uint64_t> id;
        if (json.is_object() && json.contains("id") && json["id"].is_number_unsigned())
            id = json["id"].get<uint64_t>();
        throw TraceJsonError(file, 0, nodeIndex, id, problem.path, problem.problem);
    }
    TraceCodec::decode(message, node);
}

TraceMetadata metadataFromJson(const Json& json, const std::string& file, const std::string& path)
{
    TraceMetadata metadata;
    if (json.is_null())
        return metadata;
    try {
        messageFromJson(json, metadata.message, path);
    } catch (const JsonProblem& problem) {
        throw TraceJsonError(file, 0, -1, std::nullopt, problem.path, problem.problem);
    }
    metadata.present = true;
    return metadata;
}

namespace {

void prettyInto(const Json& json, int indent, std::string& out)
{
    auto pad = [&out](int n) { out.append(static_cast<std::size_t>(n), ' '); };
    if (json.is_object() && !json.empty()) {
        out += "{\n";
        std::size_t i = 0;
        for (auto it = json.begin(); it != json.end(); ++it, ++i) {
            pad(indent + 2);
            out += Json(it.key()).dump(-1, ' ', false, Json::error_handler_t::strict);
            out += ": ";
            prettyInto(it.value(), indent + 2, out);
            out += i + 1 < json.size() ? ",\n" : "\n";
        }
        pad(indent);
        out += "}";
    } else if (json.is_array() && !json.empty()) {
        bool flat = std::none_of(json.begin(), json.end(), [](const Json& v) {
            return v.is_structured() && !v.empty();
        });
        if (flat) {
            out += "[";
            for (std::size_t i = 0; i < json.size(); ++i) {
                if (i > 0)
                    out += ", ";
                out += json[i].dump(-1, ' ', false, Json::error_handler_t::strict);
            }
            out += "]";
            return;
        }
        out += "[\n";
        for (std::size_t i = 0; i < json.size(); ++i) {
            pad(indent + 2);
            prettyInto(json[i], indent + 2, out);
            out += i + 1 < json.size() ? ",\n" : "\n";
        }
        pad(indent);
        out += "]";
    } else {
        out += json.dump(-1, ' ', false, Json::error_handler_t::strict);
    }
}

} // namespace

std::string prettyJson(const Json& json, int indent)
{
    std::string out;
    prettyInto(json, indent, out);
    return out;
}

// --- streaming scanner over a plain or gzip file ---

struct TraceJsonReader::Scanner {
    std::string file;
    gzFile gz = nullptr;
    std::vector<char> buffer = std::vector<char>(1 << 16);
    std::size_t pos = 0;
    std::size_t size = 0;
    bool eof = false;
    uint64_t line = 1;
    // Node index reported in errors; -1 outside nodes.
    int64_t nodeIndex = -1;

    explicit Scanner(const std::filesystem::path& path) : file(path.string())
    {
        std::error_code error;
        if (std::filesystem::is_directory(path, error))
            throw TraceError(file, "is a folder, not a JSON trace file");
        gz = gzopen(path.c_str(), "rb");
        if (gz == nullptr)
            throw TraceError(file,
                             std::string("cannot open: ") +
                                 (errno != 0 ? std::strerror(errno) : "out of memory") +
                                 " (check the path and the permissions)");
        gzbuffer(gz, 1 << 18);
    }
    ~Scanner()
    {
        if (gz != nullptr)
            gzclose(gz);
    }
    Scanner(const Scanner&) = delete;
    Scanner& operator=(const Scanner&) = delete;

    [[noreturn]] void fail(const std::string& problem) const
    {
        throw TraceJsonError(file, line, nodeIndex, std::nullopt, "", problem);
    }

    bool fill()
    {
        if (eof)
            return false;
        int got = gzread(gz, buffer.data(), static_cast<unsigned>(buffer.size()));
        int code = Z_OK;
        const char* message = gzerror(gz, &code);
        if (got < 0 || (got == 0 && code != Z_OK)) {
            fail(std::string(code == Z_BUF_ERROR ? "the gzip stream ends early"
                             : code == Z_ERRNO   ? std::strerror(errno)
                                                 : message) +
                 ": the file is truncated or corrupt; re-compress or re-copy it");
        }
        if (got == 0) {
            eof = true;
            return false;
        }
        pos = 0;
        size = static_cast<std::size_t>(got);
        return true;
    }

    int peek()
    {
        if (pos == size && !fill())
            return -1;
        return static_cast<unsigned char>(buffer[pos]);
    }

    int get()
    {
        int c = peek();
        if (c < 0)
            return c;
        ++pos;
        if (c == '\n')
            ++line;
        return c;
    }

    void skipSpace()
    {
        for (int c = peek(); c == ' ' || c == '\t' || c == '\n' || c == '\r'; c = peek())
            get();
    }

    static std::string describeChar(int c)
    {
        if (c < 0)
            return "the end of the file";
        if (c >= 0x20 && c < 0x7F)
            return std::string("'") + static_cast<char>(c) + "'";
        char text[16];
        std::snprintf(text, sizeof text, "byte 0x%02X", static_cast<unsigned>(c));
        return text;
    }

    void expect(char wanted, const std::string& where)
    {
        skipSpace();
        int c = get();
        if (c != wanted)
            fail(std::string("expected '") + wanted + "' " + where + ", found " + describeChar(c));
    }

    void appendString(std::string* out)
    {
        // Opening quote already peeked.
        int c = get();
        if (out != nullptr)
            *out += static_cast<char>(c);
        while (true) {
            c = get();
            if (c < 0)
                fail("the file ends inside a string (a missing '\"'?)");
            if (out != nullptr)
                *out += static_cast<char>(c);
            if (c == '\\') {
                c = get();
                if (c < 0)
                    fail("the file ends inside a string (a missing '\"'?)");
                if (out != nullptr)
                    *out += static_cast<char>(c);
            } else if (c == '"') {
                return;
            }
        }
    }

    // The text of one JSON value into `out` (cleared first), or skipped when `out` is null.
    // `closers` holds the brackets already open when the caller consumed an opening one.
    void value(std::string* out, std::size_t maxBytes, std::string closers = {})
    {
        if (out != nullptr && closers.empty())
            out->clear();
        if (closers.empty()) {
            skipSpace();
            int first = peek();
            if (first < 0)
                fail("the file ends where a JSON value is expected");
            if (std::strchr(",:]}", first) != nullptr)
                fail("expected a JSON value, found " + describeChar(first));
        }
        bool any = !closers.empty();
        while (true) {
            int c = peek();
            bool nested = !closers.empty();
            if (!nested && any &&
                (c < 0 || std::strchr(" \t\r\n,:]}", c) != nullptr || c == '\0' || c == '"'))
                return;
            if (c < 0)
                fail("the file ends inside a JSON " + std::string(closers.back() == '}'
                                                                      ? "object (a missing '}'?)"
                                                                      : "array (a missing ']'?)"));
            any = true;
            if (c == '"') {
                appendString(out);
                if (!nested)
                    return;
            } else {
                get();
                if (out != nullptr)
                    *out += static_cast<char>(c);
                if (c == '{' || c == '[') {
                    closers += c == '{' ? '}' : ']';
                    // Bounded here, before any JSON parser or error printer recurses into it.
                    if (closers.size() > maxNestingDepth)
                        fail(nestingProblem());
                } else if (c == '}' || c == ']') {
                    if (closers.back() != c)
                        fail("unexpected " + describeChar(c) + "; expected '" + closers.back() +
                             "' to close the " + (closers.back() == '}' ? "object" : "array") +
                             " first");
                    closers.pop_back();
                    if (closers.empty())
                        return;
                }
            }
            if (out != nullptr && out->size() > maxBytes)
                fail("a JSON value longer than " + std::to_string(maxBytes) +
                     " bytes (TraceJsonReaderOptions::maxNodeBytes); split the node or raise "
                     "the limit");
        }
    }

    std::string key()
    {
        std::string text;
        skipSpace();
        if (peek() != '"')
            fail("expected a key in double quotes, found " + describeChar(peek()));
        appendString(&text);
        try {
            return Json::parse(text).get<std::string>();
        } catch (const Json::exception& error) {
            fail("the key " + text + " is not a valid JSON string: " + error.what());
        }
    }

    void expectEnd()
    {
        skipSpace();
        int c = peek();
        if (c >= 0)
            fail("unexpected " + describeChar(c) +
                 " after the end of the JSON document; remove it");
    }
};

TraceJsonReader::TraceJsonReader(std::filesystem::path path, TraceJsonReaderOptions readerOptions)
    : file(std::move(path))
    , options(readerOptions)
    , scanner(std::make_unique<Scanner>(file))
    , scratch(std::make_unique<pb::Node>())
{
    Scanner& in = *scanner;
    in.skipSpace();
    int first = in.peek();
    if (first < 0)
        in.fail("the file is empty: a JSON trace holds one object (etsim or legacy feeder form) "
                "or a sequence of protobuf-JSON objects");
    if (first == '[') {
        in.get();
        jsonForm = JsonForm::ProtobufJson;
        topIsArray = true;
    } else if (first == '{') {
        in.get();
        in.skipSpace();
        if (in.peek() == '"') {
            uint64_t keyLine = in.line;
            std::string key = in.key();
            if (key == "format" || isLegacyTopKey(key)) {
                openEtsimOrLegacy(key);
                return;
            }
            if (key == "metadata" || key == "nodes")
                fail(keyLine,
                     "",
                     "an etsim trace JSON starts with \"format\": \"" +
                         std::string(traceJsonFormat) + "\"; add it as the first key");
            // Protobuf JSON: rebuild the text read so far and take the rest of the object.
            pendingRecord = "{" + Json(key).dump();
            pendingLine = keyLine;
        } else {
            pendingRecord = "{";
            pendingLine = in.line;
        }
        in.value(&pendingRecord, options.maxNodeBytes, "}");
        jsonForm = JsonForm::ProtobufJson;
    } else {
        in.fail("the file does not start with '{' or '[' (found " + Scanner::describeChar(first) +
                "): not a JSON trace; if it is a protobuf Chakra ET, name it .et");
    }

    // Protobuf JSON: the first object is the GlobalMetadata when it has no Node field.
    if (pendingRecord.empty()) {
        in.skipSpace();
        if (in.peek() == ']')
            return;
        pendingLine = in.line;
        in.value(&pendingRecord, options.maxNodeBytes);
    }
    Json first0;
    try {
        first0 = Json::parse(pendingRecord);
    } catch (const Json::parse_error& error) {
        fail(pendingLine, "", "invalid JSON: " + parseErrorText(error));
    }
    bool isMetadata = first0.is_object();
    for (auto it = first0.begin(); isMetadata && it != first0.end(); ++it)
        isMetadata = it.key() == "version" || it.key() == "attr";
    if (isMetadata) {
        google::protobuf::util::JsonParseOptions parseOptions;
        auto status =
            google::protobuf::util::JsonStringToMessage(pendingRecord, &meta.message, parseOptions);
        if (!status.ok())
            fail(pendingLine,
                 "",
                 "GlobalMetadata: " + status.ToString() +
                     "; check the names and value types against the Chakra schema");
        meta.present = true;
        pendingRecord.clear();
    }
}

TraceJsonReader::~TraceJsonReader() = default;
TraceJsonReader::TraceJsonReader(TraceJsonReader&&) noexcept = default;
TraceJsonReader& TraceJsonReader::operator=(TraceJsonReader&&) noexcept = default;

void TraceJsonReader::fail(uint64_t line, const std::string& jsonPath, const std::string& problem)
{
    std::optional<uint64_t> noId;
    throw TraceJsonError(
        file.string(), line, scanner ? scanner->nodeIndex : -1, noId, jsonPath, problem);
}

void TraceJsonReader::readTopLevelValue(const std::string& key, bool skipNodes)
{
    Scanner& in = *scanner;
    uint64_t line = in.line;
    const char* arrayKey = jsonForm == JsonForm::Etsim ? "nodes" : "workload_graph";
    if (key == arrayKey && skipNodes) {
        in.value(nullptr, 0);
        return;
    }
    in.value(&text, options.maxNodeBytes);
    Json value;
    try {
        value = Json::parse(text);
    } catch (const Json::parse_error& error) {
        fail(in.line, "/" + pointerKey(key), "invalid JSON: " + parseErrorText(error));
    }
    if (jsonForm == JsonForm::LegacyFeeder) {
        if (value.is_null())
            return;
        *meta.message.add_attr() = inferredAttribute(key, value);
        return;
    }
    if (key == "format") {
        if (!value.is_string() || value.get<std::string>() != traceJsonFormat)
            fail(line,
                 "/format",
                 "expected \"" + std::string(traceJsonFormat) + "\", found " + describe(value) +
                     "; this reader knows only that version of etsim's JSON form");
    } else if (key == "metadata") {
        try {
            meta = TraceMetadata{};
            if (!value.is_null()) {
                messageFromJson(value, meta.message, "/metadata");
                meta.present = true;
            }
        } catch (const JsonProblem& problem) {
            fail(line, problem.path, problem.problem);
        }
    } else {
        fail(line,
             "/" + pointerKey(key),
             "unknown top-level key \"" + key + "\"; allowed keys: format, metadata, nodes");
    }
}

void TraceJsonReader::openEtsimOrLegacy(const std::string& firstKey)
{
    Scanner& in = *scanner;
    jsonForm = firstKey == "format" ? JsonForm::Etsim : JsonForm::LegacyFeeder;
    const char* arrayKey = jsonForm == JsonForm::Etsim ? "nodes" : "workload_graph";
    if (jsonForm == JsonForm::LegacyFeeder) {
        meta.present = true;
        // Keys may follow the node array: read them all first, then come back for the nodes.
    }
    bool metadataSeen = false;
    bool arraySeen = false;
    bool rescan = false;
    std::string key = firstKey;
    while (true) {
        in.expect(':', "after the key \"" + key + "\"");
        if (key == arrayKey) {
            arraySeen = true;
            if (jsonForm == JsonForm::Etsim && metadataSeen) {
                in.expect('[', "to open the \"nodes\" array");
                inArray = true;
                return;
            }
            in.skipSpace();
            if (in.peek() != '[')
                fail(in.line,
                     "/" + key,
                     "expected an array of nodes, found " + Scanner::describeChar(in.peek()));
            rescan = true;
            readTopLevelValue(key, true);
        } else {
            if (key == "metadata")
                metadataSeen = true;
            readTopLevelValue(key, false);
        }
        in.skipSpace();
        int c = in.get();
        if (c == '}')
            break;
        if (c != ',')
            in.fail("expected ',' or '}' after the value of \"" + key + "\", found " +
                    Scanner::describeChar(c));
        key = in.key();
        if (jsonForm == JsonForm::LegacyFeeder && key == "format")
            fail(in.line, "/format", "a legacy feeder file cannot have a \"format\" key");
    }
    in.expectEnd();
    if (!arraySeen)
        fail(0,
             "",
             std::string("no \"") + arrayKey + "\" array: " +
                 (jsonForm == JsonForm::Etsim ? "add \"nodes\": [] after the metadata"
                                              : "the legacy feeder form keeps its nodes in "
                                                "\"workload_graph\": [...]"));
    if (rescan)
        seekToNodeArray();
}

void TraceJsonReader::seekToNodeArray()
{
    scanner = std::make_unique<Scanner>(file);
    Scanner& in = *scanner;
    const char* arrayKey = jsonForm == JsonForm::Etsim ? "nodes" : "workload_graph";
    in.expect('{', "at the start of the file");
    while (true) {
        std::string key = in.key();
        in.expect(':', "after the key \"" + key + "\"");
        if (key == arrayKey)
            break;
        in.value(nullptr, 0);
        in.expect(',', "between top-level keys");
    }
    in.expect('[', std::string("to open the \"") + arrayKey + "\" array");
    inArray = true;
}

bool TraceJsonReader::next(TraceNode& node)
{
    if (ended)
        return false;
    if (jsonForm == JsonForm::ProtobufJson)
        return nextProtobuf(node);
    return nextEtsim(node);
}

bool TraceJsonReader::nextEtsim(TraceNode& node)
{
    Scanner& in = *scanner;
    in.nodeIndex = -1;
    in.skipSpace();
    if (in.peek() == ']') {
        in.get();
        // Keys after the array were read before the nodes; skip them now.
        while (true) {
            in.skipSpace();
            int c = in.get();
            if (c == '}')
                break;
            if (c != ',')
                in.fail("expected ',' or '}' after the node array, found " +
                        Scanner::describeChar(c));
            std::string key = in.key();
            in.expect(':', "after the key \"" + key + "\"");
            in.value(nullptr, 0);
        }
        in.expectEnd();
        ended = true;
        return false;
    }
    auto index = static_cast<int64_t>(nodes);
    in.nodeIndex = index;
    if (nodes > 0) {
        int c = in.get();
        if (c != ',')
            in.fail("expected ',' or ']' after node " + std::to_string(nodes - 1) + ", found " +
                    Scanner::describeChar(c));
    }
    in.skipSpace();
    uint64_t line = in.line;
    in.value(&text, options.maxNodeBytes);
    Json json;
    try {
        json = Json::parse(text);
    } catch (const Json::parse_error& error) {
        auto upTo = std::min<std::size_t>(error.byte > 0 ? error.byte - 1 : 0, text.size());
        auto lines = static_cast<uint64_t>(std::count(text.begin(), text.begin() + upTo, '\n'));
        fail(line + lines, "", "invalid JSON: " + parseErrorText(error));
    }
    const char* arrayKey = jsonForm == JsonForm::Etsim ? "/nodes/" : "/workload_graph/";
    const char* idKey = jsonForm == JsonForm::Etsim ? "id" : "Id";
    std::string path = arrayKey + std::to_string(index);
    try {
        if (jsonForm == JsonForm::Etsim) {
            messageFromJson(json, *scratch, path);
            TraceCodec::decode(*scratch, node);
            scratch->Clear();
        } else {
            legacyNodeFromJson(json, node, path);
        }
    } catch (const JsonProblem& problem) {
        scratch->Clear();
        std::optional<uint64_t> id;
        if (json.is_object() && json.contains(idKey) && json[idKey].is_number_unsigned())
            id = json[idKey].get<uint64_t>();
        throw TraceJsonError(file.string(), line, index, id, problem.path, problem.problem);
    }
    in.nodeIndex = -1;
    ++nodes;
    return true;
}

bool TraceJsonReader::nextProtobuf(TraceNode& node)
{
    Scanner& in = *scanner;
    auto index = static_cast<int64_t>(nodes);
    if (pendingRecord.empty()) {
        in.skipSpace();
        int c = in.peek();
        if (topIsArray) {
            if (c == ']') {
                in.get();
                in.expectEnd();
                ended = true;
                return false;
            }
            bool firstElement = nodes == 0 && !meta.present;
            if (!firstElement) {
                in.get();
                if (c != ',')
                    in.fail("expected ',' or ']' between records, found " +
                            Scanner::describeChar(c));
            }
        } else if (c < 0) {
            ended = true;
            return false;
        }
        in.nodeIndex = index;
        in.skipSpace();
        pendingLine = in.line;
        in.value(&pendingRecord, options.maxNodeBytes);
        in.nodeIndex = -1;
    }
    google::protobuf::util::JsonParseOptions parseOptions;
    scratch->Clear();
    auto status =
        google::protobuf::util::JsonStringToMessage(pendingRecord, scratch.get(), parseOptions);
    pendingRecord.clear();
    if (!status.ok())
        throw TraceJsonError(file.string(),
                             pendingLine,
                             index,
                             std::nullopt,
                             "",
                             "protobuf JSON Node: " + status.ToString() +
                                 "; check the names and value types against the Chakra schema");
    TraceCodec::decode(*scratch, node);
    ++nodes;
    return true;
}

// --- writer ---

struct TraceJsonWriter::Sink {
    gzFile gz = nullptr;
    ~Sink()
    {
        if (gz != nullptr)
            gzclose(gz);
    }
};

TraceJsonWriter::TraceJsonWriter(std::filesystem::path path,
                                 const TraceMetadata& metadata,
                                 TraceJsonWriterOptions options)
    : file(std::move(path)), sink(std::make_unique<Sink>())
{
    bool gzip = options.compression == TraceCompression::Gzip ||
                (options.compression == TraceCompression::ByName && file.extension() == ".gz");
    std::string mode = gzip ? "wb" + std::to_string(std::clamp(options.gzipLevel, 1, 9)) : "wbT";
    errno = 0;
    sink->gz = gzopen(file.c_str(), mode.c_str());
    if (sink->gz == nullptr)
        throw TraceError(file.string(),
                         std::string("cannot create: ") +
                             (errno != 0 ? std::strerror(errno) : "out of memory") +
                             " (check that the folder exists and is writable)");
    gzbuffer(sink->gz, 1 << 18);
    std::string head = "{\n  \"format\": \"" + std::string(traceJsonFormat) + "\",\n";
    try {
        head += "  \"metadata\": " + prettyJson(metadataToJson(metadata), 2) + ",\n";
    } catch (const Json::type_error& error) {
        throw TraceError(file.string(),
                         std::string("metadata: a string is not valid UTF-8 (") + error.what() +
                             "); JSON and Chakra strings must be UTF-8");
    }
    head += "  \"nodes\": [";
    put(head);
}

TraceJsonWriter::~TraceJsonWriter() = default;

void TraceJsonWriter::put(const std::string& text)
{
    if (!sink || sink->gz == nullptr)
        throw TraceError(file.string(), "write after close()");
    if (!text.empty() && gzwrite(sink->gz, text.data(), static_cast<unsigned>(text.size())) !=
                             static_cast<int>(text.size())) {
        int code = Z_OK;
        std::string message = gzerror(sink->gz, &code);
        if (code == Z_ERRNO)
            message = std::strerror(errno);
        sink.reset();
        throw TraceError(file.string(), "write failed: " + message);
    }
}

void TraceJsonWriter::write(const TraceNode& node)
{
    TraceCodec::encode(node, scratch);
    std::string text = nodes == 0 ? "\n    " : ",\n    ";
    try {
        text += prettyJson(messageToJson(scratch), 4);
    } catch (const Json::type_error& error) {
        throw TraceError(file.string(),
                         "node " + std::to_string(nodes) + " (id " + std::to_string(node.id) +
                             "): a string is not valid UTF-8 (" + error.what() +
                             "); JSON and Chakra strings must be UTF-8");
    }
    put(text);
    ++nodes;
}

void TraceJsonWriter::close()
{
    if (!sink)
        return;
    put(nodes == 0 ? "]\n}\n" : "\n  ]\n}\n");
    gzFile gz = sink->gz;
    sink->gz = nullptr;
    sink.reset();
    int status = gzclose(gz);
    if (status != Z_OK)
        throw TraceError(file.string(),
                         std::string("write failed when closing: ") +
                             (status == Z_ERRNO ? std::strerror(errno)
                                                : "zlib error " + std::to_string(status)));
}

} // namespace etsim::et
