#pragma once
// Pieces shared by the three JSON forms of a trace (TraceJson.h): scalar conversions with range
// checks, the reflection-based conversion of etsim's form, and the legacy feeder's node form.
// Internal to et_driver; callers use TraceJson.h.

#include "et_driver/TraceNode.h"
#include "et_driver/proto/et_def.pb.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace etsim::et::jsondetail {

using Json = nlohmann::ordered_json;

// Thrown inside the conversions and turned into a TraceJsonError by whoever knows the file,
// the line and the node.
struct JsonProblem {
    std::string path;
    std::string problem;
};

[[noreturn]] void problemAt(const std::string& path, std::string text);

// --- scalars (TraceJsonValues.cpp) ---

std::string jsonTypeName(const Json& json);
// "a string ("abc")" with long values shortened, for messages.
std::string describe(const Json& json);
// JSON pointer escaping of one key (RFC 6901).
std::string pointerKey(const std::string& key);
// base64 (RFC 4648, with padding).
std::string base64Encode(const std::string& bytes);
std::optional<std::string> base64Decode(const std::string& text);
// JSON numbers, non-finite values as strings.
Json doubleToJson(double value);
Json floatToJson(float value);
// The value of a double or float field; `isFloat` selects the bit width of "NaN:0x..." forms.
double floatingFromJson(const Json& json, const std::string& path, bool isFloat, float& asFloat);
int64_t signedFromJson(
    const Json& json, const std::string& path, int64_t low, int64_t high, const char* type);
uint64_t
unsignedFromJson(const Json& json, const std::string& path, uint64_t high, const char* type);

// --- etsim's form: any protobuf message by reflection (TraceJsonTree.cpp) ---

Json messageToJson(const google::protobuf::Message& message);
// Throws JsonProblem with `path` prefixed to the offending key's path.
void messageFromJson(const Json& json, google::protobuf::Message& message, const std::string& path);

// --- the legacy feeder's form (TraceJsonLegacy.cpp) ---

// An attribute for a JSON value that has no field of its own (extra keys of the legacy form).
ChakraProtoMsg::AttributeProto inferredAttribute(const std::string& name, const Json& value);
void legacyNodeFromJson(const Json& json, TraceNode& node, const std::string& path);
bool isLegacyTopKey(const std::string& key);

} // namespace etsim::et::jsondetail
