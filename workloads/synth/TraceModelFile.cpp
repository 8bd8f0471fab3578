// A TraceModel's file: JSON (docs/synth.md), checked key by key as it is read.
#include "et_driver/OperatorInfo.h"
#include "kernel/AtomicFile.h"
#include "kernel/Error.h"
#include "kernel/InputFile.h"
#include "workloads/synth/TraceModel.h"
#include "workloads/synth/TraceModelDetail.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

namespace etsim::workloads::synth {

namespace fs = std::filesystem;
using nlohmann::json;
using nlohmann::ordered_json;
using namespace detail;

namespace {

ordered_json quantilesToJson(const Quantiles& quantiles)
{
    ordered_json out;
    out["count"] = quantiles.count();
    out["quantiles"] = quantiles.values();
    if (!quantiles.means().empty())
        out["means"] = quantiles.means();
    return out;
}

ordered_json categoricalToJson(const Categorical& counts)
{
    ordered_json out = ordered_json::object();
    for (const auto& [name, count] : counts)
        out[name] = count;
    return out;
}

// Checks as it reads; every failure names the file, the key path and the fix.
class Reader {
public:
    explicit Reader(std::string where) : where(std::move(where)) {}

    [[noreturn]] void fail(const std::string& path, const std::string& problem) const
    {
        throw Error(where + ": " + path + ": " + problem);
    }

    const json& member(const json& object,
                       const std::string& path,
                       const std::string& key,
                       json::value_t type) const
    {
        auto found = object.find(key);
        std::string at = path.empty() ? key : path + "." + key;
        if (found == object.end())
            fail(at, "missing; " + expected(type) + " is required (see docs/synth.md)");
        check(*found, at, type);
        return *found;
    }

    void check(const json& value, const std::string& path, json::value_t type) const
    {
        bool ok = value.type() == type ||
                  (type == json::value_t::number_unsigned && value.is_number_integer() &&
                   value.get<int64_t>() >= 0) ||
                  (type == json::value_t::number_float && value.is_number());
        if (!ok)
            fail(path, "is " + std::string(value.type_name()) + ", expected " + expected(type));
    }

    uint64_t count(const json& value, const std::string& path, uint64_t minimum) const
    {
        check(value, path, json::value_t::number_unsigned);
        auto result = value.get<uint64_t>();
        if (result < minimum)
            fail(path,
                 "is " + std::to_string(result) + ", must be at least " + std::to_string(minimum));
        return result;
    }

    Quantiles quantiles(const json& value, const std::string& path) const
    {
        check(value, path, json::value_t::object);
        uint64_t n =
            count(member(value, path, "count", json::value_t::number_unsigned), path + ".count", 1);
        const json& list = member(value, path, "quantiles", json::value_t::array);
        if (list.size() != static_cast<std::size_t>(Quantiles::points))
            fail(path + ".quantiles",
                 "has " + std::to_string(list.size()) + " values, expected " +
                     std::to_string(Quantiles::points) + " (the quantiles at 0, 1/32, ..., 1)");
        std::vector<double> values;
        for (std::size_t i = 0; i < list.size(); ++i) {
            std::string at = path + ".quantiles[" + std::to_string(i) + "]";
            check(list[i], at, json::value_t::number_float);
            double v = list[i].get<double>();
            if (!std::isfinite(v) || v < 0)
                fail(at, "is " + list[i].dump() + ", must be a finite number >= 0");
            if (!values.empty() && v < values.back())
                fail(at, "is below the quantile before it; quantiles must not decrease");
            values.push_back(v);
        }
        Quantiles result = Quantiles::fromValues(n, values);
        if (value.contains("means")) {
            const json& means = value["means"];
            check(means, path + ".means", json::value_t::array);
            if (means.size() != static_cast<std::size_t>(Quantiles::bins))
                fail(path + ".means",
                     "has " + std::to_string(means.size()) + " values, expected " +
                         std::to_string(Quantiles::bins) + " (the mean of each bin)");
            std::vector<double> binMeans;
            for (std::size_t b = 0; b < means.size(); ++b) {
                std::string at = path + ".means[" + std::to_string(b) + "]";
                check(means[b], at, json::value_t::number_float);
                double m = means[b].get<double>();
                if (!std::isfinite(m) || m < values[b] || m > values[b + 1])
                    fail(at,
                         "is " + means[b].dump() + ", must lie between quantiles[" +
                             std::to_string(b) + "] and quantiles[" + std::to_string(b + 1) + "]");
                binMeans.push_back(m);
            }
            result.setMeans(std::move(binMeans));
        }
        return result;
    }

    Categorical categorical(const json& value,
                            const std::string& path,
                            const std::function<void(const std::string&)>& checkKey) const
    {
        check(value, path, json::value_t::object);
        Categorical counts;
        for (const auto& [key, entry] : value.items()) {
            std::string at = path + "." + key;
            if (checkKey)
                checkKey(key);
            counts[key] = count(entry, at, 0);
        }
        return counts;
    }

private:
    static std::string expected(json::value_t type)
    {
        switch (type) {
        case json::value_t::object:
            return "an object";
        case json::value_t::array:
            return "an array";
        case json::value_t::string:
            return "a string";
        case json::value_t::number_unsigned:
            return "an integer >= 0";
        case json::value_t::number_integer:
            return "an integer";
        default:
            return "a number";
        }
    }

    std::string where;
};

bool isSignedOffset(const std::string& text)
{
    if (text.size() < 2 || (text[0] != '+' && text[0] != '-'))
        return false;
    for (std::size_t i = 1; i < text.size(); ++i)
        if (!std::isdigit(static_cast<unsigned char>(text[i])))
            return false;
    return text.find_first_not_of("+-0") != std::string::npos && text.size() <= 11;
}

bool isGroupShape(const std::string& text)
{
    if (text == "all")
        return true;
    std::size_t x = text.find('x');
    if (x == std::string::npos || x == 0 || x + 1 == text.size() || text.size() > 21)
        return false;
    for (std::size_t i = 0; i < text.size(); ++i)
        if (i != x && !std::isdigit(static_cast<unsigned char>(text[i])))
            return false;
    return std::stoull(text.substr(0, x)) >= 1 && std::stoull(text.substr(x + 1)) >= 1;
}

// A count key "0".."max" (dependencies or tensors per node).
bool isSmallCount(const std::string& key, uint64_t max)
{
    return !key.empty() && key.size() <= 3 &&
           key.find_first_not_of("0123456789") == std::string::npos && std::stoull(key) <= max;
}

// kinds.<kind>.tensors: tensors per node and where each input was last seen.
void readTensors(const Reader& in,
                 const json& value,
                 const std::string& path,
                 const std::string& kind,
                 KindStats& stats)
{
    in.check(value, path, json::value_t::object);
    if (kind.rfind("comp.", 0) != 0 && kind != "host" && kind != "mem_load" && kind != "mem_store")
        in.fail(path, "is only for compute and memory kinds (comp.*, host, mem_load, mem_store)");
    auto perNode = [&](const char* key) {
        std::string at = path + "." + key;
        Categorical counts = in.categorical(
            in.member(value, path, key, json::value_t::object), at, [&](const std::string& n) {
                if (!isSmallCount(n, maxTensorCount))
                    in.fail(at + "." + n,
                            "must be a tensor count 0.." + std::to_string(maxTensorCount));
            });
        if (total(counts) > stats.count)
            in.fail(at, "counts more nodes than the kind's count " + std::to_string(stats.count));
        return counts;
    };
    stats.tensorInputs = perNode("inputs");
    stats.tensorOutputs = perNode("outputs");
    if (total(stats.tensorInputs) != total(stats.tensorOutputs))
        in.fail(path + ".outputs",
                "counts " + std::to_string(total(stats.tensorOutputs)) +
                    " nodes but inputs counts " + std::to_string(total(stats.tensorInputs)) +
                    "; both count the nodes that name tensors");
    uint64_t inputs = 0;
    for (const auto& [n, nodes] : stats.tensorInputs)
        inputs += std::stoull(n) * nodes;
    const std::string at = path + ".source";
    uint64_t reused = 0;
    stats.inputSources = in.categorical(
        in.member(value, path, "source", json::value_t::object), at, [&](const std::string& key) {
            if (sourceKey(key).first < 0)
                in.fail(at + "." + key,
                        "must be \"<input position 0.." + std::to_string(maxTensorCount - 1) +
                            ">:<fresh, output or input>\", e.g. \"0:output\"");
        });
    for (const auto& [key, count] : stats.inputSources)
        if (sourceKey(key).second != freshSource)
            reused += count;
    if (total(stats.inputSources) > inputs)
        in.fail(at,
                "counts " + std::to_string(total(stats.inputSources)) + " inputs, more than the " +
                    std::to_string(inputs) + " that inputs gives");
    if (value.contains("distance")) {
        stats.reuseDistance = in.quantiles(value["distance"], path + ".distance");
        if (stats.reuseDistance.values().front() < 1)
            in.fail(path + ".distance.quantiles[0]",
                    "is below 1; 1 is the tensor-naming node just before");
    }
    if (reused > 0 && stats.reuseDistance.empty())
        in.fail(path + ".distance",
                "missing, but source has reused inputs; give the distance quantiles");
}

} // namespace

ordered_json modelToJson(const TraceModel& model)
{
    ordered_json out;
    out["format"] = modelFormat;
    out["version"] = modelVersion;
    out["order"] = model.order;
    ordered_json& source = out["source"];
    source["trace_sets"] = model.source.traceSets;
    source["ranks"] = model.source.ranks;
    source["nodes"] = model.source.nodes;
    source["ignored_nodes"] = model.source.ignoredNodes;
    source["max_ranks"] = model.source.maxRanks;
    ordered_json& kinds = out["kinds"];
    kinds = ordered_json::object();
    for (const auto& [name, stats] : model.kinds) {
        ordered_json& kind = kinds[name];
        kind["count"] = stats.count;
        for (std::size_t q = 0; q < quantityCount; ++q)
            if (!stats.quantities[q].empty())
                kind[quantityName(static_cast<Quantity>(q))] = quantilesToJson(stats.quantities[q]);
        if (!stats.dtypes.empty())
            kind["dtype"] = categoricalToJson(stats.dtypes);
        kind["deps"]["count"] = categoricalToJson(stats.depCounts);
        if (!stats.depTargets.empty())
            kind["deps"]["target"] = categoricalToJson(stats.depTargets);
        if (!stats.depDistance.empty())
            kind["deps"]["distance"] = quantilesToJson(stats.depDistance);
        if (!stats.groups.empty())
            kind["group"] = categoricalToJson(stats.groups);
        if (!stats.groupMeanSize.empty()) {
            ordered_json& sizes = kind["group_mean_size"];
            for (const auto& [shape, bytes] : stats.groupMeanSize)
                sizes[shape] = bytes;
        }
        if (!stats.gemmClasses.empty())
            kind["gemm_class"] = categoricalToJson(stats.gemmClasses);
        if (!stats.peerOffsets.empty())
            kind["peer_offset"] = categoricalToJson(stats.peerOffsets);
        if (!stats.tensorInputs.empty()) {
            ordered_json& tensors = kind["tensors"];
            tensors["inputs"] = categoricalToJson(stats.tensorInputs);
            tensors["outputs"] = categoricalToJson(stats.tensorOutputs);
            tensors["source"] = categoricalToJson(stats.inputSources);
            if (!stats.reuseDistance.empty())
                tensors["distance"] = quantilesToJson(stats.reuseDistance);
        }
    }
    ordered_json& ngrams = out["ngrams"];
    ngrams = ordered_json::object();
    for (const auto& [context, next] : model.ngrams)
        ngrams[context] = categoricalToJson(next);
    return out;
}

TraceModel modelFromJson(const json& root, const std::string& where)
{
    Reader in(where);
    in.check(root, "(top level)", json::value_t::object);
    const json& format = in.member(root, "", "format", json::value_t::string);
    if (format.get<std::string>() != modelFormat)
        in.fail("format",
                "is \"" + format.get<std::string>() + "\", expected \"" + modelFormat +
                    "\" (write models with etsim gen learn)");
    uint64_t version =
        in.count(in.member(root, "", "version", json::value_t::number_unsigned), "version", 1);
    if (version != static_cast<uint64_t>(modelVersion))
        in.fail("version",
                "is " + std::to_string(version) + "; this etsim reads version " +
                    std::to_string(modelVersion) + " (learn the model again with this etsim)");

    TraceModel model;
    uint64_t order =
        in.count(in.member(root, "", "order", json::value_t::number_unsigned), "order", 1);
    if (order > static_cast<uint64_t>(maxOrder))
        in.fail("order", "is " + std::to_string(order) + ", use 1.." + std::to_string(maxOrder));
    model.order = static_cast<int>(order);

    const json& source = in.member(root, "", "source", json::value_t::object);
    auto sourceCount = [&](const char* key) {
        return in.count(in.member(source, "source", key, json::value_t::number_unsigned),
                        std::string("source.") + key,
                        0);
    };
    model.source.traceSets = static_cast<uint32_t>(sourceCount("trace_sets"));
    model.source.ranks = static_cast<uint32_t>(sourceCount("ranks"));
    model.source.nodes = sourceCount("nodes");
    model.source.ignoredNodes = sourceCount("ignored_nodes");
    model.source.maxRanks = static_cast<uint32_t>(sourceCount("max_ranks"));
    if (model.source.ranks == 0)
        in.fail("source.ranks", "is 0; a model is learned from at least one rank");

    const json& kinds = in.member(root, "", "kinds", json::value_t::object);
    if (kinds.empty())
        in.fail("kinds", "is empty; a model describes at least one node kind");
    for (const auto& [name, entry] : kinds.items()) {
        std::string path = "kinds." + name;
        if (!isKnownKind(name))
            in.fail(path,
                    "unknown node kind; use comp.<op kind>, host, mem_load, mem_store, send, "
                    "recv or coll.<collective> (docs/synth.md)");
        in.check(entry, path, json::value_t::object);
        KindStats& stats = model.kinds[name];
        stats.count = in.count(
            in.member(entry, path, "count", json::value_t::number_unsigned), path + ".count", 1);
        for (std::size_t q = 0; q < quantityCount; ++q) {
            const char* key = quantityName(static_cast<Quantity>(q));
            if (entry.contains(key)) {
                stats.quantities[q] = in.quantiles(entry[key], path + "." + key);
                if (stats.quantities[q].count() > stats.count)
                    in.fail(path + "." + key + ".count",
                            "is above the kind's count " + std::to_string(stats.count));
            }
        }
        if (entry.contains("dtype"))
            stats.dtypes = in.categorical(entry["dtype"], path + ".dtype", [&](const auto& key) {
                if (!et::dataTypeFromName(key))
                    in.fail(path + ".dtype." + key,
                            "unknown element type; use fp64, fp32, tf32, bf16, fp16, fp8 or int8");
            });
        const json& deps = in.member(entry, path, "deps", json::value_t::object);
        stats.depCounts = in.categorical(
            in.member(deps, path + ".deps", "count", json::value_t::object),
            path + ".deps.count",
            [&](const std::string& key) {
                if (!isSmallCount(key, maxDepCount))
                    in.fail(path + ".deps.count." + key,
                            "must be a dependency count 0.." + std::to_string(maxDepCount));
            });
        bool anyDeps = false;
        for (const auto& [count, nodes] : stats.depCounts)
            anyDeps = anyDeps || (nodes > 0 && count != "0");
        if (deps.contains("target"))
            stats.depTargets = in.categorical(deps["target"], path + ".deps.target", nullptr);
        if (deps.contains("distance")) {
            stats.depDistance = in.quantiles(deps["distance"], path + ".deps.distance");
            if (stats.depDistance.values().front() < 1)
                in.fail(path + ".deps.distance.quantiles[0]",
                        "is below 1; 1 is the latest earlier node of the target's kind");
        }
        uint64_t byKind = total(stats.depTargets);
        if (auto previous = stats.depTargets.find(previousTarget);
            previous != stats.depTargets.end())
            byKind -= previous->second;
        if (anyDeps && total(stats.depTargets) == 0)
            in.fail(path + ".deps.target",
                    "missing, but deps.count has nodes with dependencies; give it");
        if (byKind > 0 && stats.depDistance.empty())
            in.fail(path + ".deps.distance",
                    "missing, but deps.target names kinds; give the distance quantiles");
        if (entry.contains("group"))
            stats.groups = in.categorical(entry["group"], path + ".group", [&](const auto& key) {
                if (!isGroupShape(key))
                    in.fail(path + ".group." + key,
                            "must be \"all\" or \"<size>x<stride>\" such as \"4x1\"");
            });
        if (entry.contains("group_mean_size")) {
            std::string at = path + ".group_mean_size";
            in.check(entry["group_mean_size"], at, json::value_t::object);
            for (const auto& [shape, bytes] : entry["group_mean_size"].items()) {
                if (stats.groups.count(shape) == 0)
                    in.fail(at + "." + shape, "is not a shape in group");
                in.check(bytes, at + "." + shape, json::value_t::number_float);
                double value = bytes.get<double>();
                if (!std::isfinite(value) || value < 0)
                    in.fail(at + "." + shape,
                            "is " + bytes.dump() + ", must be a finite number of bytes >= 0");
                stats.groupMeanSize[shape] = value;
            }
        }
        if (entry.contains("gemm_class")) {
            if (!isGemmLike(name))
                in.fail(path + ".gemm_class",
                        "is only for comp.gemm, comp.bmm, comp.conv2d and comp.attention");
            stats.gemmClasses =
                in.categorical(entry["gemm_class"], path + ".gemm_class", [&](const auto& key) {
                    if (classExponents(key).empty())
                        in.fail(path + ".gemm_class." + key,
                                "must be four exponents \"em,en,ek,eb\" in 0..192 (4 log2 of "
                                "each dimension)");
                });
            if (total(stats.gemmClasses) > stats.count)
                in.fail(path + ".gemm_class",
                        "counts more nodes than the kind's count " + std::to_string(stats.count));
        }
        if (entry.contains("peer_offset"))
            stats.peerOffsets =
                in.categorical(entry["peer_offset"], path + ".peer_offset", [&](const auto& key) {
                    if (!isSignedOffset(key))
                        in.fail(path + ".peer_offset." + key,
                                "must be a signed non-zero rank offset such as \"+1\" or \"-2\"");
                });
        if (entry.contains("tensors"))
            readTensors(in, entry["tensors"], path + ".tensors", name, stats);
    }

    for (const auto& [name, stats] : model.kinds)
        for (const auto& entry : stats.depTargets)
            if (entry.first != previousTarget && model.kinds.count(entry.first) == 0)
                in.fail("kinds." + name + ".deps.target." + entry.first,
                        "is neither \"previous\" nor in kinds");

    const json& ngrams = in.member(root, "", "ngrams", json::value_t::object);
    for (const auto& [context, next] : ngrams.items()) {
        std::string path = "ngrams[\"" + context + "\"]";
        std::istringstream tokens(context);
        std::string token;
        int length = 0;
        while (tokens >> token) {
            ++length;
            if (token != startSymbol && model.kinds.count(token) == 0)
                in.fail(path, "context names \"" + token + "\", which is not in kinds");
        }
        if (length >= model.order)
            in.fail(path,
                    "context of " + std::to_string(length) + " kinds; order " +
                        std::to_string(model.order) + " allows at most " +
                        std::to_string(model.order - 1));
        model.ngrams[context] = in.categorical(next, path, [&](const std::string& key) {
            if (model.kinds.count(key) == 0)
                in.fail(path + "." + key, "next kind is not in kinds");
        });
    }
    if (total(model.ngrams[""]) == 0)
        in.fail("ngrams[\"\"]", "missing or empty; the unigram counts are required");
    return model;
}

void saveModel(const TraceModel& model, const fs::path& file)
{
    writeFileAtomically(file, modelToJson(model).dump(1) + "\n");
}

TraceModel loadModel(const fs::path& file)
{
    const std::string text = readTextFile(file, "a model JSON file (etsim gen learn)");
    json root;
    try {
        root = parseJson(text, file.string());
    } catch (const JsonSyntaxError& error) {
        // A number beyond double's range carries no byte position.
        throw Error(file.string() + ": not valid JSON " +
                    (error.byte() > 0 ? "at byte " + std::to_string(error.byte())
                                      : "(" + error.libraryMessage() + ")") +
                    "; give a model written by etsim gen learn");
    }
    return modelFromJson(root, file.string());
}

} // namespace etsim::workloads::synth
