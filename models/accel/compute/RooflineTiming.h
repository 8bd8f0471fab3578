#pragma once
// Roofline timing (spec 1.1): T = max(F / (P[dtype]·eta_c), Q / (BW·eta_m)) + t_fixed.
// Used for the tensor unit when no shape-based model is configured, as the fallback of the
// shape-based models, and (with the vector peak) for the vector unit.

#include "models/accel/AccelConfig.h"
#include "models/accel/compute/ComputeTiming.h"

namespace etsim::accel {

struct RooflineParams {
    /// Peak rate per data type of one unit.
    PerDataType<FlopRate> peak;
    /// Data type whose peak applies when the node's type has none.
    DataType defaultType = DataType::Bf16;
    double computeEfficiency = 1.0;
    /// Bandwidth of the memory level the node's bytes come from (on-chip SRAM).
    Bandwidth bandwidth;
    double memoryEfficiency = 1.0;
    /// Fixed launch overhead t_fixed.
    Time overhead;
    /// How estimates are labelled (Roofline for the tensor unit, Vector for the vector unit).
    Fidelity label = Fidelity::Roofline;
};

class RooflineTiming {
public:
    explicit RooflineTiming(RooflineParams params);

    ComputeEstimate estimate(const EtNodeInfo& node) const;
    /// F / (P[type]·eta_c), without overhead.
    Time computeTime(double flops, DataType type) const;
    /// Q / (BW·eta_m), without overhead.
    Time memoryTime(double bytes) const;
    /// The effective compute rate for `type`: P[type]·eta_c.
    FlopRate rate(DataType type) const;
    const RooflineParams& params() const { return config; }

private:
    RooflineParams config;
    Bandwidth effectiveBandwidth;
};

} // namespace etsim::accel
