// etsim's lossless JSON form: any protobuf message to and from JSON by reflection, the public
// node and metadata conversions, and the pretty layout.
#include "et_driver/TraceCodec.h"
#include "et_driver/TraceJson.h"
#include "et_driver/TraceJsonDetail.h"

#include <google/protobuf/unknown_field_set.h>

#include <algorithm>
#include <limits>
#include <utility>

namespace etsim::et {

namespace pb = ChakraProtoMsg;
namespace gp = google::protobuf;
using Json = nlohmann::ordered_json;
using namespace jsondetail;

namespace {

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

} // namespace

namespace jsondetail {

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

} // namespace jsondetail

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

} // namespace etsim::et
