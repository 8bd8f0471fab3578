#pragma once
// Helpers for the fabric tests: a config from YAML, and a collective posted by every rank.

#include "models/net/CommEngine.h"
#include "models/net/NetConfig.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace etsim::net::test {

/// The YAML of one dimension of `size` members of `kind` with 100 GB/s, 500 ns links;
/// `algorithms` is the body of the collectives.algorithms map ("default: [ring]"), `extra` more
/// lines under `collectives:`.
inline std::string oneDimConfigYaml(const std::string& kind,
                                    std::uint32_t size,
                                    const std::string& algorithms,
                                    const std::string& fidelity,
                                    const std::string& extra)
{
    return "fidelity: " + fidelity +
           "\ntopology:\n  kind: multi_dim\n  dims:\n    - {kind: " + kind +
           ", size: " + std::to_string(size) +
           ", bandwidth: \"100 GB/s\", latency: \"500 ns\"}\n"
           "collectives:\n  algorithms: {" +
           algorithms + "}\n" + extra;
}

/// oneDimConfigYaml, loaded.
inline NetConfig oneDimConfig(const std::string& kind,
                              std::uint32_t size,
                              const std::string& algorithms,
                              const std::string& fidelity,
                              const std::string& extra)
{
    return loadNetConfigString(oneDimConfigYaml(kind, size, algorithms, fidelity, extra));
}

/// The node description of rank `rank`'s part of a collective on all ranks.
inline EtNodeInfo collectiveNode(std::uint32_t rank,
                                 CollectiveType type,
                                 std::uint64_t bytes,
                                 std::uint64_t sequence = 0)
{
    EtNodeInfo info;
    info.rank = static_cast<RankId>(rank);
    info.node = static_cast<NodeId>(100 + sequence);
    info.kind = NodeKind::Collective;
    info.collective = type;
    info.bytes = bytes;
    info.groupSequence = sequence;
    return info;
}

/// Result of one collective: per-rank completion times and the record, ps.
struct CollectiveRun {
    std::vector<std::uint64_t> donePs;
    CollectiveRecord record;
    std::uint64_t messages = 0;
};

/// Runs one collective of `bytes` on every rank of `config`; rank r posts at postPs[r] (0 when
/// postPs is empty).
inline CollectiveRun runCollective(const NetConfig& config,
                                   CollectiveType type,
                                   std::uint64_t bytes,
                                   const std::vector<std::uint64_t>& postPs = {})
{
    std::uint32_t ranks = config.endpointCount();
    CommEngine engine(config, ranks);
    CollectiveRun run;
    run.donePs.assign(ranks, 0);
    engine.setCompletion([&](std::uint64_t token) { run.donePs[token] = engine.nowPs(); });
    std::vector<std::uint32_t> order(ranks);
    for (std::uint32_t rank = 0; rank < ranks; ++rank)
        order[rank] = rank;
    std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
        return (postPs.empty() ? 0 : postPs[a]) < (postPs.empty() ? 0 : postPs[b]);
    });
    for (std::uint32_t rank : order) {
        engine.runUntil(postPs.empty() ? 0 : postPs[rank]);
        engine.post(collectiveNode(rank, type, bytes), rank);
    }
    engine.run();
    run.record = engine.records().at(0);
    run.messages = engine.network().messagesSent();
    return run;
}

} // namespace etsim::net::test
