// Cost of the hot-path updates of the stats tree and of recording timeline events.
#include "kernel/Stats.h"
#include "kernel/Timeline.h"

#include <benchmark/benchmark.h>
#include <systemc>

#include <filesystem>
#include <unistd.h>

namespace {

void counterIncrement(benchmark::State& state)
{
    etsim::StatGroup root("root");
    etsim::Counter& bytes = root.addCounter("bytes", "B", "bytes moved");
    for (auto _ : state) {
        bytes += 64;
        benchmark::DoNotOptimize(bytes.value());
    }
}
BENCHMARK(counterIncrement);

void distributionSample(benchmark::State& state)
{
    std::vector<double> bounds;
    for (int i = 0; i < state.range(0); ++i)
        bounds.push_back(10.0 * (i + 1));
    etsim::StatGroup root("root");
    etsim::Distribution& latency = root.addDistribution("latency", "ns", "latency", bounds);
    double value = 0.0;
    for (auto _ : state) {
        latency.sample(value);
        value = value > 200.0 ? 0.0 : value + 7.3;
    }
    benchmark::DoNotOptimize(latency.mean());
}
BENCHMARK(distributionSample)->Arg(0)->Arg(16);

void timeWeightedAverageSet(benchmark::State& state)
{
    etsim::TimeWeightedAverage occupancy("occupancy", "", "queue occupancy");
    std::uint64_t nowPs = 0;
    for (auto _ : state) {
        nowPs += 1000;
        occupancy.set(nowPs, static_cast<double>(nowPs & 7U));
    }
    benchmark::DoNotOptimize(occupancy.average(nowPs));
}
BENCHMARK(timeWeightedAverageSet);

void timelineComplete(benchmark::State& state)
{
    auto path = std::filesystem::temp_directory_path() /
                ("etsim-bench-timeline-" + std::to_string(::getpid()) + ".json");
    std::uint64_t events = 0;
    {
        etsim::Timeline timeline(path.string());
        std::uint64_t startPs = 0;
        for (auto _ : state) {
            timeline.complete(0, 3, "gemm", "compute", startPs, 12345, {{"bytes", 4096}});
            startPs += 20000;
        }
        timeline.close();
        events = timeline.eventCount();
    }
    state.counters["MB"] = static_cast<double>(std::filesystem::file_size(path)) / 1e6;
    state.SetItemsProcessed(static_cast<std::int64_t>(events));
    std::filesystem::remove(path);
}
BENCHMARK(timelineComplete);

} // namespace
