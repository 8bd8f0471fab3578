#include "workloads/synth/Synthesizer.h"

#include "et_driver/OperatorInfo.h"
#include "kernel/AtomicFile.h"
#include "kernel/Error.h"
#include "workloads/Microbench.h"
#include "workloads/synth/TraceModelDetail.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <fstream>
#include <map>
#include <set>

namespace etsim::workloads::synth {

namespace fs = std::filesystem;
using detail::freshSource;
using detail::outputSource;
using et::NodeType;
using et::TraceNode;

namespace {

constexpr const char* synthFormat = "etsim-synth-output";
constexpr int synthFormatVersion = 1;

bool isPointToPoint(const std::string& kind)
{
    return kind == "send" || kind == "recv";
}

int64_t parseOffset(const std::string& text)
{
    return text.empty() ? 0 : std::stoll(text);
}

uint64_t toCount(double value)
{
    return static_cast<uint64_t>(std::llround(std::max(0.0, value)));
}

// The category at probability u with categories ordered by `weight` (ties in key order), so a
// draw shared with a node's sizes gives large nodes the categories large nodes had.
template <typename Weight>
std::string pickOrdered(const Categorical& counts, double u, Weight weight)
{
    std::vector<std::pair<double, std::string>> order;
    for (const auto& entry : counts)
        if (entry.second > 0)
            order.emplace_back(weight(entry.first), entry.first);
    std::stable_sort(
        order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    double target = u * static_cast<double>(total(counts));
    double seen = 0;
    for (const auto& [w, name] : order) {
        seen += static_cast<double>(counts.at(name));
        if (target < seen)
            return name;
    }
    return order.empty() ? std::string() : order.back().second;
}

} // namespace

Synthesizer::Synthesizer(const TraceModel& model, const SynthSpec& spec) : spec(spec)
{
    if (spec.ranks == 0)
        throw Error("--ranks 0: a trace needs at least one rank");
    if (total(model.ngrams.count("") ? model.ngrams.at("") : Categorical{}) == 0)
        throw Error("the model has no unigram counts (ngrams[\"\"]): nothing to sample");
    plan(model);
}

int32_t Synthesizer::layoutFor(const std::string& shape)
{
    std::size_t x = shape.find('x');
    if (shape == "all" || x == std::string::npos)
        return -1;
    uint64_t size = std::stoull(shape.substr(0, x));
    uint64_t stride = std::stoull(shape.substr(x + 1));
    uint64_t ranks = spec.ranks;
    if (size < 2 || size >= ranks)
        return -1;
    if (ranks % (size * stride) != 0) {
        // The shape does not tile this rank count: keep the group size, contiguous.
        if (ranks % size != 0)
            return -1;
        stride = 1;
    }
    for (std::size_t i = 0; i < layouts.size(); ++i)
        if (layouts[i].size == size && layouts[i].stride == stride)
            return static_cast<int32_t>(i);
    layouts.push_back({static_cast<uint32_t>(size), static_cast<uint32_t>(stride), 0});
    return static_cast<int32_t>(layouts.size() - 1);
}

void Synthesizer::plan(const TraceModel& model)
{
    std::map<std::string, uint32_t> indexOf;
    for (const auto& [name, stats] : model.kinds) {
        indexOf[name] = static_cast<uint32_t>(kindNames.size());
        kindNames.push_back(name);
        kindStats.push_back(stats);
    }
    dtypeNames.push_back("");
    std::map<std::string, uint32_t> dtypeIndex;

    uint64_t target =
        spec.nodes > 0 ? spec.nodes : std::max<uint64_t>(1, toCount(model.nodesPerRank()));
    Random random(spec.seed);
    std::vector<uint64_t> occurrences(kindNames.size(), 0);
    // Skeleton positions of each kind so far, for dependency targets.
    std::vector<std::vector<uint64_t>> kindPositions(kindNames.size());
    std::map<std::string, uint64_t> credits;
    std::deque<std::string> history(static_cast<std::size_t>(model.order - 1), startSymbol);
    int32_t nextTag = 0;
    auto ranks = static_cast<int64_t>(spec.ranks);

    // The next kind from the longest context seen. With `underQuota`, kinds that have reached
    // their quota are left out (backing off to a shorter context when nothing else follows
    // this one); when every candidate is full the plain draw is used.
    std::vector<uint64_t> quota(kindNames.size());
    auto nextSymbol = [&](bool underQuota) {
        for (int pass = underQuota ? 0 : 1; pass < 2; ++pass) {
            for (int length = model.order - 1; length >= 0; --length) {
                std::string context;
                for (std::size_t i = history.size() - length; i < history.size(); ++i)
                    context += (context.empty() ? "" : " ") + history[i];
                auto found = model.ngrams.find(context);
                if (found == model.ngrams.end())
                    continue;
                Categorical next = found->second;
                if (pass == 0)
                    for (auto& [name, count] : next) {
                        auto kind = indexOf.find(name);
                        if (kind != indexOf.end() &&
                            occurrences[kind->second] >= quota[kind->second])
                            count = 0;
                    }
                if (total(next) > 0)
                    return pick(next, random.uniform());
            }
        }
        return std::string();
    };
    auto remember = [&](const std::string& symbol) {
        if (!history.empty()) {
            history.pop_front();
            history.push_back(symbol);
        }
    };
    auto fillEntry = [&](Entry& entry, uint32_t kind) {
        const KindStats& stats = kindStats[kind];
        entry.kind = kind;
        std::string dtype = pick(stats.dtypes, random.uniform());
        if (!dtype.empty()) {
            auto [at, added] = dtypeIndex.emplace(dtype, dtypeNames.size());
            if (added)
                dtypeNames.push_back(dtype);
            entry.dtype = at->second;
        }
        std::set<uint64_t> deps;
        std::string countText = pick(stats.depCounts, random.uniform());
        uint64_t count = countText.empty() ? 0 : std::stoull(countText);
        for (uint64_t d = 0; d < count; ++d) {
            std::string targetName = pick(stats.depTargets, random.uniform());
            if (targetName == "previous") {
                if (!skeleton.empty())
                    deps.insert(skeleton.size() - 1);
                continue;
            }
            auto targetKind = indexOf.find(targetName);
            uint64_t distance =
                std::max<uint64_t>(1, toCount(stats.depDistance.sample(random.uniform())));
            if (targetKind == indexOf.end())
                continue;
            const std::vector<uint64_t>& seen = kindPositions[targetKind->second];
            if (distance <= seen.size())
                deps.insert(seen[seen.size() - distance]);
        }
        entry.deps.assign(deps.begin(), deps.end());
    };

    // The walk may meet symbols that produce no node (absorbed receives, impossible peers);
    // the guard stops a model made only of those.
    uint64_t guard = 64 * target + 1024;
    // Each kind's share of the target, rounded up: a walk of a few hundred nodes drifts from
    // the model's mix by several per cent (one gradient all-reduce more or less, a dozen GEMMs),
    // so a kind that has reached its quota is not drawn while another can follow.
    uint64_t modelled = 0;
    for (const KindStats& stats : kindStats)
        modelled += stats.count;
    for (std::size_t k = 0; k < kindNames.size(); ++k)
        quota[k] = static_cast<uint64_t>(
            std::ceil(static_cast<double>(kindStats[k].count) * static_cast<double>(target) /
                      static_cast<double>(modelled)));
    while (skeleton.size() < target && guard-- > 0) {
        std::string symbol = nextSymbol(true);
        if (symbol.empty())
            break;
        remember(symbol);
        uint32_t kind = indexOf.at(symbol);

        if (isPointToPoint(symbol)) {
            if (credits[symbol] > 0) {
                // The other half of an exchange already written.
                --credits[symbol];
                continue;
            }
            int64_t offset = parseOffset(pick(kindStats[kind].peerOffsets, random.uniform()));
            int64_t sendOffset = symbol == "send" ? offset : -offset;
            sendOffset = ((sendOffset % ranks) + ranks) % ranks;
            if (sendOffset == 0 || skeleton.size() + 2 > target) {
                // Counted against the quota, so a walk whose other kinds are full does not
                // keep drawing exchanges that cannot be placed.
                ++droppedP2p;
                ++occurrences[kind];
                continue;
            }
            ++occurrences[kind];
            ++credits[symbol == "send" ? "recv" : "send"];
            Entry send;
            fillEntry(send, kind);
            send.peer = sendOffset;
            send.tag = nextTag++;
            Entry recv = send;
            recv.peer = -sendOffset;
            kindPositions[kind].push_back(skeleton.size());
            skeleton.push_back(std::move(send));
            skeleton.push_back(std::move(recv));
            continue;
        }
        ++occurrences[kind];
        Entry entry;
        fillEntry(entry, kind);
        kindPositions[kind].push_back(skeleton.size());
        skeleton.push_back(std::move(entry));
    }
    if (skeleton.empty())
        throw Error("the model's n-gram walk produced no node; learn it from traces with "
                    "compute, memory or communication nodes");
    assignValues(kindPositions, random);
    int64_t nextId = 1;
    for (Layout& layout : layouts) {
        layout.firstId = nextId;
        nextId += spec.ranks / layout.size;
    }
    // Last, so a model without tensor statistics draws exactly what it drew before.
    assignTensors(random);
}

// Each node of a kind whose model names tensors names them with the model's share: its input
// and output counts drawn from the model, each input fresh or the output (input) of the
// tensor-naming node the drawn distance back, as learned. Reused inputs keep their tensor's
// bytes; fresh inputs and the outputs share what the node's tensor_size leaves.
void Synthesizer::assignTensors(Random& random)
{
    std::vector<std::size_t> naming; // skeleton indices of the tensor-naming nodes so far
    uint64_t nextTensor = 1;
    const auto sizeBit = static_cast<int>(Quantity::TensorSize);
    // Per kind, the sources the model saw at each input position ("0:output" -> [0]["output"]).
    std::vector<std::vector<Categorical>> sourcesAt(kindStats.size());
    for (std::size_t kind = 0; kind < kindStats.size(); ++kind)
        for (const auto& [key, count] : kindStats[kind].inputSources) {
            const auto [position, source] = detail::sourceKey(key);
            if (sourcesAt[kind].size() <= static_cast<std::size_t>(position))
                sourcesAt[kind].resize(position + 1);
            sourcesAt[kind][position][source] = count;
        }
    const Categorical none;
    for (std::size_t i = 0; i < skeleton.size(); ++i) {
        Entry& entry = skeleton[i];
        const KindStats& stats = kindStats[entry.kind];
        const uint64_t named = total(stats.tensorInputs);
        if (named == 0 || !(entry.present >> sizeBit & 1U))
            continue;
        if (random.uniform() * static_cast<double>(stats.count) >= static_cast<double>(named))
            continue;
        const uint64_t inputs = std::stoull(pick(stats.tensorInputs, random.uniform()));
        const uint64_t outputs = std::stoull(pick(stats.tensorOutputs, random.uniform()));
        if (inputs + outputs == 0)
            continue;
        uint64_t reusedBytes = 0;
        std::size_t freshInputs = 0;
        for (uint64_t k = 0; k < inputs; ++k) {
            const auto position = std::min<std::size_t>(k, detail::maxTensorCount - 1);
            const Categorical& atPosition =
                position < sourcesAt[entry.kind].size() ? sourcesAt[entry.kind][position] : none;
            const std::string source = total(atPosition) == 0 ? std::string(freshSource)
                                                              : pick(atPosition, random.uniform());
            // An earlier tensor of the drawn role; a draw that lands on one this node already
            // reads is drawn again (two inputs rarely come from one tensor), a few times.
            const TensorUse* reused = nullptr;
            for (int attempt = 0;
                 attempt < 4 && reused == nullptr && source != freshSource && !naming.empty();
                 ++attempt) {
                const auto back = static_cast<std::size_t>(
                    std::clamp<double>(std::round(stats.reuseDistance.sample(random.uniform())),
                                       1.0,
                                       static_cast<double>(naming.size())));
                const Entry& earlier = skeleton[naming[naming.size() - back]];
                const std::vector<TensorUse>& list =
                    source == outputSource ? earlier.outputs : earlier.inputs;
                if (list.empty())
                    continue;
                const TensorUse& candidate = list[std::min(
                    list.size() - 1,
                    static_cast<std::size_t>(random.uniform() * static_cast<double>(list.size())))];
                if (std::none_of(entry.inputs.begin(), entry.inputs.end(), [&](const TensorUse& t) {
                        return t.id == candidate.id;
                    }))
                    reused = &candidate;
            }
            if (reused != nullptr) {
                entry.inputs.push_back(*reused);
                reusedBytes += reused->bytes;
            } else {
                ++freshInputs;
            }
        }
        // Fresh tensors split what the reused ones leave of tensor_size, and never get less
        // than an even split of it (a drawn tensor_size may be below a reused tensor's bytes),
        // in whole elements of the node's type.
        const uint64_t bytes = toCount(entry.values[sizeBit]);
        const uint64_t freshCount = freshInputs + outputs;
        const auto element =
            static_cast<uint64_t>(std::max(1, et::bytesPerElement(dataTypeOf(entry))));
        uint64_t share = 0;
        if (freshCount > 0) {
            share = std::max((bytes > reusedBytes ? bytes - reusedBytes : 0) / freshCount,
                             bytes / (inputs + outputs));
            share = std::max(element, share / element * element);
        }
        for (std::size_t k = 0; k < freshInputs; ++k)
            entry.inputs.push_back({nextTensor++, share});
        for (uint64_t k = 0; k < outputs; ++k)
            entry.outputs.push_back({nextTensor++, share});
        naming.push_back(i);
    }
}

// Quota (stratified) sampling: the n nodes of a kind split [0, 1) into n equal strata, one
// each, in an order the seeded stream shuffles. A node's value is the mean of the model's
// distribution over its stratum, so the n values add up to n times the model's mean whatever
// the seed (a heavy tail, e.g. one optimizer step of 2 GiB among fifty 1 MiB elementwise
// nodes, is neither lost nor doubled), and each value lies between the stratum's quantiles,
// so the empirical CDF stays within 1/n of the model's. The seed chooses which node gets which
// stratum. Nodes carrying a quantity, or a GEMM shape, are a random subset of the model's share
// (rounded up or down at random), ranked by stratum so large nodes stay large in every
// quantity; GEMM classes and collective group shapes are read at the rank's midpoint, which
// allocates them in proportion to their counts (largest remainder, classes ordered by FLOPs).
void Synthesizer::assignValues(const std::vector<std::vector<uint64_t>>& occurrences,
                               Random& random)
{
    auto shuffle = [&](std::vector<std::size_t>& items) {
        for (std::size_t i = items.size(); i > 1; --i)
            std::swap(items[i - 1],
                      items[static_cast<std::size_t>(random.uniform() * static_cast<double>(i))]);
    };
    // A random subset of the n nodes with share count / all of them, ordered by stratum.
    auto subset = [&](const std::vector<std::size_t>& stratum, uint64_t count, uint64_t all) {
        std::size_t n = stratum.size();
        double expected = static_cast<double>(n) * static_cast<double>(count) /
                          static_cast<double>(std::max<uint64_t>(1, all));
        auto size = static_cast<std::size_t>(std::floor(expected));
        if (random.uniform() < expected - std::floor(expected))
            ++size;
        size = std::min(size, n);
        std::vector<std::size_t> members(n);
        for (std::size_t i = 0; i < n; ++i)
            members[i] = i;
        if (size < n) {
            shuffle(members);
            members.resize(size);
        }
        std::sort(members.begin(), members.end(), [&](std::size_t a, std::size_t b) {
            return stratum[a] < stratum[b];
        });
        return members;
    };
    for (std::size_t kind = 0; kind < occurrences.size(); ++kind) {
        const std::vector<uint64_t>& at = occurrences[kind];
        const KindStats& stats = kindStats[kind];
        std::size_t n = at.size();
        if (n == 0)
            continue;
        std::vector<std::size_t> stratum(n);
        for (std::size_t i = 0; i < n; ++i)
            stratum[i] = i;
        shuffle(stratum);
        for (std::size_t q = 0; q < quantityCount; ++q) {
            const Quantiles& sketch = stats.quantities[q];
            if (sketch.empty())
                continue;
            std::vector<std::size_t> members = subset(stratum, sketch.count(), stats.count);
            double size = static_cast<double>(members.size());
            for (std::size_t r = 0; r < members.size(); ++r) {
                Entry& entry = skeleton[at[members[r]]];
                entry.present |= static_cast<uint8_t>(1U << q);
                entry.values[q] = sketch.meanBetween(r / size, (r + 1) / size);
            }
        }
        uint64_t shaped = total(stats.gemmClasses);
        if (shaped > 0) {
            std::vector<std::size_t> members = subset(stratum, shaped, stats.count);
            double size = static_cast<double>(members.size());
            for (std::size_t r = 0; r < members.size(); ++r) {
                std::string gemmClass =
                    pickOrdered(stats.gemmClasses, (r + 0.5) / size, [](const std::string& c) {
                        return static_cast<double>(gemmClassWeight(c));
                    });
                auto found = std::find(gemmClassNames.begin(), gemmClassNames.end(), gemmClass);
                skeleton[at[members[r]]].gemmClass =
                    static_cast<int32_t>(found - gemmClassNames.begin());
                if (found == gemmClassNames.end())
                    gemmClassNames.push_back(gemmClass);
            }
        }
        if (kindNames[kind].rfind("coll.", 0) == 0)
            for (std::size_t i = 0; i < n; ++i) {
                double u = (static_cast<double>(stratum[i]) + 0.5) / static_cast<double>(n);
                std::string shape =
                    stats.groupMeanSize.empty()
                        ? pick(stats.groups, random.uniform())
                        : pickOrdered(stats.groups, u, [&](const std::string& name) {
                              auto found = stats.groupMeanSize.find(name);
                              return found == stats.groupMeanSize.end() ? 0.0 : found->second;
                          });
                skeleton[at[i]].layout = layoutFor(shape);
            }
        if (isPointToPoint(kindNames[kind]))
            for (uint64_t index : at) {
                // The receive of an exchange mirrors its send.
                Entry& recv = skeleton[index + 1];
                const Entry& send = skeleton[index];
                recv.present = send.present;
                recv.values = send.values;
                recv.gemmClass = send.gemmClass;
            }
    }
}

et::DataType Synthesizer::dataTypeOf(const Entry& entry) const
{
    if (entry.dtype == 0)
        return et::DataType::Unknown;
    return et::dataTypeFromName(dtypeNames[entry.dtype]).value_or(et::DataType::Unknown);
}

CommGroup Synthesizer::groupOf(std::size_t index, uint32_t rank) const
{
    const Layout& layout = layouts[index];
    uint32_t block = layout.size * layout.stride;
    uint32_t blockIndex = rank / block;
    uint32_t lane = rank % layout.stride;
    CommGroup group;
    group.id = layout.firstId + blockIndex * layout.stride + lane;
    group.description = "synth";
    for (uint32_t k = 0; k < layout.size; ++k)
        group.ranks.push_back(static_cast<int64_t>(blockIndex * block + lane + k * layout.stride));
    return group;
}

std::vector<CommGroup> Synthesizer::groupsOf(uint32_t rank) const
{
    std::vector<CommGroup> groups;
    for (std::size_t i = 0; i < layouts.size(); ++i)
        groups.push_back(groupOf(i, rank));
    return groups;
}

void Synthesizer::forEachGroup(const std::function<void(const CommGroup&)>& visit) const
{
    for (std::size_t i = 0; i < layouts.size(); ++i) {
        const Layout& layout = layouts[i];
        uint32_t block = layout.size * layout.stride;
        for (uint32_t start = 0; start < spec.ranks; start += block)
            for (uint32_t lane = 0; lane < layout.stride; ++lane)
                visit(groupOf(i, start + lane));
    }
}

std::string Synthesizer::description() const
{
    return "synthetic trace: " + std::to_string(spec.ranks) + " ranks x " +
           std::to_string(skeleton.size()) + " nodes, seed " + std::to_string(spec.seed);
}

void Synthesizer::emitRank(uint32_t rank, RankEmitter& out) const
{
    out.processGroups(groupsOf(rank));
    uint64_t base = out.nodes();
    auto ranks = static_cast<int64_t>(spec.ranks);
    std::vector<uint64_t> deps;
    for (std::size_t i = 0; i < skeleton.size(); ++i) {
        const Entry& entry = skeleton[i];
        const std::string& kind = kindNames[entry.kind];
        deps.clear();
        for (uint64_t dep : entry.deps)
            deps.push_back(base + dep);
        auto value = [&](Quantity q) -> std::optional<uint64_t> {
            if (!(entry.present >> static_cast<int>(q) & 1U))
                return std::nullopt;
            return toCount(entry.values[static_cast<int>(q)]);
        };
        auto commBytes = [&]() {
            return static_cast<int64_t>(
                std::max<uint64_t>(1, value(Quantity::CommSize).value_or(1)));
        };

        NodeType type = NodeType::Comp;
        if (kind == "mem_load")
            type = NodeType::MemLoad;
        else if (kind == "mem_store")
            type = NodeType::MemStore;
        else if (isPointToPoint(kind))
            type = entry.peer > 0 ? NodeType::CommSend : NodeType::CommRecv;
        else if (kind.rfind("coll.", 0) == 0)
            type = NodeType::CommColl;

        auto writeTensors = [&](TraceNode& node) {
            RankEmitter::writeTensors(
                node, dataTypeOf(entry), NodeTensors{entry.inputs, entry.outputs});
        };
        out.custom("op_" + std::to_string(base + i), type, deps, [&](TraceNode& node) {
            if (std::optional<uint64_t> micros = value(Quantity::Duration))
                node.durationMicros = *micros;
            switch (type) {
            case NodeType::Comp:
                if (kind == "host")
                    node.setIsCpuOp(true);
                else if (kind != "comp.unknown")
                    node.setOpKind(kind.substr(5));
                if (entry.dtype != 0)
                    node.setDtype(dtypeNames[entry.dtype]);
                if (std::optional<uint64_t> ops = value(Quantity::NumOps))
                    node.setNumOps(static_cast<int64_t>(*ops));
                if (std::optional<uint64_t> bytes = value(Quantity::TensorSize))
                    node.setTensorSize(*bytes);
                if (entry.gemmClass >= 0) {
                    std::array<int64_t, 4> shape = gemmOfClass(gemmClassNames[entry.gemmClass]);
                    node.setGemmM(shape[0]);
                    node.setGemmN(shape[1]);
                    node.setGemmK(shape[2]);
                    node.setGemmBatch(shape[3]);
                }
                writeTensors(node);
                break;
            case NodeType::MemLoad:
            case NodeType::MemStore:
                node.setTensorSize(std::max<uint64_t>(1, value(Quantity::TensorSize).value_or(1)));
                writeTensors(node);
                break;
            case NodeType::CommSend:
                node.setCommSrc(static_cast<int32_t>(rank));
                node.setCommDst(static_cast<int32_t>((rank + entry.peer) % ranks));
                node.setCommSize(commBytes());
                node.setCommTag(entry.tag);
                break;
            case NodeType::CommRecv:
                node.setCommSrc(static_cast<int32_t>((rank + ranks + entry.peer) % ranks));
                node.setCommDst(static_cast<int32_t>(rank));
                node.setCommSize(commBytes());
                node.setCommTag(entry.tag);
                break;
            default: {
                std::optional<et::CollectiveType> collective = collectiveFromName(kind.substr(5));
                node.setCommType(*collective);
                node.setCommSize(*collective == et::CollectiveType::Barrier
                                     ? static_cast<int64_t>(value(Quantity::CommSize).value_or(0))
                                     : commBytes());
                if (entry.layout >= 0)
                    node.setPgName(std::to_string(groupOf(entry.layout, rank).id));
                break;
            }
            }
        });
    }
}

Categorical Synthesizer::kindCounts() const
{
    Categorical counts;
    for (const Entry& entry : skeleton) {
        const std::string& kind = kindNames[entry.kind];
        if (isPointToPoint(kind))
            ++counts[entry.peer > 0 ? "send" : "recv"];
        else
            ++counts[kind];
    }
    return counts;
}

nlohmann::ordered_json Synthesizer::summary() const
{
    nlohmann::ordered_json out;
    out["format"] = synthFormat;
    out["version"] = synthFormatVersion;
    out["ranks"] = spec.ranks;
    out["nodes_per_rank"] = skeleton.size();
    out["seed"] = spec.seed;
    out["kind_counts"] = kindCounts();
    out["communicator_groups"] = nlohmann::ordered_json::array();
    for (const Layout& layout : layouts)
        out["communicator_groups"].push_back({{"size", layout.size},
                                              {"stride", layout.stride},
                                              {"groups", spec.ranks / layout.size}});
    out["dropped_point_to_point"] = droppedP2p;
    out["kept"] = {"node-kind sequence (n-gram model with back-off)",
                   "per-kind quantiles of num_ops, tensor_size, comm_size and duration_us",
                   "element types",
                   "dependency counts and distances",
                   "collective types, sizes and communicator-group shapes (with the mean size "
                   "per shape)",
                   "GEMM shapes as quarter-octave classes (written shrunk by 1/64)",
                   "point-to-point peer offsets (as rank offsets)",
                   "tensors per compute and memory node, and which earlier node wrote or read "
                   "each input (on-chip reuse), as counts and distances"};
    out["not_kept"] = {"node names (written as op_<id>)",
                       "operator names, schemas, tensor shapes and exact GEMM shapes",
                       "node ids, timestamps, tensor ids and sizes, other attributes",
                       "process-group names and descriptions",
                       "differences between ranks (every rank follows one shared skeleton)"};
    return out;
}

fs::path
writeSynthSummary(const Synthesizer& synth, const fs::path& folder, const std::string& name)
{
    fs::path file = folder / (name + ".synth.json");
    writeFileAtomically(file, synth.summary().dump(2) + "\n");
    return file;
}

} // namespace etsim::workloads::synth
