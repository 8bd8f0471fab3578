// Streaming reader of a JSON trace in any of its three forms (TraceJson.h). The form is found
// from the first key; etsim's and the legacy feeder's nodes go through TraceJsonTree.cpp and
// TraceJsonLegacy.cpp, protobuf-JSON records through protobuf's own JSON parser.
#include "et_driver/TraceCodec.h"
#include "et_driver/TraceJson.h"
#include "et_driver/TraceJsonDetail.h"
#include "kernel/InputFile.h"
#include "kernel/InputLimits.h"

#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>
#include <zlib.h>

namespace etsim::et {

namespace pb = ChakraProtoMsg;
namespace gp = google::protobuf;
using Json = nlohmann::ordered_json;
using namespace jsondetail;

// --- streaming scanner over a plain or gzip file ---

struct TraceJsonReader::Scanner {
    std::string file;
    gzFile gz = nullptr;
    std::vector<char> buffer;
    std::size_t pos = 0;
    std::size_t size = 0;
    bool eof = false;
    uint64_t line = 1;
    // Node index reported in errors; -1 outside nodes.
    int64_t nodeIndex = -1;

    Scanner(const std::filesystem::path& path, std::size_t bufferBytes)
        : file(path.string()), buffer(std::clamp<std::size_t>(bufferBytes, 1, 1U << 28))
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
        gzbuffer(gz, static_cast<unsigned>(4 * buffer.size()));
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
            return parseOrderedJson(text, file).get<std::string>();
        } catch (const JsonSyntaxError& error) {
            fail("the key " + text + " is not a valid JSON string: " + error.libraryMessage());
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
    , scanner(std::make_unique<Scanner>(file, readerOptions.bufferBytes))
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
        first0 = parseOrderedJson(pendingRecord, in.file);
    } catch (const JsonSyntaxError& error) {
        fail(pendingLine, "", "invalid JSON: " + error.reason());
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
        value = parseOrderedJson(text, in.file);
    } catch (const JsonSyntaxError& error) {
        fail(in.line, "/" + pointerKey(key), "invalid JSON: " + error.reason());
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
    scanner = std::make_unique<Scanner>(file, options.bufferBytes);
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
        json = parseOrderedJson(text, in.file);
    } catch (const JsonSyntaxError& error) {
        // The node's own lines before the place, when the error has one.
        fail(line + (error.line() > 0 ? error.line() - 1 : 0),
             "",
             "invalid JSON: " + error.reason());
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

} // namespace etsim::et
