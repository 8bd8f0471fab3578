#pragma once
// Accelerator configurations with round numbers, for tests whose times are computed by hand.

#include "models/accel/AccelConfig.h"

#include <cstdint>

namespace etsim::test {

/// 1 TFLOP/s tensor (roofline) and vector units, 1 MB of SRAM at 1 TB/s, 100 kB DMA chunks on
/// two engines of 1 TB/s, no launch overhead, efficiencies 1; `units` compute units.
inline accel::AccelConfig roundAccelConfig(std::uint32_t units = 1)
{
    accel::AccelConfig config;
    config.name = "round";
    config.computeUnits = units;
    config.tensor.peak.set(DataType::Bf16, FlopRate::fromFlopsPerSecond(1e12));
    config.tensor.detail = accel::RooflineTensor{};
    config.vector.peak.set(DataType::Bf16, FlopRate::fromFlopsPerSecond(1e12));
    config.sram.capacity = Size::fromBytes(1'000'000);
    config.sram.bandwidth = Bandwidth::fromBytesPerSecond(1e12);
    config.dma.engines = 2;
    config.dma.bandwidth = Bandwidth::fromBytesPerSecond(1e12);
    config.dma.chunk = Size::fromBytes(100'000);
    config.memory.capacity = Size::fromBytes(1'000'000'000);
    config.memory.alignment = Size::fromBytes(4096);
    config.memory.interleave = Size::fromBytes(256);
    config.memory.channels = 8;
    accel::validateAccelConfig(config);
    return config;
}

} // namespace etsim::test
