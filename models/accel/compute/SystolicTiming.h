#pragma once
// Systolic-array GEMM timing, SCALE-Sim formulation (spec 1.3). The dataflow maps the GEMM
// onto two spatial dimensions (Sr along rows, Sc along columns) and one streamed dimension T:
//
//   OS: (Sr, Sc, T) = (M, N, K)   WS: (K, N, M)   IS: (K, M, N)
//   folds  = ceil(Sr/R)·ceil(Sc/C)·batch
//   cycles = (2R + C + T − 2)·ceil(folds / arrays)    (fill R+C−2, stream T, drain R)
//   single fold that fits (Sr ≤ R, Sc ≤ C): cycles = 2·Sr + Sc + T − 2
//   util   = M·N·K·batch / (R·C·arrays·cycles)
//
// R × C is the tile one fold maps (the whole array unless configured smaller); utilisation is
// over the whole arrays. Folds are spread evenly over the arrays of the unit. The memory term
// of the roofline applies on top (max), and the launch overhead is added.

#include "models/accel/AccelConfig.h"
#include "models/accel/compute/RooflineTiming.h"

namespace etsim::accel {

struct SystolicParams {
    std::uint32_t rows = 0;
    std::uint32_t cols = 0;
    std::uint32_t arrays = 1;
    std::uint32_t tileRows = 0;
    std::uint32_t tileCols = 0;
    Frequency clock;
    Dataflow dataflow = Dataflow::OutputStationary;
};

class SystolicTiming {
public:
    struct Plan {
        std::uint64_t spatialRows = 0; // Sr
        std::uint64_t spatialCols = 0; // Sc
        std::uint64_t temporal = 0;    // T
        std::uint64_t folds = 0;
        std::uint64_t cycles = 0;
        double utilisation = 0.0;
        /// cycles / clock, without overhead or memory term.
        Time computeTime;
    };

    SystolicTiming(SystolicParams params, RooflineTiming fallback);

    /// The fold plan of `shape` (all dimensions at least 1; a zero dimension gives 0 cycles).
    Plan plan(const GemmShape& shape) const;
    ComputeEstimate estimate(const EtNodeInfo& node) const;
    const RooflineTiming& roofline() const { return fallback; }

private:
    SystolicParams config;
    RooflineTiming fallback;
};

} // namespace etsim::accel
