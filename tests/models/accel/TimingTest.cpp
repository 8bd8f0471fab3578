// The compute timing calculators against hand-computed values of the formulas in
// shared/spec/hardware-models.md section 1 (roofline 1.1, tile/wave 1.2, SCALE-Sim 1.3).

#include "models/accel/ComputeSlice.h"
#include "models/accel/compute/GpuTileTiming.h"
#include "models/accel/compute/RooflineTiming.h"
#include "models/accel/compute/SystolicTiming.h"
#include "models/accel/compute/UnitTimings.h"

#include <gtest/gtest.h>

#include <cmath>
#include <variant>

namespace etsim::accel {
namespace {

// 100 TFLOP/s BF16 and 200 TFLOP/s FP8 at eta_c = 0.5; 1 TB/s at eta_m = 0.5; 1 us launch.
RooflineParams testRoofline()
{
    RooflineParams params;
    params.peak.set(DataType::Bf16, FlopRate::fromFlopsPerSecond(100e12));
    params.peak.set(DataType::Fp8E4M3, FlopRate::fromFlopsPerSecond(200e12));
    params.defaultType = DataType::Bf16;
    params.computeEfficiency = 0.5;
    params.bandwidth = Bandwidth::fromBytesPerSecond(1e12);
    params.memoryEfficiency = 0.5;
    params.overhead = Time::fromPs(1'000'000);
    return params;
}

EtNodeInfo computeNode(std::uint64_t flops, std::uint64_t bytes, DataType type = DataType::Bf16)
{
    EtNodeInfo node;
    node.kind = NodeKind::Compute;
    node.flops = flops;
    node.bytes = bytes;
    node.dataType = type;
    return node;
}

EtNodeInfo
gemmNode(std::uint64_t m, std::uint64_t n, std::uint64_t k, DataType type = DataType::Bf16)
{
    EtNodeInfo node;
    node.kind = NodeKind::Compute;
    node.op = OperatorKind::Gemm;
    node.dataType = type;
    node.gemm = GemmShape{m, n, k, 1};
    node.flops = node.gemm->flops();
    return node;
}

// The streaming plan takes slice shares in turn; each must be the share sliceShare() gives that
// index, every slice but the last the same, and together they make the whole.
TEST(SliceShares, InTurnTheyAreTheSharesOfEachIndex)
{
    for (const std::uint64_t total : {0ULL, 1ULL, 7ULL, 1000ULL, 999983ULL, (1ULL << 40) + 3})
        for (const std::uint64_t count : {1ULL, 2ULL, 3ULL, 7ULL, 30ULL, 1024ULL}) {
            SliceShares shares(total, count);
            std::uint64_t sum = 0;
            for (std::uint64_t index = 0; index < count; ++index) {
                const std::uint64_t share = shares.next();
                ASSERT_EQ(share, sliceShare(total, index, count))
                    << "total " << total << ", slice " << index << " of " << count;
                if (index + 1 < count) {
                    ASSERT_EQ(share, total / count) << "total " << total << ", slice " << index;
                }
                sum += share;
            }
            EXPECT_EQ(sum, total);
        }
}

TEST(RooflineTiming, ComputeBound)
{
    RooflineTiming roofline(testRoofline());
    // F = 1e12 at 50 TFLOP/s = 20 ms; Q = 1e9 B at 0.5 TB/s = 2 ms; + 1 us.
    ComputeEstimate estimate = roofline.estimate(computeNode(1'000'000'000'000, 1'000'000'000));
    EXPECT_EQ(estimate.time.ps(), 20'001'000'000u);
    EXPECT_FALSE(estimate.memoryBound);
    EXPECT_EQ(estimate.fidelity, Fidelity::Roofline);
    EXPECT_DOUBLE_EQ(estimate.flops, 1e12);
}

TEST(RooflineTiming, MemoryBound)
{
    RooflineTiming roofline(testRoofline());
    // F = 1e9 → 20 us; Q = 4e9 B at 0.5 TB/s = 8 ms; + 1 us.
    ComputeEstimate estimate = roofline.estimate(computeNode(1'000'000'000, 4'000'000'000));
    EXPECT_EQ(estimate.time.ps(), 8'001'000'000u);
    EXPECT_TRUE(estimate.memoryBound);
}

TEST(RooflineTiming, DataTypeSelectsPeakAndUnknownTypesUseTheDefault)
{
    RooflineTiming roofline(testRoofline());
    // FP8: 1e12 at 100 TFLOP/s effective = 10 ms.
    EXPECT_EQ(roofline.estimate(computeNode(1'000'000'000'000, 0, DataType::Fp8E4M3)).time.ps(),
              10'001'000'000u);
    // FP32 has no rate here, so BF16's applies: 20 ms.
    EXPECT_EQ(roofline.estimate(computeNode(1'000'000'000'000, 0, DataType::Fp32)).time.ps(),
              20'001'000'000u);
    EXPECT_EQ(roofline.estimate(computeNode(1'000'000'000'000, 0, DataType::Unknown)).time.ps(),
              20'001'000'000u);
}

TEST(RooflineTiming, GemmWithoutCountsUsesShapeFlopsAndLowerBoundBytes)
{
    RooflineTiming roofline(testRoofline());
    EtNodeInfo node = gemmNode(1000, 1000, 1000);
    node.flops = 0;
    // 2e9 FLOP at 50 TFLOP/s = 40 us; bytes (3 × 1e6) × 2 B = 6e6 B at 0.5 TB/s = 12 us.
    EXPECT_DOUBLE_EQ(nodeBytes(node), 6e6);
    EXPECT_EQ(roofline.estimate(node).time.ps(), 41'000'000u);
}

// H100 SXM per spec 1.2: 132 SMs, 4096 BF16 FLOP/clk/SM, 1.83 GHz, one 128×256 tile.
GpuTileTiming h100Tiles(double pipeEfficiency = 1.0, std::vector<TileShape> tiles = {{128, 256}})
{
    GpuTileParams params;
    params.smCount = 132;
    params.clock = Frequency::fromHz(1.83e9);
    params.flopPerClockPerSm.set(DataType::Bf16, 4096);
    params.tiles = std::move(tiles);
    params.ctasPerSm = 1;
    params.pipeEfficiency = pipeEfficiency;
    RooflineParams roofline = testRoofline();
    roofline.overhead = Time();
    roofline.bandwidth = Bandwidth::fromBytesPerSecond(1e15); // memory never binds here
    roofline.memoryEfficiency = 1.0;
    return GpuTileTiming(params, RooflineTiming(roofline));
}

TEST(GpuTileTiming, SpecWaveTable)
{
    GpuTileTiming timing = h100Tiles();
    struct Row {
        std::uint64_t m, n, tiles, waves;
        double waveEfficiency;
    };
    for (const Row& row : {Row{4096, 4096, 512, 4, 512.0 / 528},
                           Row{8192, 8192, 2048, 16, 2048.0 / 2112},
                           Row{4224, 4096, 528, 4, 1.0},
                           Row{1024, 1024, 32, 1, 32.0 / 132}}) {
        auto plan = timing.plan(GemmShape{row.m, row.n, 1024, 1}, DataType::Bf16);
        ASSERT_TRUE(plan.has_value());
        EXPECT_EQ(plan->tiles, row.tiles) << row.m << "x" << row.n;
        EXPECT_EQ(plan->waves, row.waves) << row.m << "x" << row.n;
        EXPECT_NEAR(plan->waveEfficiency, row.waveEfficiency, 1e-12);
    }
    auto plan = timing.plan(GemmShape{4096, 4096, 1024, 1}, DataType::Bf16);
    EXPECT_NEAR(plan->waveEfficiency, 0.970, 0.0005); // the spec's rounded figure
}

TEST(GpuTileTiming, Gemm1024OnH100)
{
    GpuTileTiming timing = h100Tiles();
    // One wave of 32 tiles: t_tile = 2·128·256·1024 / (4096 · 1.83e9) = 8.953005 us, while
    // the ideal over all 132 SMs is 2·1024³ / 989.4 TFLOP/s = 2.170 us (eta_wave = 0.242).
    ComputeEstimate estimate = timing.estimate(gemmNode(1024, 1024, 1024));
    EXPECT_EQ(estimate.fidelity, Fidelity::GpuTiles);
    EXPECT_FALSE(estimate.fallback);
    EXPECT_EQ(estimate.time.ps(), 8'953'005u);
    double ideal = 2.0 * 1024 * 1024 * 1024 / (132 * 4096 * 1.83e9) * 1e12;
    EXPECT_NEAR(ideal / static_cast<double>(estimate.time.ps()), 32.0 / 132, 1e-6);
    // eta_pipe = 0.8 stretches the tile: 11.191257 us.
    EXPECT_EQ(h100Tiles(0.8).estimate(gemmNode(1024, 1024, 1024)).time.ps(), 11'191'257u);
}

TEST(GpuTileTiming, OneTileMoreThanAFullWaveTakesTwoWaves)
{
    GpuTileTiming timing = h100Tiles();
    // 132 tiles of 128×256 fill one wave exactly; 133 need a second, nearly empty one.
    ComputeEstimate full = timing.estimate(gemmNode(128 * 132, 256, 1024));
    ComputeEstimate oneMore = timing.estimate(gemmNode(128 * 133, 256, 1024));
    EXPECT_EQ(full.time.ps(), 8'953'005u);
    EXPECT_EQ(oneMore.time.ps(), 2 * 8'953'005u + 1); // each wave rounded once: 17.906011 us
    auto plan = timing.plan(GemmShape{128 * 133, 256, 1024, 1}, DataType::Bf16);
    EXPECT_EQ(plan->waves, 2u);
    EXPECT_NEAR(plan->waveEfficiency, 133.0 / 264, 1e-12);
}

TEST(GpuTileTiming, PicksTheFastestTile)
{
    // 1024² with a 64×128 candidate: 128 tiles in one wave of 2·64·128·1024 FLOP each.
    GpuTileTiming timing = h100Tiles(1.0, {{128, 256}, {64, 128}});
    auto plan = timing.plan(GemmShape{1024, 1024, 1024, 1}, DataType::Bf16);
    ASSERT_TRUE(plan.has_value());
    EXPECT_EQ(plan->tile, (TileShape{64, 128}));
    EXPECT_EQ(plan->tiles, 128u);
    EXPECT_EQ(plan->computeTime.ps(), 2'238'251u); // 16777216 / 7.49568e12 s
}

TEST(GpuTileTiming, FallsBackToRooflineWithoutShapeOrRate)
{
    GpuTileTiming timing = h100Tiles();
    // No shape: roofline at 50 TFLOP/s effective: 1e12 FLOP = 20 ms.
    ComputeEstimate noShape = timing.estimate(computeNode(1'000'000'000'000, 0));
    EXPECT_TRUE(noShape.fallback);
    EXPECT_EQ(noShape.fidelity, Fidelity::Roofline);
    EXPECT_EQ(noShape.time.ps(), 20'000'000'000u);
    // FP64 has no per-clock rate in the tile model.
    ComputeEstimate fp64 = timing.estimate(gemmNode(1024, 1024, 1024, DataType::Fp64));
    EXPECT_TRUE(fp64.fallback);
}

SystolicTiming array128(Dataflow dataflow, std::uint32_t arrays = 1)
{
    SystolicParams params;
    params.rows = 128;
    params.cols = 128;
    params.arrays = arrays;
    params.tileRows = 128;
    params.tileCols = 128;
    params.clock = Frequency::fromHz(1.05e9);
    params.dataflow = dataflow;
    RooflineParams roofline = testRoofline();
    roofline.overhead = Time();
    roofline.bandwidth = Bandwidth::fromBytesPerSecond(1e15);
    return SystolicTiming(params, RooflineTiming(roofline));
}

struct SystolicCase {
    GemmShape shape;
    Dataflow dataflow;
    std::uint64_t folds;
    std::uint64_t cycles;
    double utilisation; // the spec's table, 3 decimals
};

TEST(SystolicTiming, SpecWorkedExamples)
{
    const SystolicCase cases[] = {
        // 4096³: (2·128 + 128 + 4096 − 2) · 32 · 32 = 4478 · 1024 for every dataflow.
        {{4096, 4096, 4096, 1}, Dataflow::OutputStationary, 1024, 4'585'472, 0.915},
        {{4096, 4096, 4096, 1}, Dataflow::WeightStationary, 1024, 4'585'472, 0.915},
        {{4096, 4096, 4096, 1}, Dataflow::InputStationary, 1024, 4'585'472, 0.915},
        // FFN-like 2048 × 12288 × 49152.
        {{2048, 12288, 49152, 1}, Dataflow::OutputStationary, 1536, 76'084'224, 0.992},
        {{2048, 12288, 49152, 1}, Dataflow::WeightStationary, 36864, 89'579'520, 0.843},
        // LLM decode 8 × 8192 × 8192: a few percent.
        {{8, 8192, 8192, 1}, Dataflow::OutputStationary, 64, 548'736, 0.060},
        {{8, 8192, 8192, 1}, Dataflow::WeightStationary, 4096, 1'597'440, 0.021},
        {{8, 8192, 8192, 1}, Dataflow::InputStationary, 64, 548'736, 0.060},
        // Early CNN layer 3136 × 64 × 576.
        {{3136, 64, 576, 1}, Dataflow::OutputStationary, 25, 23'950, 0.295},
    };
    for (const SystolicCase& c : cases) {
        SystolicTiming::Plan plan = array128(c.dataflow).plan(c.shape);
        SCOPED_TRACE(std::to_string(c.shape.m) + "x" + std::to_string(c.shape.n) + "x" +
                     std::to_string(c.shape.k) + " " + toString(c.dataflow));
        EXPECT_EQ(plan.folds, c.folds);
        EXPECT_EQ(plan.cycles, c.cycles);
        EXPECT_NEAR(plan.utilisation, c.utilisation, 0.0005);
    }
    EXPECT_NEAR(array128(Dataflow::OutputStationary).plan({4096, 4096, 4096, 1}).utilisation,
                0.914694,
                1e-6);
}

TEST(SystolicTiming, TimeIsCyclesAtTheClockPlusOverhead)
{
    ComputeEstimate estimate =
        array128(Dataflow::WeightStationary).estimate(gemmNode(4096, 4096, 4096));
    EXPECT_EQ(estimate.fidelity, Fidelity::Systolic);
    EXPECT_EQ(estimate.time.ps(), 4'367'116'190u); // 4585472 / 1.05 GHz
    // Decode on WS: 1597440 cycles = 1.521371 ms.
    EXPECT_EQ(array128(Dataflow::WeightStationary).estimate(gemmNode(8, 8192, 8192)).time.ps(),
              1'521'371'429u);
}

TEST(SystolicTiming, SingleFoldAndArraysSharingFolds)
{
    // One fold that fits: 2·64 + 64 + 100 − 2 = 290 cycles.
    EXPECT_EQ(array128(Dataflow::OutputStationary).plan({64, 64, 100, 1}).cycles, 290u);
    // 1024 folds over 4 arrays: 4478 · 256 cycles, utilisation unchanged.
    SystolicTiming::Plan four = array128(Dataflow::OutputStationary, 4).plan({4096, 4096, 4096, 1});
    EXPECT_EQ(four.cycles, 4478u * 256);
    EXPECT_NEAR(four.utilisation, 0.914694, 1e-6);
}

TEST(SystolicTiming, FallsBackWithoutShape)
{
    ComputeEstimate estimate =
        array128(Dataflow::OutputStationary).estimate(computeNode(1'000'000'000'000, 0));
    EXPECT_TRUE(estimate.fallback);
    EXPECT_EQ(estimate.time.ps(), 20'000'000'000u);
}

TEST(UnitTimings, VectorWorkIsBandwidthBoundAndUnitsSplitTheChip)
{
    AccelConfig config = accelPreset(AccelPreset::H100Sxm);
    UnitTimings unit = makeUnitTimings(config);
    EtNodeInfo add = computeNode(1'000'000, 300'000'000);
    add.op = OperatorKind::Elementwise;
    // 3e8 B at 33 TB/s · 0.8 = 11.363636 us, + 2 us launch; FLOPs are negligible.
    ComputeEstimate estimate = unit.estimate(add);
    EXPECT_EQ(estimate.fidelity, Fidelity::Vector);
    EXPECT_TRUE(estimate.memoryBound);
    EXPECT_EQ(estimate.time.ps(), 11'363'636u + 2'000'000u);

    // Two units: each has half the bandwidth, so the same node takes twice the transfer.
    config.computeUnits = 2;
    EXPECT_EQ(makeUnitTimings(config).estimate(add).time.ps(), 22'727'273u + 2'000'000u);
    // And 66 SMs per unit: an 8448 × 256 × 1024 GEMM is one wave of 128×256 tiles (or a tie
    // with four waves of 64×128), 2·128·256·1024 / (4096 · 1.83 GHz · 0.8) = 11.191257 us.
    EXPECT_EQ(makeUnitTimings(config).estimateTensor(gemmNode(128 * 66, 256, 1024)).time.ps(),
              11'191'257u + 2'000'000u);
}

TEST(UnitTimings, AttentionIsItsTwoGemmsAndTheSoftmaxInSequence)
{
    // Sequence 2048, head dim 128, 32 heads, BF16 (docs/operators.md: Q·Kᵀ 2048 × 2048 × 128
    // and P·V 2048 × 128 × 2048, batch 32; FLOPs 4·m·n·k·batch).
    AccelConfig config = accelPreset(AccelPreset::H100Sxm);
    UnitTimings unit = makeUnitTimings(config);
    EtNodeInfo attention;
    attention.kind = NodeKind::Compute;
    attention.op = OperatorKind::Attention;
    attention.dataType = DataType::Bf16;
    attention.gemm = GemmShape{2048, 2048, 128, 32};
    attention.flops = 4ull * 2048 * 2048 * 128 * 32;
    attention.bytes = 4ull * 2048 * 128 * 32 * 2; // Q, K, V and O
    const ComputeEstimate estimate = unit.estimateTensor(attention);

    const auto& tiles = std::get<GpuTileTiming>(unit.tensor);
    const Time scores = tiles.plan(GemmShape{2048, 2048, 128, 32}, DataType::Bf16)->computeTime;
    const Time values = tiles.plan(GemmShape{2048, 128, 2048, 32}, DataType::Bf16)->computeTime;
    // Softmax: 5 operations per score at the vector peak of one unit, 133.8 TFLOP/s · 0.8.
    const Time softmax = Time::fromPs(
        static_cast<std::uint64_t>(std::llround(5.0 * 2048 * 2048 * 32 / (133.8e12 * 0.8) * 1e12)));
    EXPECT_EQ(estimate.fidelity, Fidelity::GpuTiles);
    EXPECT_FALSE(estimate.memoryBound);
    EXPECT_NEAR(static_cast<double>(estimate.time.ps()),
                static_cast<double>((scores + values + softmax).ps() + 2'000'000),
                2.0);
    // By hand: Q·Kᵀ in 64×64 tiles is 32·32·32 = 32768 tiles in 249 waves of 132 SMs, each
    // 2·64·64·128 / (4096 · 1.83 GHz · 0.8) = 0.174863 us: 43.54 us (128×256 tiles would need
    // 32 waves of 1.399 us, 44.77 us).
    EXPECT_NEAR(scores.seconds(), 249 * 2.0 * 64 * 64 * 128 / (4096 * 1.83e9 * 0.8), 1e-11);
    // Never faster than the chip's peak, as one GEMM's time made it (2 × the peak).
    EXPECT_LT(estimate.flops / estimate.time.seconds(), 989.4e12);
    EXPECT_GT(estimate.time, unit.estimateTensor(gemmNode(2048 * 32, 2048, 128)).time);

    // num_ops larger than 4·m·n·k·batch: the value head dim follows from it (here 256).
    EtNodeInfo wide = attention;
    wide.flops = 2ull * 2048 * 2048 * 128 * 32 + 2ull * 2048 * 2048 * 256 * 32;
    const Time wideValues = tiles.plan(GemmShape{2048, 256, 2048, 32}, DataType::Bf16)->computeTime;
    EXPECT_NEAR(static_cast<double>(unit.estimateTensor(wide).time.ps()),
                static_cast<double>((scores + wideValues + softmax).ps() + 2'000'000),
                2.0);
}

} // namespace
} // namespace etsim::accel
