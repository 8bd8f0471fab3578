#pragma once
// Configuration of the fabric: topology, link parameters, fidelity mode and collective
// settings, read from YAML through kernel/Config (units such as "450 GB/s", "936.25 ns").
// docs/network.md lists every key with its unit and default; the presets below are YAML text
// parsed by the same code, so they double as examples.
//
//     fidelity: flow                 # flow | analytical | astra_aware | astra_unaware
//     topology:
//       kind: multi_dim              # multi_dim | fat_tree
//       dims:
//         - {kind: switch, size: 8, bandwidth: "450 GB/s", latency: "936.25 ns",
//            efficiency: 0.82}
//     nic: {injection_bandwidth: "50 GB/s", message_delay: "1 us"}
//     packet: {payload: "4 KiB", header: "82 B"}
//     collectives:
//       algorithms: {default: [ring], all_to_all: [direct]}
//       # algorithms.all_reduce_phases: [in_switch, ring] runs a multi-dimension all-reduce's
//       # reduce-scatter and all-gather phases in the NVSwitch (NCCL NVLS)
//       chunks: 4
//       active_chunks: 2
//       endpoint_delay: "10 ns"
//       local_memory_bandwidth: "3350 GB/s"
//       optimization: local_bw_aware

#include "kernel/Config.h"
#include "kernel/NodeInfo.h"
#include "kernel/ParamTable.h"
#include "kernel/Units.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace etsim::net {

// Declared only: the algorithm is built by the models layer (SystemC), and this header stays
// in the SystemC-free net_topology library.
class CollectiveAlgorithmIf;

/// How messages are timed (docs/network.md says what each ignores).
enum class Fidelity : std::uint8_t {
    /// Flows share links max-min fairly; rates re-evaluated when a flow starts or ends.
    Flow,
    /// latency + size / bottleneck bandwidth per message, no link state (congestion-unaware).
    Analytical,
    /// ASTRA-sim's congestion-aware backend: FIFO links, store-and-forward, integer ns.
    AstraAware,
    /// ASTRA-sim's congestion-unaware backend: floor(hops * latency + size / B) ns.
    AstraUnaware,
};
inline constexpr EnumName<Fidelity> fidelityNames[] = {
    {"flow", Fidelity::Flow},
    {"analytical", Fidelity::Analytical},
    {"astra_aware", Fidelity::AstraAware},
    {"astra_unaware", Fidelity::AstraUnaware},
};

/// How a fidelity's fabric splits over the processes of a partitioned run
/// (docs/partitioned-runs.md).
enum class Partitioning : std::uint8_t {
    /// A message's arrival is known when it starts (no link state between messages): the
    /// partitioned run is the single-process run, to the picosecond.
    Exact,
    /// Each process shares links among the messages its own ranks send; a message to a rank
    /// of another process leaves when its last byte has crossed its links, so two messages of
    /// different processes on one link do not slow each other (the documented error).
    PerProcessSharing,
    /// Links keep state between messages (FIFO queues): each link is timed by one process, the
    /// one of the endpoint it leaves from (a switch's down link: the endpoint it enters), and a
    /// message goes on in another process at the first link that process times. Exact.
    LinkOwners,
};

/// What a fidelity can time beyond point-to-point messages: read by the configuration's checks
/// (which name the key at fault) and by the network core, so neither chooses by fidelity name.
/// The timing itself is the fidelity's policy (models/net/fidelity/).
struct FidelityAbilities {
    Fidelity fidelity;
    /// Flows share links max-min fairly (a switch crossbar, in-switch shard streams).
    bool sharesLinks;
    /// In-switch streams: one transfer over many routes at one rate.
    bool carriesStreams;
    /// How a run splits over processes (docs/partitioned-runs.md).
    Partitioning partitioning;
    /// Charges the collective latency model (`collectives.step_latency`, `base_latency`,
    /// `dims[i].nic_latency`, docs/network.md); ASTRA-sim's backends have none, so the astra
    /// fidelities leave it out and stay ASTRA-sim's numbers.
    bool chargesLatency;
    /// Chooses a multi-phase collective's chunk count (`collectives.pipeline_depth: auto`,
    /// collectives/PipelineDepth.h); the astra fidelities run ASTRA-sim's fixed `chunks`.
    bool choosesPipelineDepth;
};
inline constexpr FidelityAbilities fidelityAbilities[] = {
    {Fidelity::Flow, true, true, Partitioning::PerProcessSharing, true, true},
    {Fidelity::Analytical, false, true, Partitioning::Exact, true, true},
    {Fidelity::AstraAware, false, false, Partitioning::LinkOwners, false, false},
    {Fidelity::AstraUnaware, false, false, Partitioning::Exact, false, false},
};
constexpr const FidelityAbilities& abilitiesOf(Fidelity fidelity)
{
    for (const FidelityAbilities& abilities : fidelityAbilities)
        if (abilities.fidelity == fidelity)
            return abilities;
    return fidelityAbilities[0];
}

/// The building block of one dimension of a multi-dimensional topology.
enum class DimKind : std::uint8_t {
    /// Bidirectional ring: one link each way between neighbours.
    Ring,
    /// Unidirectional ring: links i -> i+1 only.
    UniRing,
    /// One link per ordered pair of members.
    FullyConnected,
    /// A star around one switch device per dimension line; every transfer crosses two links.
    Switch,
};
inline constexpr EnumName<DimKind> dimKindNames[] = {
    {"ring", DimKind::Ring},
    {"uni_ring", DimKind::UniRing},
    {"fully_connected", DimKind::FullyConnected},
    {"switch", DimKind::Switch},
};

enum class TopologyKind : std::uint8_t { MultiDim, FatTree };
inline constexpr EnumName<TopologyKind> topologyKindNames[] = {
    {"multi_dim", TopologyKind::MultiDim},
    {"fat_tree", TopologyKind::FatTree},
};

/// A collective algorithm (models/net/collectives/).
/// InSwitch (NVLS-like in-switch reduction) runs only on switch dimensions: whole all-reduces
/// (flow and analytical fidelities), and reduce-scatter / multicast all-gather (flow only).
enum class AlgorithmKind : std::uint8_t {
    Ring,
    Direct,
    HalvingDoubling,
    DoubleBinaryTree,
    InSwitch,
    /// A program read from a file ({msccl: FILE} or {chakra: PREFIX}); no name of its own.
    Custom,
};
inline constexpr EnumName<AlgorithmKind> algorithmNames[] = {
    {"ring", AlgorithmKind::Ring},
    {"direct", AlgorithmKind::Direct},
    {"halving_doubling", AlgorithmKind::HalvingDoubling},
    {"double_binary_tree", AlgorithmKind::DoubleBinaryTree},
    {"in_switch", AlgorithmKind::InSwitch},
};
/// Built-in algorithms (every AlgorithmKind but Custom), the entries of algorithmNames.
inline constexpr std::size_t builtInAlgorithmCount = std::size(algorithmNames);

/// How an all-reduce over several dimensions is split into phases (ASTRA-sim's
/// collective-optimization).
enum class CollectiveOptimization : std::uint8_t {
    /// RS(d0) .. RS(dD-2), AR(dD-1), AG(dD-2) .. AG(d0): payload shrinks on the way in.
    LocalBwAware,
    /// The same collective type in every dimension, full payload each time.
    Baseline,
};
inline constexpr EnumName<CollectiveOptimization> optimizationNames[] = {
    {"local_bw_aware", CollectiveOptimization::LocalBwAware},
    {"baseline", CollectiveOptimization::Baseline},
};

/// How many chunks a collective of several phases runs as.
enum class PipelineDepthMode : std::uint8_t {
    /// Always `chunks` (ASTRA-sim's preferred-dataset-splits).
    Fixed,
    /// At least `chunks`, more where a deeper pipeline shortens the collective by the model's
    /// own estimate (collectives/PipelineDepth.h); flow and analytical fidelities.
    Auto,
};
inline constexpr EnumName<PipelineDepthMode> pipelineDepthNames[] = {
    {"fixed", PipelineDepthMode::Fixed},
    {"auto", PipelineDepthMode::Auto},
};

constexpr double defaultEfficiency = 1.0;
constexpr std::uint32_t defaultChunks = 1;
constexpr std::uint32_t defaultActiveChunks = 1;
/// Most chunks a collective is split into (`chunks`, ASTRA-sim's preferred-dataset-splits):
/// every chunk runs every step of the algorithm as its own messages, so the work of one
/// collective grows with it; beyond a few hundred the result no longer changes measurably.
constexpr std::uint32_t maxChunks = 1024;
constexpr CollectiveOptimization defaultOptimization = CollectiveOptimization::LocalBwAware;
constexpr PipelineDepthMode defaultPipelineDepth = PipelineDepthMode::Auto;
constexpr Fidelity defaultFidelity = Fidelity::Flow;

/// One dimension of a multi-dimensional topology.
struct DimConfig {
    DimKind kind = DimKind::Ring;
    /// Members per line of this dimension (>= 2).
    std::uint32_t size = 0;
    /// Raw bandwidth of one link per direction.
    Bandwidth bandwidth;
    /// Latency of one link (wire plus switch traversal for switch dimensions).
    Time latency;
    /// Fraction of `bandwidth` data can use (protocol overhead not modelled by packets).
    double efficiency = defaultEfficiency;
    /// Switch dimensions: the internal (crossbar) bandwidth of one switch, shared by all the
    /// traffic crossing it; unset means the switch is non-blocking. Flow fidelity only.
    std::optional<Bandwidth> switchBandwidth;
    /// NIC/RDMA latency of one message that crosses this dimension (the network stack of both
    /// ends: work request, completion, proxy), added once per message beyond the links'
    /// latency; 0 for dimensions without a NIC (NVLink). Flow and analytical fidelities.
    Time nicLatency;

    /// bandwidth * efficiency.
    Bandwidth effectiveBandwidth() const { return bandwidth * efficiency; }
};

/// A two-tier leaf/spine fat tree (a Clos of switches). Rail-optimised: endpoint r sits on
/// leaf r % leaves (GPU i of every node on rail i) instead of leaf r / endpointsPerLeaf.
struct FatTreeConfig {
    std::uint32_t endpoints = 0;
    std::uint32_t endpointsPerLeaf = 0;
    std::uint32_t spines = 0;
    Bandwidth hostBandwidth;
    Time hostLatency;
    Bandwidth uplinkBandwidth;
    Time uplinkLatency;
    bool railOptimised = false;

    std::uint32_t leaves() const { return endpoints / endpointsPerLeaf; }
};

/// Collective kinds that carry their own algorithm list (index = position in this list).
inline constexpr std::array<CollectiveType, 7> configurableCollectives = {
    CollectiveType::AllReduce,
    CollectiveType::ReduceScatter,
    CollectiveType::AllGather,
    CollectiveType::AllToAll,
    CollectiveType::Broadcast,
    CollectiveType::Reduce,
    CollectiveType::Barrier,
};

/// A custom algorithm named in an algorithm list: {msccl: FILE.xml} or {chakra: PREFIX}
/// (PREFIX.<rank>.et). The fabric model cannot read either format (the Chakra reader is in
/// et_driver); the platform layer loads `algorithm` before the fabric is built
/// (platforms/collectives/CustomAlgorithms.h).
struct CustomAlgorithmSource {
    enum class Format : std::uint8_t { Msccl, Chakra };
    /// What the program's ranks are: the members of one dimension's line (it runs in every
    /// dimension it is listed for), or every rank of the topology in rank order (one phase
    /// spanning all dimensions; the list's only entry).
    enum class Span : std::uint8_t { Dimension, All };
    Format format = Format::Msccl;
    Span span = Span::Dimension;
    /// As written, and resolved against the configuration file's folder.
    std::string path;
    ConfigLocation location;
    std::shared_ptr<const CollectiveAlgorithmIf> algorithm;
};
inline constexpr EnumName<CustomAlgorithmSource::Span> customSpanNames[] = {
    {"dimension", CustomAlgorithmSource::Span::Dimension},
    {"all", CustomAlgorithmSource::Span::All},
};

/// ASTRA-sim's custom collective, run node by node (models/net/collectives/NodeProgram.h; the
/// peer-side topology code that includes this file needs only the name).
struct NodeProgram;

/// The runtime configuration of the fabric (units converted, every rule checked).
struct NetConfig {
    Fidelity fidelity = defaultFidelity;
    TopologyKind topologyKind = TopologyKind::MultiDim;
    std::vector<DimConfig> dims;
    FatTreeConfig fatTree;
    /// Where the topology was declared, to name it in later errors (rank count mismatch).
    ConfigLocation topologyLocation;

    /// NIC injection (and ejection) bandwidth per endpoint; 0 = not modelled.
    Bandwidth nicBandwidth;
    /// Fixed delay added to every message at the receiving endpoint.
    Time messageDelay;
    /// Packet payload and per-packet header bytes; payload 0 = no packetisation.
    Size packetPayload;
    Size packetHeader;

    /// Algorithm per collective type (configurableCollectives order) and per dimension
    /// (one entry per dimension; a fat tree has one).
    std::array<std::vector<AlgorithmKind>, configurableCollectives.size()> algorithms;
    /// Algorithm per dimension of the reduce-scatter and all-gather phases of a local_bw_aware
    /// all-reduce over several dimensions (`all_reduce_phases`); empty = the all_reduce list.
    std::vector<AlgorithmKind> allReducePhases;
    /// Where algorithms[i][dim] is Custom: its source (same shape as `algorithms`, null
    /// elsewhere; entries may share one source).
    std::array<std::vector<std::shared_ptr<CustomAlgorithmSource>>, configurableCollectives.size()>
        customAlgorithms;
    /// ASTRA-sim's custom collectives (its system file's `*-implementation-custom` keys, the
    /// astra_* fidelities): the program that runs node by node instead of the algorithm lists
    /// for a collective type (configurableCollectives order; null: none), and the programs
    /// chosen by the collective's node id (`per-node-custom-implementation`), which come first.
    std::array<std::shared_ptr<const NodeProgram>, configurableCollectives.size()> nodePrograms;
    std::unordered_map<std::uint64_t, std::shared_ptr<const NodeProgram>> nodeProgramsByNode;
    /// Per collective type: why it has no algorithm (an ASTRA-sim system file may leave out the
    /// collectives its workload does not run), so that running one is an error; empty: it has.
    std::array<std::string, configurableCollectives.size()> missingAlgorithm;
    /// Algorithm for collectives over a sub-group of ranks (run flat over the members).
    AlgorithmKind groupAlgorithm = AlgorithmKind::Ring;
    /// Chunks a collective is split into (ASTRA-sim preferred-dataset-splits).
    std::uint32_t chunks = defaultChunks;
    /// Chunks of one collective a member runs at once in one dimension.
    std::uint32_t activeChunks = defaultActiveChunks;
    /// Whether a collective of several phases may run as more than `chunks` chunks.
    PipelineDepthMode pipelineDepth = defaultPipelineDepth;
    /// Delay per collective step and at the start of every phase (ASTRA-sim endpoint-delay).
    Time endpointDelay;
    /// Local memory bandwidth that prices reductions (3 bytes moved per reduced byte);
    /// 0 = reductions are free.
    Bandwidth localMemoryBandwidth;
    CollectiveOptimization optimization = defaultOptimization;
    /// The collective latency model (flow and analytical fidelities), per built-in algorithm
    /// (index = AlgorithmKind, Ring .. InSwitch): a software/protocol latency at the end of
    /// every step of that algorithm, and a base latency once per collective (the largest of
    /// the algorithms its phases run). Zero: no latency beyond the links'.
    std::array<Time, builtInAlgorithmCount> stepLatency{};
    std::array<Time, builtInAlgorithmCount> baseLatency{};

    /// Endpoints of the topology (product of dimension sizes, or fat-tree endpoints).
    std::uint32_t endpointCount() const;
    /// Number of dimensions collectives are planned over (1 for a fat tree).
    std::uint32_t dimCount() const;
    /// Size of dimension `dim` (for a fat tree: all endpoints).
    std::uint32_t dimSize(std::uint32_t dim) const;
    /// Algorithm for `type` in dimension `dim`; throws etsim::Error for an unsupported type.
    AlgorithmKind algorithm(CollectiveType type, std::uint32_t dim) const;
    /// The loaded custom algorithm for `type` in `dim`, or nullptr where a built-in one runs;
    /// throws etsim::Error when it was listed but never loaded.
    const CollectiveAlgorithmIf* customAlgorithm(CollectiveType type, std::uint32_t dim) const;
    /// The node program collective node `node` of `type` runs, or nullptr (nodePrograms).
    const NodeProgram* nodeProgram(CollectiveType type, std::uint64_t node) const;
    /// The loaded custom algorithm for `type` whose program spans all dimensions (`span:
    /// all`), or nullptr.
    const CollectiveAlgorithmIf* wholeGroupAlgorithm(CollectiveType type) const;
};

/// Reads a network configuration map (see the top of this file); throws ConfigError with
/// file:line:col and key path for every broken rule.
NetConfig parseNetConfig(ConfigMap& map);

/// Every key of the fabric map, of one dimension map and of the fat-tree map: type, default,
/// rule and help (kernel/ParamTable.h). They drive parseNetConfig, toYaml and the key tables
/// of docs/network.md.
const ParamTable<NetConfig>& netParams();
const ParamTable<DimConfig>& dimParams();
const ParamTable<FatTreeConfig>& fatTreeParams();

/// Every value of a fabric configuration as the fabric map (presets expanded, defaults
/// written): parseNetConfig of the result gives back the same configuration.
YAML::Node toYaml(const NetConfig& config);

/// Parses YAML text holding a network map at the top level.
NetConfig loadNetConfigString(const std::string& text, const std::string& fileName = "<string>");

/// Names of the built-in presets: "hgx_h100" (8 GPUs, NVLink4 through NVSwitch, 450 GB/s
/// per direction at 82 % efficiency, ASTRA-sim's calibrated 936.25 ns per link),
/// "hgx_h100_scaleout" (2 x 8 H100: NVSwitch dimension times a 400 Gb/s rail-optimised
/// switch dimension), "tpu_torus" (4x4x4 3D torus of 100 GB/s ICI links).
std::vector<std::string> netPresetNames();
/// The YAML text of a preset; throws etsim::Error listing the names for an unknown one.
const char* netPresetYaml(const std::string& name);
/// The parsed preset.
NetConfig netPreset(const std::string& name);

} // namespace etsim::net
