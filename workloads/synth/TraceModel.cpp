#include "workloads/synth/TraceModel.h"

#include "et_driver/OperatorInfo.h"
#include "et_driver/ProcessGroups.h"
#include "et_driver/TraceCodec.h"
#include "et_driver/TraceInfo.h"
#include "et_driver/TraceReader.h"
#include "et_driver/TraceSet.h"
#include "kernel/Error.h"
#include "kernel/InputFile.h"
#include "kernel/InputLimits.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <unordered_map>

namespace etsim::workloads::synth {

namespace fs = std::filesystem;
using et::NodeType;
using et::TraceNode;
using nlohmann::json;
using nlohmann::ordered_json;

namespace {

constexpr int maxOrder = 8;
// Dependency counts above this are pooled under it (a node with hundreds of inputs is rare).
constexpr uint64_t maxDepCount = 16;
constexpr const char* processGroupNodeName = "## process_group:init ##";
constexpr const char* previousTarget = "previous";

std::string lower(std::string text)
{
    for (char& c : text)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return text;
}

std::string collectiveKind(int32_t type)
{
    return "coll." + lower(et::collectiveTypeName(type));
}

std::vector<std::string> collectiveKinds()
{
    std::vector<std::string> kinds;
    for (int32_t type = 0; type <= static_cast<int32_t>(et::CollectiveType::Barrier); ++type)
        kinds.push_back(collectiveKind(type));
    return kinds;
}

std::string signedText(int64_t value)
{
    return (value > 0 ? "+" : "") + std::to_string(value);
}

// The modelled kind of a node; "" for nodes the model leaves out.
std::string kindOf(const TraceNode& node)
{
    switch (node.type) {
    case NodeType::Comp:
        if (node.isCpuOp() == std::optional<bool>(true))
            return "host";
        // A named op_kind counts even without GEMM shapes (which synthetic traces leave out).
        if (std::optional<std::string_view> named = node.opKind())
            if (std::optional<et::OpKind> kind = et::opKindFromName(*named))
                return "comp." + std::string(et::opKindName(*kind));
        return "comp." + std::string(et::opKindName(et::operatorInfo(node).kind));
    case NodeType::MemLoad:
        return "mem_load";
    case NodeType::MemStore:
        return "mem_store";
    case NodeType::CommSend:
        return "send";
    case NodeType::CommRecv:
        return "recv";
    case NodeType::CommColl: {
        std::optional<int32_t> type = node.commType();
        if (type && *type >= 0 && *type <= static_cast<int32_t>(et::CollectiveType::Barrier))
            return collectiveKind(*type);
        // Legacy host-side c10d records (spec 7.1): host work, not communication.
        if (node.isCpuOp() == std::optional<bool>(true))
            return "host";
        return "";
    }
    default:
        return "";
    }
}

struct KindSamples {
    uint64_t count = 0;
    std::array<std::vector<double>, quantityCount> quantities;
    Categorical dtypes;
    Categorical depCounts;
    Categorical depTargets;
    std::vector<double> depDistance;
    Categorical groups;
    std::map<std::string, std::pair<double, uint64_t>> groupSizes;
    Categorical peerOffsets;
    Categorical gemmClasses;
};

bool isGemmLike(const std::string& kind)
{
    return kind == "comp.gemm" || kind == "comp.bmm" || kind == "comp.conv2d" ||
           kind == "comp.attention";
}

// The four exponents of a class; empty when malformed.
std::vector<int64_t> classExponents(const std::string& gemmClass)
{
    constexpr int64_t maxExponent = 4 * 48;
    std::vector<int64_t> exponents;
    std::size_t start = 0;
    while (start <= gemmClass.size()) {
        std::size_t comma = gemmClass.find(',', start);
        std::string part =
            gemmClass.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        if (part.empty() || part.size() > 3 ||
            part.find_first_not_of("0123456789") != std::string::npos)
            return {};
        exponents.push_back(std::stoll(part));
        if (exponents.back() > maxExponent)
            return {};
        if (comma == std::string::npos)
            break;
        start = comma + 1;
    }
    if (exponents.size() != 4)
        return {};
    return exponents;
}

class Learner {
public:
    explicit Learner(int order) : order(order) {}

    void learnSet(const fs::path& path);
    TraceModel finish();

private:
    void learnRank(const fs::path& file,
                   uint32_t setRanks,
                   std::map<int64_t, std::vector<int64_t>> groups);
    std::string groupShape(const TraceNode& node,
                           const std::map<int64_t, std::vector<int64_t>>& groups,
                           uint32_t jobRanks) const;

    int order;
    ModelSource source;
    std::map<std::string, KindSamples> kinds;
    std::map<std::string, Categorical> ngrams;
};

std::vector<et::RankFile> rankFilesOf(const fs::path& path)
{
    std::error_code error;
    if (fs::is_regular_file(path, error))
        return {{et::rankFromFileName(path).value_or(0), path}};
    return et::findRankFiles(path);
}

// <dir>/<prefix>.comm_groups.json of a rank file <dir>/<prefix>.<rank>.et[.gz], if present.
std::map<int64_t, std::vector<int64_t>> commGroupFileOf(const et::RankFile& file)
{
    std::map<int64_t, std::vector<int64_t>> groups;
    std::string name = file.path.filename().string();
    std::size_t cut = name.rfind("." + std::to_string(file.rank) + ".et");
    if (cut == std::string::npos)
        return groups;
    fs::path groupFile = file.path.parent_path() / (name.substr(0, cut) + ".comm_groups.json");
    std::error_code error;
    if (!fs::exists(groupFile, error))
        return groups;
    for (const et::ProcessGroup& group : et::readCommGroupFile(groupFile))
        groups[group.id] = group.ranks;
    return groups;
}

void Learner::learnSet(const fs::path& path)
{
    std::vector<et::RankFile> files = rankFilesOf(path);
    std::map<int64_t, std::vector<int64_t>> groups = commGroupFileOf(files.front());
    auto setRanks = static_cast<uint32_t>(files.size());
    ++source.traceSets;
    source.maxRanks = std::max(source.maxRanks, setRanks);
    for (const et::RankFile& file : files)
        learnRank(file.path, setRanks, groups);
}

std::string Learner::groupShape(const TraceNode& node,
                                const std::map<int64_t, std::vector<int64_t>>& groups,
                                uint32_t jobRanks) const
{
    std::optional<std::string_view> pgName = node.pgName();
    if (!pgName || et::isDefaultGroup(*pgName))
        return "all";
    std::optional<int64_t> id = et::groupId(*pgName);
    auto found = id ? groups.find(*id) : groups.end();
    if (found == groups.end() || found->second.empty() || found->second.size() >= jobRanks)
        return "all";
    const std::vector<int64_t>& members = found->second;
    int64_t stride = members.size() > 1 ? members[1] - members[0] : 1;
    for (std::size_t i = 1; i < members.size(); ++i)
        if (members[i] - members[i - 1] != stride)
            stride = 1;
    return std::to_string(members.size()) + "x" + std::to_string(std::max<int64_t>(stride, 1));
}

void Learner::learnRank(const fs::path& file,
                        uint32_t setRanks,
                        std::map<int64_t, std::vector<int64_t>> groups)
{
    et::TraceReader reader(file);
    std::vector<TraceNode> nodes;
    TraceNode node;
    bool anyData = false;
    while (reader.next(node)) {
        anyData = anyData || !node.dataDeps.empty();
        if (node.name == processGroupNodeName) {
            if (std::optional<ChakraProtoMsg::IOInfo> inputs = et::TraceCodec::inputs(node)) {
                try {
                    for (const et::ProcessGroup& group :
                         et::parsePytorchProcessGroups(inputs->values()))
                        groups[group.id] = group.ranks;
                } catch (const Error&) {
                    // A list that does not parse leaves its collectives in the "all" shape.
                }
            }
        }
        nodes.push_back(node);
    }
    ++source.ranks;
    source.nodes += nodes.size();

    // The job's size: the set's ranks, or for a lone rank file the members its groups name.
    uint32_t jobRanks = setRanks;
    for (const auto& entry : groups)
        for (int64_t member : entry.second)
            jobRanks = std::max<uint32_t>(jobRanks, static_cast<uint32_t>(member + 1));

    std::unordered_map<uint64_t, uint64_t> position;
    std::vector<std::string> sequence;
    std::map<std::string, std::vector<uint64_t>> kindPositions;
    for (const TraceNode& current : nodes) {
        std::string kind = current.name == processGroupNodeName ? "" : kindOf(current);
        if (kind.empty()) {
            ++source.ignoredNodes;
            continue;
        }
        uint64_t here = sequence.size();
        position.emplace(current.id, here);
        sequence.push_back(kind);
        KindSamples& samples = kinds[kind];
        ++samples.count;

        auto add = [&](Quantity q, double value) {
            samples.quantities[static_cast<int>(q)].push_back(value);
        };
        if (std::optional<int64_t> ops = current.numOps(); ops && *ops >= 0)
            add(Quantity::NumOps, static_cast<double>(*ops));
        if (std::optional<uint64_t> bytes = current.tensorSize())
            add(Quantity::TensorSize, static_cast<double>(*bytes));
        if (std::optional<int64_t> bytes = current.commSize(); bytes && *bytes >= 0)
            add(Quantity::CommSize, static_cast<double>(*bytes));
        if (current.durationMicros > 0)
            add(Quantity::Duration, static_cast<double>(current.durationMicros));
        if (std::optional<std::string_view> dtype = current.dtype())
            ++samples.dtypes[std::string(*dtype)];

        if (current.type == NodeType::CommColl) {
            std::string shape = groupShape(current, groups, jobRanks);
            ++samples.groups[shape];
            if (std::optional<int64_t> bytes = current.commSize(); bytes && *bytes >= 0) {
                samples.groupSizes[shape].first += static_cast<double>(*bytes);
                ++samples.groupSizes[shape].second;
            }
        }
        if (isGemmLike(kind)) {
            et::OperatorInfo info = et::operatorInfo(current);
            if (!info.gemms.empty()) {
                const et::GemmShape& g = info.gemms.front();
                ++samples.gemmClasses[gemmClassOf(g.m, g.n, g.k, g.batch)];
            }
        }
        if (current.type == NodeType::CommSend || current.type == NodeType::CommRecv) {
            std::optional<int32_t> src = current.commSrc();
            std::optional<int32_t> dst = current.commDst();
            if (src && dst && *src != *dst) {
                int64_t offset = current.type == NodeType::CommSend ? int64_t(*dst) - *src
                                                                    : int64_t(*src) - *dst;
                if (setRanks > 1) {
                    int64_t r = setRanks;
                    offset = ((offset % r) + r) % r;
                    if (offset > r / 2)
                        offset -= r;
                }
                if (offset != 0)
                    ++samples.peerOffsets[signedText(offset)];
            }
        }

        const std::vector<uint64_t>& deps = anyData ? current.dataDeps : current.ctrlDeps;
        std::set<uint64_t> targets;
        for (uint64_t dep : deps) {
            auto found = position.find(dep);
            if (found != position.end() && found->second < here)
                targets.insert(found->second);
        }
        // The first node cannot depend on anything; counting it would cut synthetic chains
        // wherever its "0" is drawn.
        if (here > 0)
            ++samples.depCounts[std::to_string(std::min<uint64_t>(targets.size(), maxDepCount))];
        for (uint64_t target : targets) {
            if (target + 1 == here) {
                ++samples.depTargets[previousTarget];
                continue;
            }
            const std::string& targetKind = sequence[target];
            const std::vector<uint64_t>& seen = kindPositions[targetKind];
            // Nodes of the target's kind from the target to now, the target included.
            auto at = std::lower_bound(seen.begin(), seen.end(), target);
            ++samples.depTargets[targetKind];
            samples.depDistance.push_back(static_cast<double>(seen.end() - at));
        }
        kindPositions[kind].push_back(here);
    }

    for (std::size_t i = 0; i < sequence.size(); ++i) {
        for (int length = 0; length < order; ++length) {
            std::string context;
            for (int back = length; back >= 1; --back) {
                auto at = static_cast<int64_t>(i) - back;
                context += (context.empty() ? "" : " ") +
                           (at < 0 ? std::string(startSymbol) : sequence[at]);
            }
            ++ngrams[context][sequence[i]];
        }
    }
}

TraceModel Learner::finish()
{
    TraceModel model;
    model.order = order;
    model.source = source;
    model.ngrams = std::move(ngrams);
    for (auto& [name, samples] : kinds) {
        KindStats& stats = model.kinds[name];
        stats.count = samples.count;
        for (std::size_t q = 0; q < quantityCount; ++q)
            stats.quantities[q] = Quantiles::fromSamples(std::move(samples.quantities[q]));
        stats.dtypes = std::move(samples.dtypes);
        stats.depCounts = std::move(samples.depCounts);
        stats.depTargets = std::move(samples.depTargets);
        stats.depDistance = Quantiles::fromSamples(std::move(samples.depDistance));
        stats.groups = std::move(samples.groups);
        for (const auto& [shape, sum] : samples.groupSizes)
            stats.groupMeanSize[shape] = sum.first / static_cast<double>(sum.second);
        stats.gemmClasses = std::move(samples.gemmClasses);
        stats.peerOffsets = std::move(samples.peerOffsets);
    }
    return model;
}

// ---- JSON -------------------------------------------------------------------------------

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

} // namespace

const char* quantityName(Quantity quantity)
{
    switch (quantity) {
    case Quantity::NumOps:
        return "num_ops";
    case Quantity::TensorSize:
        return "tensor_size";
    case Quantity::CommSize:
        return "comm_size";
    case Quantity::Duration:
        return "duration_us";
    }
    return "?";
}

std::string gemmClassOf(int64_t m, int64_t n, int64_t k, int64_t batch)
{
    std::string key;
    for (int64_t dim : {m, n, k, batch}) {
        auto exponent =
            std::llround(4.0 * std::log2(static_cast<double>(std::max<int64_t>(dim, 1))));
        key += (key.empty() ? "" : ",") + std::to_string(exponent);
    }
    return key;
}

std::array<int64_t, 4> gemmOfClass(const std::string& gemmClass)
{
    std::vector<int64_t> exponents = classExponents(gemmClass);
    if (exponents.empty())
        throw Error("GEMM class \"" + gemmClass +
                    "\": expected four exponents \"em,en,ek,eb\" in 0..192 (docs/synth.md)");
    std::array<int64_t, 4> shape{};
    for (std::size_t i = 0; i < 4; ++i) {
        double size = std::exp2(static_cast<double>(exponents[i]) / 4.0);
        shape[i] = i < 3 ? std::max<int64_t>(1, static_cast<int64_t>(size * 63.0 / 64.0))
                         : std::max<int64_t>(1, std::llround(size));
    }
    return shape;
}

int64_t gemmClassWeight(const std::string& gemmClass)
{
    int64_t weight = 0;
    for (int64_t exponent : classExponents(gemmClass))
        weight += exponent;
    return weight;
}

bool isKnownKind(const std::string& kind)
{
    if (kind == "host" || kind == "mem_load" || kind == "mem_store" || kind == "send" ||
        kind == "recv")
        return true;
    if (kind.rfind("comp.", 0) == 0)
        return et::opKindFromName(kind.substr(5)).has_value();
    std::vector<std::string> collectives = collectiveKinds();
    return std::find(collectives.begin(), collectives.end(), kind) != collectives.end();
}

double TraceModel::nodesPerRank() const
{
    uint64_t modelled = 0;
    for (const auto& entry : kinds)
        modelled += entry.second.count;
    return source.ranks == 0 ? 0.0 : static_cast<double>(modelled) / source.ranks;
}

Categorical TraceModel::kindMix() const
{
    Categorical mix;
    for (const auto& [name, stats] : kinds)
        mix[name] = stats.count;
    return mix;
}

Categorical TraceModel::collectiveMix() const
{
    Categorical mix;
    for (const auto& [name, stats] : kinds)
        if (name.rfind("coll.", 0) == 0)
            mix[name] = stats.count;
    return mix;
}

TraceModel learnModel(const std::vector<fs::path>& traces, const LearnOptions& options)
{
    if (options.order < 1 || options.order > maxOrder)
        throw Error("n-gram order " + std::to_string(options.order) + ": use 1.." +
                    std::to_string(maxOrder) + " (2: the next kind depends on the last one)");
    if (traces.empty())
        throw Error("no trace to learn from: give at least one prefix, folder or rank file");
    Learner learner(options.order);
    for (const fs::path& trace : traces)
        learner.learnSet(trace);
    TraceModel model = learner.finish();
    if (model.kinds.empty())
        throw Error("the traces hold no node the model can describe (only metadata or unknown "
                    "types); learn from traces with compute, memory or communication nodes");
    return model;
}

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
                if (key.empty() || key.size() > 3 ||
                    key.find_first_not_of("0123456789") != std::string::npos ||
                    std::stoull(key) > maxDepCount)
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
    std::ofstream out(file);
    if (!out)
        throw Error(file.string() + ": cannot write the model; check the folder and permissions");
    out << modelToJson(model).dump(1) << "\n";
    out.close();
    if (!out)
        throw Error(file.string() + ": write failed (disk full?)");
}

TraceModel loadModel(const fs::path& file)
{
    const std::string text = readTextFile(file, "a model JSON file (etsim gen learn)");
    checkJsonNesting(text, file.string());
    json root;
    try {
        root = json::parse(text);
    } catch (const json::parse_error& error) {
        throw Error(file.string() + ": not valid JSON at byte " + std::to_string(error.byte) +
                    "; give a model written by etsim gen learn");
    }
    return modelFromJson(root, file.string());
}

} // namespace etsim::workloads::synth
