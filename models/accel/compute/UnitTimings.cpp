#include "models/accel/compute/UnitTimings.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

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

// Operations per attention score of the softmax between the two GEMMs: running maximum,
// subtraction, exponential, running sum and the final scaling (docs/accel.md).
constexpr double softmaxFlopsPerScore = 5.0;

// The compute time of one GEMM on a tensor model, without memory term or overhead.
struct GemmPart {
    Time time;
    Fidelity fidelity = Fidelity::Roofline;
    bool fallback = false;
};

GemmPart gemmPart(const RooflineTiming& timing, const GemmShape& shape, DataType type)
{
    return {timing.computeTime(static_cast<double>(shape.flops()), type), Fidelity::Roofline};
}

GemmPart gemmPart(const GpuTileTiming& timing, const GemmShape& shape, DataType type)
{
    if (std::optional<GpuTileTiming::Plan> plan = timing.plan(shape, type))
        return {plan->computeTime, Fidelity::GpuTiles};
    return {timing.roofline().computeTime(static_cast<double>(shape.flops()), type),
            Fidelity::Roofline,
            true};
}

GemmPart gemmPart(const SystolicTiming& timing, const GemmShape& shape, DataType)
{
    return {timing.plan(shape).computeTime, Fidelity::Systolic};
}

const RooflineTiming& tensorRoofline(const TensorTiming& tensor)
{
    return std::visit(
        [](const auto& timing) -> const RooflineTiming& {
            if constexpr (std::is_same_v<std::decay_t<decltype(timing)>, RooflineTiming>)
                return timing;
            else
                return timing.roofline();
        },
        tensor);
}

bool hasShape(const std::optional<GemmShape>& gemm)
{
    return gemm && gemm->m != 0 && gemm->n != 0 && gemm->k != 0 && gemm->batch != 0;
}

} // namespace

ComputeEstimate UnitTimings::estimateTensor(const EtNodeInfo& node) const
{
    if (node.op == OperatorKind::Attention && hasShape(node.gemm))
        return estimateAttention(node);
    return std::visit([&](const auto& timing) { return timing.estimate(node); }, tensor);
}

ComputeEstimate UnitTimings::estimateAttention(const EtNodeInfo& node) const
{
    // docs/operators.md: S = Q·Kᵀ (m × n × k), softmax over S on the vector unit, then P·V
    // (m × dv × n), one after the other on the unit, with the node's bytes as one memory
    // term and one launch overhead. dv is k unless num_ops says otherwise.
    const RooflineTiming& roofline = tensorRoofline(tensor);
    const DataType type =
        node.dataType == DataType::Unknown ? roofline.params().defaultType : node.dataType;
    const GemmShape scores = *node.gemm;
    GemmShape values{scores.m, scores.k, scores.n, scores.batch};
    const double scoreFlops = static_cast<double>(scores.flops());
    if (static_cast<double>(node.flops) > scoreFlops) {
        const double perValueColumn = 2.0 * static_cast<double>(scores.m) *
                                      static_cast<double>(scores.n) *
                                      static_cast<double>(scores.batch);
        values.n = std::max<std::uint64_t>(
            1,
            static_cast<std::uint64_t>(
                std::llround((static_cast<double>(node.flops) - scoreFlops) / perValueColumn)));
    }
    const auto part = [&](const GemmShape& shape) {
        return std::visit([&](const auto& timing) { return gemmPart(timing, shape, type); },
                          tensor);
    };
    const GemmPart first = part(scores);
    const GemmPart second = part(values);
    const double scoreCount = static_cast<double>(scores.m) * static_cast<double>(scores.n) *
                              static_cast<double>(scores.batch);
    const Time softmax = vector.computeTime(softmaxFlopsPerScore * scoreCount, type);

    ComputeEstimate result;
    result.fidelity = first.fidelity;
    result.fallback = first.fallback || second.fallback;
    result.flops = nodeFlops(node);
    if (node.flops == 0)
        result.flops = scoreFlops + static_cast<double>(values.flops());
    const Time compute = first.time + softmax + second.time;
    const Time memory = roofline.memoryTime(nodeBytes(node));
    result.memoryBound = memory > compute;
    result.time = std::max(compute, memory) + roofline.params().overhead;
    return result;
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
