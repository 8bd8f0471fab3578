#pragma once
// GPU tensor-core GEMM timing with tile and wave quantisation (spec 1.2):
//
//   tiles  = ceil(M/tm)·ceil(N/tn)·batch        one CTA per output tile
//   waves  = ceil(tiles / (SMs·CTAs_per_SM))
//   t_tile = 2·tm·tn·K / (FLOP_per_clk_per_SM·f_clk·eta_pipe)
//   T      = max(waves·t_tile, Q / (BW·eta_m)) + t_fixed
//
// The tile is the candidate with the shortest compute time (first on a tie), as a library's
// heuristic would pick. Nodes without a GEMM shape, or of a data type without a per-clock
// rate, fall back to the roofline and are marked as fallbacks.

#include "models/accel/AccelConfig.h"
#include "models/accel/compute/RooflineTiming.h"

#include <optional>

namespace etsim::accel {

struct GpuTileParams {
    std::uint32_t smCount = 0;
    Frequency clock;
    PerDataType<double> flopPerClockPerSm;
    std::vector<TileShape> tiles;
    std::uint32_t ctasPerSm = 1;
    double pipeEfficiency = 1.0;
};

class GpuTileTiming {
public:
    /// How one GEMM is laid out over the SMs.
    struct Plan {
        TileShape tile;
        std::uint64_t tiles = 0;
        std::uint64_t waves = 0;
        /// tiles / (waves·SMs·CTAs_per_SM): the share of CTA slots doing work.
        double waveEfficiency = 0.0;
        /// M·N / (padded M·padded N): the share of tile area inside the matrix.
        double tileEfficiency = 0.0;
        /// waves·t_tile, without overhead or memory term.
        Time computeTime;
    };

    /// `fallback` times nodes the tile model cannot (and supplies the memory term).
    GpuTileTiming(GpuTileParams params, RooflineTiming fallback);

    /// The fastest plan for `shape` in `type`; nullopt if `type` has no per-clock rate.
    std::optional<Plan> plan(const GemmShape& shape, DataType type) const;
    ComputeEstimate estimate(const EtNodeInfo& node) const;
    const RooflineTiming& roofline() const { return fallback; }

private:
    GpuTileParams config;
    RooflineTiming fallback;
};

} // namespace etsim::accel
