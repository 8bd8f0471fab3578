#pragma once
// The timing calculators of one compute unit, built from an AccelConfig: the tensor-unit
// model the config chooses (a variant, one alternative per policy) and the vector unit.
// With compute_units = u, each unit gets 1/u of the chip's SMs or arrays, peak rates and
// SRAM bandwidth.

#include "models/accel/AccelConfig.h"
#include "models/accel/compute/GpuTileTiming.h"
#include "models/accel/compute/RooflineTiming.h"
#include "models/accel/compute/SystolicTiming.h"

#include <variant>

namespace etsim::accel {

using TensorTiming = std::variant<RooflineTiming, GpuTileTiming, SystolicTiming>;

struct UnitTimings {
    TensorTiming tensor;
    /// Element-wise, normalisation and reduction work: bandwidth-bound unless the vector
    /// peak binds.
    RooflineTiming vector;

    /// The time of a compute node on this unit (tensor or vector unit by usesTensorUnit()).
    ComputeEstimate estimate(const EtNodeInfo& node) const;
    /// The tensor unit's estimate; an attention node with a shape is estimateAttention().
    ComputeEstimate estimateTensor(const EtNodeInfo& node) const;
    /// An attention node as docs/operators.md defines it: Q·Kᵀ and P·V on the tensor model,
    /// the softmax between them at the vector unit's rate, in sequence; the node's bytes as
    /// one memory term (max with the compute), one launch overhead.
    ComputeEstimate estimateAttention(const EtNodeInfo& node) const;
};

/// The calculators of one of the config's compute units. The config must be valid.
UnitTimings makeUnitTimings(const AccelConfig& config);

} // namespace etsim::accel
