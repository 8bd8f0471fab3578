#pragma once
// Configuration of one accelerator (models/accel): the compute engine (tensor and vector
// units), on-chip SRAM, the DMA engine and the allocator that places tensors in HBM.
//
// Two layers: the YAML map (read through kernel/Config, every key optional) is laid over a base
// runtime config (the preset named by `preset:`, or the built-in defaults) and every rule is
// checked, so a platform file can say "preset: h100_sxm" and override only the clock. Models
// receive the runtime AccelConfig only. Every key is declared once, in accelParams(); the key
// table of docs/accel.md is generated from it (`etsim config keys accel --markdown`).
//
// Rates are per chip. With compute_units > 1 the chip is split into that many identical
// units (SMs, arrays, peak rates and SRAM bandwidth divided evenly), each running one node
// at a time, so independent nodes run concurrently.

#include "kernel/Config.h"
#include "kernel/Extensions.h"
#include "kernel/ParamTable.h"
#include "kernel/Units.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace YAML {
class Node;
}

namespace etsim::accel {

/// A value per element type (peak rates, FLOP per clock). Zero means "not given": lookups
/// then use the configured default data type.
template <typename T>
class PerDataType {
public:
    static constexpr std::size_t size = static_cast<std::size_t>(DataType::Bool) + 1;

    T get(DataType type) const { return values[static_cast<std::size_t>(type)]; }
    void set(DataType type, T value) { values[static_cast<std::size_t>(type)] = value; }
    bool has(DataType type) const { return get(type) != T{}; }
    /// The value for `type`, or for `fallback` when `type` has none.
    T getOr(DataType type, DataType fallback) const
    {
        return has(type) ? get(type) : get(fallback);
    }
    /// Every entry scaled by `factor` (used to split a chip into compute units).
    template <typename Scale>
    PerDataType scaled(Scale&& scale) const
    {
        PerDataType result;
        for (std::size_t i = 0; i < size; ++i)
            if (values[i] != T{})
                result.values[i] = scale(values[i]);
        return result;
    }

private:
    std::array<T, size> values{};
};

/// The data types a config names, as YAML keys ("fp8" sets both FP8 formats).
struct DataTypeKey {
    std::string_view name;
    DataType first;
    DataType second;
};
constexpr DataTypeKey dataTypeKeys[] = {
    {"fp64", DataType::Fp64, DataType::Fp64},
    {"fp32", DataType::Fp32, DataType::Fp32},
    {"fp16", DataType::Fp16, DataType::Fp16},
    {"bf16", DataType::Bf16, DataType::Bf16},
    {"fp8", DataType::Fp8E4M3, DataType::Fp8E5M2},
    {"int8", DataType::Int8, DataType::Int8},
};

/// Systolic dataflow (SCALE-Sim): which operand stays in the processing elements.
enum class Dataflow : std::uint8_t { OutputStationary, WeightStationary, InputStationary };
constexpr EnumName<Dataflow> dataflowNames[] = {
    {"output_stationary", Dataflow::OutputStationary},
    {"weight_stationary", Dataflow::WeightStationary},
    {"input_stationary", Dataflow::InputStationary},
    {"os", Dataflow::OutputStationary},
    {"ws", Dataflow::WeightStationary},
    {"is", Dataflow::InputStationary},
};
const char* toString(Dataflow dataflow);

/// Which timing model the tensor unit uses.
/// Whether a unit's tensor and vector work may run at the same time. Separate: each has its
/// own datapath and they overlap freely (a TPU's MXUs and vector unit). Shared: both run on the
/// same cores (a GPU's SMs), so a tensor kernel and a vector kernel on one unit take turns and
/// two concurrent kernels take the sum of their times.
enum class UnitSharing : std::uint8_t { Separate, Shared };
constexpr EnumName<UnitSharing> unitSharingNames[] = {
    {"separate", UnitSharing::Separate},
    {"shared", UnitSharing::Shared},
};

enum class TensorModel : std::uint8_t { Roofline, GpuTiles, Systolic };
constexpr EnumName<TensorModel> tensorModelNames[] = {
    {"roofline", TensorModel::Roofline},
    {"gpu_tiles", TensorModel::GpuTiles},
    {"systolic", TensorModel::Systolic},
};

/// An output tile of a GEMM kernel: rows of C × columns of C.
struct TileShape {
    std::uint32_t m = 0;
    std::uint32_t n = 0;
    bool operator==(const TileShape& other) const { return m == other.m && n == other.n; }
};

/// Roofline-only tensor unit: no parameters beyond the common ones (peak, efficiency).
struct RooflineTensor {};

/// GPU tensor cores: output tiles (one per CTA) scheduled in waves over the SMs.
struct GpuTileTensor {
    std::uint32_t smCount = 0;
    /// Sustained tensor clock.
    Frequency clock;
    /// Dense FLOP per clock per SM, per data type (H100 BF16: 4096).
    PerDataType<double> flopPerClockPerSm;
    /// Candidate output tiles; the model picks the fastest for each GEMM, as cuBLAS would.
    std::vector<TileShape> tiles;
    std::uint32_t ctasPerSm = 1;
    /// Mainloop efficiency eta_pipe (operand staging, epilogue, pipeline fill), in (0, 1].
    double pipeEfficiency = 1.0;
};

/// Systolic arrays of rows × cols MAC PEs (SCALE-Sim cycle formula).
struct SystolicTensor {
    std::uint32_t rows = 0;
    std::uint32_t cols = 0;
    std::uint32_t arrays = 1;
    Frequency clock;
    Dataflow dataflow = Dataflow::OutputStationary;
    /// The part of the array one fold maps (rows × cols); the whole array by default.
    std::uint32_t tileRows = 0;
    std::uint32_t tileCols = 0;
};

using TensorDetail = std::variant<RooflineTensor, GpuTileTensor, SystolicTensor>;

struct TensorConfig {
    /// Dense peak rate per data type of the whole chip (never the 2:4 sparse figure).
    PerDataType<FlopRate> peak;
    /// Calibration efficiency eta_c of the roofline (and of the fallback), in (0, 1].
    double efficiency = 1.0;
    TensorDetail detail;
};

struct VectorConfig {
    /// Peak of the vector (non-tensor) path per data type, whole chip.
    PerDataType<FlopRate> peak;
    double efficiency = 1.0;
};

/// How on-chip memory holds tensors between nodes (docs/accel.md, On-chip memory): tracked by
/// tensor identity with a replacement policy (lru, fifo), or the per-node shortcut of earlier
/// versions (legacy: up to `capacity` bytes of every compute node count as resident).
enum class SramPolicy : std::uint8_t { Lru, Fifo, Legacy };
constexpr EnumName<SramPolicy> sramPolicyNames[] = {
    {"lru", SramPolicy::Lru},
    {"fifo", SramPolicy::Fifo},
    {"legacy", SramPolicy::Legacy},
};

struct SramConfig {
    /// On-chip capacity: what the residency model holds across nodes.
    Size capacity;
    /// Replacement policy of the residency model, or the legacy per-node shortcut.
    SramPolicy policy = SramPolicy::Lru;
    /// On-chip bandwidth, whole chip.
    Bandwidth bandwidth;
    /// Memory efficiency eta_m applied to `bandwidth`, in (0, 1].
    double efficiency = 1.0;
};

struct DmaConfig {
    /// Transfers in flight at once (DMA engines / queues).
    std::uint32_t engines = 1;
    /// Bandwidth of one engine; a transfer takes at least chunk / bandwidth.
    Bandwidth bandwidth;
    /// Size of one DMA transaction and of each of the two staging buffers.
    Size chunk;
    /// Send one TLM transaction per chunk (and one compute slice per chunk) even where the
    /// streaming fast path would compute the node's chunks arithmetically (docs/accel.md).
    /// The times are the same; this is for checking that, and for tools that watch chunks.
    bool perChunk = false;
};

struct MemoryMapConfig {
    /// First HBM address the allocator hands out.
    std::uint64_t base = 0;
    /// HBM bytes the allocator may use; allocation wraps around when they run out.
    Size capacity;
    /// Regions start on multiples of this.
    Size alignment;
    /// Channel interleaving granularity of the HBM address map and the number of channels:
    /// successive regions start on successive channels, so tensors do not all begin on
    /// channel 0, row 0.
    Size interleave;
    std::uint32_t channels = 1;
};

/// The runtime configuration of one accelerator (every rule checked).
struct AccelConfig {
    /// Name of the preset or design ("h100_sxm").
    std::string name;
    std::uint32_t computeUnits = 1;
    /// Whether each unit's tensor and vector work overlap (docs/accel.md, Concurrency).
    UnitSharing tensorVector = UnitSharing::Separate;
    /// Fixed kernel launch overhead added to every compute node.
    Time launchOverhead;
    /// Data type assumed when a node's is unknown or has no rate of its own.
    DataType defaultDataType = DataType::Bf16;
    TensorConfig tensor;
    VectorConfig vector;
    SramConfig sram;
    DmaConfig dma;
    MemoryMapConfig memory;
};

/// Built-in design points, with the numbers of shared/spec/hardware-models.md section 1.
enum class AccelPreset : std::uint8_t { H100Sxm, A100Sxm, TpuV4, Ng1, Ng1Systolic };
constexpr EnumName<AccelPreset> accelPresetNames[] = {
    {"h100_sxm", AccelPreset::H100Sxm},
    {"a100_sxm", AccelPreset::A100Sxm},
    {"tpu_v4", AccelPreset::TpuV4},
    {"ng1", AccelPreset::Ng1},
    {"ng1_systolic", AccelPreset::Ng1Systolic},
};

/// The runtime config of a preset.
AccelConfig accelPreset(AccelPreset preset);

/// The dense rate of `type` that the shape-based tensor model computes at, whole chip:
/// gpu_tiles FLOP/clk/SM × SMs × clock, systolic 2 × rows × cols × arrays × clock (every type
/// alike). nullopt for the roofline, or a type without a per-clock rate.
std::optional<FlopRate> modelPeak(const TensorConfig& tensor, DataType type);

/// Sets the tensor peak of every type the shape-based model has a rate for to modelPeak(), so
/// that the peak in reports and utilisations is the one the model uses (docs/accel.md).
void derivePeaks(TensorConfig& tensor);

/// Every key of the accelerator map: its type, default, rule and help (kernel/ParamTable.h).
/// It drives parseAccelConfig, validateAccelConfig, toYaml and the key table of docs/accel.md.
const ParamTable<AccelConfig>& accelParams();

/// Checks every rule of a config built in code; throws etsim::Error naming the key path
/// ("accel.tensor.sm_count: must be at least 1").
void validateAccelConfig(const AccelConfig& config);

/// Reads an accelerator map (the keys of docs/accel.md), lays it over its preset (or the
/// defaults) and checks it. Errors are ConfigErrors at the offending key.
AccelConfig parseAccelConfig(ConfigMap& map);

/// Every value of a config as the accelerator map of docs/accel.md (scalars as YAML text,
/// units written so they parse back exactly): parseAccelConfig of the result, with no preset,
/// gives back the same config. The resolved platform of a run report is built from it.
YAML::Node toYaml(const AccelConfig& config);

} // namespace etsim::accel
