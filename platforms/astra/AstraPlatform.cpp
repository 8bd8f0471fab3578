#include "platforms/astra/AstraPlatform.h"

#include "kernel/Error.h"
#include "models/net/collectives/ProgramVerifier.h"
#include "platforms/collectives/ChakraAlgorithm.h"

#include <cmath>

namespace etsim::platforms::astra {

namespace {

constexpr double bytesPerGiB = 1073741824.0;

net::DimKind dimKind(Topology topology)
{
    switch (topology) {
    case Topology::Ring:
        return net::DimKind::Ring;
    case Topology::FullyConnected:
        return net::DimKind::FullyConnected;
    case Topology::Switch:
        return net::DimKind::Switch;
    }
    return net::DimKind::Ring;
}

net::AlgorithmKind
algorithm(CollectiveImplementation implementation, const SystemConfig& system, const char* key)
{
    switch (implementation) {
    case CollectiveImplementation::Ring:
        return net::AlgorithmKind::Ring;
    case CollectiveImplementation::Direct:
        return net::AlgorithmKind::Direct;
    case CollectiveImplementation::HalvingDoubling:
        return net::AlgorithmKind::HalvingDoubling;
    case CollectiveImplementation::DoubleBinaryTree:
        return net::AlgorithmKind::DoubleBinaryTree;
    case CollectiveImplementation::OneRing:
    case CollectiveImplementation::OneDirect:
    case CollectiveImplementation::OneHalvingDoubling:
        break;
    }
    throw Error(system.file + ": " + key + ": " + collectiveImplementationName(implementation) +
                " (one algorithm over the whole network flattened to one dimension) is not "
                "modelled by etsim; give one implementation per dimension (ring, direct, "
                "halvingDoubling or doubleBinaryTree)");
}

Time nanoseconds(double ns)
{
    return Time::fromPs(static_cast<std::uint64_t>(std::llround(ns * 1000.0)));
}

const char* policyName(SchedulingPolicy policy)
{
    switch (policy) {
    case SchedulingPolicy::Lifo:
        return "LIFO";
    case SchedulingPolicy::Fifo:
        return "FIFO";
    case SchedulingPolicy::Explicit:
        return "EXPLICIT";
    }
    return "?";
}

const char* memoryTypeName(MemoryExpansion type)
{
    switch (type) {
    case MemoryExpansion::None:
        return "NO_MEMORY_EXPANSION";
    case MemoryExpansion::PerNpu:
        return "PER_NPU_MEMORY_EXPANSION";
    case MemoryExpansion::PerNode:
        return "PER_NODE_MEMORY_EXPANSION";
    case MemoryExpansion::Pool:
        return "MEMORY_POOL";
    }
    return "?";
}

hbm::RemoteMemoryKind remoteKind(MemoryExpansion type)
{
    switch (type) {
    case MemoryExpansion::None:
        return hbm::RemoteMemoryKind::None;
    case MemoryExpansion::PerNpu:
        return hbm::RemoteMemoryKind::PerNpu;
    case MemoryExpansion::PerNode:
        return hbm::RemoteMemoryKind::PerNode;
    case MemoryExpansion::Pool:
        return hbm::RemoteMemoryKind::Pool;
    }
    return hbm::RemoteMemoryKind::None;
}

// A custom implementation's traces, read node by node and verified (matching, deadlocks, and
// the data where the traces say which chunks move); null when there is none.
std::shared_ptr<const net::NodeProgram>
nodeProgram(const std::optional<CustomImplementation>& custom,
            const SystemConfig& system,
            const std::string& key)
{
    if (!custom)
        return nullptr;
    try {
        auto program = std::make_shared<const net::NodeProgram>(
            platform::loadChakraNodeProgram(custom->prefix));
        net::verifyProgram(platform::loadChakraAlgorithm(custom->prefix));
        return program;
    } catch (const ConfigError&) {
        throw;
    } catch (const Error& error) {
        custom->location.fail(std::string(error.what()) + " (" + system.file + ": " + key +
                              " names PREFIX of PREFIX.<rank>.et, relative to the working "
                              "directory)");
    }
}

} // namespace

std::optional<Congestion> parseCongestion(std::string_view text)
{
    if (text == "aware")
        return Congestion::Aware;
    if (text == "unaware")
        return Congestion::Unaware;
    return std::nullopt;
}

const char* congestionName(Congestion congestion)
{
    return congestion == Congestion::Aware ? "aware" : "unaware";
}

platform::PlatformConfig astraPlatform(const NetworkConfig& network,
                                       const SystemConfig& system,
                                       const MemoryConfig* memory,
                                       Congestion congestion,
                                       std::vector<std::string>& warnings)
{
    checkCompatible(network, system);
    const std::uint64_t npus = network.npus();
    if (npus < 2)
        throw Error(network.file + ": npus_count: the network has " + std::to_string(npus) +
                    " NPU; etsim's fabric needs at least 2 (run a one-rank trace on a "
                    "two-NPU network, or with --platform)");
    if (npus > 0xFFFFFFFFULL)
        throw Error(network.file + ": npus_count: " + std::to_string(npus) + " NPUs is too many");

    platform::PlatformConfig config;
    config.name = "astra-sim " + std::filesystem::path(network.file).filename().string() + " + " +
                  std::filesystem::path(system.file).filename().string();
    config.description = "ASTRA-sim compatibility profile";
    config.ranks = static_cast<std::uint32_t>(npus);
    // A "node" is one line of the first dimension (naming and the report only).
    config.ranksPerNode = network.dims.front().npus;

    // Driver: ASTRA-sim's slots; compute replayed unless the roofline is on.
    platform::DriverConfig& driver = config.driver;
    driver.profile = et::SchedulingProfile::Astra;
    driver.compute = system.rooflineEnabled ? et::ExecutionMode::Model : et::ExecutionMode::Replay;
    driver.memory = et::ExecutionMode::Model;
    driver.communication = et::ExecutionMode::Model;
    driver.dependencies = DependencyPolicy::DataAndCtrl;
    // Real PyTorch-derived traces carry dangling control edges; they run with a warning
    // (ASTRA-sim's feeder rejects them).
    driver.lenient = true;

    // Compute and memory nodes.
    platform::AstraNodeTiming nodes;
    nodes.roofline = system.rooflineEnabled;
    nodes.peak = FlopRate::fromFlopsPerSecond(system.peakPerfTflops * 1e12);
    nodes.localMemory = Bandwidth::fromBytesPerSecond(system.localMemBwGBps * 1e9);
    if (memory != nullptr && memory->type != MemoryExpansion::None) {
        nodes.remoteMemory.kind = remoteKind(memory->type);
        nodes.remoteMemory.latency = nanoseconds(memory->remoteMemLatencyNs);
        nodes.remoteMemory.bandwidth =
            Bandwidth::fromBytesPerSecond(memory->remoteMemBytesPerNs * 1e9);
        nodes.remoteMemory.npusPerNode = memory->type == MemoryExpansion::PerNode
                                             ? memory->npusPerNode
                                             : nodes.remoteMemory.npusPerNode;
    }
    config.astra = nodes;
    // Only for the report's FLOP utilisation: the peak the roofline uses.
    config.accelerator.name = "astra-sim roofline";
    config.accelerator.computeUnits = 1;
    config.accelerator.tensor.peak.set(config.accelerator.defaultDataType, nodes.peak);

    // Fabric: dimensions of one NPU do not exist for the collectives (ASTRA-sim skips them).
    net::NetConfig& fabric = config.fabric;
    fabric.fidelity =
        congestion == Congestion::Aware ? net::Fidelity::AstraAware : net::Fidelity::AstraUnaware;
    fabric.topologyKind = net::TopologyKind::MultiDim;
    fabric.topologyLocation = ConfigLocation{network.file, 0, 0, "topology"};
    std::vector<std::size_t> kept;
    for (std::size_t dim = 0; dim < network.dims.size(); ++dim) {
        const NetworkDim& source = network.dims[dim];
        if (source.npus < 2)
            continue;
        kept.push_back(dim);
        net::DimConfig out;
        out.kind = dimKind(source.topology);
        out.size = source.npus;
        // "GB/s" in the network file is GiB/s.
        out.bandwidth = Bandwidth::fromBytesPerSecond(source.bandwidthAsWritten * bytesPerGiB);
        out.latency = nanoseconds(source.latencyNs);
        fabric.dims.push_back(out);
    }
    if (congestion == Congestion::Aware && kept.size() > 1)
        warnings.push_back(network.file + ": --astra-congestion aware on a " +
                           std::to_string(kept.size()) +
                           "-dimensional network: ASTRA-sim's congestion-aware backend accepts "
                           "only 1-D topologies; etsim runs it with FIFO store-and-forward links "
                           "in every dimension (docs/astra-compat.md)");

    // A collective with a custom implementation never runs its list, nor one whose list is
    // absent (running one is an error, missingAlgorithm); ring keeps the lists complete.
    auto perDim = [&](const std::vector<CollectiveImplementation>& list,
                      const char* key,
                      const std::optional<CustomImplementation>& custom) {
        std::vector<net::AlgorithmKind> algorithms;
        for (std::size_t dim : kept)
            algorithms.push_back((custom || list.empty()) && dim >= list.size()
                                     ? net::AlgorithmKind::Ring
                                     : algorithm(list.at(dim), system, key));
        return algorithms;
    };
    auto missing = [&](const std::vector<CollectiveImplementation>& list,
                       const char* key,
                       const std::optional<CustomImplementation>& custom) {
        if (!list.empty() || custom)
            return std::string();
        return system.file + " has no " + key + " (nor " + key +
               "-custom); give the implementation of every collective the workload runs";
    };
    auto index = [](CollectiveType type) {
        for (std::size_t i = 0; i < net::configurableCollectives.size(); ++i)
            if (net::configurableCollectives[i] == type)
                return i;
        return std::size_t{0};
    };
    // Per collective: its list, what to say when it has none, and its custom program, loaded
    // and verified now so that a bad file fails before the run, naming the key.
    struct Collective {
        CollectiveType type;
        const std::vector<CollectiveImplementation>& list;
        const char* key;
        const std::optional<CustomImplementation>& custom;
    };
    const Collective collectives[] = {
        {CollectiveType::AllReduce,
         system.allReduce,
         "all-reduce-implementation",
         system.allReduceCustom},
        {CollectiveType::ReduceScatter,
         system.reduceScatter,
         "reduce-scatter-implementation",
         system.reduceScatterCustom},
        {CollectiveType::AllGather,
         system.allGather,
         "all-gather-implementation",
         system.allGatherCustom},
        {CollectiveType::AllToAll,
         system.allToAll,
         "all-to-all-implementation",
         system.allToAllCustom},
    };
    for (const Collective& each : collectives) {
        const std::size_t at = index(each.type);
        fabric.algorithms[at] = perDim(each.list, each.key, each.custom);
        fabric.missingAlgorithm[at] = missing(each.list, each.key, each.custom);
        fabric.nodePrograms[at] =
            nodeProgram(each.custom, system, std::string(each.key) + "-custom");
    }
    for (const auto& [node, custom] : system.perNodeCustom)
        fabric.nodeProgramsByNode[node] =
            nodeProgram(custom, system, "per-node-custom-implementation");
    // ASTRA-sim replays broadcasts and rejects reduce and barrier; ring keeps the lists full.
    for (CollectiveType type :
         {CollectiveType::Broadcast, CollectiveType::Reduce, CollectiveType::Barrier})
        fabric.algorithms[index(type)].assign(kept.size(), net::AlgorithmKind::Ring);
    fabric.groupAlgorithm = net::AlgorithmKind::Ring;
    fabric.chunks = system.preferredDatasetSplits;
    fabric.activeChunks = system.activeChunksPerDimension;
    fabric.endpointDelay = nanoseconds(static_cast<double>(system.endpointDelayNs));
    fabric.localMemoryBandwidth = nodes.localMemory;
    fabric.optimization = system.optimization == CollectiveOptimization::LocalBwAware
                              ? net::CollectiveOptimization::LocalBwAware
                              : net::CollectiveOptimization::Baseline;

    // What ran, for the report.
    nlohmann::ordered_json& resolved = config.resolved;
    resolved["name"] = config.name;
    resolved["profile"] = "astra";
    resolved["ranks"] = config.ranks;
    resolved["files"] = {{"network", network.file},
                         {"system", system.file},
                         {"memory", memory != nullptr ? memory->file : ""}};
    resolved["driver"] = {{"profile", "astra"},
                          {"compute", system.rooflineEnabled ? "roofline" : "replay"},
                          {"dependencies", "data+ctrl"},
                          {"lenient", true}};
    resolved["compute"] = {{"model", system.rooflineEnabled ? "roofline" : "replay"},
                           {"peak_perf_tflops", system.peakPerfTflops},
                           {"local_mem_bw_gbps", system.localMemBwGBps}};
    nlohmann::ordered_json remote = {{"model", "remote"}};
    if (memory == nullptr) {
        remote["type"] = "none (no --astra-memory)";
    } else {
        remote["type"] = memoryTypeName(memory->type);
        remote["remote_mem_latency_ns"] = memory->remoteMemLatencyNs;
        remote["remote_mem_bw_bytes_per_ns"] = memory->remoteMemBytesPerNs;
        if (memory->type == MemoryExpansion::PerNode)
            remote["num_npus_per_node"] = memory->npusPerNode;
    }
    resolved["memory"] = remote;
    nlohmann::ordered_json dims = nlohmann::ordered_json::array();
    for (std::size_t dim = 0; dim < network.dims.size(); ++dim) {
        const NetworkDim& source = network.dims[dim];
        dims.push_back({{"topology", topologyName(source.topology)},
                        {"npus", source.npus},
                        {"bandwidth_gbps_as_written", source.bandwidthAsWritten},
                        {"bytes_per_ns", source.bytesPerNs},
                        {"latency_ns", source.latencyNs},
                        {"modelled", source.npus > 1}});
    }
    auto names = [&](const std::vector<CollectiveImplementation>& list) {
        nlohmann::ordered_json out = nlohmann::ordered_json::array();
        for (CollectiveImplementation implementation : list)
            out.push_back(collectiveImplementationName(implementation));
        return out;
    };
    nlohmann::ordered_json perNode = nlohmann::ordered_json::object();
    for (const auto& [node, custom] : system.perNodeCustom)
        perNode[std::to_string(node)] = custom.prefix;
    resolved["fabric"] = {
        {"fidelity", congestion == Congestion::Aware ? "astra_aware" : "astra_unaware"},
        {"dims", dims},
        {"collectives",
         {{"all_reduce", names(system.allReduce)},
          {"reduce_scatter", names(system.reduceScatter)},
          {"all_gather", names(system.allGather)},
          {"all_to_all", names(system.allToAll)},
          {"custom",
           {{"all_reduce", system.allReduceCustom ? system.allReduceCustom->prefix : ""},
            {"reduce_scatter",
             system.reduceScatterCustom ? system.reduceScatterCustom->prefix : ""},
            {"all_gather", system.allGatherCustom ? system.allGatherCustom->prefix : ""},
            {"all_to_all", system.allToAllCustom ? system.allToAllCustom->prefix : ""},
            {"per_node", perNode}}},
          {"preferred_dataset_splits", system.preferredDatasetSplits},
          {"active_chunks_per_dimension", system.activeChunksPerDimension},
          {"endpoint_delay_ns", system.endpointDelayNs},
          {"local_mem_bw_gbps", system.localMemBwGBps},
          {"collective_optimization",
           system.optimization == CollectiveOptimization::LocalBwAware ? "localBWAware"
                                                                       : "baseline"},
          {"scheduling_policy", policyName(system.schedulingPolicy)}}}};

    platform::validatePlatform(config);
    return config;
}

platform::PlatformConfig loadAstraPlatform(const AstraFiles& files,
                                           std::vector<std::string>& warnings)
{
    NetworkConfig network = loadNetworkConfig(files.network, warnings);
    SystemConfig system = loadSystemConfig(files.system, warnings);
    std::optional<MemoryConfig> memory;
    if (!files.memory.empty())
        memory = loadMemoryConfig(files.memory, warnings);
    return astraPlatform(network, system, memory ? &*memory : nullptr, files.congestion, warnings);
}

} // namespace etsim::platforms::astra
