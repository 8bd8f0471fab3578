#include "models/accel/compute/SystolicTiming.h"

#include "kernel/IntMath.h"

#include <algorithm>

namespace etsim::accel {

SystolicTiming::SystolicTiming(SystolicParams params, RooflineTiming fallback)
    : config(std::move(params)), fallback(std::move(fallback))
{
}

SystolicTiming::Plan SystolicTiming::plan(const GemmShape& shape) const
{
    Plan result;
    switch (config.dataflow) {
    case Dataflow::OutputStationary:
        result.spatialRows = shape.m;
        result.spatialCols = shape.n;
        result.temporal = shape.k;
        break;
    case Dataflow::WeightStationary:
        result.spatialRows = shape.k;
        result.spatialCols = shape.n;
        result.temporal = shape.m;
        break;
    case Dataflow::InputStationary:
        result.spatialRows = shape.k;
        result.spatialCols = shape.m;
        result.temporal = shape.n;
        break;
    }
    if (result.spatialRows == 0 || result.spatialCols == 0 || result.temporal == 0 ||
        shape.batch == 0)
        return result;
    const std::uint64_t rows = config.tileRows;
    const std::uint64_t cols = config.tileCols;
    result.folds =
        ceilDiv(result.spatialRows, rows) * ceilDiv(result.spatialCols, cols) * shape.batch;
    if (result.folds == 1)
        result.cycles = 2 * result.spatialRows + result.spatialCols + result.temporal - 2;
    else
        result.cycles =
            (2 * rows + cols + result.temporal - 2) * ceilDiv(result.folds, config.arrays);
    double macs = static_cast<double>(shape.m) * static_cast<double>(shape.n) *
                  static_cast<double>(shape.k) * static_cast<double>(shape.batch);
    result.utilisation = macs / (static_cast<double>(config.rows) * config.cols * config.arrays *
                                 static_cast<double>(result.cycles));
    result.computeTime = result.cycles / config.clock;
    return result;
}

ComputeEstimate SystolicTiming::estimate(const EtNodeInfo& node) const
{
    if (!node.gemm || node.gemm->m == 0 || node.gemm->n == 0 || node.gemm->k == 0 ||
        node.gemm->batch == 0) {
        ComputeEstimate result = fallback.estimate(node);
        result.fallback = true;
        return result;
    }
    Plan layout = plan(*node.gemm);
    ComputeEstimate result;
    result.fidelity = Fidelity::Systolic;
    result.flops = nodeFlops(node);
    Time memory = fallback.memoryTime(nodeBytes(node));
    result.memoryBound = memory > layout.computeTime;
    result.time = std::max(layout.computeTime, memory) + fallback.params().overhead;
    return result;
}

} // namespace etsim::accel
