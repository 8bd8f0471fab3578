// The legacy feeder's JSON form: {"workload_graph": [{"Id": .., "Name": .., ..}, ..]}.
#include "et_driver/TraceCodec.h"
#include "et_driver/TraceJsonDetail.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <vector>

namespace etsim::et::jsondetail {

namespace pb = ChakraProtoMsg;

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

namespace {

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

constexpr std::array<const char*, 4> legacyTopKeys = {
    "workload_graph", "workload_name", "ngpus", "soc"};

} // namespace

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

bool isLegacyTopKey(const std::string& key)
{
    return std::find(legacyTopKeys.begin(), legacyTopKeys.end(), key) != legacyTopKeys.end();
}

} // namespace etsim::et::jsondetail
