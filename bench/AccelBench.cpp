// Compute-time evaluations per second of the accelerator's timing calculators
// (models/accel/compute). Figures are in bench/README.md ("Accelerator timing").

#include "models/accel/compute/UnitTimings.h"

#include <benchmark/benchmark.h>

#include <array>

namespace {

using namespace etsim;
using namespace etsim::accel;

// Four GEMM shapes (square, FFN-like, decode, small) cycled so the branch predictor and the
// tile search see varied input.
std::array<EtNodeInfo, 4> gemmNodes()
{
    const GemmShape shapes[] = {
        {4096, 4096, 4096, 1}, {2048, 12288, 49152, 1}, {8, 8192, 8192, 1}, {1024, 1024, 64, 4}};
    std::array<EtNodeInfo, 4> nodes;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        nodes[i].kind = NodeKind::Compute;
        nodes[i].op = OperatorKind::Gemm;
        nodes[i].dataType = DataType::Bf16;
        nodes[i].gemm = shapes[i];
        nodes[i].flops = shapes[i].flops();
        nodes[i].bytes =
            2 * (shapes[i].m * shapes[i].k + shapes[i].k * shapes[i].n + shapes[i].m * shapes[i].n);
    }
    return nodes;
}

// Times a preset's tensor unit over the four shapes.
void estimateTensor(benchmark::State& state, AccelPreset preset, bool withShape)
{
    AccelConfig config = accelPreset(preset);
    UnitTimings timings = makeUnitTimings(config);
    std::array<EtNodeInfo, 4> nodes = gemmNodes();
    if (!withShape)
        for (EtNodeInfo& node : nodes)
            node.gemm.reset();
    std::size_t i = 0;
    for (auto _ : state) { // NOLINT(clang-analyzer-deadcode.DeadStores): benchmark idiom
        ComputeEstimate estimate = timings.estimateTensor(nodes[i++ & 3]);
        benchmark::DoNotOptimize(estimate);
    }
    state.SetItemsProcessed(state.iterations());
}

void roofline(benchmark::State& state)
{
    estimateTensor(state, AccelPreset::H100Sxm, false);
}
BENCHMARK(roofline);

void gpuTiles(benchmark::State& state)
{
    estimateTensor(state, AccelPreset::H100Sxm, true);
}
BENCHMARK(gpuTiles);

void systolic(benchmark::State& state)
{
    estimateTensor(state, AccelPreset::TpuV4, true);
}
BENCHMARK(systolic);

void vectorUnit(benchmark::State& state)
{
    UnitTimings timings = makeUnitTimings(accelPreset(AccelPreset::H100Sxm));
    EtNodeInfo node;
    node.kind = NodeKind::Compute;
    node.op = OperatorKind::Elementwise;
    node.dataType = DataType::Bf16;
    node.flops = 1 << 24;
    node.bytes = 3 << 25;
    for (auto _ : state) { // NOLINT(clang-analyzer-deadcode.DeadStores): benchmark idiom
        ComputeEstimate estimate = timings.estimate(node);
        benchmark::DoNotOptimize(estimate);
    }
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK(vectorUnit);

} // namespace
