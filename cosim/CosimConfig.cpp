#include "cosim/CosimConfig.h"

#include "cosim/transport/AsioTransport.h"

namespace etsim::cosim {

std::string substituteRank(std::string text, std::uint32_t rank)
{
    const std::string number = std::to_string(rank);
    for (std::size_t at = text.find("{rank}"); at != std::string::npos;
         at = text.find("{rank}", at + number.size()))
        text.replace(at, 6, number);
    return text;
}

namespace {

const char* const lookaheadHelp =
    "the smallest latency of the component the peer simulates, e.g. 1 us";
const char* const quantumHelp = "how far etsim may run ahead of the peer, e.g. 10 us";

std::string positiveTimeProblem(Time value, const char* help)
{
    return value.ps() == 0 ? "must be greater than zero (" + std::string(help) + ")" : "";
}

ParamTable<ProxyOptions> makeCosimParams()
{
    ParamTable<ProxyOptions> table("cosim", "cosim", [] { return ProxyOptions{}; });
    table
        .custom(
            "peer",
            "endpoint",
            "where the peer is: \"unix:/path\", \"tcp:127.0.0.1:PORT\" or \"shm\"",
            [](const ConfigNode& node, ProxyOptions& options) {
                const std::string text = node.as<std::string>();
                // "{rank}" may stand anywhere, a TCP port included ("tcp:127.0.0.1:60{rank}");
                // checked here as rank 0, per rank when the platform knows its ranks.
                std::string problem;
                if (!Endpoint::tryParse(substituteRank(text, 0), problem))
                    node.fail(problem + " in \"" + text + "\" (" + Endpoint::forms + ")");
                options.peer = text;
            },
            [](const ProxyOptions& options) { return YAML::Node(options.peer); })
        .required()
        .rule([](const ProxyOptions& options) -> std::string {
            if (options.peer != "shm" || !options.spawn.empty())
                return {};
            return "\"shm\" lets etsim choose the handshake socket, so it must also start the "
                   "peer: add spawn, or name the socket with \"shm:/path\"";
        });
    table.choice(
        "sync",
        [](auto& o) -> auto& { return o.sync; },
        syncModeNames,
        "time synchronisation of the link (PROTOCOL.md section 5)");
    table
        .value(
            "lookahead",
            [](auto& o) -> auto& { return o.lookahead; },
            "time > 0; only with sync: conservative",
            lookaheadHelp)
        .when([](const ProxyOptions& o) { return o.sync == SyncMode::Conservative; })
        .required()
        .rule(
            [](const ProxyOptions& o) { return positiveTimeProblem(o.lookahead, lookaheadHelp); });
    table
        .value(
            "quantum",
            [](auto& o) -> auto& { return o.quantum; },
            "time > 0; only with sync: loosely-timed",
            quantumHelp)
        .when([](const ProxyOptions& o) { return o.sync == SyncMode::LooselyTimed; })
        .required()
        .rule([](const ProxyOptions& o) { return positiveTimeProblem(o.quantum, quantumHelp); });
    table
        .value(
            "spawn",
            [](auto& o) -> auto& { return o.spawn; },
            "command line",
            "started through /bin/sh after etsim listens on peer ({endpoint} is replaced by the "
            "endpoint); stopped at the end of the run")
        .defaultIs("none");
    table
        .custom(
            "listen",
            "bool",
            "etsim listens on peer for the peer to connect instead of connecting to it",
            [](const ConfigNode& node, ProxyOptions& options) {
                options.listen = node.as<bool>();
                if (!options.spawn.empty() && !options.listen)
                    node.fail("etsim listens for the peer it spawns; remove listen: false or "
                              "spawn");
            },
            [](const ProxyOptions& options) { return YAML::Node(paramText(options.listen)); })
        .defaultIs("false (true with spawn)");
    table.custom(
        "timeout",
        "time ≥ 1 ms",
        "wall-clock limit for connecting and for each wait on the peer; rounded up to whole "
        "ms",
        [](const ConfigNode& node, ProxyOptions& options) {
            const Time value = node.as<Time>();
            if (value < minCosimTimeout)
                node.fail("must be at least 1 ms (a wall-clock limit, e.g. 2 s)");
            // Whole milliseconds, rounded up so a timeout is never shortened.
            options.timeout = std::chrono::milliseconds((value.ps() + 999'999'999) / 1'000'000'000);
        },
        [](const ProxyOptions& options) {
            return YAML::Node(toString(
                Time::fromPs(static_cast<std::uint64_t>(options.timeout.count()) * 1'000'000'000)));
        });
    table
        .custom(
            "token",
            "string",
            "shared secret sent in HELLO; a peer that checks tokens refuses a different one "
            "(never echoed in reports)",
            [](const ConfigNode& node, ProxyOptions& options) {
                options.token = node.as<std::string>();
            },
            // A secret stays out of the resolved configuration a report records.
            [](const ProxyOptions&) { return YAML::Node(); })
        .defaultIs("none");
    table.value(
        "channel",
        [](auto& o) -> auto& { return o.channel; },
        "integer",
        "channel id of this proxy on the link");
    table
        .value(
            "max_outstanding",
            [](auto& o) -> auto& { return o.maxOutstanding; },
            "integer ≥ 1",
            "transactions in flight to the peer before the run ends with an error")
        .rule([](const ProxyOptions& o) { return atLeastOneProblem(o.maxOutstanding); });
    table.choice(
        "io",
        [](auto& o) -> auto& { return o.io; },
        ioModeNames,
        "which thread reads the link: the kernel's (inline) or an I/O thread (thread)");
    return table;
}

} // namespace

const ParamTable<ProxyOptions>& cosimParams()
{
    static const ParamTable<ProxyOptions> table = makeCosimParams();
    return table;
}

ProxyOptions parseCosimConfig(ConfigMap& map)
{
    const ParamTable<ProxyOptions>& table = cosimParams();
    ProxyOptions options;
    // Keys of another sync mode are refused with the mode that uses them, not as unknown.
    table.readKey(map, "sync", options);
    auto onlyFor = [&](std::string_view key, SyncMode mode) {
        if (options.sync != mode && map.has(key))
            map.fail(key,
                     "applies only to sync: " + std::string(enumName(syncModeNames, mode)) +
                         ", not to sync: " + std::string(enumName(syncModeNames, options.sync)) +
                         "; remove it");
    };
    table.readSection(map, "", options);
    onlyFor("lookahead", SyncMode::Conservative);
    onlyFor("quantum", SyncMode::LooselyTimed);
    table.checkSection(map, "", options);
    return options;
}

YAML::Node toYaml(const ProxyOptions& options)
{
    return cosimParams().write(options);
}

} // namespace etsim::cosim
