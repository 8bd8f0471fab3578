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
// Rates (GB/s, TFLOP/s, bytes per ns) and latencies are bounded far outside any real system
// and inside what unit conversions and the simulated clock can hold.
constexpr double minRate = 1e-6;
constexpr double maxRate = 1e9;
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

template <typename T>
T within(ConfigMap& map, std::string_view key, T value, double low, double high, const char* unit)
{
    const auto number = static_cast<double>(value);
    if (!(number >= low && number <= high))
        map.fail(key,
                 "is " + exactNumberText(number) + " " + unit + "; it must be from " +
                     exactNumberText(low) + " to " + exactNumberText(high) + " " + unit);
    return value;
}

std::vector<CollectiveImplementation> implementations(ConfigMap& map, std::string_view key)
{
    if (!map.has(key))
        return {};
    return map.sequence(
        key, [](const ConfigNode& node) { return detail::readEnum(node, implementationNames); });
}

std::optional<CustomImplementation> customImplementation(ConfigMap& map, std::string_view key)
{
    if (!map.has(key))
        return std::nullopt;
    auto entries = map.sequence(key, [](const ConfigNode& node) {
        return CustomImplementation{
            node.scalar("a Chakra trace prefix (PREFIX for PREFIX.<rank>.et)"), node.location()};
    });
    if (entries.size() != 1)
        map.fail(key,
                 "lists " + std::to_string(entries.size()) +
                     " trace prefixes; give exactly one (one algorithm covers every dimension "
                     "of the group), e.g. [\"algo/allreduce_ring\"] for "
                     "algo/allreduce_ring.<rank>.et");
    return entries.front();
}

// The per-node file: a YAML map from a collective's Chakra node id to its trace prefix. Its
// path, like the prefixes, is relative to the working directory.
std::map<std::uint64_t, CustomImplementation> perNodeImplementations(ConfigMap& map)
{
    const auto file = map.required<Located<std::string>>("per-node-custom-implementation");
    std::map<std::uint64_t, CustomImplementation> out;
    if (!std::filesystem::exists(file.value))
        file.location.fail("\"" + file.value +
                           "\": no such file (the path is relative to the working directory; "
                           "it names a YAML map from node id to trace prefix)");
    loadConfigFile(file.value).map([&](ConfigMap& entries) {
        for (const ConfigLocation& key : entries.acceptUnread()) {
            std::uint64_t node = 0;
            try {
                std::size_t used = 0;
                node = std::stoull(key.keyPath, &used);
                if (used != key.keyPath.size())
                    throw std::invalid_argument("trailing text");
            } catch (const std::exception&) {
                key.fail("is not a node id; the file maps Chakra node ids (integers) to trace "
                         "prefixes");
            }
            auto value = entries.value(key.keyPath);
            out[node] = CustomImplementation{
                value->scalar("a Chakra trace prefix (PREFIX for PREFIX.<rank>.et)"),
                value->location()};
        }
        return 0;
    });
    return out;
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
            if (!(bandwidths[i] >= minRate && bandwidths[i] <= maxRate))
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
        out.endpointDelayNs =
            within(map,
                   "endpoint-delay",
                   map.optional("endpoint-delay", SystemConfig::defaultEndpointDelayNs),
                   0.0,
                   maxLatencyNs,
                   "ns");
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
        // ASTRA-sim's Collective API: a Chakra algorithm trace per collective, loaded and
        // verified when the platform is built (AstraPlatform.cpp).
        out.allReduceCustom = customImplementation(map, "all-reduce-implementation-custom");
        out.allGatherCustom = customImplementation(map, "all-gather-implementation-custom");
        out.reduceScatterCustom = customImplementation(map, "reduce-scatter-implementation-custom");
        out.allToAllCustom = customImplementation(map, "all-to-all-implementation-custom");
        if (map.has("per-node-custom-implementation"))
            out.perNodeCustom = perNodeImplementations(map);
        const bool custom = out.allReduceCustom || out.allGatherCustom || out.reduceScatterCustom ||
                            out.allToAllCustom || !out.perNodeCustom.empty();
        // ASTRA-sim expects as many streams as chunks but runs a custom algorithm as one
        // stream, so its collectives never complete with more than one split.
        if (custom && out.preferredDatasetSplits != 1)
            map.fail("preferred-dataset-splits",
                     "is " + std::to_string(out.preferredDatasetSplits) +
                         ", but a custom collective implementation runs as one stream and "
                         "ASTRA-sim never completes it with more than one split (it waits for "
                         "the other chunks); set preferred-dataset-splits to 1");
        out.allReduce = implementations(map, "all-reduce-implementation");
        out.allGather = implementations(map, "all-gather-implementation");
        out.reduceScatter = implementations(map, "reduce-scatter-implementation");
        out.allToAll = implementations(map, "all-to-all-implementation");
        out.optimization = map.enumField(
            "collective-optimization", optimizationNames, CollectiveOptimization::Baseline);
        out.localMemBwGBps = within(map,
                                    "local-mem-bw",
                                    map.required<double>("local-mem-bw", "GB/s (decimal)"),
                                    minRate,
                                    maxRate,
                                    "GB/s");
        out.rooflineEnabled = map.optional<int>("roofline-enabled", 0) != 0;
        if (out.rooflineEnabled)
            out.peakPerfTflops = within(
                map,
                "peak-perf",
                map.required<double>("peak-perf", "TFLOP/s; required when roofline-enabled is 1"),
                minRate,
                maxRate,
                "TFLOP/s");
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
            out.remoteMemLatencyNs = within(map,
                                            "remote-mem-latency",
                                            map.required<double>("remote-mem-latency", "ns"),
                                            0.0,
                                            maxLatencyNs,
                                            "ns");
            out.remoteMemBytesPerNs = within(map,
                                             "remote-mem-bw",
                                             map.required<double>("remote-mem-bw", "bytes per ns"),
                                             minRate,
                                             maxRate,
                                             "bytes per ns");
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
            if (network.dims[dim].npus > 1 && dim >= list.size() && !list.empty())
                throw Error(system.file + ": " + key + " lists " + std::to_string(list.size()) +
                            " implementation(s) but the network " + network.file + " has " +
                            std::to_string(network.dims.size()) +
                            " dimensions; give one per dimension (dimension " +
                            std::to_string(dim) + " has " + std::to_string(network.dims[dim].npus) +
                            " NPUs)");
    };
    // A custom implementation replaces the list for its collective; an absent list is an error
    // only when a collective of its type runs (AstraPlatform.cpp), as in ASTRA-sim.
    if (!system.allReduceCustom)
        check(system.allReduce, "all-reduce-implementation");
    if (!system.allGatherCustom)
        check(system.allGather, "all-gather-implementation");
    if (!system.reduceScatterCustom)
        check(system.reduceScatter, "reduce-scatter-implementation");
    if (!system.allToAllCustom)
        check(system.allToAll, "all-to-all-implementation");
}

} // namespace etsim::platforms::astra
