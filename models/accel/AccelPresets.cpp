// Presets with the numbers of shared/spec/hardware-models.md section 1 (1.5 reference
// parameter sets, 1.6 the NG-1 design point). [S] sourced, [D] derived, [A] our assumption,
// as tagged in the spec; the assumptions are calibration constants to replace when data
// arrives.

#include "models/accel/AccelConfig.h"

namespace etsim::accel {

namespace {

FlopRate tflops(double value)
{
    return FlopRate::fromFlopsPerSecond(value * 1e12);
}

Bandwidth tbps(double value)
{
    return Bandwidth::fromBytesPerSecond(value * 1e12);
}

Size megabytes(std::uint64_t value)
{
    return Size::fromBytes(value * 1000 * 1000);
}

Size gigabytes(std::uint64_t value)
{
    return Size::fromBytes(value * 1000 * 1000 * 1000);
}

// Common to every preset: 4 KiB-aligned regions, 256 B channel interleave (spec 2.3: at most
// 256 B so that streams spread over all pseudo-channels) [A], 2 MiB DMA chunks [A].
AccelConfig base(std::string name)
{
    AccelConfig config;
    config.name = std::move(name);
    config.defaultDataType = DataType::Bf16;
    config.dma.chunk = Size::fromBytes(2 * 1024 * 1024);
    config.memory.alignment = Size::fromBytes(4096);
    config.memory.interleave = Size::fromBytes(256);
    return config;
}

AccelConfig h100Sxm()
{
    AccelConfig config = base("h100_sxm");
    // Launch overhead: "a few µs per kernel unless graphs are used" (spec 1.1) [A].
    config.launchOverhead = Time::fromPs(2'000'000);
    TensorConfig& tensor = config.tensor;
    tensor.peak.set(DataType::Bf16, tflops(989.4)); // [S]
    tensor.peak.set(DataType::Fp16, tflops(989.4));
    tensor.peak.set(DataType::Fp8E4M3, tflops(1978.9));
    tensor.peak.set(DataType::Fp8E5M2, tflops(1978.9));
    tensor.peak.set(DataType::Fp32, tflops(494.7)); // TF32 tensor path
    tensor.peak.set(DataType::Fp64, tflops(66.9));
    tensor.efficiency = 0.8; // [A] typical 0.7-0.9
    GpuTileTensor gpu;
    gpu.smCount = 132;
    gpu.clock = Frequency::fromHz(1.83e9); // tensor-peak basis
    gpu.flopPerClockPerSm.set(DataType::Bf16, 4096);
    gpu.flopPerClockPerSm.set(DataType::Fp16, 4096);
    gpu.flopPerClockPerSm.set(DataType::Fp8E4M3, 8192);
    gpu.flopPerClockPerSm.set(DataType::Fp8E5M2, 8192);
    gpu.flopPerClockPerSm.set(DataType::Fp32, 2048);
    gpu.tiles = {{128, 256}, {256, 128}, {128, 128}, {64, 128}, {64, 64}};
    gpu.ctasPerSm = 1;
    gpu.pipeEfficiency = 0.8; // [A]
    tensor.detail = gpu;
    config.vector.peak.set(DataType::Fp32, tflops(66.9)); // [S]
    config.vector.peak.set(DataType::Bf16, tflops(133.8));
    config.vector.peak.set(DataType::Fp16, tflops(133.8));
    config.vector.peak.set(DataType::Fp64, tflops(33.5));
    config.vector.efficiency = 0.8;       // [A]
    config.sram.capacity = megabytes(50); // L2 [S]
    config.sram.bandwidth = tbps(33);     // 128 B/clk/SM upper bound [D/A]
    config.sram.efficiency = 0.8;         // [A]
    config.dma.engines = 4;               // [A]
    config.dma.bandwidth = tbps(3.35);    // HBM3 peak [S]
    config.memory.capacity = gigabytes(80);
    config.memory.channels = 5 * 16; // 5 HBM3 stacks × 16 channels
    config.tensorVector =
        UnitSharing::Shared; // tensor cores and CUDA cores are in the same SMs [S]
    return config;
}

AccelConfig a100Sxm()
{
    AccelConfig config = base("a100_sxm");
    config.launchOverhead = Time::fromPs(2'000'000); // [A]
    TensorConfig& tensor = config.tensor;
    tensor.peak.set(DataType::Bf16, tflops(312)); // [S]
    tensor.peak.set(DataType::Fp16, tflops(312));
    tensor.peak.set(DataType::Fp32, tflops(156)); // TF32
    tensor.peak.set(DataType::Fp64, tflops(19.5));
    tensor.efficiency = 0.8;
    GpuTileTensor gpu;
    gpu.smCount = 108;
    gpu.clock = Frequency::fromHz(1.41e9);
    gpu.flopPerClockPerSm.set(DataType::Bf16, 2048); // [D] 312e12 / (108 × 1.41e9)
    gpu.flopPerClockPerSm.set(DataType::Fp16, 2048);
    gpu.flopPerClockPerSm.set(DataType::Fp32, 1024);
    gpu.tiles = {{128, 256}, {256, 128}, {128, 128}, {64, 128}, {64, 64}};
    gpu.pipeEfficiency = 0.8;
    tensor.detail = gpu;
    config.vector.peak.set(DataType::Fp32, tflops(19.5)); // [S]
    config.vector.peak.set(DataType::Bf16, tflops(39));
    config.vector.peak.set(DataType::Fp16, tflops(39));
    config.vector.peak.set(DataType::Fp64, tflops(9.7));
    config.vector.efficiency = 0.8;
    config.sram.capacity = megabytes(40); // L2 [S]
    config.sram.bandwidth = tbps(19.5);   // 128 B/clk/SM × 108 × 1.41 GHz [D/A]
    config.sram.efficiency = 0.8;
    config.dma.engines = 4;
    config.dma.bandwidth = tbps(2.039);
    config.memory.capacity = gigabytes(80);
    config.memory.channels = 5 * 8; // 5 HBM2E stacks × 8 channels
    config.tensorVector =
        UnitSharing::Shared; // tensor cores and CUDA cores are in the same SMs [S]
    return config;
}

AccelConfig tpuV4()
{
    AccelConfig config = base("tpu_v4");
    config.launchOverhead = Time::fromPs(1'000'000); // [A]
    config.computeUnits = 2;                         // 2 TensorCores [S]
    TensorConfig& tensor = config.tensor;
    tensor.peak.set(DataType::Bf16, tflops(275)); // [S]
    tensor.peak.set(DataType::Int8, tflops(275));
    tensor.efficiency = 0.8;
    SystolicTensor array;
    array.rows = 128;
    array.cols = 128;
    array.arrays = 8; // 2 TC × 4 MXU [S]
    array.clock = Frequency::fromHz(1.05e9);
    array.dataflow = Dataflow::WeightStationary;
    array.tileRows = 128;
    array.tileCols = 128;
    tensor.detail = array;
    config.vector.peak.set(DataType::Bf16, tflops(17.2)); // [A] 1/16 of the MXU peak
    config.vector.peak.set(DataType::Fp32, tflops(17.2));
    config.vector.efficiency = 0.8;
    config.sram.capacity = Size::fromBytes(std::uint64_t{128} << 20); // CMEM [S]
    config.sram.bandwidth = tbps(10);                                 // [A]
    config.sram.efficiency = 0.8;
    config.dma.engines = 4;
    config.dma.bandwidth = tbps(1.2);
    config.memory.capacity = Size::fromBytes(std::uint64_t{32} << 30);
    config.memory.channels = 4 * 8; // 4 HBM2 stacks × 8 channels
    return config;
}

AccelConfig ng1Common(std::string name)
{
    AccelConfig config = base(std::move(name));
    config.launchOverhead = Time::fromPs(1'000'000); // [A] graphs-style launch
    config.tensor.peak.set(DataType::Bf16, tflops(2500));
    config.tensor.peak.set(DataType::Fp16, tflops(2500));
    config.tensor.peak.set(DataType::Fp8E4M3, tflops(5000));
    config.tensor.peak.set(DataType::Fp8E5M2, tflops(5000));
    config.tensor.efficiency = 0.8;
    config.vector.peak.set(DataType::Fp32, tflops(160));
    config.vector.peak.set(DataType::Bf16, tflops(320)); // [A] 2× FP32 as on H100
    config.vector.peak.set(DataType::Fp16, tflops(320));
    config.vector.efficiency = 0.8;
    config.sram.capacity = megabytes(256);
    config.sram.bandwidth = tbps(40);
    config.sram.efficiency = 0.8;
    config.dma.engines = 8;
    config.dma.bandwidth = tbps(16.4);
    config.memory.capacity = gigabytes(288);
    config.memory.channels = 8 * 32; // 8 HBM4 stacks × 32 channels
    return config;
}

AccelConfig ng1()
{
    AccelConfig config = ng1Common("ng1");
    GpuTileTensor gpu;
    gpu.smCount = 160;
    gpu.clock = Frequency::fromHz(1.9e9);
    // 4 tensor units × 1,024 BF16 FMA/clk = 8,192 FLOP/clk per core.
    gpu.flopPerClockPerSm.set(DataType::Bf16, 8192);
    gpu.flopPerClockPerSm.set(DataType::Fp16, 8192);
    gpu.flopPerClockPerSm.set(DataType::Fp8E4M3, 16384);
    gpu.flopPerClockPerSm.set(DataType::Fp8E5M2, 16384);
    gpu.tiles = {{128, 256}, {256, 128}, {128, 128}, {64, 128}, {64, 64}};
    gpu.pipeEfficiency = 0.8;
    config.tensor.detail = gpu;
    config.tensorVector =
        UnitSharing::Shared; // a GPU-like design: tensor and vector units in the same cores [A]
    return config;
}

AccelConfig ng1Systolic()
{
    AccelConfig config = ng1Common("ng1_systolic");
    config.tensor.peak.set(DataType::Bf16, tflops(2516.6)); // 16 × 256² × 2 × 1.2 GHz
    SystolicTensor array;
    array.rows = 256;
    array.cols = 256;
    array.arrays = 16;
    array.clock = Frequency::fromHz(1.2e9);
    array.dataflow = Dataflow::WeightStationary;
    array.tileRows = 256;
    array.tileCols = 256;
    config.tensor.detail = array;
    return config;
}

AccelConfig presetConfig(AccelPreset preset)
{
    switch (preset) {
    case AccelPreset::H100Sxm:
        return h100Sxm();
    case AccelPreset::A100Sxm:
        return a100Sxm();
    case AccelPreset::TpuV4:
        return tpuV4();
    case AccelPreset::Ng1:
        return ng1();
    case AccelPreset::Ng1Systolic:
        return ng1Systolic();
    }
    throw Error("accelPreset: unknown preset " + std::to_string(static_cast<int>(preset)));
}

} // namespace

AccelConfig accelPreset(AccelPreset preset)
{
    // The tensor peaks above are the datasheets'; the shape-based models compute at their
    // per-clock rates, so the peaks that reports divide by are those (NG-1: 2,490 TFLOP/s
    // from 8,192 FLOP/clk × 160 cores × 1.9 GHz rather than the nominal 2.5 PFLOP/s).
    AccelConfig config = presetConfig(preset);
    derivePeaks(config.tensor);
    return config;
}

} // namespace etsim::accel
