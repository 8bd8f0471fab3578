#pragma once
// The `cosim:` block of a platform component that an external peer takes over
// (docs/cosim.md has the reference):
//
//     fabric:
//       cosim:
//         peer: "unix:/tmp/fabric.sock"   # | "tcp:127.0.0.1:PORT" | "shm" | "shm:/path"
//         sync: conservative               # | loosely-timed | unsynchronised
//         lookahead: 1 us                  # conservative only: the component's smallest latency
//         quantum: 10 us                   # loosely-timed only: the allowed skew
//         spawn: "ns3-fabric --endpoint {endpoint}"
//         listen: false
//         timeout: 2 s
//         token: "s3cret"
//         channel: 0
//         max_outstanding: 4096
//         io: inline                       # | thread: read the link on an I/O thread
//
// The platform file that embeds it runs parseCosimConfig on the map under `cosim` and fills
// ProxyOptions::description (the CONFIG text) itself.

#include "cosim/Proxy.h"
#include "kernel/Config.h"
#include "kernel/ParamTable.h"

namespace etsim::cosim {

inline constexpr EnumName<SyncMode> syncModeNames[] = {
    {"conservative", SyncMode::Conservative},
    {"loosely-timed", SyncMode::LooselyTimed},
    {"unsynchronised", SyncMode::Unsynchronised},
};

inline constexpr EnumName<IoMode> ioModeNames[] = {
    {"inline", IoMode::Inline},
    {"thread", IoMode::Thread},
};

// The defaults of every key are those of ProxyOptions (cosim/Proxy.h), which cosimParams()
// documents. Shortest accepted timeout:
inline constexpr Time minCosimTimeout = Time::fromPs(1'000'000'000); // 1 ms

/// Every key of a `cosim:` map: its type, default, rules and help (kernel/ParamTable.h). It
/// drives parseCosimConfig, toYaml, `etsim config keys cosim` and the key table of
/// docs/cosim.md.
const ParamTable<ProxyOptions>& cosimParams();

/// Reads a `cosim:` map into ProxyOptions (description left empty), with errors naming the
/// file, line, key path and the fix: an unparsable peer, a lookahead missing or zero under
/// conservative sync, a quantum missing or zero under loosely-timed sync, lookahead or quantum
/// given for a mode that does not use it, "shm" without spawn, spawn with listen: false, a
/// timeout under 1 ms, max_outstanding 0. "{rank}" in `peer` or `spawn` is replaced by the
/// rank for a per-rank proxy.
ProxyOptions parseCosimConfig(ConfigMap& map);

/// The options as a `cosim:` map, every key with its value but the token (a secret stays out
/// of reports); parseCosimConfig of the result gives back the same options, token aside.
YAML::Node toYaml(const ProxyOptions& options);

/// `text` with every "{rank}" replaced by `rank` (a per-rank endpoint or spawn line).
std::string substituteRank(std::string text, std::uint32_t rank);

} // namespace etsim::cosim
