// Longer than most files (about 700 lines): the one-pass JSON scanner of PyTorch host traces
// and the schema it fills (nodes, attributes, argument lists, tensors) are one reader; the
// scanner exists because a document tree cost more than the rest of the import.
#include "importers/pytorch/HostTrace.h"

#include "importers/pytorch/JsonFile.h"
#include "kernel/Error.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <limits>
#include <string_view>

namespace etsim::importers::pytorch {

namespace {

using nlohmann::json;

bool isRootName(std::string_view name)
{
    return name.rfind("[pytorch|profiler|execution_graph|", 0) == 0 ||
           name.rfind("[pytorch|profiler|execution_trace|", 0) == 0;
}

// A JSON scanner for host traces, in one pass over the text: node objects and attribute lists
// are read straight into HostOp fields, argument lists are copied as compact text (whitespace
// outside strings dropped) while their tensor 6-tuples are picked out. No document tree: for a
// 12 MB trace the tree cost more than the rest of the import.
class Scanner {
public:
    Scanner(const std::string& text, const std::string& file)
        : begin(text.data()), p(text.data()), end(text.data() + text.size()), text(text), file(file)
    {
    }

    [[noreturn]] void fail(const std::string& problem) const
    {
        failJson(text, static_cast<std::size_t>(p - begin), problem, file);
    }

    void space()
    {
        while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
            ++p;
    }
    char peek()
    {
        space();
        if (p >= end)
            fail("unexpected end of input");
        return *p;
    }
    void expect(char c)
    {
        if (peek() != c)
            fail(std::string("expected '") + c + "', found '" + *p + "'");
        ++p;
    }
    bool consume(char c)
    {
        if (peek() != c)
            return false;
        ++p;
        return true;
    }
    bool atEnd()
    {
        space();
        return p >= end;
    }

    // A string token; p is at its opening quote. The raw token, quotes included, is
    // [start, p) afterwards.
    std::string string()
    {
        space();
        const char* start = p;
        rawString();
        std::string_view raw(start + 1, static_cast<std::size_t>(p - start - 2));
        if (raw.find('\\') == std::string_view::npos)
            return std::string(raw);
        std::string out;
        out.reserve(raw.size());
        for (const char* c = start + 1; c < p - 1; ++c) {
            if (*c != '\\') {
                out += *c;
                continue;
            }
            ++c;
            switch (*c) {
            case 'n':
                out += '\n';
                break;
            case 't':
                out += '\t';
                break;
            case 'r':
                out += '\r';
                break;
            case 'b':
                out += '\b';
                break;
            case 'f':
                out += '\f';
                break;
            case 'u': {
                unsigned code =
                    static_cast<unsigned>(std::stoul(std::string(c + 1, c + 5), nullptr, 16));
                c += 4;
                if (code < 0x80)
                    out += static_cast<char>(code);
                else if (code < 0x800) {
                    out += static_cast<char>(0xC0 | (code >> 6));
                    out += static_cast<char>(0x80 | (code & 0x3F));
                } else {
                    out += static_cast<char>(0xE0 | (code >> 12));
                    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
                    out += static_cast<char>(0x80 | (code & 0x3F));
                }
                break;
            }
            default:
                out += *c;
                break;
            }
        }
        return out;
    }

    // A string token as a view: its raw content when it has no escapes (keys never do), else
    // decoded into `storage`.
    std::string_view key(std::string& storage)
    {
        space();
        const char* start = p;
        rawString();
        std::string_view raw(start + 1, static_cast<std::size_t>(p - start - 2));
        if (raw.find('\\') == std::string_view::npos)
            return raw;
        const char* after = p;
        p = start;
        storage = string();
        p = after;
        return storage;
    }

    // Skips a string token, checking it is closed and its escapes are well formed.
    void rawString()
    {
        if (peek() != '"')
            fail("expected a string");
        ++p;
        while (true) {
            const char* q = p;
            while (q < end && *q != '"' && *q != '\\' && static_cast<unsigned char>(*q) >= 0x20)
                ++q;
            if (q >= end) {
                p = q;
                fail("unterminated string");
            }
            if (*q == '"') {
                p = q + 1;
                return;
            }
            if (*q != '\\') {
                p = q;
                fail("control character in a string");
            }
            if (q + 1 >= end) {
                p = q + 1;
                fail("unterminated string");
            }
            char e = q[1];
            if (e == 'u') {
                for (int k = 2; k < 6; ++k)
                    if (q + k >= end || std::isxdigit(static_cast<unsigned char>(q[k])) == 0) {
                        p = q;
                        fail("bad \\u escape");
                    }
                p = q + 6;
            } else if (std::string_view("\"\\/bfnrt").find(e) != std::string_view::npos)
                p = q + 2;
            else {
                p = q;
                fail("bad escape");
            }
        }
    }

    // A number token; true with `value` set for an integer that fits int64.
    bool number(int64_t& value)
    {
        space();
        const char* start = p;
        bool negative = p < end && *p == '-';
        if (negative)
            ++p;
        if (p >= end || std::isdigit(static_cast<unsigned char>(*p)) == 0)
            fail("expected a value");
        uint64_t magnitude = 0;
        bool fits = true;
        while (p < end && std::isdigit(static_cast<unsigned char>(*p)) != 0) {
            uint64_t digit = static_cast<uint64_t>(*p - '0');
            if (magnitude > (std::numeric_limits<uint64_t>::max() - digit) / 10)
                fits = false;
            magnitude = magnitude * 10 + digit;
            ++p;
        }
        bool integral = true;
        if (p < end && *p == '.') {
            integral = false;
            ++p;
            if (p >= end || std::isdigit(static_cast<unsigned char>(*p)) == 0)
                fail("bad number");
            while (p < end && std::isdigit(static_cast<unsigned char>(*p)) != 0)
                ++p;
        }
        if (p < end && (*p == 'e' || *p == 'E')) {
            integral = false;
            ++p;
            if (p < end && (*p == '+' || *p == '-'))
                ++p;
            if (p >= end || std::isdigit(static_cast<unsigned char>(*p)) == 0)
                fail("bad number");
            while (p < end && std::isdigit(static_cast<unsigned char>(*p)) != 0)
                ++p;
        }
        numberText = std::string_view(start, static_cast<std::size_t>(p - start));
        if (!integral || !fits)
            return false;
        if (negative) {
            if (magnitude > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) + 1)
                return false;
            value = magnitude == 0 ? 0 : -static_cast<int64_t>(magnitude - 1) - 1;
        } else {
            // Process-group pointers and unsigned attributes above int64 wrap, as uint64 -> int64.
            value = static_cast<int64_t>(magnitude);
        }
        return true;
    }

    void literal(const char* word)
    {
        std::size_t n = std::strlen(word);
        if (static_cast<std::size_t>(end - p) < n || std::memcmp(p, word, n) != 0)
            fail("expected a value");
        p += n;
    }

    // Copies one value as compact text into `out`, collecting tensor 6-tuples. Returns
    // whether the value was a tensor tuple (for the caller's own tuple check).
    bool compact(std::string& out, std::vector<Tensor>* tensors, int depth = 0)
    {
        if (depth > 64)
            fail("nesting deeper than 64 levels");
        char c = peek();
        if (c == '[') {
            ++p;
            out += '[';
            int count = 0;
            bool tuple = true;
            int64_t ints[5] = {0, 0, 0, 0, 0};
            std::string_view device;
            if (!consume(']')) {
                while (true) {
                    if (count > 0)
                        out += ',';
                    char e = peek();
                    if (e == '"') {
                        const char* start = p;
                        rawString();
                        out.append(start, static_cast<std::size_t>(p - start));
                        if (count == 5)
                            device = std::string_view(start + 1,
                                                      static_cast<std::size_t>(p - start - 2));
                        else
                            tuple = false;
                    } else if (e == '-' || std::isdigit(static_cast<unsigned char>(e)) != 0) {
                        int64_t v = 0;
                        bool integer = number(v);
                        out += numberText;
                        if (integer && count < 5)
                            ints[count] = v;
                        else
                            tuple = false;
                    } else {
                        compact(out, tensors, depth + 1);
                        tuple = false;
                    }
                    ++count;
                    if (consume(']'))
                        break;
                    expect(',');
                }
            }
            out += ']';
            if (tuple && count == 6 && tensors != nullptr) {
                tensors->push_back(
                    {ints[0], ints[1], ints[2], ints[3], ints[4], std::string(device)});
                return true;
            }
            return false;
        }
        if (c == '{') {
            ++p;
            out += '{';
            bool first = true;
            if (!consume('}')) {
                while (true) {
                    if (!first)
                        out += ',';
                    first = false;
                    space();
                    const char* start = p;
                    rawString();
                    out.append(start, static_cast<std::size_t>(p - start));
                    expect(':');
                    out += ':';
                    compact(out, tensors, depth + 1);
                    if (consume('}'))
                        break;
                    expect(',');
                }
            }
            out += '}';
            return false;
        }
        if (c == '"') {
            const char* start = p;
            rawString();
            out.append(start, static_cast<std::size_t>(p - start));
            return false;
        }
        if (c == 't' || c == 'f' || c == 'n') {
            const char* word = c == 't' ? "true" : c == 'f' ? "false" : "null";
            literal(word);
            out += word;
            return false;
        }
        int64_t ignored = 0;
        number(ignored);
        out += numberText;
        return false;
    }

    void skip()
    {
        scratch.clear();
        compact(scratch, nullptr);
    }

    // An integer value (booleans count as 0/1); fails naming `what` otherwise.
    int64_t integer(std::string_view what)
    {
        char c = peek();
        if (c == 't' || c == 'f') {
            literal(c == 't' ? "true" : "false");
            return c == 't' ? 1 : 0;
        }
        int64_t v = 0;
        if (c == '"' || c == '[' || c == '{' || c == 'n' || !number(v))
            fail("\"" + std::string(what) + "\": expected an integer");
        return v;
    }

    // Any value as a JSON tree (attribute values: small).
    json tree()
    {
        std::string value;
        compact(value, nullptr);
        try {
            return json::parse(value);
        } catch (const json::exception& e) {
            fail(std::string("attribute value is not valid JSON (") + e.what() + ")");
        }
    }

private:
    const char* begin;
    const char* p;
    const char* end;
    const std::string& text;
    const std::string& file;
    std::string_view numberText;
    std::string scratch;
};

void readIo(Scanner& in, IoLists& io)
{
    in.expect('{');
    if (in.consume('}'))
        return;
    while (true) {
        std::string storage;
        std::string_view key = in.key(storage);
        in.expect(':');
        if (key == "values") {
            io.values.clear();
            in.compact(io.values, &io.tensors);
        } else if (key == "shapes") {
            io.shapes.clear();
            in.compact(io.shapes, nullptr);
        } else if (key == "types") {
            io.types.clear();
            in.compact(io.types, nullptr);
        } else
            in.skip();
        if (in.consume('}'))
            return;
        in.expect(',');
    }
}

void applyAttr(Scanner& in, HostOp& op, const std::string& name, const json& v)
{
    auto asInt = [&]() -> int64_t {
        if (v.is_boolean())
            return v.get<bool>() ? 1 : 0;
        if (!v.is_number_integer())
            in.fail("attribute \"" + name + "\": expected an integer value");
        return v.get<int64_t>();
    };
    if (name == "rf_id")
        op.rfId = asInt();
    else if (name == "fw_parent")
        op.fwParent = asInt();
    else if (name == "seq_id")
        op.seqId = asInt();
    else if (name == "scope")
        op.scope = asInt();
    else if (name == "tid")
        op.tid = asInt();
    else if (name == "fw_tid")
        op.fwTid = asInt();
    else if (name == "op_schema") {
        if (!v.is_string())
            in.fail("attribute \"op_schema\": expected a string");
        op.opSchema = v.get<std::string>();
    } else
        op.attrs[name] = v;
}

void readAttrs(Scanner& in, HostOp& op)
{
    in.expect('[');
    if (in.consume(']'))
        return;
    while (true) {
        in.expect('{');
        std::string name;
        json value;
        if (!in.consume('}')) {
            while (true) {
                std::string storage;
                std::string_view key = in.key(storage);
                in.expect(':');
                if (key == "name")
                    name = in.peek() == '"' ? in.string() : (in.skip(), std::string());
                else if (key == "value") {
                    char c = in.peek();
                    if (c == '"')
                        value = in.string();
                    else if (c == '-' || std::isdigit(static_cast<unsigned char>(c)) != 0) {
                        int64_t v = 0;
                        value = in.number(v) ? json(v) : json(nullptr);
                    } else
                        value = in.tree();
                } else
                    in.skip();
                if (in.consume('}'))
                    break;
                in.expect(',');
            }
        }
        if (name.empty())
            in.fail("an attribute without a \"name\"");
        applyAttr(in, op, name, value);
        if (in.consume(']'))
            return;
        in.expect(',');
    }
}

// One node object; root nodes are counted, not kept.
void readNode(Scanner& in, HostTrace& trace)
{
    HostOp op;
    bool hasId = false;
    auto fail = [&](const std::string& problem) {
        in.fail("node " + std::to_string(trace.ops.size() + trace.rootNodes) +
                (hasId ? " (id " + std::to_string(op.id) + ")" : std::string()) + ": " + problem +
                "; the file is not a PyTorch execution trace this importer reads, or it was "
                "edited: recapture it with torch.profiler.ExecutionTraceObserver");
    };
    in.expect('{');
    if (!in.consume('}')) {
        while (true) {
            std::string storage;
            std::string_view key = in.key(storage);
            in.expect(':');
            char c = in.peek();
            if (key == "id") {
                op.id = in.integer(key);
                hasId = true;
            } else if (key == "name") {
                if (c != '"')
                    fail("\"name\" must be a string");
                op.name = in.string();
            } else if (key == "parent" || key == "ctrl_deps") {
                if (c == 'n')
                    in.skip();
                else
                    op.parent = in.integer(key);
            } else if (key == "rf_id")
                op.rfId = in.integer(key);
            else if (key == "fw_parent")
                op.fwParent = in.integer(key);
            else if (key == "seq_id")
                op.seqId = in.integer(key);
            else if (key == "scope")
                op.scope = in.integer(key);
            else if (key == "tid")
                op.tid = in.integer(key);
            else if (key == "fw_tid")
                op.fwTid = in.integer(key);
            else if (key == "op_schema" && c == '"')
                op.opSchema = in.string();
            else if ((key == "inputs" || key == "outputs") && c == '{')
                readIo(in, key == "inputs" ? op.inputs : op.outputs);
            else if (key == "inputs" || key == "outputs") {
                IoLists& io = key == "inputs" ? op.inputs : op.outputs;
                io.values.clear();
                in.compact(io.values, &io.tensors);
            } else if (key == "input_shapes" || key == "output_shapes") {
                std::string& out = key == "input_shapes" ? op.inputs.shapes : op.outputs.shapes;
                out.clear();
                in.compact(out, nullptr);
            } else if (key == "input_types" || key == "output_types") {
                std::string& out = key == "input_types" ? op.inputs.types : op.outputs.types;
                out.clear();
                in.compact(out, nullptr);
            } else if (key == "attrs" && c == '[')
                readAttrs(in, op);
            else
                in.skip();
            if (in.consume('}'))
                break;
            in.expect(',');
        }
    }
    if (!hasId)
        fail("\"id\": missing");
    trace.maxId = std::max(trace.maxId, op.id);
    if (isRootName(op.name)) {
        ++trace.rootNodes;
        return;
    }
    trace.ops.push_back(std::move(op));
}

void checkSchema(const std::string& schema, const std::string& file)
{
    std::string version = schema.substr(0, schema.find('-'));
    const std::vector<std::string>& known = knownHostSchemas();
    if (std::find(known.begin(), known.end(), version) != known.end())
        return;
    std::string list;
    for (const std::string& s : known)
        list += (list.empty() ? "" : ", ") + s;
    throw Error(file + ": \"schema\": \"" + schema +
                "\" is not a host-trace schema this importer knows (known: " + list +
                "); convert the trace with a PyTorch version that writes one of them, or report "
                "the new schema");
}

} // namespace

const std::vector<std::string>& knownHostSchemas()
{
    static const std::vector<std::string> schemas = {"1.0.1", "1.0.2", "1.0.3", "1.1.0", "1.1.1"};
    return schemas;
}

HostTrace parseHostTrace(const std::string& text, const std::string& file)
{
    std::size_t first = text.find_first_not_of(" \t\r\n");
    if (first == std::string::npos)
        throw Error(file + ": empty file; the trace was not written completely, recapture it");
    if (text[first] != '{')
        throw Error(file + ": not a JSON object (a Chakra protobuf trace? Those need no import: "
                           "`etsim run` and `etsim trace validate` read them)");
    HostTrace trace;
    trace.file = file;
    // Real traces hold 500 to 900 bytes of JSON per node.
    trace.ops.reserve(text.size() / 400);
    Scanner in(text, file);
    bool sawNodes = false;
    bool sawSchema = false;
    in.expect('{');
    if (!in.consume('}')) {
        while (true) {
            std::string key = in.string();
            in.expect(':');
            char c = in.peek();
            if (key == "schema") {
                if (c != '"')
                    throw Error(file + ": \"schema\": not a string; known schemas: 1.0.1, 1.0.2, "
                                       "1.0.3, 1.1.0, 1.1.1");
                trace.schema = in.string();
                sawSchema = true;
                checkSchema(trace.schema, file);
            } else if (key == "pid" && c != '"')
                trace.pid = in.integer(key);
            else if (key == "time" && c == '"')
                trace.time = in.string();
            else if (key == "start_ts" && c != '"')
                trace.startTs = in.integer(key);
            else if (key == "finish_ts" && c != '"')
                trace.finishTs = in.integer(key);
            else if (key == "nodes" && c == '[') {
                sawNodes = true;
                in.expect('[');
                if (!in.consume(']'))
                    while (true) {
                        readNode(in, trace);
                        if (in.consume(']'))
                            break;
                        in.expect(',');
                    }
            } else
                in.skip();
            if (in.consume('}'))
                break;
            in.expect(',');
        }
    }
    if (!in.atEnd())
        in.fail("text after the end of the trace object");
    if (!sawNodes)
        throw Error(file +
                    ": not a PyTorch host execution trace (no top-level \"nodes\"); a Kineto "
                    "trace goes after --kineto, a Chakra .et to `etsim run` directly");
    if (!sawSchema)
        throw Error(file +
                    ": \"schema\": missing; known schemas: 1.0.1, 1.0.2, 1.0.3, 1.1.0, 1.1.1");
    // Nodes are written when they finish (callees first): sort into call order by id.
    std::vector<std::size_t> order(trace.ops.size());
    for (std::size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return trace.ops[a].id < trace.ops[b].id;
    });
    std::vector<HostOp> sorted;
    sorted.reserve(order.size());
    for (std::size_t i : order)
        sorted.push_back(std::move(trace.ops[i]));
    trace.ops = std::move(sorted);
    for (std::size_t i = 1; i < trace.ops.size(); ++i)
        if (trace.ops[i].id == trace.ops[i - 1].id)
            throw Error(file + ": two nodes have id " + std::to_string(trace.ops[i].id) + " (\"" +
                        trace.ops[i - 1].name + "\" and \"" + trace.ops[i].name +
                        "\"); ids must be unique: the file was concatenated or edited");
    return trace;
}

HostTrace readHostTrace(const std::filesystem::path& file)
{
    return parseHostTrace(readTextFile(file), file.string());
}

namespace {

json parseList(const std::string& text, const HostOp& op)
{
    try {
        return json::parse(text);
    } catch (const json::exception& e) {
        throw Error("node " + std::to_string(op.id) + " \"" + op.name +
                    "\": its argument list is not valid JSON (" + e.what() +
                    "); the trace is corrupt, recapture it");
    }
}

} // namespace

json HostOp::inputValues() const
{
    return parseList(inputs.values, *this);
}

json HostOp::inputTypes() const
{
    return parseList(inputs.types, *this);
}

void collectTensors(const json& value, std::vector<Tensor>& out)
{
    if (!value.is_array())
        return;
    bool tuple = value.size() == 6 && value[5].is_string();
    for (std::size_t i = 0; tuple && i < 5; ++i)
        tuple = value[i].is_number_integer();
    if (tuple) {
        out.push_back({value[0].get<int64_t>(),
                       value[1].get<int64_t>(),
                       value[2].get<int64_t>(),
                       value[3].get<int64_t>(),
                       value[4].get<int64_t>(),
                       value[5].get<std::string>()});
        return;
    }
    for (const json& item : value)
        collectTensors(item, out);
}

} // namespace etsim::importers::pytorch
