#include "models/accel/compute/UnitTimings.h"

namespace etsim::accel {

namespace {

PerDataType<FlopRate> share(const PerDataType<FlopRate>& rates, std::uint32_t units)
{
    return rates.scaled([units](FlopRate rate) { return rate * (1.0 / units); });
}

struct TensorFactory {
    const AccelConfig& config;
    RooflineTiming roofline;

    TensorTiming operator()(const RooflineTensor&) const { return roofline; }

    TensorTiming operator()(const GpuTileTensor& gpu) const
    {
        GpuTileParams params;
        params.smCount = gpu.smCount / config.computeUnits;
        params.clock = gpu.clock;
        params.flopPerClockPerSm = gpu.flopPerClockPerSm;
        params.tiles = gpu.tiles;
        params.ctasPerSm = gpu.ctasPerSm;
        params.pipeEfficiency = gpu.pipeEfficiency;
        return GpuTileTiming(std::move(params), roofline);
    }

    TensorTiming operator()(const SystolicTensor& array) const
    {
        SystolicParams params;
        params.rows = array.rows;
        params.cols = array.cols;
        params.arrays = array.arrays / config.computeUnits;
        params.tileRows = array.tileRows;
        params.tileCols = array.tileCols;
        params.clock = array.clock;
        params.dataflow = array.dataflow;
        return SystolicTiming(params, roofline);
    }
};

} // namespace

ComputeEstimate UnitTimings::estimateTensor(const EtNodeInfo& node) const
{
    return std::visit([&](const auto& timing) { return timing.estimate(node); }, tensor);
}

ComputeEstimate UnitTimings::estimate(const EtNodeInfo& node) const
{
    return usesTensorUnit(node) ? estimateTensor(node) : vector.estimate(node);
}

UnitTimings makeUnitTimings(const AccelConfig& config)
{
    const std::uint32_t units = config.computeUnits;
    Bandwidth sramShare = config.sram.bandwidth * (1.0 / units);

    RooflineParams tensorParams;
    tensorParams.peak = share(config.tensor.peak, units);
    tensorParams.defaultType = config.defaultDataType;
    tensorParams.computeEfficiency = config.tensor.efficiency;
    tensorParams.bandwidth = sramShare;
    tensorParams.memoryEfficiency = config.sram.efficiency;
    tensorParams.overhead = config.launchOverhead;
    tensorParams.label = Fidelity::Roofline;

    RooflineParams vectorParams = tensorParams;
    vectorParams.peak = share(config.vector.peak, units);
    vectorParams.computeEfficiency = config.vector.efficiency;
    vectorParams.label = Fidelity::Vector;

    TensorFactory factory{config, RooflineTiming(tensorParams)};
    return UnitTimings{std::visit(factory, config.tensor.detail), RooflineTiming(vectorParams)};
}

} // namespace etsim::accel
