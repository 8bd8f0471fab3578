#include "models/accel/compute/GpuTileTiming.h"

#include "kernel/IntMath.h"

#include <algorithm>

namespace etsim::accel {

GpuTileTiming::GpuTileTiming(GpuTileParams params, RooflineTiming fallback)
    : config(std::move(params)), fallback(std::move(fallback))
{
}

std::optional<GpuTileTiming::Plan> GpuTileTiming::plan(const GemmShape& shape, DataType type) const
{
    double flopPerClock = config.flopPerClockPerSm.get(type);
    if (flopPerClock <= 0.0 || shape.m == 0 || shape.n == 0 || shape.k == 0 || shape.batch == 0)
        return std::nullopt;
    FlopRate smRate =
        FlopRate::fromFlopsPerSecond(flopPerClock * config.clock.hz() * config.pipeEfficiency);
    std::uint64_t slots = std::uint64_t{config.smCount} * config.ctasPerSm;
    std::optional<Plan> best;
    for (const TileShape& tile : config.tiles) {
        Plan candidate;
        candidate.tile = tile;
        std::uint64_t rows = ceilDiv(shape.m, tile.m);
        std::uint64_t cols = ceilDiv(shape.n, tile.n);
        candidate.tiles = rows * cols * shape.batch;
        candidate.waves = ceilDiv(candidate.tiles, slots);
        candidate.waveEfficiency =
            static_cast<double>(candidate.tiles) / static_cast<double>(candidate.waves * slots);
        candidate.tileEfficiency =
            static_cast<double>(shape.m) * static_cast<double>(shape.n) /
            (static_cast<double>(rows * tile.m) * static_cast<double>(cols * tile.n));
        // Every SM runs its CTAs of one wave side by side, sharing its rate.
        double waveFlops = 2.0 * tile.m * tile.n * static_cast<double>(shape.k) * config.ctasPerSm;
        candidate.computeTime = (static_cast<double>(candidate.waves) * waveFlops) / smRate;
        if (!best || candidate.computeTime < best->computeTime)
            best = candidate;
    }
    return best;
}

ComputeEstimate GpuTileTiming::estimate(const EtNodeInfo& node) const
{
    DataType type =
        node.dataType == DataType::Unknown ? fallback.params().defaultType : node.dataType;
    std::optional<Plan> layout = node.gemm ? plan(*node.gemm, type) : std::nullopt;
    if (!layout) {
        ComputeEstimate result = fallback.estimate(node);
        result.fallback = true;
        return result;
    }
    ComputeEstimate result;
    result.fidelity = Fidelity::GpuTiles;
    result.flops = nodeFlops(node);
    Time memory = fallback.memoryTime(nodeBytes(node));
    result.memoryBound = memory > layout->computeTime;
    result.time = std::max(layout->computeTime, memory) + fallback.params().overhead;
    return result;
}

} // namespace etsim::accel
