// Accelerator configuration: presets carry the spec's numbers, YAML overlays a preset, and
// every bad value fails with the file, line, column and key path.

#include "models/accel/AccelConfig.h"

#include <gtest/gtest.h>

#include <string>

namespace etsim::accel {
namespace {

AccelConfig parse(const std::string& yaml)
{
    return loadConfigString(yaml, "accel.yaml").map(parseAccelConfig);
}

std::string parseError(const std::string& yaml)
{
    try {
        parse(yaml);
    } catch (const ConfigError& error) {
        return error.what();
    }
    return "no error";
}

TEST(AccelConfig, PresetsCarryTheSpecNumbersAndAreValid)
{
    for (const auto& entry : accelPresetNames) {
        AccelConfig config = accelPreset(entry.value);
        EXPECT_EQ(config.name, entry.name);
        EXPECT_NO_THROW(validateAccelConfig(config)) << entry.name;
    }
    AccelConfig h100 = accelPreset(AccelPreset::H100Sxm);
    // The peaks are the tile model's own: 132 × 4096 × 1.83 GHz = 989.43 TFLOP/s (datasheet
    // 989.4), FP8 twice that; FP64 has no per-clock rate and keeps the datasheet's.
    const auto& gpu = std::get<GpuTileTensor>(h100.tensor.detail);
    EXPECT_EQ(gpu.smCount, 132u);
    EXPECT_DOUBLE_EQ(h100.tensor.peak.get(DataType::Bf16).flopsPerSecond(), 132 * 4096 * 1.83e9);
    EXPECT_NEAR(h100.tensor.peak.get(DataType::Bf16).flopsPerSecond(), 989.4e12, 0.1e12);
    EXPECT_DOUBLE_EQ(h100.tensor.peak.get(DataType::Fp8E4M3).flopsPerSecond(), 132 * 8192 * 1.83e9);
    EXPECT_DOUBLE_EQ(h100.tensor.peak.get(DataType::Fp64).flopsPerSecond(), 66.9e12);
    EXPECT_EQ(h100.sram.capacity.bytes(), 50'000'000u);

    AccelConfig a100 = accelPreset(AccelPreset::A100Sxm);
    EXPECT_EQ(std::get<GpuTileTensor>(a100.tensor.detail).smCount, 108u);

    AccelConfig tpu = accelPreset(AccelPreset::TpuV4);
    const auto& array = std::get<SystolicTensor>(tpu.tensor.detail);
    EXPECT_EQ(array.rows, 128u);
    EXPECT_EQ(array.arrays, 8u);
    EXPECT_EQ(tpu.computeUnits, 2u);
    // 8 × 128² × 2 × 1.05 GHz = 275 TFLOP/s.
    EXPECT_NEAR(2.0 * array.rows * array.cols * array.arrays * array.clock.hz(), 275e12, 0.3e12);

    AccelConfig ng1 = accelPreset(AccelPreset::Ng1);
    const auto& ngGpu = std::get<GpuTileTensor>(ng1.tensor.detail);
    EXPECT_NEAR(ngGpu.smCount * ngGpu.flopPerClockPerSm.get(DataType::Bf16) * ngGpu.clock.hz(),
                2.49e15,
                0.01e15);
    AccelConfig ng1Systolic = accelPreset(AccelPreset::Ng1Systolic);
    const auto& ngArray = std::get<SystolicTensor>(ng1Systolic.tensor.detail);
    EXPECT_EQ(ngArray.arrays, 16u);
    EXPECT_EQ(ngArray.rows, 256u);
}

TEST(AccelConfig, YamlOverlaysAPreset)
{
    AccelConfig config = parse("preset: h100_sxm\n"
                               "name: h100_boost\n"
                               "compute_units: 2\n"
                               "launch_overhead: 500 ns\n"
                               "tensor:\n"
                               "  clock: 1.98 GHz\n"
                               "  peak: {bf16: 1070 TFLOP/s}\n"
                               "  tiles: [[128, 128]]\n"
                               "sram: {capacity: 60 MB}\n"
                               "dma: {engines: 8, chunk: 1 MiB, per_chunk: true}\n");
    EXPECT_EQ(config.name, "h100_boost");
    EXPECT_EQ(config.computeUnits, 2u);
    EXPECT_EQ(config.launchOverhead.ps(), 500'000u);
    const auto& gpu = std::get<GpuTileTensor>(config.tensor.detail);
    EXPECT_DOUBLE_EQ(gpu.clock.hz(), 1.98e9);
    EXPECT_EQ(gpu.smCount, 132u); // kept from the preset
    ASSERT_EQ(gpu.tiles.size(), 1u);
    EXPECT_EQ(gpu.tiles[0], (TileShape{128, 128}));
    // A given peak is kept and the per-clock rate of its type follows from it; the other
    // types' peaks follow from their per-clock rates at the new clock.
    EXPECT_DOUBLE_EQ(config.tensor.peak.get(DataType::Bf16).flopsPerSecond(), 1070e12);
    EXPECT_DOUBLE_EQ(gpu.flopPerClockPerSm.get(DataType::Bf16), 1070e12 / (132 * 1.98e9));
    EXPECT_DOUBLE_EQ(config.tensor.peak.get(DataType::Fp8E4M3).flopsPerSecond(),
                     132 * 8192 * 1.98e9);
    EXPECT_EQ(config.sram.capacity.bytes(), 60'000'000u);
    EXPECT_EQ(config.dma.engines, 8u);
    EXPECT_EQ(config.dma.chunk.bytes(), 1u << 20);
    EXPECT_TRUE(config.dma.perChunk);
}

constexpr const char* systolicYaml = "name: tiny\n"
                                     "default_dtype: bf16\n"
                                     "tensor:\n"
                                     "  model: systolic\n"
                                     "  peak: {bf16: 34.4 TFLOP/s, fp8: 34.4 TFLOP/s}\n"
                                     "  rows: 128\n"
                                     "  cols: 128\n"
                                     "  clock: 1.05 GHz\n"
                                     "  dataflow: ws\n"
                                     "vector: {peak: {bf16: 1 TFLOP/s}}\n"
                                     "sram: {capacity: 16 MiB, bandwidth: 2 TB/s}\n"
                                     "dma: {bandwidth: 1.2 TB/s}\n";

TEST(AccelConfig, CustomSystolicDesignFromYaml)
{
    AccelConfig config = parse(systolicYaml);
    const auto& array = std::get<SystolicTensor>(config.tensor.detail);
    EXPECT_EQ(array.dataflow, Dataflow::WeightStationary);
    EXPECT_EQ(array.arrays, 1u);
    EXPECT_EQ(array.tileRows, 128u); // the whole array by default
    EXPECT_EQ(array.tileCols, 128u);
    // Given and within 0.1 % of the array's 2 × 128² × 1.05 GHz = 34.41 TFLOP/s: kept.
    EXPECT_DOUBLE_EQ(config.tensor.peak.get(DataType::Fp8E5M2).flopsPerSecond(), 34.4e12);
    EXPECT_EQ(config.sram.capacity.bytes(), 16u << 20);
    EXPECT_EQ(config.dma.engines, 1u);
    EXPECT_FALSE(config.dma.perChunk); // the fast path by default
}

TEST(AccelConfig, APeakTheModelDoesNotComputeAtIsAnError)
{
    // The array computes every type at one rate, so a doubled FP8 peak would only make the
    // utilisation lie.
    std::string yaml = systolicYaml;
    yaml.replace(yaml.find("fp8: 34.4"), 9, "fp8: 68.8");
    EXPECT_EQ(parseError(yaml),
              "accel.yaml:5:9: tensor.peak.fp8: 68.8 TFLOP/s disagrees with the 34.4064 TFLOP/s "
              "of the systolic array (2 × rows × cols × arrays × clock); give only one of them "
              "(the other is derived), or make them agree");
    // On the tile model, a peak and a per-clock rate given together must agree.
    EXPECT_EQ(
        parseError("preset: h100_sxm\n"
                   "tensor: {peak: {bf16: 500 TFLOP/s}, flop_per_clock_per_sm: {bf16: 4096}}\n"),
        "accel.yaml:2:16: tensor.peak.bf16: 500 TFLOP/s disagrees with the 989.43 TFLOP/s "
        "of tensor.flop_per_clock_per_sm × sm_count × clock; give only one of them (the "
        "other is derived), or make them agree");
    // Either alone moves the other: half the peak is half the per-clock rate.
    AccelConfig half = parse("preset: h100_sxm\ntensor: {peak: {bf16: 494.7 TFLOP/s}}\n");
    EXPECT_DOUBLE_EQ(
        std::get<GpuTileTensor>(half.tensor.detail).flopPerClockPerSm.get(DataType::Bf16),
        494.7e12 / (132 * 1.83e9));
    AccelConfig slower = parse("preset: h100_sxm\ntensor: {clock: 0.915 GHz}\n");
    EXPECT_DOUBLE_EQ(slower.tensor.peak.get(DataType::Bf16).flopsPerSecond(), 132 * 4096 * 0.915e9);
}

TEST(AccelConfig, ErrorsNameTheKey)
{
    // Zero units.
    EXPECT_EQ(parseError("preset: h100_sxm\ncompute_units: 0\n"),
              "accel.yaml:2:16: compute_units: must be at least 1");
    // Units that do not divide the SMs.
    EXPECT_EQ(parseError("preset: h100_sxm\ncompute_units: 5\n"),
              "accel.yaml:2:16: compute_units: must divide tensor.sm_count (132) so every unit "
              "has the same SMs");
    // Negative clock.
    EXPECT_NE(parseError("preset: h100_sxm\ntensor: {clock: -1 GHz}\n")
                  .find("accel.yaml:2:17: tensor.clock: \"-1 GHz\": negative"),
              std::string::npos)
        << parseError("preset: h100_sxm\ntensor: {clock: -1 GHz}\n");
    // Zero clock.
    EXPECT_EQ(parseError("preset: h100_sxm\ntensor: {clock: 0 GHz}\n"),
              "accel.yaml:2:17: tensor.clock: must be above 0 Hz, e.g. \"1.83 GHz\"");
    // Unknown dataflow.
    EXPECT_NE(parseError("preset: tpu_v4\ntensor: {dataflow: row_stationary}\n")
                  .find("accel.yaml:2:20: tensor.dataflow: expected one of output_stationary, "
                        "weight_stationary, input_stationary, os, ws, is, got \"row_stationary\""),
              std::string::npos)
        << parseError("preset: tpu_v4\ntensor: {dataflow: row_stationary}\n");
    // Tile larger than the array.
    EXPECT_EQ(parseError("preset: tpu_v4\ntensor: {tile: [256, 128]}\n"),
              "accel.yaml:2:16: tensor.tile: 256x128 is larger than the 128x128 array; use at "
              "most the array size");
    // Zero SMs, a bad tile entry, zero arrays.
    EXPECT_EQ(parseError("preset: h100_sxm\ntensor: {sm_count: 0}\n"),
              "accel.yaml:2:20: tensor.sm_count: must be at least 1 (streaming multiprocessors)");
    EXPECT_EQ(parseError("preset: h100_sxm\ntensor: {tiles: [[128, 0]]}\n"),
              "accel.yaml:2:17: tensor.tiles[0]: tile dimensions must be at least 1");
    EXPECT_EQ(parseError("preset: h100_sxm\ntensor: {tiles: [[128]]}\n"),
              "accel.yaml:2:18: tensor.tiles[0]: expected a tile [m, n], got 1 numbers");
    EXPECT_EQ(parseError("preset: tpu_v4\ntensor: {arrays: 0}\n"),
              "accel.yaml:2:18: tensor.arrays: must be at least 1");
    // Efficiency out of range, DMA without engines, unknown preset, unknown model key.
    EXPECT_EQ(parseError("preset: a100_sxm\nsram: {efficiency: 1.5}\n"),
              "accel.yaml:2:20: sram.efficiency: must be in (0, 1], got 1.500000");
    EXPECT_EQ(parseError("preset: a100_sxm\ndma: {engines: 0}\n"),
              "accel.yaml:2:16: dma.engines: must be at least 1");
    EXPECT_EQ(parseError("preset: h200\n"),
              "accel.yaml:1:9: preset: unknown preset \"h200\"; one of h100_sxm, a100_sxm, "
              "tpu_v4, ng1, ng1_systolic");
    // A key of another tensor model.
    EXPECT_EQ(parseError("preset: tpu_v4\ntensor: {sm_count: 4}\n"),
              "accel.yaml:2:10: tensor.sm_count: unknown key; known keys: model, peak, efficiency, "
              "rows, cols, arrays, clock, dataflow, tile");
    // No preset and no rates: the peak is missing.
    EXPECT_EQ(parseError("name: bare\n"),
              "accel.yaml:1:1: tensor.peak: give a peak rate for the default data type bf16");
}

TEST(AccelConfig, ValidateNamesTheKeyOfACodeBuiltConfig)
{
    AccelConfig config = accelPreset(AccelPreset::TpuV4);
    std::get<SystolicTensor>(config.tensor.detail).tileCols = 512;
    try {
        validateAccelConfig(config);
        FAIL() << "expected an error";
    } catch (const Error& error) {
        EXPECT_STREQ(error.what(),
                     "accel tpu_v4: tensor.tile: 128x512 is larger than the 128x128 array; use "
                     "at most the array size");
    }
    config = accelPreset(AccelPreset::H100Sxm);
    config.memory.channels = 0;
    EXPECT_THROW(validateAccelConfig(config), Error);
}

} // namespace
} // namespace etsim::accel
