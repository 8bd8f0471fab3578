#pragma once
// Memory beyond the accelerator (CXL expansion, a pooled memory node): the analytic model
// ASTRA-sim uses for MEM_LOAD / MEM_STORE nodes (astra-sim-semantics.md section 4), so a
// platform can import its memory configuration. A request takes
//     latency + floor(bytes / bandwidth in B/ns) ns
// on a FIFO server: one per rank (per_npu), one per node of `npus_per_node` ranks
// (per_node) or one for all ranks (pool). Loads and stores are timed alike. A request holds
// its server for its whole time, so requests to one server are served one after another.

#include "kernel/Config.h"
#include "kernel/Ids.h"
#include "kernel/Stats.h"
#include "kernel/Units.h"

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

namespace etsim::hbm {

/// Which ranks share a server (ASTRA-sim's memory expansion types).
enum class RemoteMemoryKind { None, PerNpu, PerNode, Pool };
constexpr EnumName<RemoteMemoryKind> remoteMemoryNames[] = {
    {"none", RemoteMemoryKind::None},
    {"per_npu", RemoteMemoryKind::PerNpu},
    {"per_node", RemoteMemoryKind::PerNode},
    {"pool", RemoteMemoryKind::Pool},
};

struct RemoteMemoryConfig {
    RemoteMemoryKind kind = RemoteMemoryKind::None;
    /// Fixed part of every request.
    Time latency = Time::fromPs(0);
    /// Transfer rate of one server.
    Bandwidth bandwidth = Bandwidth::fromBytesPerSecond(0.0);
    /// Ranks per server with per_node.
    std::uint32_t npusPerNode = 1;
};

/// Reads `{kind: pool, latency: 500 ns, bandwidth: 64 GB/s, npus_per_node: 8}`; errors name
/// the key (a zero bandwidth or npus_per_node unless kind is none).
RemoteMemoryConfig parseRemoteMemoryConfig(ConfigMap& map);

class RemoteMemory {
public:
    /// `ranks` is the number of ranks of the platform. Throws etsim::Error for kind none or an
    /// invalid config.
    RemoteMemory(const RemoteMemoryConfig& config, std::uint32_t ranks, StatGroup& stats);

    /// A request of `bytes` by `rank` arriving at `arrivalPs` (ps); returns its completion, ps.
    std::uint64_t complete(RankId rank, std::uint64_t arrivalPs, std::uint64_t bytes);
    /// The server `rank` uses.
    std::uint32_t serverOf(RankId rank) const;
    std::size_t servers() const { return freePs.size(); }

private:
    RemoteMemoryConfig config;
    std::vector<std::uint64_t> freePs;
    Counter& requests;
    Counter& bytesMoved;
    Scalar& queueing;
};

} // namespace etsim::hbm
