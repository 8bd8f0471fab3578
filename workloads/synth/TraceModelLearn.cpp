// Learning a TraceModel from Chakra traces: one pass over each rank's nodes, counting kinds,
// n-grams, dependency shapes, sizes and peers.
#include "et_driver/NodeTensors.h"
#include "et_driver/OperatorInfo.h"
#include "et_driver/ProcessGroups.h"
#include "et_driver/TraceCodec.h"
#include "et_driver/TraceInfo.h"
#include "et_driver/TraceReader.h"
#include "et_driver/TraceSet.h"
#include "kernel/Error.h"
#include "workloads/synth/TraceModel.h"
#include "workloads/synth/TraceModelDetail.h"

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
using namespace detail;

namespace {

constexpr const char* processGroupNodeName = "## process_group:init ##";

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
    Categorical tensorInputs;
    Categorical tensorOutputs;
    Categorical inputSources;
    std::vector<double> reuseDistance;
};

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
    // Each tensor id the rank has named: the tensor-naming node that last touched it (counted
    // in such nodes) and whether that node wrote it.
    std::unordered_map<uint64_t, std::pair<uint64_t, bool>> lastTouch;
    uint64_t tensorNodes = 0;
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

        if (current.type == NodeType::Comp || current.type == NodeType::MemLoad ||
            current.type == NodeType::MemStore)
            if (std::optional<NodeTensors> tensors = et::nodeTensors(current)) {
                ++tensorNodes;
                ++samples.tensorInputs[std::to_string(
                    std::min<std::size_t>(tensors->inputs.size(), maxTensorCount))];
                ++samples.tensorOutputs[std::to_string(
                    std::min<std::size_t>(tensors->outputs.size(), maxTensorCount))];
                for (std::size_t k = 0; k < tensors->inputs.size(); ++k) {
                    const std::string slot =
                        std::to_string(std::min<std::size_t>(k, maxTensorCount - 1)) + ":";
                    auto seen = lastTouch.find(tensors->inputs[k].id);
                    if (seen == lastTouch.end()) {
                        ++samples.inputSources[slot + freshSource];
                        continue;
                    }
                    ++samples
                          .inputSources[slot + (seen->second.second ? outputSource : inputSource)];
                    samples.reuseDistance.push_back(
                        static_cast<double>(tensorNodes - seen->second.first));
                }
                for (const TensorUse& input : tensors->inputs)
                    lastTouch[input.id] = {tensorNodes, false};
                for (const TensorUse& output : tensors->outputs)
                    lastTouch[output.id] = {tensorNodes, true};
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
        stats.tensorInputs = std::move(samples.tensorInputs);
        stats.tensorOutputs = std::move(samples.tensorOutputs);
        stats.inputSources = std::move(samples.inputSources);
        stats.reuseDistance = Quantiles::fromSamples(std::move(samples.reuseDistance));
    }
    return model;
}

} // namespace

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

} // namespace etsim::workloads::synth
