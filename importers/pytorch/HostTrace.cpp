#include "importers/pytorch/HostTrace.h"

#include "importers/pytorch/JsonFile.h"
#include "kernel/Error.h"

#include <algorithm>
#include <string_view>

namespace etsim::importers::pytorch {

namespace {

using nlohmann::json;

bool isRootName(std::string_view name)
{
    return name.rfind("[pytorch|profiler|execution_graph|", 0) == 0 ||
           name.rfind("[pytorch|profiler|execution_trace|", 0) == 0;
}

class NodeReader {
public:
    NodeReader(const std::string& file, std::size_t index, json& node)
        : file(file), index(index), node(node)
    {
    }

    [[noreturn]] void fail(const std::string& key, const std::string& problem) const
    {
        std::string where = file + ": nodes[" + std::to_string(index) + "]";
        if (id)
            where += " (id " + std::to_string(*id) + ")";
        throw Error(where + ": \"" + key + "\": " + problem +
                    "; the file is not a PyTorch execution trace this importer reads, or it "
                    "was edited: recapture it with torch.profiler.ExecutionTraceObserver");
    }

    int64_t integer(const json& value, const std::string& key) const
    {
        if (value.is_number_integer())
            return value.get<int64_t>();
        if (value.is_boolean())
            return value.get<bool>() ? 1 : 0;
        fail(key, "expected an integer, found " + std::string(value.type_name()));
    }

    int64_t required(const std::string& key) const
    {
        auto it = node.find(key);
        if (it == node.end())
            fail(key, "missing");
        return integer(*it, key);
    }

    int64_t optional(const std::string& key, int64_t fallback) const
    {
        auto it = node.find(key);
        return it == node.end() || it->is_null() ? fallback : integer(*it, key);
    }

    std::string text(const std::string& key) const
    {
        auto it = node.find(key);
        if (it == node.end() || it->is_null())
            return {};
        if (!it->is_string())
            fail(key, "expected a string, found " + std::string(it->type_name()));
        return it->get<std::string>();
    }

    json list(const std::string& key)
    {
        auto it = node.find(key);
        if (it == node.end() || it->is_null())
            return json::array();
        if (!it->is_array())
            fail(key, "expected a list, found " + std::string(it->type_name()));
        return std::move(*it);
    }

    const std::string& file;
    std::size_t index;
    json& node;
    std::optional<int64_t> id;
};

// 1.0.1: flat keys on the node.
void readFlat(NodeReader& in, HostOp& op)
{
    op.parent = in.optional("parent", -1);
    op.rfId =
        in.node.contains("rf_id") ? std::optional<int64_t>(in.optional("rf_id", 0)) : std::nullopt;
    op.fwParent = in.optional("fw_parent", 0);
    op.seqId = in.optional("seq_id", -1);
    op.scope = in.optional("scope", 0);
    op.tid = in.optional("tid", 0);
    op.fwTid = in.optional("fw_tid", 0);
    op.opSchema = in.text("op_schema");
    op.inputs = in.list("inputs");
    op.inputShapes = in.list("input_shapes");
    op.inputTypes = in.list("input_types");
    op.outputs = in.list("outputs");
    op.outputShapes = in.list("output_shapes");
    op.outputTypes = in.list("output_types");
}

void readIo(NodeReader& in, const std::string& key, json& values, json& shapes, json& types)
{
    auto it = in.node.find(key);
    if (it == in.node.end() || it->is_null())
        return;
    if (!it->is_object())
        in.fail(key,
                "expected an object {values, shapes, types}, found " +
                    std::string(it->type_name()));
    json& io = *it;
    auto take = [&](const char* name, json& out) {
        auto found = io.find(name);
        if (found == io.end() || found->is_null())
            return;
        if (!found->is_array())
            in.fail(key + "." + name, "expected a list, found " + std::string(found->type_name()));
        out = std::move(*found);
    };
    take("values", values);
    take("shapes", shapes);
    take("types", types);
}

// 1.0.2 and later: ctrl_deps, nested inputs/outputs and an attribute list.
void readNested(NodeReader& in, HostOp& op)
{
    op.parent = in.optional("ctrl_deps", -1);
    readIo(in, "inputs", op.inputs, op.inputShapes, op.inputTypes);
    readIo(in, "outputs", op.outputs, op.outputShapes, op.outputTypes);
    auto attrs = in.node.find("attrs");
    if (attrs == in.node.end() || attrs->is_null())
        return;
    if (!attrs->is_array())
        in.fail("attrs", "expected a list of {name, type, value}");
    for (std::size_t a = 0; a < attrs->size(); ++a) {
        const json& attr = (*attrs)[a];
        std::string key = "attrs[" + std::to_string(a) + "]";
        if (!attr.is_object() || !attr.contains("name") || !attr["name"].is_string() ||
            !attr.contains("value"))
            in.fail(key, "expected an object with \"name\" and \"value\"");
        const std::string& name = attr["name"].get_ref<const std::string&>();
        const json& value = attr["value"];
        if (name == "rf_id")
            op.rfId = in.integer(value, key + ".value");
        else if (name == "fw_parent")
            op.fwParent = in.integer(value, key + ".value");
        else if (name == "seq_id")
            op.seqId = in.integer(value, key + ".value");
        else if (name == "scope")
            op.scope = in.integer(value, key + ".value");
        else if (name == "tid")
            op.tid = in.integer(value, key + ".value");
        else if (name == "fw_tid")
            op.fwTid = in.integer(value, key + ".value");
        else if (name == "op_schema") {
            if (!value.is_string())
                in.fail(key + ".value", "op_schema must be a string");
            op.opSchema = value.get<std::string>();
        } else
            op.attrs[name] = value;
    }
}

} // namespace

const std::vector<std::string>& knownHostSchemas()
{
    static const std::vector<std::string> schemas = {"1.0.1", "1.0.2", "1.0.3", "1.1.0", "1.1.1"};
    return schemas;
}

HostTrace parseHostTrace(json&& document, const std::string& file)
{
    if (!document.is_object() || !document.contains("nodes"))
        throw Error(file +
                    ": not a PyTorch host execution trace (no top-level \"nodes\"); a Kineto "
                    "trace goes after --kineto, a Chakra .et to `etsim run` directly");
    HostTrace trace;
    trace.file = file;
    auto schema = document.find("schema");
    if (schema == document.end() || !schema->is_string())
        throw Error(file + ": \"schema\": missing or not a string; known schemas: 1.0.1, 1.0.2, "
                           "1.0.3, 1.1.0, 1.1.1");
    trace.schema = schema->get<std::string>();
    std::string version = trace.schema.substr(0, trace.schema.find('-'));
    const std::vector<std::string>& known = knownHostSchemas();
    if (std::find(known.begin(), known.end(), version) == known.end()) {
        std::string list;
        for (const std::string& s : known)
            list += (list.empty() ? "" : ", ") + s;
        throw Error(file + ": \"schema\": \"" + trace.schema +
                    "\" is not a host-trace schema this importer knows (known: " + list +
                    "); convert the trace with a PyTorch version that writes one of them, or "
                    "report the new schema");
    }
    auto number = [&](const char* key) -> int64_t {
        auto it = document.find(key);
        return it != document.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
    };
    trace.pid = document.contains("pid") && document["pid"].is_number_integer()
                    ? document["pid"].get<int64_t>()
                    : -1;
    if (document.contains("time") && document["time"].is_string())
        trace.time = document["time"].get<std::string>();
    trace.startTs = number("start_ts");
    trace.finishTs = number("finish_ts");

    json& nodes = document["nodes"];
    if (!nodes.is_array())
        throw Error(file + ": \"nodes\": expected a list of nodes");
    trace.ops.reserve(nodes.size());
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        json& node = nodes[i];
        if (!node.is_object())
            throw Error(file + ": nodes[" + std::to_string(i) + "]: expected an object");
        NodeReader in(file, i, node);
        HostOp op;
        op.id = in.required("id");
        in.id = op.id;
        op.name = in.text("name");
        trace.maxId = std::max(trace.maxId, op.id);
        if (isRootName(op.name)) {
            ++trace.rootNodes;
            continue;
        }
        auto inputs = node.find("inputs");
        bool nested = node.contains("ctrl_deps") || node.contains("attrs") ||
                      (inputs != node.end() && inputs->is_object());
        if (nested)
            readNested(in, op);
        else
            readFlat(in, op);
        trace.ops.push_back(std::move(op));
    }
    std::sort(trace.ops.begin(), trace.ops.end(), [](const HostOp& a, const HostOp& b) {
        return a.id < b.id;
    });
    for (std::size_t i = 1; i < trace.ops.size(); ++i)
        if (trace.ops[i].id == trace.ops[i - 1].id)
            throw Error(file + ": two nodes have id " + std::to_string(trace.ops[i].id) + " (\"" +
                        trace.ops[i - 1].name + "\" and \"" + trace.ops[i].name +
                        "\"); ids must be unique: the file was concatenated or edited");
    return trace;
}

HostTrace readHostTrace(const std::filesystem::path& file)
{
    return parseHostTrace(readJsonFile(file), file.string());
}

void collectTensors(const json& value, std::vector<Tensor>& out)
{
    if (!value.is_array())
        return;
    bool tuple = value.size() == 6 && value[5].is_string();
    for (std::size_t i = 0; tuple && i < 5; ++i)
        tuple = value[i].is_number_integer();
    if (tuple) {
        Tensor t;
        t.id = value[0].get<int64_t>();
        t.storage = value[1].get<int64_t>();
        t.offset = value[2].get<int64_t>();
        t.numel = value[3].get<int64_t>();
        t.itemsize = value[4].get<int64_t>();
        t.device = value[5].get<std::string>();
        out.push_back(std::move(t));
        return;
    }
    for (const json& item : value)
        collectTensors(item, out);
}

std::vector<Tensor> tensorsOf(const json& values, const json& types)
{
    std::vector<Tensor> out;
    if (!values.is_array())
        return out;
    for (std::size_t i = 0; i < values.size(); ++i) {
        bool tensorType =
            i < types.size() && types[i].is_string() &&
            types[i].get_ref<const std::string&>().find("Tensor") != std::string::npos;
        if (tensorType)
            collectTensors(values[i], out);
    }
    return out;
}

} // namespace etsim::importers::pytorch
