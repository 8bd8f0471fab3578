// Longer than most files (about 700 lines): the parameter tables of the fabric map, of one
// dimension and of the fat tree, one entry per key with its rule, beside the algorithm-list
// reader and the presets they parse.

#include "models/net/NetConfig.h"

#include "kernel/Error.h"

#include <filesystem>
#include <string>

namespace etsim::net {

namespace {

constexpr const char* collectiveKeys[configurableCollectives.size()] = {
    "all_reduce", "reduce_scatter", "all_gather", "all_to_all", "broadcast", "reduce", "barrier"};

bool isPowerOfTwo(std::uint32_t value)
{
    return value != 0 && (value & (value - 1)) == 0;
}

std::string positiveProblem(Bandwidth value)
{
    return value.bytesPerSecond() > 0.0 ? std::string() : "must be greater than 0 B/s";
}

ParamTable<DimConfig> makeDimParams()
{
    ParamTable<DimConfig> table(
        "fabric.dim", "fabric.topology.dims[i]", [] { return DimConfig{}; });
    table
        .choice(
            "kind",
            [](auto& d) -> auto& { return d.kind; },
            dimKindNames,
            "`ring` (bidirectional, one link each way between neighbours), `uni_ring`, "
            "`fully_connected` (one link per ordered pair), `switch` (a star around one "
            "switch device per line: two links per transfer)")
        .required();
    table
        .value(
            "size",
            [](auto& d) -> auto& { return d.size; },
            "integer ≥ 2",
            "members per line of this dimension, e.g. 8")
        .required()
        .rule([](const DimConfig& d) {
            return d.size < 2 ? "must be at least 2 (a dimension of one member has no links)" : "";
        });
    table
        .value(
            "bandwidth",
            [](auto& d) -> auto& { return d.bandwidth; },
            "bandwidth > 0",
            "per link and direction, e.g. \"450 GB/s\"")
        .required()
        .rule([](const DimConfig& d) { return positiveProblem(d.bandwidth); });
    table
        .value(
            "latency",
            [](auto& d) -> auto& { return d.latency; },
            "time",
            "per link (wire + switch traversal), e.g. \"500 ns\"")
        .required();
    table
        .value(
            "efficiency",
            [](auto& d) -> auto& { return d.efficiency; },
            "number in (0, 1]",
            "usable fraction of the bandwidth")
        .rule([](const DimConfig& d) {
            return d.efficiency > 0.0 && d.efficiency <= 1.0
                       ? ""
                       : "must be in (0, 1]: the usable fraction of the link bandwidth";
        });
    table
        .custom(
            "switch_bandwidth",
            "bandwidth > 0",
            "switch dimensions, flow fidelity: the internal (crossbar) bandwidth of one switch, "
            "shared max-min fairly by every flow crossing it; unset = non-blocking switch",
            [](const ConfigNode& node, DimConfig& d) { d.switchBandwidth = node.as<Bandwidth>(); },
            [](const DimConfig& d) {
                return d.switchBandwidth ? YAML::Node(toString(*d.switchBandwidth)) : YAML::Node();
            })
        .defaultIs("unset")
        .rule([](const DimConfig& d) -> std::string {
            if (!d.switchBandwidth)
                return {};
            if (std::string problem = positiveProblem(*d.switchBandwidth); !problem.empty())
                return problem;
            return d.kind == DimKind::Switch
                       ? ""
                       : "only a switch dimension has a crossbar; remove the key or use kind: "
                         "switch";
        });
    table.value(
        "nic_latency",
        [](auto& d) -> auto& { return d.nicLatency; },
        "time",
        "NIC/RDMA latency per message that crosses this dimension (both ends' network stack), "
        "beyond the links' latency; flow and analytical fidelities; 0 = none (NVLink)");
    return table;
}

ParamTable<FatTreeConfig> makeFatTreeParams()
{
    ParamTable<FatTreeConfig> table(
        "fabric.fat_tree", "fabric.topology.fat_tree", [] { return FatTreeConfig{}; });
    table
        .value(
            "endpoints",
            [](auto& t) -> auto& { return t.endpoints; },
            "integer ≥ 2",
            "number of endpoints, e.g. 1024")
        .required()
        .rule([](const FatTreeConfig& t) { return t.endpoints < 2 ? "must be at least 2" : ""; });
    table
        .value(
            "endpoints_per_leaf",
            [](auto& t) -> auto& { return t.endpointsPerLeaf; },
            "integer dividing endpoints",
            "endpoints on one leaf switch")
        .required()
        .rule([](const FatTreeConfig& t) {
            return t.endpointsPerLeaf == 0 || t.endpoints % t.endpointsPerLeaf != 0
                       ? "must divide endpoints (" + std::to_string(t.endpoints) + ") evenly"
                       : std::string();
        });
    table
        .value(
            "spines",
            [](auto& t) -> auto& { return t.spines; },
            "integer ≥ 1",
            "number of spine switches")
        .required()
        .rule([](const FatTreeConfig& t) { return atLeastOneProblem(t.spines); });
    table
        .value(
            "host_bandwidth",
            [](auto& t) -> auto& { return t.hostBandwidth; },
            "bandwidth > 0",
            "endpoint-leaf link rate")
        .required()
        .rule([](const FatTreeConfig& t) { return positiveProblem(t.hostBandwidth); });
    table
        .value(
            "host_latency",
            [](auto& t) -> auto& { return t.hostLatency; },
            "time",
            "endpoint-leaf link latency")
        .required();
    table
        .value(
            "uplink_bandwidth",
            [](auto& t) -> auto& { return t.uplinkBandwidth; },
            "bandwidth > 0",
            "leaf-spine link rate")
        .required()
        .rule([](const FatTreeConfig& t) { return positiveProblem(t.uplinkBandwidth); });
    table
        .value(
            "uplink_latency",
            [](auto& t) -> auto& { return t.uplinkLatency; },
            "time",
            "leaf-spine link latency")
        .required();
    table.value(
        "rail_optimised",
        [](auto& t) -> auto& { return t.railOptimised; },
        "boolean",
        "endpoint r on leaf r % leaves (GPU i of every node on rail i)");
    return table;
}

// Reads a map that holds one table's keys and checks its rules at the keys.
template <typename C>
C readTable(ConfigMap& map, const ParamTable<C>& table, C value)
{
    ParamLocations where;
    table.readSection(map, "", value, &where);
    if (std::optional<ParamViolation> bad = table.firstViolation(value))
        failAt(*bad, where, map);
    return value;
}

DimConfig parseDim(ConfigMap& map, Fidelity fidelity)
{
    DimConfig dim = readTable(map, dimParams(), DimConfig{});
    if (dim.switchBandwidth && !abilitiesOf(fidelity).sharesLinks)
        map.fail("switch_bandwidth",
                 "a shared crossbar is modelled by flow-level link sharing; use fidelity: "
                 "flow, or remove the key for a non-blocking switch");
    return dim;
}

void readDims(const ConfigNode& node, NetConfig& config)
{
    std::vector<DimConfig> dims;
    for (const ConfigNode& element : node.elements())
        dims.push_back(element.map([&](ConfigMap& dim) { return parseDim(dim, config.fidelity); }));
    if (dims.empty())
        node.fail("needs at least one dimension");
    if (dims.size() > 32)
        node.fail("at most 32 dimensions are supported");
    std::uint64_t endpoints = 1;
    for (const DimConfig& dim : dims)
        endpoints *= dim.size;
    if (endpoints > (1ULL << 31))
        node.fail("the product of the sizes exceeds 2^31 endpoints");
    config.dims = std::move(dims);
}

// {msccl: FILE} or {chakra: PREFIX}; the path is taken relative to the configuration file.
std::shared_ptr<CustomAlgorithmSource> readCustomSource(ConfigMap& map)
{
    auto source = std::make_shared<CustomAlgorithmSource>();
    bool msccl = map.has("msccl");
    if (msccl == map.has("chakra"))
        map.fail("msccl",
                 "give exactly one of msccl: FILE.xml (an MSCCL program) or chakra: "
                 "PREFIX (algorithm traces PREFIX.<rank>.et)");
    source->format =
        msccl ? CustomAlgorithmSource::Format::Msccl : CustomAlgorithmSource::Format::Chakra;
    auto path = map.required<Located<std::string>>(msccl ? "msccl" : "chakra",
                                                   msccl ? "an MSCCL XML file" : "a trace prefix");
    source->location = path.location;
    source->span = map.enumField("span", customSpanNames, CustomAlgorithmSource::Span::Dimension);
    std::filesystem::path resolved(path.value);
    std::filesystem::path file(path.location.file);
    if (resolved.is_relative() && file.has_parent_path() && std::filesystem::exists(file))
        resolved = file.parent_path() / resolved;
    source->path = resolved.string();
    return source;
}

std::vector<AlgorithmKind>
readAlgorithmList(ConfigMap& map,
                  const char* key,
                  const NetConfig& config,
                  std::vector<AlgorithmKind> fallback,
                  std::vector<std::shared_ptr<CustomAlgorithmSource>>* customs = nullptr)
{
    std::optional<ConfigNode> node = map.value(key);
    if (!node)
        return fallback;
    std::vector<AlgorithmKind> list;
    if (customs)
        customs->clear();
    for (const ConfigNode& element : node->elements()) {
        if (!element.isMap()) {
            list.push_back(detail::readEnum(element, algorithmNames));
            if (customs)
                customs->push_back(nullptr);
            continue;
        }
        if (!customs)
            element.fail("a custom algorithm implements one collective; list it under that "
                         "collective's key (all_reduce, reduce_scatter, all_gather, all_to_all)");
        customs->push_back(element.map(readCustomSource));
        list.push_back(AlgorithmKind::Custom);
    }
    std::uint32_t dims = config.dimCount();
    if (customs && list.size() > 1)
        for (const auto& source : *customs)
            if (source && source->span == CustomAlgorithmSource::Span::All)
                node->fail("a program that spans all dimensions (span: all) runs alone: make it "
                           "the list's only entry, or give one algorithm per dimension with "
                           "span: dimension");
    if (list.size() == 1 && dims > 1) {
        list.resize(dims, list.front());
        if (customs)
            customs->resize(dims, customs->front());
    }
    if (list.size() != dims)
        node->fail("lists " + std::to_string(list.size()) + " algorithms but the topology has " +
                   std::to_string(dims) + " dimensions (give one per dimension, or one for all)");
    for (std::uint32_t dim = 0; dim < dims; ++dim) {
        if (list[dim] == AlgorithmKind::HalvingDoubling && !isPowerOfTwo(config.dimSize(dim)))
            node->fail("halving_doubling needs a power-of-two dimension, but dimension " +
                       std::to_string(dim) + " has " + std::to_string(config.dimSize(dim)) +
                       " members (use ring or direct there)");
        if (list[dim] != AlgorithmKind::InSwitch)
            continue;
        std::string name(key);
        bool scatterGather =
            name == "reduce_scatter" || name == "all_gather" || name == "all_reduce_phases";
        if (name != "all_reduce" && !scatterGather)
            node->fail("in_switch runs only all_reduce, reduce_scatter and all_gather; list it "
                       "under algorithms.all_reduce, reduce_scatter, all_gather or "
                       "all_reduce_phases");
        if (config.topologyKind != TopologyKind::MultiDim ||
            config.dims[dim].kind != DimKind::Switch)
            node->fail("in_switch needs a switch dimension, but dimension " + std::to_string(dim) +
                       " is not one (use kind: switch there, or another algorithm)");
        if (!abilitiesOf(config.fidelity).carriesStreams)
            node->fail("in_switch is an etsim extension that ASTRA-sim's network models do not "
                       "have; use fidelity flow or analytical");
        if (scatterGather && !abilitiesOf(config.fidelity).sharesLinks)
            node->fail("in_switch reduce-scatter and all-gather run as shard streams that share "
                       "the switch links, which only the flow fidelity models; use fidelity: "
                       "flow");
    }
    return list;
}

void parseAlgorithms(ConfigMap& map, NetConfig& config)
{
    std::vector<AlgorithmKind> fallback = readAlgorithmList(
        map, "default", config, std::vector<AlgorithmKind>(config.dimCount(), AlgorithmKind::Ring));
    for (std::size_t index = 0; index < configurableCollectives.size(); ++index) {
        config.algorithms[index] = readAlgorithmList(
            map, collectiveKeys[index], config, fallback, &config.customAlgorithms[index]);
        config.customAlgorithms[index].resize(config.dimCount());
    }
    if (map.has("all_reduce_phases"))
        config.allReducePhases = readAlgorithmList(map, "all_reduce_phases", config, {});
}

YAML::Node algorithmListYaml(const std::vector<AlgorithmKind>& list,
                             const std::vector<std::shared_ptr<CustomAlgorithmSource>>* customs)
{
    YAML::Node node(YAML::NodeType::Sequence);
    node.SetStyle(YAML::EmitterStyle::Flow);
    for (std::size_t dim = 0; dim < list.size(); ++dim) {
        const CustomAlgorithmSource* source =
            customs && dim < customs->size() ? (*customs)[dim].get() : nullptr;
        if (list[dim] != AlgorithmKind::Custom || !source) {
            node.push_back(std::string(enumName(algorithmNames, list[dim])));
            continue;
        }
        YAML::Node custom(YAML::NodeType::Map);
        custom[source->format == CustomAlgorithmSource::Format::Msccl ? "msccl" : "chakra"] =
            source->path;
        custom["span"] = std::string(enumName(customSpanNames, source->span));
        node.push_back(custom);
        if (source->span == CustomAlgorithmSource::Span::All)
            break; // the list's only entry
    }
    return node;
}

YAML::Node algorithmsYaml(const NetConfig& config)
{
    YAML::Node node(YAML::NodeType::Map);
    for (std::size_t index = 0; index < configurableCollectives.size(); ++index)
        node[collectiveKeys[index]] =
            algorithmListYaml(config.algorithms[index], &config.customAlgorithms[index]);
    if (!config.allReducePhases.empty())
        node["all_reduce_phases"] = algorithmListYaml(config.allReducePhases, nullptr);
    return node;
}

using AlgorithmLatencies = std::array<Time, builtInAlgorithmCount>;

AlgorithmLatencies& latenciesOf(NetConfig& config, bool step)
{
    return step ? config.stepLatency : config.baseLatency;
}

// {ring: "3.4 us", double_binary_tree: "4 us"}: algorithms left out keep their value.
void readLatencies(ConfigMap& map, AlgorithmLatencies& latencies)
{
    for (const auto& entry : algorithmNames)
        if (map.has(entry.name))
            latencies[static_cast<std::size_t>(entry.value)] = map.required<Time>(entry.name);
}

YAML::Node latenciesYaml(const AlgorithmLatencies& latencies)
{
    YAML::Node node(YAML::NodeType::Map);
    node.SetStyle(YAML::EmitterStyle::Flow);
    for (const auto& entry : algorithmNames)
        node[std::string(entry.name)] = toString(latencies[static_cast<std::size_t>(entry.value)]);
    return node;
}

bool isMultiDim(const NetConfig& config)
{
    return config.topologyKind == TopologyKind::MultiDim;
}

bool isFatTree(const NetConfig& config)
{
    return config.topologyKind == TopologyKind::FatTree;
}

ParamTable<NetConfig> makeNetParams()
{
    ParamTable<NetConfig> table("fabric", "fabric", [] {
        NetConfig config;
        config.topologyKind = TopologyKind::MultiDim;
        return config;
    });
    table.choice(
        "fidelity",
        [](auto& c) -> auto& { return c.fidelity; },
        fidelityNames,
        "timing model of the fabric (Fidelity modes below)");
    table
        .choice(
            "topology.kind",
            [](auto& c) -> auto& { return c.topologyKind; },
            topologyKindNames,
            "dimensions (`dims`) or a leaf/spine tree (`fat_tree`)")
        .required();
    table
        .custom("topology.dims",
                "list of dimension maps (keys below)",
                "the dimensions, innermost first; at most 32, at most 2^31 endpoints",
                readDims,
                [](const NetConfig& config) {
                    YAML::Node dims(YAML::NodeType::Sequence);
                    for (const DimConfig& dim : config.dims)
                        dims.push_back(dimParams().write(dim));
                    return dims;
                })
        .when(isMultiDim)
        .required()
        .defaultIs("required with `multi_dim`");
    table
        .custom(
            "topology.fat_tree",
            "map (keys below)",
            "the leaf/spine tree",
            [](const ConfigNode& node, NetConfig& config) {
                config.fatTree = node.map([](ConfigMap& tree) {
                    return readTable(tree, fatTreeParams(), FatTreeConfig{});
                });
            },
            [](const NetConfig& config) { return fatTreeParams().write(config.fatTree); })
        .when(isFatTree)
        .required()
        .defaultIs("required with `fat_tree`");
    table.value(
        "nic.injection_bandwidth",
        [](auto& c) -> auto& { return c.nicBandwidth; },
        "bandwidth",
        "adds one injection and one ejection link per endpoint to every route; 0 = none");
    table.value(
        "nic.message_delay",
        [](auto& c) -> auto& { return c.messageDelay; },
        "time",
        "fixed delay per message at the receiver");
    // Written only with packets: a packet section without a payload is an error.
    for (const bool payload : {true, false})
        table
            .custom(
                payload ? "packet.payload" : "packet.header",
                payload ? "size ≥ 1 B" : "size",
                payload ? "payload bytes per packet, e.g. \"4 KiB\"; wire bytes = S + ceil(S / "
                          "payload) · header"
                        : "header+trailer bytes per packet",
                [payload](const ConfigNode& node, NetConfig& c) {
                    (payload ? c.packetPayload : c.packetHeader) = node.as<Size>();
                },
                [payload](const NetConfig& c) {
                    return c.packetPayload.bytes() == 0
                               ? YAML::Node()
                               : YAML::Node(toString(payload ? c.packetPayload : c.packetHeader));
                })
            .required()
            .defaultIs(payload ? "none (no packets)" : "none")
            .rule([payload](const NetConfig& c) {
                return payload && c.packetPayload.bytes() == 0 ? "must be at least 1 B" : "";
            });
    table
        .custom(
            "collectives.algorithms",
            "map: `default`, `all_reduce`, `reduce_scatter`, `all_gather`, `all_to_all`, "
            "`broadcast`, `reduce`, `barrier`, `all_reduce_phases` → list",
            "one algorithm per dimension, or one for all (Collectives below): " +
                choiceText(algorithmNames) + ", or `{msccl: FILE}` / `{chakra: PREFIX}`",
            [](const ConfigNode& node, NetConfig& config) {
                node.map([&](ConfigMap& sub) { parseAlgorithms(sub, config); });
            },
            algorithmsYaml)
        .defaultIs("`ring` in every dimension");
    table
        .choice(
            "collectives.group_algorithm",
            [](auto& c) -> auto& { return c.groupAlgorithm; },
            algorithmNames,
            "algorithm of collectives over a sub-group of ranks (run flat)")
        .rule([](const NetConfig& c) {
            return c.groupAlgorithm == AlgorithmKind::HalvingDoubling ||
                           c.groupAlgorithm == AlgorithmKind::InSwitch
                       ? std::string(enumName(algorithmNames, c.groupAlgorithm)) +
                             " cannot run on groups of any size; use ring, direct or "
                             "double_binary_tree"
                       : std::string();
        });
    table
        .value(
            "collectives.chunks",
            [](auto& c) -> auto& { return c.chunks; },
            "1 to 1,024",
            "ASTRA-sim `preferred-dataset-splits` (every chunk runs every step as its own "
            "messages)")
        .rule([](const NetConfig& c) {
            return c.chunks == 0 || c.chunks > maxChunks
                       ? "must be from 1 to " + std::to_string(maxChunks)
                       : std::string();
        });
    table
        .value(
            "collectives.active_chunks",
            [](auto& c) -> auto& { return c.activeChunks; },
            "integer ≥ 1",
            "chunks of one collective a member runs at once per dimension")
        .rule([](const NetConfig& c) { return atLeastOneProblem(c.activeChunks); });
    table.choice(
        "collectives.pipeline_depth",
        [](auto& c) -> auto& { return c.pipelineDepth; },
        pipelineDepthNames,
        "fixed: every collective runs as `chunks` chunks; auto: a collective of phases in "
        "several dimensions runs as more (up to 16 times) where the deeper pipeline shortens "
        "it by the model's own estimate (docs/network.md, Pipeline depth); flow and analytical "
        "fidelities");
    table.value(
        "collectives.endpoint_delay",
        [](auto& c) -> auto& { return c.endpointDelay; },
        "time",
        "at the start of every phase and the end of every step");
    table.value(
        "collectives.local_memory_bandwidth",
        [](auto& c) -> auto& { return c.localMemoryBandwidth; },
        "bandwidth",
        "prices reductions: 3 · reduced bytes / bandwidth; 0 = free");
    for (const bool step : {true, false})
        table
            .custom(
                step ? "collectives.step_latency" : "collectives.base_latency",
                "map: " + choiceText(algorithmNames) + " → time",
                step ? "software/protocol latency of one step of that algorithm, at the end of "
                       "every step (NCCL's per-hop latency); flow and analytical fidelities"
                     : "once per collective and member, before its first phase: the largest of "
                       "the algorithms its phases run (NCCL's base latency); flow and analytical "
                       "fidelities",
                [step](const ConfigNode& node, NetConfig& config) {
                    node.map(
                        [&](ConfigMap& sub) { readLatencies(sub, latenciesOf(config, step)); });
                },
                [step](const NetConfig& config) {
                    return latenciesYaml(step ? config.stepLatency : config.baseLatency);
                })
            .defaultIs("0 for every algorithm");
    table.choice(
        "collectives.optimization",
        [](auto& c) -> auto& { return c.optimization; },
        optimizationNames,
        "how a multi-dimension all-reduce is split into phases");
    return table;
}

// Reads a section of the fabric map through the table and checks its rules at its keys.
void readNetSection(ConfigMap& map, std::string_view section, NetConfig& config)
{
    netParams().readSection(map, section, config);
    netParams().checkSection(map, section, config);
}

} // namespace

std::uint32_t NetConfig::endpointCount() const
{
    if (topologyKind == TopologyKind::FatTree)
        return fatTree.endpoints;
    std::uint32_t count = 1;
    for (const DimConfig& dim : dims)
        count *= dim.size;
    return count;
}

std::uint32_t NetConfig::dimCount() const
{
    return topologyKind == TopologyKind::FatTree ? 1 : static_cast<std::uint32_t>(dims.size());
}

std::uint32_t NetConfig::dimSize(std::uint32_t dim) const
{
    return topologyKind == TopologyKind::FatTree ? fatTree.endpoints : dims.at(dim).size;
}

AlgorithmKind NetConfig::algorithm(CollectiveType type, std::uint32_t dim) const
{
    for (std::size_t index = 0; index < configurableCollectives.size(); ++index)
        if (configurableCollectives[index] == type)
            return algorithms[index].at(dim);
    throw Error(std::string("collective ") + toString(type) +
                " is not supported by the fabric (supported: all_reduce, reduce_scatter, "
                "all_gather, all_to_all, broadcast, reduce, barrier)");
}

const CollectiveAlgorithmIf* NetConfig::customAlgorithm(CollectiveType type,
                                                        std::uint32_t dim) const
{
    for (std::size_t index = 0; index < configurableCollectives.size(); ++index) {
        if (configurableCollectives[index] != type)
            continue;
        if (algorithms[index].at(dim) != AlgorithmKind::Custom)
            return nullptr;
        const auto& source = customAlgorithms[index].at(dim);
        if (!source || !source->algorithm)
            throw Error("the custom algorithm for " + std::string(toString(type)) +
                        " in dimension " + std::to_string(dim) +
                        (source ? " (" + source->path + ")" : std::string()) +
                        " was never loaded; build the fabric through the platform layer, "
                        "which reads it");
        return source->algorithm.get();
    }
    return nullptr;
}

const CollectiveAlgorithmIf* NetConfig::wholeGroupAlgorithm(CollectiveType type) const
{
    for (std::size_t index = 0; index < configurableCollectives.size(); ++index) {
        if (configurableCollectives[index] != type || customAlgorithms[index].empty())
            continue;
        const auto& source = customAlgorithms[index].front();
        if (!source || source->span != CustomAlgorithmSource::Span::All)
            return nullptr;
        return customAlgorithm(type, 0);
    }
    return nullptr;
}

const NodeProgram* NetConfig::nodeProgram(CollectiveType type, std::uint64_t node) const
{
    if (auto found = nodeProgramsByNode.find(node); found != nodeProgramsByNode.end())
        return found->second.get();
    for (std::size_t index = 0; index < configurableCollectives.size(); ++index)
        if (configurableCollectives[index] == type)
            return nodePrograms[index].get();
    return nullptr;
}

const ParamTable<DimConfig>& dimParams()
{
    static const ParamTable<DimConfig> table = makeDimParams();
    return table;
}

const ParamTable<FatTreeConfig>& fatTreeParams()
{
    static const ParamTable<FatTreeConfig> table = makeFatTreeParams();
    return table;
}

const ParamTable<NetConfig>& netParams()
{
    static const ParamTable<NetConfig> table = makeNetParams();
    return table;
}

YAML::Node toYaml(const NetConfig& config)
{
    return netParams().write(config);
}

NetConfig parseNetConfig(ConfigMap& map)
{
    NetConfig config;
    readNetSection(map, "", config);
    map.nested("topology", [&](ConfigMap& sub) {
        config.topologyLocation = sub.location();
        readNetSection(sub, "topology", config);
    });
    for (auto& list : config.algorithms)
        list.assign(config.dimCount(), AlgorithmKind::Ring);
    for (const char* section : {"nic", "packet", "collectives"})
        if (map.has(section))
            map.nested(section, [&](ConfigMap& sub) { readNetSection(sub, section, config); });
    return config;
}

NetConfig loadNetConfigString(const std::string& text, const std::string& fileName)
{
    return loadConfigString(text, fileName).map(parseNetConfig);
}

namespace {

// NVLink4: 18 links x 25 GB/s per direction = 450 GB/s per GPU. The 0.82 efficiency is the
// "~20 % protocol overhead" the NCCL maintainers state (nccl-tests #212): NVLink flits are not
// published, so the loss is a factor rather than packets. 936.25 ns per link is ASTRA-sim's
// calibrated HGX-H100 latency (two links GPU->NVSwitch->GPU = 1.87 us per transfer). Chunking
// and endpoint delay follow ASTRA-sim's HGX-H100-validated system file; reductions carry no
// separate cost because NCCL reduces inside the kernel that moves the data, overlapped with
// the transfer (the 0.82 already covers what that costs).
constexpr const char* hgxH100Yaml = R"(fidelity: flow
topology:
  kind: multi_dim
  dims:
    - {kind: switch, size: 8, bandwidth: "450 GB/s", latency: "936.25 ns", efficiency: 0.82}
collectives:
  algorithms: {default: [ring]}
  chunks: 4
  active_chunks: 2
  endpoint_delay: "10 ns"
)";

// Scale-out: the second dimension joins GPU i of every node through its own 400 Gb/s NIC
// (rail-optimised: the rail switch is non-blocking), with ~1 us NIC+PCIe per side and a
// sub-microsecond switch hop folded into the link latency. NIC/RDMA latency per inter-node
// message: 10.6 us, what NCCL's latency model charges an InfiniBand ring step beyond an NVLink
// one (NVIDIA/nccl src/graph/tuning.cc, hwLatencies, Simple: NET ring 14 us, NVLink ring
// 3.4 us). Neither preset has a per-step or base latency: ASTRA-sim's calibrated 936.25 ns
// per NVLink link already holds it (docs/network.md, "Latency model").
constexpr const char* hgxH100ScaleOutYaml = R"(fidelity: flow
topology:
  kind: multi_dim
  dims:
    - {kind: switch, size: 8, bandwidth: "450 GB/s", latency: "936.25 ns", efficiency: 0.82}
    - {kind: switch, size: 2, bandwidth: "400 Gb/s", latency: "1.25 us", efficiency: 0.98,
       nic_latency: "10.6 us"}
collectives:
  algorithms: {default: [ring, ring]}
  chunks: 4
  active_chunks: 2
  endpoint_delay: "10 ns"
)";

// TPU v5p-like: 1,200 GB/s bidirectional per chip over 6 ICI links = 100 GB/s per link and
// direction; wrap-around rings in every dimension.
constexpr const char* tpuTorusYaml = R"(fidelity: flow
topology:
  kind: multi_dim
  dims:
    - {kind: ring, size: 4, bandwidth: "100 GB/s", latency: "500 ns"}
    - {kind: ring, size: 4, bandwidth: "100 GB/s", latency: "500 ns"}
    - {kind: ring, size: 4, bandwidth: "100 GB/s", latency: "500 ns"}
collectives:
  algorithms: {default: [ring, ring, ring]}
  chunks: 4
  active_chunks: 1
)";

} // namespace

std::vector<std::string> netPresetNames()
{
    return {"hgx_h100", "hgx_h100_scaleout", "tpu_torus"};
}

const char* netPresetYaml(const std::string& name)
{
    if (name == "hgx_h100")
        return hgxH100Yaml;
    if (name == "hgx_h100_scaleout")
        return hgxH100ScaleOutYaml;
    if (name == "tpu_torus")
        return tpuTorusYaml;
    throw Error("unknown network preset \"" + name +
                "\"; known presets: hgx_h100, hgx_h100_scaleout, tpu_torus");
}

NetConfig netPreset(const std::string& name)
{
    return loadNetConfigString(netPresetYaml(name), "preset:" + name);
}

} // namespace etsim::net
