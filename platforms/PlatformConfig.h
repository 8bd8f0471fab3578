#pragma once
// A platform: how many ranks, what each rank's accelerator and HBM are, the fabric joining
// them and how the per-rank trace drivers issue work. Read from YAML (docs/platforms.md lists
// every key):
//
//     name: hgx_h100
//     ranks: 8
//     ranks_per_node: 8
//     accelerator:                      # models/accel keys (docs/accel.md) over a preset
//       preset: h100_sxm
//       hbm: {preset: hbm3_h100}        # models/hbm keys (docs/hbm.md) over a preset
//     fabric:                           # models/net keys (docs/network.md) over a preset
//       preset: hgx_h100
//       fidelity: flow
//       cosim: {peer: "unix:/tmp/f.sock", spawn: "etsim-ns3 --endpoint {endpoint}",
//               lookahead: 1 us}      # optional: an external peer carries the messages
//     driver:
//       profile: native                 # native | astra
//       mode: model                     # model | replay (compute, memory and communication)
//       communication_mode: model       # per engine class: compute_, memory_, communication_
//       dependencies: data+ctrl         # data+ctrl | data | ctrl
//       window: 256
//       limits: {compute: 0, memory: 0, communication: 0, host: 1}
//
// Overrides (`etsim run --set accelerator.sram.capacity="64 MiB"`) are applied to the YAML tree
// before anything is read, so they are checked by the same rules; a key path the schema does
// not know is an error naming the override. The fabric's preset is expanded first (its YAML
// under the file's own fabric keys, maps merged key by key), so an override may reach into
// it: `--set fabric.topology.dims[0].bandwidth="400 GB/s"`.

#include "cosim/Proxy.h"
#include "et_driver/DependencyTracker.h"
#include "et_driver/NodeLowering.h"
#include "models/accel/AccelConfig.h"
#include "models/hbm/HbmConfig.h"
#include "models/hbm/RemoteMemory.h"
#include "models/net/NetConfig.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace YAML {
class Node;
}

namespace etsim::platform {

constexpr std::size_t defaultDriverWindow = 256;

/// How the per-rank drivers issue work (et_driver/RankDriver.h).
struct DriverConfig {
    et::SchedulingProfile profile = et::SchedulingProfile::Native;
    et::ExecutionMode compute = et::ExecutionMode::Model;
    et::ExecutionMode memory = et::ExecutionMode::Model;
    et::ExecutionMode communication = et::ExecutionMode::Model;
    DependencyPolicy dependencies = DependencyPolicy::DataAndCtrl;
    /// Drop dangling dependencies with a warning instead of failing.
    bool lenient = false;
    /// Nodes read ahead of completion, per rank.
    std::size_t window = defaultDriverWindow;
    /// Native profile: nodes in flight per engine class; 0 = unlimited.
    std::uint32_t computeLimit = 0;
    std::uint32_t memoryLimit = 0;
    std::uint32_t communicationLimit = 0;
    std::uint32_t hostLimit = 1;
    /// Sends of at most this size are eager (native profile).
    Size eagerThreshold = Size::fromBytes(et::LoweringOptions::defaultEagerThresholdBytes);
};

/// ASTRA-sim's timing of compute and memory nodes, for its compatibility profile
/// (platforms/astra/AstraPlatform.h). When a platform has it, it replaces the accelerator and
/// HBM models: GPU compute nodes take their roofline time (or their recorded duration, which
/// the driver's replay mode supplies) and memory nodes go to a remote memory.
struct AstraNodeTiming {
    /// GPU compute by roofline: floor(num_ops / min(localMemory * num_ops / tensor_size,
    /// peak) * 1e9) ns, 0 ns when tensor_size or num_ops is 0. Off: the recorded duration.
    bool roofline = false;
    /// The roofline's compute roof (ASTRA-sim `peak-perf`).
    FlopRate peak;
    /// The roofline's memory roof (ASTRA-sim `local-mem-bw`, decimal GB/s).
    Bandwidth localMemory;
    /// Where memory nodes go; kind none makes a memory node an error (NO_MEMORY_EXPANSION).
    hbm::RemoteMemoryConfig remoteMemory;
};

/// An accelerator compute engine taken over by a co-simulation peer (`accelerator.compute.cosim`,
/// docs/cosim.md): its GEMM transactions go to the peer, every other operator stays on the
/// local model.
struct ComputeCosim {
    /// The proxy options; `peer` and `spawn` may contain "{rank}", replaced per rank.
    cosim::ProxyOptions proxy;
    /// The rank whose engine the peer takes over; none = every rank (one peer each).
    std::optional<std::uint32_t> rank;

    bool covers(std::uint32_t candidate) const { return !rank || *rank == candidate; }
};

/// A complete, validated platform.
struct PlatformConfig {
    std::string name;
    std::string description;
    std::uint32_t ranks = 0;
    /// Ranks per node (host, NIC group); divides `ranks` (default: all ranks on one node).
    /// Used for naming and the report.
    std::uint32_t ranksPerNode = 0;
    /// Every rank's accelerator (compute, SRAM, DMA) and its HBM.
    accel::AccelConfig accelerator;
    hbm::HbmConfig hbm;
    /// When set, a peer runs the GEMMs of the selected ranks' compute engines.
    std::optional<ComputeCosim> computeCosim;
    net::NetConfig fabric;
    /// Set when `fabric.cosim` is given: an external peer (e.g. etsim-ns3) carries the
    /// fabric's messages through a cosim::Proxy (docs/cosim-ns3.md).
    std::optional<cosim::ProxyOptions> fabricCosim;
    DriverConfig driver;
    /// Set for the ASTRA-sim compatibility profile: `accelerator` and `hbm` are then unused.
    std::optional<AstraNodeTiming> astra;
    /// The YAML tree after presets and overrides, as JSON (for reports: what actually ran):
    /// the accelerator (with its hbm) and driver maps hold every value they resolved to
    /// (accel::toYaml, hbm::toYaml), so the tree loads back to the same platform.
    nlohmann::ordered_json resolved;
};

/// One `--set key.path=value` override.
struct Override {
    /// Dotted key path with optional sequence indices: "fabric.topology.dims[0].bandwidth".
    std::string path;
    /// The value as YAML text: a scalar ("64 MiB", "0.9") or a flow collection ("[ring]").
    std::string value;
    /// `value` as parseOverride parsed it, so that loading a platform does not parse it again
    /// (a YAML parse costs far more than copying its tree); null for an Override made by hand,
    /// whose text is parsed when it is applied.
    std::shared_ptr<const YAML::Node> parsed = nullptr;
};

/// Splits "key.path=value"; throws etsim::Error for text without '=' or an empty path.
Override parseOverride(const std::string& text);

/// Reads a platform file, applies `overrides` and checks every rule. Errors are ConfigErrors
/// naming the file, line, column and key path (or "--set" for an override's own value).
PlatformConfig loadPlatformFile(const std::filesystem::path& path,
                                const std::vector<Override>& overrides = {});
/// The same for YAML text; errors name `fileName`.
PlatformConfig loadPlatformString(const std::string& text,
                                  const std::string& fileName = "<string>",
                                  const std::vector<Override>& overrides = {});

/// Names of the bundled presets (platforms/presets/<name>.yaml, compiled in).
std::vector<std::string> platformPresetNames();
/// The YAML text of a bundled preset; throws etsim::Error listing the names for another.
std::string_view platformPresetYaml(const std::string& name);

/// The platform file's own keys (name, ranks, driver.*): type, default, rule and help
/// (kernel/ParamTable.h). The accelerator, hbm and fabric maps have their tables in their
/// models (accel::accelParams, hbm::hbmParams, net::netParams).
const ParamTable<PlatformConfig>& platformParams();
/// A file path, or the name of a bundled preset when no such file exists.
PlatformConfig loadPlatform(const std::string& fileOrPreset,
                            const std::vector<Override>& overrides = {});

/// Checks the rules that span components, for a platform built in C++ (the loaders call it):
/// at least one rank, ranks_per_node dividing ranks, a fabric with one endpoint per rank.
/// Throws etsim::Error naming the key.
void validatePlatform(const PlatformConfig& config);

} // namespace etsim::platform
