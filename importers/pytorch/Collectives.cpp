#include "importers/pytorch/Collectives.h"

#include "kernel/Error.h"
#include "kernel/InputFile.h"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace etsim::importers::pytorch {

namespace {

using nlohmann::json;

struct TypeName {
    const char* name;
    CommKind kind;
    et::CollectiveType type;
};

// record_param_comms names as c10d's ProcessGroupNCCL and ProcessGroupGloo write them.
constexpr TypeName commNames[] = {
    {"allreduce", CommKind::Collective, et::CollectiveType::AllReduce},
    {"all_reduce", CommKind::Collective, et::CollectiveType::AllReduce},
    {"allreduce_coalesced", CommKind::Collective, et::CollectiveType::AllReduce},
    {"allgather", CommKind::Collective, et::CollectiveType::AllGather},
    {"all_gather", CommKind::Collective, et::CollectiveType::AllGather},
    {"_allgather_base", CommKind::Collective, et::CollectiveType::AllGather},
    {"allgather_into_tensor_coalesced", CommKind::Collective, et::CollectiveType::AllGather},
    {"allgather_coalesced", CommKind::Collective, et::CollectiveType::AllGather},
    {"reduce_scatter", CommKind::Collective, et::CollectiveType::ReduceScatter},
    {"_reduce_scatter_base", CommKind::Collective, et::CollectiveType::ReduceScatter},
    {"reduce_scatter_tensor_coalesced", CommKind::Collective, et::CollectiveType::ReduceScatter},
    {"all_to_all", CommKind::Collective, et::CollectiveType::AllToAll},
    {"all_to_allv", CommKind::Collective, et::CollectiveType::AllToAll},
    {"alltoall", CommKind::Collective, et::CollectiveType::AllToAll},
    {"alltoall_base", CommKind::Collective, et::CollectiveType::AllToAll},
    {"broadcast", CommKind::Collective, et::CollectiveType::Broadcast},
    {"reduce", CommKind::Collective, et::CollectiveType::Reduce},
    {"gather", CommKind::Collective, et::CollectiveType::Gather},
    {"scatter", CommKind::Collective, et::CollectiveType::Scatter},
    {"barrier", CommKind::Collective, et::CollectiveType::Barrier},
    {"send", CommKind::Send, et::CollectiveType::AllReduce},
    {"recv", CommKind::Recv, et::CollectiveType::AllReduce},
    {"recvAnysource", CommKind::Recv, et::CollectiveType::AllReduce},
};

bool rooted(et::CollectiveType type)
{
    return type == et::CollectiveType::Broadcast || type == et::CollectiveType::Reduce ||
           type == et::CollectiveType::Gather || type == et::CollectiveType::Scatter;
}

[[noreturn]] void fail(const HostTrace& trace, const HostOp& op, const std::string& problem)
{
    throw Error(trace.file + ": node " + std::to_string(op.id) + " \"" + op.name +
                "\": " + problem +
                "; the record does not have the layout PyTorch writes (tensors, seq, process "
                "group, rank, collective name, in_splits, out_splits, ...)");
}

const json* attr(const HostOp& op, const char* name)
{
    auto it = op.attrs.find(name);
    return it == op.attrs.end() ? nullptr : &*it;
}

std::optional<int64_t> integerAt(const json& values, std::size_t index)
{
    if (index < values.size() && values[index].is_number_integer())
        return values[index].get<int64_t>();
    return std::nullopt;
}

// The argument names of an operator schema "ns::op(Type name, Type name=default, ...) -> ...".
std::vector<std::string> argumentNames(const std::string& schema)
{
    std::vector<std::string> names;
    std::size_t open = schema.find('(');
    if (open == std::string::npos)
        return names;
    int depth = 0;
    std::string current;
    for (std::size_t i = open + 1; i < schema.size(); ++i) {
        char c = schema[i];
        if ((c == ',' || c == ')') && depth == 0) {
            std::string decl = current.substr(0, current.find('='));
            while (!decl.empty() && decl.back() == ' ')
                decl.pop_back();
            std::size_t space = decl.rfind(' ');
            if (decl != "*")
                names.push_back(space == std::string::npos ? decl : decl.substr(space + 1));
            current.clear();
            if (c == ')')
                break;
            continue;
        }
        if (c == '(' || c == '[')
            ++depth;
        if (c == ')' || c == ']')
            --depth;
        current += c;
    }
    return names;
}

} // namespace

bool dataArgument(const HostOp& record)
{
    json types = record.inputTypes();
    return !types.empty() && types[0].is_string() &&
           types[0].get_ref<const std::string&>().find("Tensor") != std::string::npos;
}

int64_t dtypeBytes(const std::string& dtype)
{
    static const std::map<std::string, int64_t> sizes = {
        {"Float", 4},
        {"Double", 8},
        {"Half", 2},
        {"BFloat16", 2},
        {"Long", 8},
        {"Int", 4},
        {"Short", 2},
        {"Char", 1},
        {"Byte", 1},
        {"Bool", 1},
        {"ComplexFloat", 8},
        {"ComplexDouble", 16},
        {"ComplexHalf", 4},
        {"Float8_e4m3fn", 1},
        {"Float8_e5m2", 1},
        {"Float8_e4m3fnuz", 1},
        {"Float8_e5m2fnuz", 1},
        {"UInt16", 2},
        {"UInt32", 4},
        {"UInt64", 8},
    };
    auto it = sizes.find(dtype);
    return it == sizes.end() ? 0 : it->second;
}

GroupTable readGroupTable(const HostTrace& trace)
{
    GroupTable table;
    for (const HostOp& op : trace.ops) {
        if (op.name != "## process_group:init ##")
            continue;
        json values = op.inputValues();
        if (values.empty() || !values[0].is_string())
            fail(trace, op, "inputs.values[0] must be the process-group list as a JSON string");
        const std::string& text = values[0].get_ref<const std::string&>();
        json list;
        try {
            list = parseJson(text,
                             trace.file + ": node " + std::to_string(op.id) + " \"" + op.name +
                                 "\": the process-group list");
        } catch (const JsonSyntaxError& e) {
            fail(
                trace, op, "the process-group list is not valid JSON (" + e.libraryMessage() + ")");
        }
        if (!list.is_array())
            fail(trace, op, "the process-group list is not a JSON list");
        table.initJson = text;
        for (const json& group : list) {
            if (!group.is_object() || !group.contains("pg_name"))
                fail(trace, op, "a process-group entry has no \"pg_name\"");
            const json& name = group["pg_name"];
            std::string pg = name.is_string() ? name.get<std::string>() : name.dump();
            GroupTable::Group entry;
            if (group.contains("ranks") && group["ranks"].is_array())
                for (const json& r : group["ranks"])
                    if (r.is_number_integer())
                        entry.ranks.push_back(r.get<int64_t>());
            if (group.contains("group_size") && group["group_size"].is_number_integer())
                entry.size = group["group_size"].get<int64_t>();
            if (group.contains("pg_desc") && group["pg_desc"].is_string())
                entry.description = group["pg_desc"].get<std::string>();
            if (group.contains("backend_id") && group["backend_id"].is_number_integer())
                table.byPointer[group["backend_id"].get<int64_t>()] = pg;
            table.groups[pg] = std::move(entry);
        }
    }
    return table;
}

CommParse parseCommRecord(const HostTrace& trace,
                          std::size_t index,
                          const GroupTable& groups,
                          const std::string& pointerGroup)
{
    const HostOp& op = trace.ops[index];
    const json values = op.inputValues();
    // The tensor argument comes first, except in records without data (wait, barrier).
    std::size_t base = dataArgument(op) ? 1 : 0;
    CommParse parse;
    std::string name;
    if (const json* a = attr(op, "collective_name"); a && a->is_string())
        name = a->get<std::string>();
    else if (base + 3 < values.size() && values[base + 3].is_string())
        name = values[base + 3].get<std::string>();
    else
        fail(trace,
             op,
             "no collective name (attribute collective_name or argument " +
                 std::to_string(base + 3) + ")");
    if (name == "wait") {
        parse.skipped = "wait";
        return parse;
    }
    const TypeName* known = nullptr;
    for (const TypeName& t : commNames)
        if (name == t.name)
            known = &t;
    if (known == nullptr) {
        parse.skipped = "unknown collective name \"" + name + "\"";
        return parse;
    }
    CommRecord r;
    r.op = index;
    r.collectiveName = name;
    r.kind = known->kind;
    r.type = known->type;
    std::optional<int64_t> seq = integerAt(values, base);
    if (!seq)
        fail(
            trace, op, "argument " + std::to_string(base) + " (sequence number) is not an integer");
    r.seq = *seq;

    // Process group: 1.1.x names it (attribute pg_name, or a [name, desc] pair); 1.0.x gives a
    // pointer, resolved through the init node's backend_id when there is one.
    const json* pgAttr = attr(op, "pg_name");
    const json* pgValue = base + 1 < values.size() ? &values[base + 1] : nullptr;
    if (pgAttr && pgAttr->is_string())
        r.group = pgAttr->get<std::string>();
    else if (pgValue && pgValue->is_array() && !pgValue->empty() && (*pgValue)[0].is_string())
        r.group = (*pgValue)[0].get<std::string>();
    else if (pgValue && pgValue->is_number_integer()) {
        auto it = groups.byPointer.find(pgValue->get<int64_t>());
        r.group = it != groups.byPointer.end() ? it->second : pointerGroup;
    }
    if (r.group.empty())
        r.group = "0";

    int64_t rankStart = 0;
    int64_t rankStride = 1;
    std::size_t extra = values.size() > base + 6 ? values.size() - (base + 6) : 0;
    if (extra == 1)
        r.groupSize = integerAt(values, base + 6).value_or(-1);
    if (extra >= 3) {
        rankStart = integerAt(values, base + 6).value_or(0);
        rankStride = integerAt(values, base + 7).value_or(1);
        r.groupSize = integerAt(values, base + 8).value_or(-1);
    }
    if (const json* a = attr(op, "global_rank_start"); a && a->is_number_integer())
        rankStart = a->get<int64_t>();
    if (const json* a = attr(op, "global_rank_stride"); a && a->is_number_integer())
        rankStride = a->get<int64_t>();
    if (const json* a = attr(op, "pg_size"); a && a->is_number_integer())
        r.groupSize = a->get<int64_t>();
    if (r.groupSize < 0) {
        auto g = groups.groups.find(r.group);
        if (g != groups.groups.end())
            r.groupSize = g->second.size;
    }
    std::optional<int64_t> rankArg = integerAt(values, base + 2);
    r.rankArgument = rankArg ? rankStart + *rankArg * rankStride : -1;

    const json* nelems = attr(op, "in_msg_nelems");
    const json* dtype = attr(op, "dtype");
    if (nelems && nelems->is_number_integer() && dtype && dtype->is_string() &&
        dtypeBytes(dtype->get<std::string>()) > 0) {
        r.bytes = nelems->get<int64_t>() * dtypeBytes(dtype->get<std::string>());
    } else if (base == 1) {
        std::vector<Tensor> tensors;
        collectTensors(values[0], tensors);
        for (const Tensor& t : tensors)
            r.bytes += t.bytes();
    }
    if (r.kind != CommKind::Collective) {
        r.peer = r.rankArgument;
        // The tag is an argument of the c10d::send / c10d::recv_ caller.
        auto caller = std::lower_bound(trace.ops.begin(),
                                       trace.ops.end(),
                                       op.parent,
                                       [](const HostOp& o, int64_t id) { return o.id < id; });
        if (caller != trace.ops.end() && caller->id == op.parent) {
            std::vector<std::string> names = argumentNames(caller->opSchema);
            for (std::size_t a = 0; a < names.size(); ++a)
                if (names[a] == "tag")
                    r.tag = integerAt(caller->inputValues(), a).value_or(0);
        }
    }
    parse.record = r;
    return parse;
}

int64_t rankFromRecords(const std::vector<CommRecord>& records)
{
    for (const CommRecord& r : records)
        if (r.kind == CommKind::Collective && !rooted(r.type) && r.rankArgument >= 0)
            return r.rankArgument;
    return -1;
}

} // namespace etsim::importers::pytorch
