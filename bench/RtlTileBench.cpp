// Clock cycles per second of the Verilated GEMM tile (cosim/adapters/verilator): whole GEMMs
// run clock by clock on the 16x16 variant. Figures are in bench/README.md ("RTL co-simulation").

#include "cosim/adapters/verilator/GemmTile.h"

#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

namespace {

using namespace etsim::rtl;

// Timing only (zero operands, results dropped): the cost of the model and its clocking loop.
void timeOnly(benchmark::State& state)
{
    const auto size = static_cast<std::uint32_t>(state.range(0));
    auto tile = makeGemmTile(16, 16);
    const std::uint64_t before = tile->edges();
    for (auto _ : state)
        benchmark::DoNotOptimize(timeGemm(*tile, {size, size, size}, 2, FoldMode::Full));
    state.counters["cycles/s"] = benchmark::Counter(static_cast<double>(tile->edges() - before),
                                                    benchmark::Counter::kIsRate);
}
BENCHMARK(timeOnly)->Arg(32)->Arg(256)->Unit(benchmark::kMillisecond);

// C = A x B with real operands laid out in memory: adds the operand reads and result writes.
void multiplyOperands(benchmark::State& state)
{
    const auto size = static_cast<std::uint32_t>(state.range(0));
    auto tile = makeGemmTile(16, 16);
    std::vector<std::int8_t> a(static_cast<std::size_t>(size) * size);
    std::vector<std::int8_t> b(a.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
        a[i] = static_cast<std::int8_t>(i * 7 + 3);
        b[i] = static_cast<std::int8_t>(i * 5 + 1);
    }
    const std::uint64_t before = tile->edges();
    for (auto _ : state)
        benchmark::DoNotOptimize(multiply(*tile, size, size, size, a, b, 2).cycles);
    state.counters["cycles/s"] = benchmark::Counter(static_cast<double>(tile->edges() - before),
                                                    benchmark::Counter::kIsRate);
}
BENCHMARK(multiplyOperands)->Arg(32)->Arg(256)->Unit(benchmark::kMillisecond);

} // namespace
