#include "platforms/astra/AstraConfig.h"

#include "kernel/Error.h"
#include "models/net/NetConfig.h"

#include <array>
#include <cmath>
#include <string_view>

namespace etsim::platforms::astra {

namespace {

constexpr std::array<EnumName<Topology>, 3> topologyNames{{
    {"Ring", Topology::Ring},
    {"FullyConnected", Topology::FullyConnected},
    {"Switch", Topology::Switch},
}};

constexpr std::array<EnumName<SchedulingPolicy>, 3> policyNames{{
    {"LIFO", SchedulingPolicy::Lifo},
    {"FIFO", SchedulingPolicy::Fifo},
    {"EXPLICIT", SchedulingPolicy::Explicit},
}};

constexpr std::array<EnumName<CollectiveImplementation>, 7> implementationNames{{
    {"ring", CollectiveImplementation::Ring},
    {"direct", CollectiveImplementation::Direct},
    {"halvingDoubling", CollectiveImplementation::HalvingDoubling},
    {"doubleBinaryTree", CollectiveImplementation::DoubleBinaryTree},
    {"oneRing", CollectiveImplementation::OneRing},
    {"oneDirect", CollectiveImplementation::OneDirect},
    {"oneHalvingDoubling", CollectiveImplementation::OneHalvingDoubling},
}};

constexpr std::array<EnumName<CollectiveOptimization>, 2> optimizationNames{{
    {"baseline", CollectiveOptimization::Baseline},
    {"localBWAware", CollectiveOptimization::LocalBwAware},
}};

constexpr std::array<EnumName<MemoryExpansion>, 4> memoryNames{{
    {"NO_MEMORY_EXPANSION", MemoryExpansion::None},
    {"PER_NPU_MEMORY_EXPANSION", MemoryExpansion::PerNpu},
    {"PER_NODE_MEMORY_EXPANSION", MemoryExpansion::PerNode},
    {"MEMORY_POOL", MemoryExpansion::Pool},
}};

// Keys of the system file that the simulator reads but etsim does not model: they load with a
// warning that says so, rather than the one for keys nobody knows.
constexpr std::array<std::string_view, 12> unmodelledSystemKeys{
    "boost-mode",
    "model-shared-bus",
    "intra-dimension-scheduling",
    "inter-dimension-scheduling",
    "replay-only",
    "track-local-mem",
    "trace-enabled",
    "local-mem-latency",
    "remote-mem-bw",
    "remote-mem-latency",
    "packet-routing",
    "injection-policy",
};

constexpr double bytesPerGiB = 1073741824.0;
constexpr double minBandwidthGBps = 1e-6;
constexpr double maxBandwidthGBps = 1e9;
constexpr double maxLatencyNs = 1e12;

std::string where(const ConfigLocation& location)
{
    return location.file + ":" + std::to_string(location.line) + ":" +
           std::to_string(location.column) + ": " + location.keyPath;
}

// Warns about every key the schema did not read, telling apart the ones etsim knows.
template <std::size_t N>
void warnUnread(ConfigMap& map,
                const std::array<std::string_view, N>& knownButUnmodelled,
                std::vector<std::string>& warnings)
{
    for (const ConfigLocation& key : map.acceptUnread()) {
        bool known = false;
        for (std::string_view name : knownButUnmodelled)
            known = known || name == key.keyPath;
        warnings.push_back(
            where(key) + (known ? ": accepted, not modelled by etsim" : ": unknown key, ignored"));
    }
}

template <typename T>
T positive(ConfigMap& map, std::string_view key, T value)
{
    if (!(value > T{0}))
        map.fail(key, "must be greater than zero");
    return value;
}

std::vector<CollectiveImplementation> implementations(ConfigMap& map, std::string_view key)
{
    if (!map.has(key))
        return {};
    return map.sequence(
        key, [](const ConfigNode& node) { return detail::readEnum(node, implementationNames); });
}

} // namespace

const char* topologyName(Topology topology)
{
    return enumName(topologyNames, topology).data();
}

const char* collectiveImplementationName(CollectiveImplementation implementation)
{
    return enumName(implementationNames, implementation).data();
}

std::uint64_t NetworkConfig::npus() const
{
    std::uint64_t total = 1;
    for (const NetworkDim& dim : dims)
        total *= dim.npus;
    return total;
}

NetworkConfig loadNetworkConfig(const std::filesystem::path& file,
                                std::vector<std::string>& warnings)
{
    NetworkConfig network;
    network.file = file.string();
    network.dims = loadConfigFile(file).map([&](ConfigMap& map) {
        auto topologies = map.sequence("topology", [](const ConfigNode& node) {
            return detail::readEnum(node, topologyNames);
        });
        auto npus = map.required<std::vector<std::uint32_t>>("npus_count");
        auto bandwidths = map.required<std::vector<double>>("bandwidth");
        auto latencies = map.required<std::vector<double>>("latency");
        if (topologies.empty())
            map.fail("topology", "needs at least one dimension");
        auto sameLength = [&](std::string_view key, std::size_t size) {
            if (size != topologies.size())
                map.fail(key,
                         "has " + std::to_string(size) + " entries but topology has " +
                             std::to_string(topologies.size()) + "; give one per dimension");
        };
        sameLength("npus_count", npus.size());
        sameLength("bandwidth", bandwidths.size());
        sameLength("latency", latencies.size());
        std::vector<NetworkDim> dims;
        for (std::size_t i = 0; i < topologies.size(); ++i) {
            if (npus[i] == 0)
                map.fail("npus_count", "dimension " + std::to_string(i) + " has no NPUs");
            // Bounded so that GB/s -> B/s and ns -> ps stay finite and every transfer time fits
            // the simulated clock; the limits are far outside any real link.
            if (!(bandwidths[i] >= minBandwidthGBps && bandwidths[i] <= maxBandwidthGBps))
                map.fail("bandwidth",
                         "dimension " + std::to_string(i) + " is " +
                             exactNumberText(bandwidths[i]) +
                             " GB/s; it must be from 1e-6 to "
                             "1e9 GB/s");
            if (!(latencies[i] >= 0.0 && latencies[i] <= maxLatencyNs))
                map.fail("latency",
                         "dimension " + std::to_string(i) + " is " + exactNumberText(latencies[i]) +
                             " ns; it must be from 0 to 1e12 ns");
            dims.push_back(NetworkDim{topologies[i],
                                      npus[i],
                                      bandwidths[i],
                                      bandwidths[i] * bytesPerGiB / 1e9,
                                      latencies[i]});
        }
        warnUnread(map, std::array<std::string_view, 0>{}, warnings);
        return dims;
    });
    return network;
}

SystemConfig loadSystemConfig(const std::filesystem::path& file, std::vector<std::string>& warnings)
{
    SystemConfig system = loadConfigFile(file).map([&](ConfigMap& map) {
        SystemConfig out;
        out.schedulingPolicy =
            map.enumField("scheduling-policy", policyNames, SchedulingPolicy::Lifo);
        out.endpointDelayNs = map.optional("endpoint-delay", SystemConfig::defaultEndpointDelayNs);
        out.activeChunksPerDimension = positive(
            map,
            "active-chunks-per-dimension",
            map.optional("active-chunks-per-dimension", SystemConfig::defaultActiveChunks));
        out.preferredDatasetSplits =
            positive(map,
                     "preferred-dataset-splits",
                     map.optional("preferred-dataset-splits", SystemConfig::defaultDatasetSplits));
        if (out.preferredDatasetSplits > net::maxChunks)
            map.fail("preferred-dataset-splits",
                     "must be at most " + std::to_string(net::maxChunks) +
                         " (etsim's limit of chunks per collective; every chunk is simulated "
                         "step by step)");
        // ASTRA-sim's Collective API: a Chakra algorithm trace per collective. Its timing rules
        // (docs/astra-compat.md) are not reproduced yet, so the run is refused rather than
        // timed with another algorithm.
        for (const char* key : {"all-reduce-implementation-custom",
                                "all-gather-implementation-custom",
                                "reduce-scatter-implementation-custom",
                                "all-to-all-implementation-custom",
                                "per-node-custom-implementation"})
            if (map.has(key))
                map.fail(key,
                         "custom collective algorithms from an ASTRA-sim system file are not "
                         "run by etsim's astra_* fidelities yet; give the algorithm in an "
                         "etsim platform file instead, as fabric.collectives.algorithms."
                         "<collective>: [{chakra: PREFIX}] (docs/network.md)");
        out.allReduce = implementations(map, "all-reduce-implementation");
        out.allGather = implementations(map, "all-gather-implementation");
        out.reduceScatter = implementations(map, "reduce-scatter-implementation");
        out.allToAll = implementations(map, "all-to-all-implementation");
        out.optimization = map.enumField(
            "collective-optimization", optimizationNames, CollectiveOptimization::Baseline);
        out.localMemBwGBps =
            positive(map, "local-mem-bw", map.required<double>("local-mem-bw", "GB/s (decimal)"));
        out.rooflineEnabled = map.optional<int>("roofline-enabled", 0) != 0;
        if (out.rooflineEnabled)
            out.peakPerfTflops = positive(
                map,
                "peak-perf",
                map.required<double>("peak-perf", "TFLOP/s; required when roofline-enabled is 1"));
        else
            map.ignore("peak-perf");
        warnUnread(map, unmodelledSystemKeys, warnings);
        return out;
    });
    system.file = file.string();
    return system;
}

MemoryConfig loadMemoryConfig(const std::filesystem::path& file, std::vector<std::string>& warnings)
{
    MemoryConfig memory = loadConfigFile(file).map([&](ConfigMap& map) {
        MemoryConfig out;
        out.type = map.enumField("memory-type", memoryNames);
        if (out.type == MemoryExpansion::None) {
            map.ignore("remote-mem-latency");
            map.ignore("remote-mem-bw");
        } else {
            out.remoteMemLatencyNs = map.required<double>("remote-mem-latency", "ns");
            if (!(out.remoteMemLatencyNs >= 0.0))
                map.fail("remote-mem-latency", "must be >= 0 ns");
            out.remoteMemBytesPerNs = positive(
                map, "remote-mem-bw", map.required<double>("remote-mem-bw", "bytes per ns"));
        }
        if (out.type == MemoryExpansion::PerNode)
            out.npusPerNode = positive(
                map, "num-npus-per-node", map.required<std::uint32_t>("num-npus-per-node"));
        else
            map.ignore("num-npus-per-node");
        map.ignore("num-nodes");
        warnUnread(map, std::array<std::string_view, 0>{}, warnings);
        return out;
    });
    memory.file = file.string();
    return memory;
}

void checkCompatible(const NetworkConfig& network, const SystemConfig& system)
{
    auto check = [&](const std::vector<CollectiveImplementation>& list, const char* key) {
        for (std::size_t dim = 0; dim < network.dims.size(); ++dim)
            if (network.dims[dim].npus > 1 && dim >= list.size())
                throw Error(system.file + ": " + key + " lists " + std::to_string(list.size()) +
                            " implementation(s) but the network " + network.file + " has " +
                            std::to_string(network.dims.size()) +
                            " dimensions; give one per dimension (dimension " +
                            std::to_string(dim) + " has " + std::to_string(network.dims[dim].npus) +
                            " NPUs)");
    };
    check(system.allReduce, "all-reduce-implementation");
    check(system.allGather, "all-gather-implementation");
    check(system.reduceScatter, "reduce-scatter-implementation");
    check(system.allToAll, "all-to-all-implementation");
}

} // namespace etsim::platforms::astra
