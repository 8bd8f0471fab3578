#include "cosim/CosimConfig.h"

#include "cosim/transport/AsioTransport.h"

namespace etsim::cosim {

namespace {

// A Time key that must be above zero; `help` says what it is.
Time positiveTime(ConfigMap& map, std::string_view key, std::string_view help)
{
    const Located<Time> value = map.required<Located<Time>>(key, help);
    if (value.value.ps() == 0)
        value.location.fail("must be greater than zero (" + std::string(help) + ")");
    return value.value;
}

void rejectUnused(ConfigMap& map, std::string_view key, SyncMode mode, const char* usedBy)
{
    if (map.has(key))
        map.fail(key,
                 "applies only to sync: " + std::string(usedBy) + ", not to sync: " +
                     std::string(enumName(syncModeNames, mode)) + "; remove it");
}

} // namespace

std::string substituteRank(std::string text, std::uint32_t rank)
{
    const std::string number = std::to_string(rank);
    for (std::size_t at = text.find("{rank}"); at != std::string::npos;
         at = text.find("{rank}", at + number.size()))
        text.replace(at, 6, number);
    return text;
}

ProxyOptions parseCosimConfig(ConfigMap& map)
{
    ProxyOptions options;

    const Located<std::string> peer = map.required<Located<std::string>>(
        "peer", "where the peer is: \"unix:/path\", \"tcp:127.0.0.1:PORT\" or \"shm\"");
    std::string problem;
    // "{rank}" may stand anywhere, a TCP port included ("tcp:127.0.0.1:60{rank}"); checked
    // here as rank 0, per rank when the platform knows its ranks.
    const std::optional<Endpoint> endpoint =
        Endpoint::tryParse(substituteRank(peer.value, 0), problem);
    if (!endpoint)
        peer.location.fail(problem + " in \"" + peer.value + "\" (" + Endpoint::forms + ")");
    options.peer = peer.value;

    options.sync = map.enumField("sync", syncModeNames, defaultSyncMode);
    switch (options.sync) {
    case SyncMode::Conservative:
        options.lookahead =
            positiveTime(map,
                         "lookahead",
                         "the smallest latency of the component the peer simulates, e.g. 1 us");
        rejectUnused(map, "quantum", options.sync, "loosely-timed");
        break;
    case SyncMode::LooselyTimed:
        options.quantum =
            positiveTime(map, "quantum", "how far etsim may run ahead of the peer, e.g. 10 us");
        rejectUnused(map, "lookahead", options.sync, "conservative");
        break;
    case SyncMode::Unsynchronised:
        rejectUnused(map, "lookahead", options.sync, "conservative");
        rejectUnused(map, "quantum", options.sync, "loosely-timed");
        break;
    }

    options.spawn = map.optional<std::string>("spawn", "");
    const std::optional<Located<bool>> listen = map.optional<Located<bool>>("listen");
    options.listen = listen && listen->value;
    if (!options.spawn.empty() && listen && !listen->value)
        listen->location.fail("etsim listens for the peer it spawns; remove listen: false or "
                              "spawn");
    if (endpoint->kind == Endpoint::Kind::SharedMemory && endpoint->path.empty() &&
        options.spawn.empty())
        peer.location.fail("\"shm\" lets etsim choose the handshake socket, so it must also "
                           "start the peer: add spawn, or name the socket with \"shm:/path\"");

    const std::optional<Located<Time>> timeout = map.optional<Located<Time>>("timeout");
    if (timeout) {
        if (timeout->value < minCosimTimeout)
            timeout->location.fail("must be at least 1 ms (a wall-clock limit, e.g. 2 s)");
        // Whole milliseconds, rounded up so a timeout is never shortened.
        options.timeout =
            std::chrono::milliseconds((timeout->value.ps() + 999'999'999) / 1'000'000'000);
    } else {
        options.timeout = std::chrono::milliseconds(defaultCosimTimeout.ps() / 1'000'000'000);
    }

    options.token = map.optional<std::string>("token", "");
    options.channel = map.optional<std::uint32_t>("channel", 0);
    const std::optional<Located<std::uint32_t>> maxOutstanding =
        map.optional<Located<std::uint32_t>>("max_outstanding");
    if (maxOutstanding) {
        if (maxOutstanding->value == 0)
            maxOutstanding->location.fail("must be at least 1");
        options.maxOutstanding = maxOutstanding->value;
    }
    options.io = map.enumField("io", ioModeNames, IoMode::Inline);
    return options;
}

} // namespace etsim::cosim
