#include "models/accel/compute/ComputeTiming.h"

namespace etsim::accel {

const char* toString(Fidelity fidelity)
{
    switch (fidelity) {
    case Fidelity::Roofline:
        return "roofline";
    case Fidelity::GpuTiles:
        return "gpu_tiles";
    case Fidelity::Systolic:
        return "systolic";
    case Fidelity::Vector:
        return "vector";
    }
    return "?";
}

double nodeFlops(const EtNodeInfo& node)
{
    if (node.flops != 0)
        return static_cast<double>(node.flops);
    return node.gemm ? static_cast<double>(node.gemm->flops()) : 0.0;
}

double nodeBytes(const EtNodeInfo& node)
{
    if (node.bytes != 0 || !node.gemm)
        return static_cast<double>(node.bytes);
    const GemmShape& g = *node.gemm;
    double elements = (static_cast<double>(g.m) * static_cast<double>(g.k) +
                       static_cast<double>(g.k) * static_cast<double>(g.n) +
                       static_cast<double>(g.m) * static_cast<double>(g.n)) *
                      static_cast<double>(g.batch);
    return elements * dataTypeBytes(node.dataType);
}

bool usesTensorUnit(const EtNodeInfo& node)
{
    switch (node.op) {
    case OperatorKind::Gemm:
    case OperatorKind::Convolution:
    case OperatorKind::Attention:
        return true;
    case OperatorKind::Unknown:
        return node.gemm.has_value() || node.flops != 0;
    default:
        return node.gemm.has_value();
    }
}

} // namespace etsim::accel
