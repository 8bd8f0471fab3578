#pragma once
// ASTRA-sim's configuration files, read into typed structs so that users of that simulator can
// bring their setups to etsim (`etsim run --astra-network --astra-system --astra-memory`).
// The meaning of every value, with its units as that simulator uses them, is in
// shared/spec/astra-sim-semantics.md section 1; the quirks are kept where they are visible:
//
// - network `bandwidth` is written "GB/s" but means GiB/s: 50 -> 53.687 bytes/ns;
// - system `local-mem-bw` is decimal GB/s (1e9 bytes/s); `peak-perf` is TFLOP/s;
// - memory `remote-mem-bw` is bytes per ns, used directly.
//
// Real files carry keys etsim does not model (`boost-mode`, ...) and keys of newer or forked
// versions; they load, and each one produces a warning naming it and where it is.

#include "kernel/Config.h"

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace etsim::platforms::astra {

enum class Topology { Ring, FullyConnected, Switch };
const char* topologyName(Topology topology);

// One dimension of the analytical network: `npus` endpoints joined by `topology`.
struct NetworkDim {
    Topology topology = Topology::Ring;
    std::uint32_t npus = 0;
    double bandwidthAsWritten = 0.0; // the file's number, "GB/s" (really GiB/s)
    double bytesPerNs = 0.0;         // bandwidthAsWritten * 2^30 / 1e9
    double latencyNs = 0.0;          // per hop
};

struct NetworkConfig {
    std::string file;
    std::vector<NetworkDim> dims; // dim 0 varies fastest in an NPU id
    std::uint64_t npus() const;   // product of the dims' npus
};

enum class SchedulingPolicy { Lifo, Fifo, Explicit };
enum class CollectiveImplementation {
    Ring,
    Direct,
    HalvingDoubling,
    DoubleBinaryTree,
    OneRing,
    OneDirect,
    OneHalvingDoubling,
};
enum class CollectiveOptimization { Baseline, LocalBwAware };
const char* collectiveImplementationName(CollectiveImplementation implementation);

/// ASTRA-sim's Collective API: a custom algorithm as Chakra traces, PREFIX.<rank>.et.
struct CustomImplementation {
    /// As written: relative to the working directory, as that simulator opens it.
    std::string prefix;
    /// Where it was written (the list entry, or the per-node file's entry).
    ConfigLocation location;
};

struct SystemConfig {
    // Defaults used when a key is absent, as documented in docs/astra-compat.md.
    static constexpr std::uint32_t defaultActiveChunks = 1;
    static constexpr std::uint32_t defaultDatasetSplits = 1;
    static constexpr std::uint64_t defaultEndpointDelayNs = 0;

    std::string file;
    SchedulingPolicy schedulingPolicy = SchedulingPolicy::Lifo;
    std::uint64_t endpointDelayNs = defaultEndpointDelayNs;
    std::uint32_t activeChunksPerDimension = defaultActiveChunks;
    std::uint32_t preferredDatasetSplits = defaultDatasetSplits;
    // One implementation per network dimension, as listed in the file.
    std::vector<CollectiveImplementation> allReduce;
    std::vector<CollectiveImplementation> allGather;
    std::vector<CollectiveImplementation> reduceScatter;
    std::vector<CollectiveImplementation> allToAll;
    /// `<collective>-implementation-custom`: the algorithm that replaces the list above for
    /// the whole group (one entry whatever the number of dimensions).
    std::optional<CustomImplementation> allReduceCustom;
    std::optional<CustomImplementation> allGatherCustom;
    std::optional<CustomImplementation> reduceScatterCustom;
    std::optional<CustomImplementation> allToAllCustom;
    /// `per-node-custom-implementation` (a YAML file: Chakra node id -> trace prefix): the
    /// algorithm of the collective node with that id, whatever its type; it comes first.
    std::map<std::uint64_t, CustomImplementation> perNodeCustom;
    CollectiveOptimization optimization = CollectiveOptimization::Baseline;
    double localMemBwGBps = 0.0; // decimal: 1e9 bytes/s
    bool rooflineEnabled = false;
    double peakPerfTflops = 0.0; // required when the roofline is enabled
};

enum class MemoryExpansion { None, PerNpu, PerNode, Pool };

struct MemoryConfig {
    std::string file;
    MemoryExpansion type = MemoryExpansion::None;
    double remoteMemLatencyNs = 0.0;
    double remoteMemBytesPerNs = 0.0;
    std::uint32_t npusPerNode = 0; // PER_NODE_MEMORY_EXPANSION only
};

// Each loader throws etsim::ConfigError (file:line:col: key: problem) on a value it cannot use
// and appends one line per accepted-but-ignored key to `warnings`.
NetworkConfig loadNetworkConfig(const std::filesystem::path& file,
                                std::vector<std::string>& warnings);
SystemConfig loadSystemConfig(const std::filesystem::path& file,
                              std::vector<std::string>& warnings);
MemoryConfig loadMemoryConfig(const std::filesystem::path& file,
                              std::vector<std::string>& warnings);

// Rules that involve two files: every network dimension with more than one NPU needs a
// collective implementation in the system file. Throws etsim::Error naming both files.
void checkCompatible(const NetworkConfig& network, const SystemConfig& system);

} // namespace etsim::platforms::astra
