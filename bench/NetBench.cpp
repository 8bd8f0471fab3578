// Fabric throughput: collectives and flows on large networks, driven through the CommEngine
// (the Fabric module adds one SystemC wake-up per calendar instant on top).
//
//   BM_RingAllReduce/<ranks>/<MiB>/<mode>  one ring all-reduce on a Ring(<ranks>) with
//       ASTRA-sim's Ring_4chunks settings (4 chunks, 1 active, 50 GiB/s, 500 ns, endpoint
//       delay 10 ns); mode 0 = etsim's flow model, 1 = ASTRA-sim's congestion-aware model,
//       2 = analytical.
//   BM_FatTreeAllToAll/<endpoints>/<stagger ns>  a direct all-to-all of 64 KiB per rank on a
//       non-blocking leaf/spine fat tree (32 endpoints per leaf): every rank starts n-1 flows,
//       rank r at r x stagger (0: all at once).
// Counters: messages, events (calendar events handled), peak RSS of the process (MiB; run
// one benchmark per process to attribute it).
#include "models/net/CommEngine.h"
#include "models/net/NetConfig.h"

#include <benchmark/benchmark.h>

#include <string>
#include <sys/resource.h>

namespace {

using namespace etsim;
using namespace etsim::net;

double peakRssMiB()
{
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

void runAll(CommEngine& engine,
            CollectiveType type,
            std::uint64_t bytes,
            std::uint32_t ranks,
            std::uint64_t staggerPs = 0)
{
    for (std::uint32_t rank = 0; rank < ranks; ++rank) {
        engine.runUntil(rank * staggerPs);
        EtNodeInfo info;
        info.rank = static_cast<RankId>(rank);
        info.kind = NodeKind::Collective;
        info.collective = type;
        info.bytes = bytes;
        engine.post(info, rank);
    }
    engine.run();
}

void BM_RingAllReduce(benchmark::State& state)
{
    auto ranks = static_cast<std::uint32_t>(state.range(0));
    std::uint64_t bytes = static_cast<std::uint64_t>(state.range(1)) << 20;
    const char* modes[] = {"flow", "astra_aware", "analytical"};
    NetConfig config = loadNetConfigString(std::string("fidelity: ") + modes[state.range(2)] +
                                           "\ntopology:\n  kind: multi_dim\n  dims:\n    - {kind: "
                                           "ring, size: " +
                                           std::to_string(ranks) +
                                           ", bandwidth: \"50 GiB/s\", latency: \"500 ns\"}\n"
                                           "collectives:\n  chunks: 4\n  active_chunks: 1\n"
                                           "  endpoint_delay: \"10 ns\"\n");
    std::uint64_t messages = 0;
    std::uint64_t simulatedPs = 0;
    for (auto _ : state) {
        CommEngine engine(config, ranks);
        runAll(engine, CollectiveType::AllReduce, bytes, ranks);
        messages = engine.network().messagesSent();
        simulatedPs = engine.nowPs();
    }
    state.counters["messages"] = static_cast<double>(messages);
    state.counters["msgs_per_s"] = benchmark::Counter(
        static_cast<double>(messages), benchmark::Counter::kIsIterationInvariantRate);
    state.counters["collectives_per_s"] =
        benchmark::Counter(1.0, benchmark::Counter::kIsIterationInvariantRate);
    state.counters["simulated_us"] = static_cast<double>(simulatedPs) * 1e-6;
    state.counters["peak_rss_MiB"] = peakRssMiB();
    state.SetLabel(modes[state.range(2)]);
}
BENCHMARK(BM_RingAllReduce)
    ->ArgsProduct({{64, 256, 1024}, {1, 1024}, {0, 1}})
    ->Args({4096, 1, 1})
    ->Args({4096, 1, 0})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

void BM_FatTreeAllToAll(benchmark::State& state)
{
    auto endpoints = static_cast<std::uint32_t>(state.range(0));
    NetConfig config = loadNetConfigString(
        "topology:\n  kind: fat_tree\n  fat_tree: {endpoints: " + std::to_string(endpoints) +
        ", endpoints_per_leaf: 32, spines: 32, host_bandwidth: \"50 GB/s\", host_latency: "
        "\"1 us\", uplink_bandwidth: \"50 GB/s\", uplink_latency: \"500 ns\"}\n"
        "collectives:\n  algorithms: {default: [direct]}\n");
    std::uint64_t messages = 0;
    std::uint64_t updates = 0;
    std::uint64_t settles = 0;
    std::uint64_t simulatedPs = 0;
    for (auto _ : state) {
        CommEngine engine(config, endpoints);
        runAll(engine,
               CollectiveType::AllToAll,
               64ULL * 1024 * endpoints,
               endpoints,
               static_cast<std::uint64_t>(state.range(1)) * 1000);
        messages = engine.network().messagesSent();
        updates = engine.network().flowRateChanges();
        settles = engine.network().rateUpdates();
        simulatedPs = engine.nowPs();
    }
    state.counters["flows"] = static_cast<double>(messages);
    state.counters["flow_events_per_s"] = benchmark::Counter(
        static_cast<double>(2 * messages), benchmark::Counter::kIsIterationInvariantRate);
    state.counters["rate_changes"] = static_cast<double>(updates);
    state.counters["rate_updates"] = static_cast<double>(settles);
    state.counters["simulated_us"] = static_cast<double>(simulatedPs) * 1e-6;
    state.counters["peak_rss_MiB"] = peakRssMiB();
}
BENCHMARK(BM_FatTreeAllToAll)
    ->Args({256, 0})
    ->Args({1024, 0})
    ->Args({256, 1000})
    ->Args({1024, 1000})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

} // namespace
