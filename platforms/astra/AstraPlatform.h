#pragma once
// ASTRA-sim's configuration files as one etsim platform: the compatibility profile behind
// `etsim run --astra-network FILE --astra-system FILE [--astra-memory FILE]
// [--astra-congestion aware|unaware]` (docs/astra-compat.md). The profile is taken as a whole:
//
//   driver   the `astra` scheduling profile (one GPU compute, one host and one communication
//            slot per rank; memory nodes share the communication slot; every send eager);
//   compute  roofline (`roofline-enabled` 1: peak-perf and local-mem-bw) or the recorded
//            duration_micros (replay, 0 -> 1 ns); host (is_cpu_op) nodes always replayed;
//   memory   MEM_LOAD / MEM_STORE on the remote-memory model of the memory file; without
//            one (or with NO_MEMORY_EXPANSION) a memory node is an error; no HBM model;
//   fabric   the astra_aware / astra_unaware fidelity, one dimension per network dimension
//            with more than one NPU, bandwidth in GiB/s as that simulator reads it, the
//            collective implementations per dimension, preferred-dataset-splits chunks,
//            active-chunks-per-dimension, endpoint-delay, local-mem-bw for reductions and
//            collective-optimization; no NIC, packet or message-delay model.
//
// Every value is recorded in PlatformConfig::resolved, so the report shows what ran.

#include "platforms/PlatformConfig.h"
#include "platforms/astra/AstraConfig.h"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace etsim::platforms::astra {

/// ASTRA-sim's two analytical network backends.
enum class Congestion { Aware, Unaware };
/// "aware", "unaware"; nullopt for anything else.
std::optional<Congestion> parseCongestion(std::string_view text);
const char* congestionName(Congestion congestion);

/// The platform the three files describe. `memory` may be null (no remote memory). Appends a
/// warning for what etsim runs differently from that simulator (e.g. congestion-aware on a
/// multi-dimensional network, which it rejects). Throws etsim::Error naming the file and key
/// for what cannot be built (an implementation etsim lacks, a one-NPU network, an
/// implementation list shorter than the network's dimensions).
platform::PlatformConfig astraPlatform(const NetworkConfig& network,
                                       const SystemConfig& system,
                                       const MemoryConfig* memory,
                                       Congestion congestion,
                                       std::vector<std::string>& warnings);

/// The files of an ASTRA-sim setup.
struct AstraFiles {
    std::filesystem::path network;
    std::filesystem::path system;
    /// Empty: no remote memory.
    std::filesystem::path memory;
    Congestion congestion = Congestion::Aware;
};

/// Loads the files (loadNetworkConfig, ...) and builds the platform; warnings of the loaders
/// and of the build are appended to `warnings`. Throws ConfigError / etsim::Error.
platform::PlatformConfig loadAstraPlatform(const AstraFiles& files,
                                           std::vector<std::string>& warnings);

} // namespace etsim::platforms::astra
