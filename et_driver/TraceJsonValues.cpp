// Scalar conversions shared by the JSON forms, and the error type of the JSON reader.
#include "et_driver/TraceJson.h"
#include "et_driver/TraceJsonDetail.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

namespace etsim::et {

namespace jsondetail {

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

} // namespace jsondetail

namespace {

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

} // namespace etsim::et
