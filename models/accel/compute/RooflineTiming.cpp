#include "models/accel/compute/RooflineTiming.h"

#include <algorithm>
#include <cmath>

namespace etsim::accel {

RooflineTiming::RooflineTiming(RooflineParams params)
    : config(std::move(params)), effectiveBandwidth(config.bandwidth * config.memoryEfficiency)
{
}

FlopRate RooflineTiming::rate(DataType type) const
{
    return config.peak.getOr(type, config.defaultType) * config.computeEfficiency;
}

Time RooflineTiming::computeTime(double flops, DataType type) const
{
    return flops / rate(type);
}

Time RooflineTiming::memoryTime(double bytes) const
{
    return Size::fromBytes(static_cast<std::uint64_t>(std::llround(bytes))) / effectiveBandwidth;
}

ComputeEstimate RooflineTiming::estimate(const EtNodeInfo& node) const
{
    ComputeEstimate result;
    result.fidelity = config.label;
    result.flops = nodeFlops(node);
    Time compute = computeTime(result.flops, node.dataType);
    Time memory = memoryTime(nodeBytes(node));
    result.memoryBound = memory > compute;
    result.time = std::max(compute, memory) + config.overhead;
    return result;
}

} // namespace etsim::accel
