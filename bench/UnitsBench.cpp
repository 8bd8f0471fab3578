// Parse and print throughput of kernel/Units. Config loading parses every quantity once, so
// these figures matter for large sweeps and generated platforms, not for the simulation loop.

#include "kernel/Units.h"

#include <benchmark/benchmark.h>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace etsim {
namespace {

// Cycles through a few datasheet-like inputs so the branch predictor sees a mix.
template <typename Quantity, std::size_t N>
void parseLoop(benchmark::State& state, const std::array<std::string_view, N>& inputs)
{
    std::size_t next = 0;
    for (auto _ : state) {
        Quantity value = Quantity::parse(inputs[next]);
        benchmark::DoNotOptimize(value);
        next = next + 1 == N ? 0 : next + 1;
    }
    state.SetItemsProcessed(state.iterations());
}

template <typename Quantity, std::size_t N>
void printLoop(benchmark::State& state, const std::array<Quantity, N>& values)
{
    std::size_t next = 0;
    for (auto _ : state) {
        std::string text = toString(values[next]);
        benchmark::DoNotOptimize(text);
        next = next + 1 == N ? 0 : next + 1;
    }
    state.SetItemsProcessed(state.iterations());
}

void parseTime(benchmark::State& state)
{
    parseLoop<Time>(state, std::array<std::string_view, 4>{"700 ns", "1.5us", "2e3 ps", "0.25 ms"});
}
BENCHMARK(parseTime);

void parseSize(benchmark::State& state)
{
    parseLoop<Size>(state, std::array<std::string_view, 4>{"80 GiB", "64 B", "1.5 KB", "16MiB"});
}
BENCHMARK(parseSize);

void parseFrequency(benchmark::State& state)
{
    parseLoop<Frequency>(state,
                         std::array<std::string_view, 4>{"1.98 GHz", "800 MHz", "2e9 Hz", "1GHz"});
}
BENCHMARK(parseFrequency);

void parseBandwidth(benchmark::State& state)
{
    parseLoop<Bandwidth>(
        state, std::array<std::string_view, 4>{"900 GB/s", "100 Gbps", "64 GiB/s", "400 Gbit/s"});
}
BENCHMARK(parseBandwidth);

void parseFlopRate(benchmark::State& state)
{
    parseLoop<FlopRate>(
        state,
        std::array<std::string_view, 4>{"989 TFLOP/s", "312 TFLOPS", "1.5 PFLOP/s", "1e9 FLOP/s"});
}
BENCHMARK(parseFlopRate);

// The error path: lookup misses, nearest-unit search, message and exception.
void parseUnknownUnit(benchmark::State& state)
{
    for (auto _ : state) { // NOLINT(clang-analyzer-deadcode.DeadStores): benchmark idiom
        try {
            benchmark::DoNotOptimize(Bandwidth::parse("900 GBs"));
        } catch (const UnitError& error) {
            benchmark::DoNotOptimize(error.what());
        }
    }
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK(parseUnknownUnit);

void printTime(benchmark::State& state)
{
    printLoop(state,
              std::array<Time, 4>{Time::fromPs(700'000),
                                  Time::fromPs(1'234'567),
                                  Time::fromPs(505),
                                  Time::fromPs(3'600'000'000'000'000)});
}
BENCHMARK(printTime);

void printSize(benchmark::State& state)
{
    printLoop(state,
              std::array<Size, 4>{Size::fromBytes(80ull << 30),
                                  Size::fromBytes(64),
                                  Size::fromBytes(1500),
                                  Size::fromBytes(123'456'789)});
}
BENCHMARK(printSize);

void printFrequency(benchmark::State& state)
{
    printLoop(state,
              std::array<Frequency, 4>{Frequency::fromHz(1.98e9),
                                       Frequency::fromHz(8e8),
                                       Frequency::fromHz(2e9),
                                       Frequency::fromHz(1.41e9)});
}
BENCHMARK(printFrequency);

void printBandwidth(benchmark::State& state)
{
    printLoop(state,
              std::array<Bandwidth, 4>{Bandwidth::fromBytesPerSecond(9e11),
                                       Bandwidth::fromBytesPerSecond(12.5e9),
                                       Bandwidth::fromBytesPerSecond(68719476736.0),
                                       Bandwidth::fromBytesPerSecond(3.35e12)});
}
BENCHMARK(printBandwidth);

void printFlopRate(benchmark::State& state)
{
    printLoop(state,
              std::array<FlopRate, 4>{FlopRate::fromFlopsPerSecond(989e12),
                                      FlopRate::fromFlopsPerSecond(312e12),
                                      FlopRate::fromFlopsPerSecond(1.5e15),
                                      FlopRate::fromFlopsPerSecond(19.5e12)});
}
BENCHMARK(printFlopRate);

} // namespace
} // namespace etsim
