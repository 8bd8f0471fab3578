#include "models/hbm/RemoteMemory.h"

#include <algorithm>
#include <cmath>

namespace etsim::hbm {

namespace {

void checkRemote(const RemoteMemoryConfig& c,
                 const std::function<void(std::string_view, const std::string&)>& fail)
{
    if (c.kind == RemoteMemoryKind::None)
        return;
    if (c.bandwidth.bytesPerSecond() <= 0.0)
        fail("bandwidth", "must be positive, e.g. \"64 GB/s\"");
    if (c.kind == RemoteMemoryKind::PerNode && c.npusPerNode == 0)
        fail("npus_per_node", "must be at least 1");
}

} // namespace

RemoteMemoryConfig parseRemoteMemoryConfig(ConfigMap& map)
{
    RemoteMemoryConfig config;
    config.kind = map.enumField("kind", remoteMemoryNames);
    config.latency = map.optional("latency", config.latency);
    config.bandwidth = map.optional("bandwidth", config.bandwidth);
    config.npusPerNode = map.optional("npus_per_node", config.npusPerNode);
    checkRemote(config,
                [&](std::string_view key, const std::string& problem) { map.fail(key, problem); });
    return config;
}

RemoteMemory::RemoteMemory(const RemoteMemoryConfig& config, std::uint32_t ranks, StatGroup& stats)
    : config(config)
    , requests(stats.addCounter("requests", "", "remote memory requests served"))
    , bytesMoved(stats.addCounter("bytes", "B", "bytes loaded or stored"))
    , queueing(stats.addScalar("queueing", "s", "time requests waited for their server"))
{
    if (config.kind == RemoteMemoryKind::None)
        throw Error("remote memory: kind is none; a trace with memory nodes needs per_npu, "
                    "per_node or pool");
    checkRemote(config, [](std::string_view key, const std::string& problem) {
        throw Error("remote memory: " + std::string(key) + ": " + problem);
    });
    std::size_t count = 1;
    if (config.kind == RemoteMemoryKind::PerNpu)
        count = ranks;
    else if (config.kind == RemoteMemoryKind::PerNode)
        count = (ranks + config.npusPerNode - 1) / config.npusPerNode;
    freePs.assign(std::max<std::size_t>(count, 1), 0);
}

std::uint32_t RemoteMemory::serverOf(RankId rank) const
{
    switch (config.kind) {
    case RemoteMemoryKind::PerNpu:
        return toUnderlying(rank);
    case RemoteMemoryKind::PerNode:
        return toUnderlying(rank) / config.npusPerNode;
    case RemoteMemoryKind::Pool:
    case RemoteMemoryKind::None:
        break;
    }
    return 0;
}

std::uint64_t RemoteMemory::complete(RankId rank, std::uint64_t arrivalPs, std::uint64_t bytes)
{
    std::uint32_t server = serverOf(rank);
    if (server >= freePs.size())
        throw Error("remote memory: " + toString(rank) + " is beyond the " +
                    std::to_string(freePs.size()) + " servers configured");
    // ASTRA-sim truncates the transfer to whole ns: floor(bytes / (B per ns)).
    double bytesPerNs = config.bandwidth.bytesPerSecond() / 1e9;
    auto transferNs =
        static_cast<std::uint64_t>(std::floor(static_cast<double>(bytes) / bytesPerNs));
    std::uint64_t start = std::max(arrivalPs, freePs[server]);
    std::uint64_t done = start + config.latency.ps() + transferNs * 1000;
    freePs[server] = done;
    ++requests;
    bytesMoved += bytes;
    queueing += static_cast<double>(start - arrivalPs) * 1e-12;
    return done;
}

} // namespace etsim::hbm
