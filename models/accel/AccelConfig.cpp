// Longer than most files (about 700 lines): most of it is the parameter table, one entry per
// key of docs/accel.md with its rule, and the presets' derivation it reads through; keeping
// them together means a new key touches one place.

#include "models/accel/AccelConfig.h"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <map>
#include <sstream>
#include <utility>

namespace etsim::accel {

namespace {

// Defaults of a design that names no preset. Rates have no sensible default and must be given.
constexpr const char* defaultName = "custom";
constexpr std::uint32_t defaultComputeUnits = 1;
constexpr double defaultEfficiency = 1.0;
constexpr std::uint32_t defaultCtasPerSm = 1;
constexpr std::uint32_t defaultArrays = 1;
constexpr Dataflow defaultDataflow = Dataflow::OutputStationary;
constexpr std::uint32_t defaultDmaEngines = 1;
constexpr std::uint64_t defaultChunkBytes = 2 * 1024 * 1024;
constexpr std::uint64_t defaultAlignmentBytes = 4096;
constexpr std::uint64_t defaultInterleaveBytes = 256;
constexpr std::uint32_t defaultChannels = 1;
constexpr std::uint64_t defaultMemoryBytes = std::uint64_t{80} << 30;

constexpr EnumName<DataType> defaultDataTypeNames[] = {
    {"fp64", DataType::Fp64},
    {"fp32", DataType::Fp32},
    {"fp16", DataType::Fp16},
    {"bf16", DataType::Bf16},
    {"fp8_e4m3", DataType::Fp8E4M3},
    {"fp8_e5m2", DataType::Fp8E5M2},
    {"int8", DataType::Int8},
};

AccelConfig defaultConfig()
{
    AccelConfig config;
    config.name = defaultName;
    config.computeUnits = defaultComputeUnits;
    config.tensor.efficiency = defaultEfficiency;
    config.tensor.detail = RooflineTensor{};
    config.vector.efficiency = defaultEfficiency;
    config.sram.efficiency = defaultEfficiency;
    config.dma.engines = defaultDmaEngines;
    config.dma.chunk = Size::fromBytes(defaultChunkBytes);
    config.memory.capacity = Size::fromBytes(defaultMemoryBytes);
    config.memory.alignment = Size::fromBytes(defaultAlignmentBytes);
    config.memory.interleave = Size::fromBytes(defaultInterleaveBytes);
    config.memory.channels = defaultChannels;
    return config;
}

std::string efficiencyProblem(double value)
{
    if (!(value > 0.0 && value <= 1.0))
        return "must be in (0, 1], got " + std::to_string(value);
    return {};
}

std::string defaultTypeProblem(const AccelConfig& config, bool hasRate, const char* what)
{
    if (hasRate)
        return {};
    return std::string("give a ") + what + " for the default data type " +
           etsim::toString(config.defaultDataType);
}

// Relative difference above which a given peak and the shape-based model's own rate are
// two different chips rather than two roundings of one.
constexpr double peakTolerance = 1e-3;

std::string rateText(FlopRate rate)
{
    std::ostringstream text;
    text.precision(6);
    text << rate.flopsPerSecond() * 1e-12 << " TFLOP/s";
    return text.str();
}

// A peak that the model does not compute at would make utilisations lie (docs/accel.md).
std::optional<ParamViolation> peakDisagreement(const TensorConfig& tensor)
{
    const bool gpu = std::holds_alternative<GpuTileTensor>(tensor.detail);
    for (const DataTypeKey& entry : dataTypeKeys) {
        const std::optional<FlopRate> model = modelPeak(tensor, entry.first);
        if (!model || !tensor.peak.has(entry.first) || model->flopsPerSecond() <= 0.0)
            continue;
        const double given = tensor.peak.get(entry.first).flopsPerSecond();
        if (std::abs(given / model->flopsPerSecond() - 1.0) <= peakTolerance)
            continue;
        return ParamViolation{
            "tensor.peak." + std::string(entry.name),
            rateText(tensor.peak.get(entry.first)) + " disagrees with the " + rateText(*model) +
                (gpu ? " of tensor.flop_per_clock_per_sm × sm_count × clock"
                     : " of the systolic array (2 × rows × cols × arrays × clock)") +
                "; give only one of them (the other is derived), or make them agree"};
    }
    return std::nullopt;
}

// A unit count that does not split the chip's SMs or arrays evenly.
std::optional<ParamViolation>
unitSplitProblem(const AccelConfig& config, std::uint32_t parts, const char* what)
{
    if (config.computeUnits == 0 || parts % config.computeUnits == 0)
        return std::nullopt;
    return ParamViolation{"compute_units",
                          "must divide tensor." + std::string(what) + " (" + std::to_string(parts) +
                              ") so every unit has the same " +
                              (std::string(what) == "sm_count" ? "SMs" : "arrays")};
}

// The per-data-type map of a node ("{bf16: 989 TFLOP/s, fp8: ...}"); "fp8" sets both formats.
template <typename T>
PerDataType<T> perDataTypeOf(const ConfigNode& node)
{
    PerDataType<T> table;
    node.map([&](ConfigMap& rates) {
        for (const DataTypeKey& entry : dataTypeKeys) {
            if (std::optional<T> value = rates.template optional<T>(entry.name)) {
                table.set(entry.first, *value);
                table.set(entry.second, *value);
            }
        }
    });
    return table;
}

// Lays the entries `given` has over `table`.
template <typename T>
void overlay(PerDataType<T>& table, const PerDataType<T>& given)
{
    for (std::size_t i = 0; i < PerDataType<T>::size; ++i)
        if (given.has(static_cast<DataType>(i)))
            table.set(static_cast<DataType>(i), given.get(static_cast<DataType>(i)));
}

template <typename T>
std::string scalarText(const T& value)
{
    if constexpr (std::is_same_v<T, double>)
        return exactNumberText(value);
    else
        return etsim::toString(value);
}

// The entries a per-data-type table has, under the keys perDataTypeOf reads.
template <typename T>
YAML::Node perDataTypeYaml(const PerDataType<T>& table)
{
    YAML::Node node(YAML::NodeType::Map);
    for (const DataTypeKey& entry : dataTypeKeys)
        if (table.has(entry.first))
            node[std::string(entry.name)] = scalarText(table.get(entry.first));
    return node;
}

YAML::Node pairYaml(std::uint32_t first, std::uint32_t second)
{
    YAML::Node pair(YAML::NodeType::Sequence);
    pair.SetStyle(YAML::EmitterStyle::Flow);
    pair.push_back(std::to_string(first));
    pair.push_back(std::to_string(second));
    return pair;
}

// "[m, n]": a tile of two dimensions.
std::pair<std::uint32_t, std::uint32_t> readPair(const ConfigNode& node, const char* names)
{
    auto dims = node.as<std::vector<std::uint32_t>>();
    if (dims.size() != 2)
        node.fail(std::string("expected a tile ") + names + ", got " + std::to_string(dims.size()) +
                  " numbers");
    return {dims[0], dims[1]};
}

TensorModel modelOf(const TensorDetail& detail)
{
    if (std::holds_alternative<GpuTileTensor>(detail))
        return TensorModel::GpuTiles;
    if (std::holds_alternative<SystolicTensor>(detail))
        return TensorModel::Systolic;
    return TensorModel::Roofline;
}

bool isGpu(const AccelConfig& config)
{
    return std::holds_alternative<GpuTileTensor>(config.tensor.detail);
}

bool isSystolic(const AccelConfig& config)
{
    return std::holds_alternative<SystolicTensor>(config.tensor.detail);
}

// Generic accessors into the tensor model's own parameters (C& or const C&).
template <typename C>
auto& gpuOf(C& config)
{
    return std::get<GpuTileTensor>(config.tensor.detail);
}

template <typename C>
auto& systolicOf(C& config)
{
    return std::get<SystolicTensor>(config.tensor.detail);
}

template <typename C>
auto& clockOf(C& config)
{
    if (auto* gpu = std::get_if<GpuTileTensor>(&config.tensor.detail))
        return gpu->clock;
    return systolicOf(config).clock;
}

// tensor.clock, a key of the gpu_tiles and systolic models (listed with each model's keys).
void addClock(ParamTable<AccelConfig>& table,
              bool (*model)(const AccelConfig&),
              const char* help,
              const char* example)
{
    table
        .value(
            "tensor.clock", [](auto& c) -> auto& { return clockOf(c); }, "frequency > 0", help)
        .when(model)
        .rule([example](const AccelConfig& c) -> std::string {
            if (clockOf(c).hz() > 0.0)
                return {};
            return std::string("must be above 0 Hz, e.g. \"") + example + "\"";
        });
}

std::string positiveBandwidthProblem(Bandwidth value, const char* example)
{
    if (value.bytesPerSecond() > 0.0)
        return {};
    return std::string("must be above 0 B/s, e.g. \"") + example + "\"";
}

ParamTable<AccelConfig> makeAccelParams()
{
    ParamTable<AccelConfig> table("accel", "accelerator", defaultConfig);
    table
        .custom(
            "preset",
            choiceText(accelPresetNames),
            "base design: every key below starts from its value",
            [](const ConfigNode& node, AccelConfig& config) {
                const std::string& name = node.scalar(choiceText(accelPresetNames));
                for (const auto& entry : accelPresetNames)
                    if (entry.name == name) {
                        config = accelPreset(entry.value);
                        return;
                    }
                std::ostringstream names;
                for (const auto& entry : accelPresetNames)
                    names << (names.tellp() > 0 ? ", " : "") << entry.name;
                node.fail("unknown preset \"" + name + "\"; one of " + names.str());
            },
            [](const AccelConfig&) { return YAML::Node(); })
        .defaultIs("none");
    table.value(
        "name", [](auto& c) -> auto& { return c.name; }, "string", "name in reports");
    table
        .value(
            "compute_units",
            [](auto& c) -> auto& { return c.computeUnits; },
            "integer ≥ 1",
            "independent units; must divide `sm_count` / `arrays`")
        .rule([](const AccelConfig& c) { return atLeastOneProblem(c.computeUnits); });
    table.choice(
        "tensor_vector",
        [](auto& c) -> auto& { return c.tensorVector; },
        unitSharingNames,
        "whether a unit's tensor and vector work overlap (Concurrency above)");
    table.value(
        "launch_overhead",
        [](auto& c) -> auto& { return c.launchOverhead; },
        "time",
        "fixed cost per compute node");
    table.choice(
        "default_dtype",
        [](auto& c) -> auto& { return c.defaultDataType; },
        defaultDataTypeNames,
        "type used when a node's is unknown or has no rate");
    table.custom(
        "tensor.model",
        choiceText(tensorModelNames),
        "tensor-unit timing model",
        [](const ConfigNode& node, AccelConfig& config) {
            TensorModel model = detail::readEnum(node, tensorModelNames);
            if (model == modelOf(config.tensor.detail))
                return;
            // A different model starts from its own defaults, not from the preset's.
            if (model == TensorModel::GpuTiles)
                config.tensor.detail = GpuTileTensor{};
            else if (model == TensorModel::Systolic)
                config.tensor.detail = SystolicTensor{};
            else
                config.tensor.detail = RooflineTensor{};
        },
        [](const AccelConfig& config) {
            return YAML::Node(
                std::string(enumName(tensorModelNames, modelOf(config.tensor.detail))));
        });
    table
        .custom(
            "tensor.peak",
            "map dtype → FLOP rate (`fp64 fp32 fp16 bf16 fp8 int8`)",
            "dense peak of the chip; `fp8` sets both FP8 formats; derived from, or deriving, "
            "the shape-based model's rate (above)",
            [](const ConfigNode& node, AccelConfig& config) {
                overlay(config.tensor.peak, perDataTypeOf<FlopRate>(node));
            },
            [](const AccelConfig& config) { return perDataTypeYaml(config.tensor.peak); })
        .defaultIs("—")
        .rule([](const AccelConfig& c) {
            return defaultTypeProblem(c, c.tensor.peak.has(c.defaultDataType), "peak rate");
        })
        .ruleAt([](const AccelConfig& c) { return peakDisagreement(c.tensor); });
    table
        .value(
            "tensor.efficiency",
            [](auto& c) -> auto& { return c.tensor.efficiency; },
            "number in (0, 1]",
            "roofline eta_c")
        .rule([](const AccelConfig& c) { return efficiencyProblem(c.tensor.efficiency); });
    table
        .value(
            "tensor.sm_count",
            [](auto& c) -> auto& { return gpuOf(c).smCount; },
            "integer ≥ 1",
            "`gpu_tiles`: SMs")
        .when(isGpu)
        .rule([](const AccelConfig& c) {
            return gpuOf(c).smCount == 0 ? "must be at least 1 (streaming multiprocessors)" : "";
        })
        .ruleAt([](const AccelConfig& c) {
            return gpuOf(c).smCount == 0 ? std::nullopt
                                         : unitSplitProblem(c, gpuOf(c).smCount, "sm_count");
        });
    addClock(table, isGpu, "`gpu_tiles`: tensor clock", "1.83 GHz");
    table
        .custom(
            "tensor.flop_per_clock_per_sm",
            "map dtype → number",
            "`gpu_tiles`: dense FLOP/clk/SM",
            [](const ConfigNode& node, AccelConfig& config) {
                overlay(gpuOf(config).flopPerClockPerSm, perDataTypeOf<double>(node));
            },
            [](const AccelConfig& config) {
                return perDataTypeYaml(gpuOf(config).flopPerClockPerSm);
            })
        .when(isGpu)
        .rule([](const AccelConfig& c) {
            return defaultTypeProblem(c, gpuOf(c).flopPerClockPerSm.has(c.defaultDataType), "rate");
        });
    table
        .custom(
            "tensor.tiles",
            "list of `[m, n]`",
            "`gpu_tiles`: candidate output tiles",
            [](const ConfigNode& node, AccelConfig& config) {
                std::vector<TileShape> tiles;
                for (const ConfigNode& element : node.elements()) {
                    auto [m, n] = readPair(element, "[m, n]");
                    tiles.push_back({m, n});
                }
                gpuOf(config).tiles = std::move(tiles);
            },
            [](const AccelConfig& config) {
                YAML::Node tiles(YAML::NodeType::Sequence);
                for (const TileShape& tile : gpuOf(config).tiles)
                    tiles.push_back(pairYaml(tile.m, tile.n));
                return tiles;
            })
        .when(isGpu)
        .ruleAt([](const AccelConfig& c) -> std::optional<ParamViolation> {
            const std::vector<TileShape>& tiles = gpuOf(c).tiles;
            if (tiles.empty())
                return ParamViolation{{}, "list at least one output tile, e.g. [[128, 256]]"};
            for (std::size_t i = 0; i < tiles.size(); ++i)
                if (tiles[i].m == 0 || tiles[i].n == 0)
                    return ParamViolation{"tensor.tiles[" + std::to_string(i) + "]",
                                          "tile dimensions must be at least 1"};
            return std::nullopt;
        });
    table
        .value(
            "tensor.ctas_per_sm",
            [](auto& c) -> auto& { return gpuOf(c).ctasPerSm; },
            "integer ≥ 1",
            "`gpu_tiles`: concurrent CTAs per SM")
        .when(isGpu)
        .defaultIs("1")
        .rule([](const AccelConfig& c) { return atLeastOneProblem(gpuOf(c).ctasPerSm); });
    table
        .value(
            "tensor.pipe_efficiency",
            [](auto& c) -> auto& { return gpuOf(c).pipeEfficiency; },
            "number in (0, 1]",
            "`gpu_tiles`: mainloop efficiency eta_pipe")
        .when(isGpu)
        .defaultIs("1")
        .rule([](const AccelConfig& c) { return efficiencyProblem(gpuOf(c).pipeEfficiency); });
    for (const char* key : {"tensor.rows", "tensor.cols"}) {
        const bool rows = std::string_view(key) == "tensor.rows";
        table
            .value(
                key,
                [rows](auto& c) -> auto& { return rows ? systolicOf(c).rows : systolicOf(c).cols; },
                "integer ≥ 1",
                rows ? "`systolic`: PE rows of one array" : "`systolic`: PE columns of one array")
            .when(isSystolic)
            .rule([rows](const AccelConfig& c) {
                const SystolicTensor& array = systolicOf(c);
                return (rows ? array.rows : array.cols) == 0 ? "array dimensions must be at least 1"
                                                             : "";
            });
    }
    table
        .value(
            "tensor.arrays",
            [](auto& c) -> auto& { return systolicOf(c).arrays; },
            "integer ≥ 1",
            "`systolic`: arrays per chip")
        .when(isSystolic)
        .defaultIs("1")
        .rule([](const AccelConfig& c) { return atLeastOneProblem(systolicOf(c).arrays); })
        .ruleAt([](const AccelConfig& c) {
            return systolicOf(c).arrays == 0 ? std::nullopt
                                             : unitSplitProblem(c, systolicOf(c).arrays, "arrays");
        });
    addClock(table, isSystolic, "`systolic`: array clock", "1.05 GHz");
    table
        .choice(
            "tensor.dataflow",
            [](auto& c) -> auto& { return systolicOf(c).dataflow; },
            dataflowNames,
            "`systolic`: dataflow")
        .when(isSystolic)
        .defaultIs("output_stationary");
    table
        .custom(
            "tensor.tile",
            "`[rows, cols]` ≤ the array",
            "`systolic`: part of the array one fold maps",
            [](const ConfigNode& node, AccelConfig& config) {
                auto [rows, cols] = readPair(node, "[rows, cols]");
                systolicOf(config).tileRows = rows;
                systolicOf(config).tileCols = cols;
            },
            [](const AccelConfig& config) {
                return pairYaml(systolicOf(config).tileRows, systolicOf(config).tileCols);
            })
        .when(isSystolic)
        .defaultIs("the array")
        .rule([](const AccelConfig& c) -> std::string {
            const SystolicTensor& array = systolicOf(c);
            if (array.tileRows == 0 || array.tileCols == 0)
                return "tile dimensions must be at least 1";
            if (array.tileRows > array.rows || array.tileCols > array.cols)
                return std::to_string(array.tileRows) + "x" + std::to_string(array.tileCols) +
                       " is larger than the " + std::to_string(array.rows) + "x" +
                       std::to_string(array.cols) + " array; use at most the array size";
            return {};
        });
    table
        .custom(
            "vector.peak",
            "map dtype → FLOP rate",
            "vector-unit peak of the chip",
            [](const ConfigNode& node, AccelConfig& config) {
                overlay(config.vector.peak, perDataTypeOf<FlopRate>(node));
            },
            [](const AccelConfig& config) { return perDataTypeYaml(config.vector.peak); })
        .defaultIs("—")
        .rule([](const AccelConfig& c) {
            return defaultTypeProblem(c, c.vector.peak.has(c.defaultDataType), "peak rate");
        });
    table
        .value(
            "vector.efficiency",
            [](auto& c) -> auto& { return c.vector.efficiency; },
            "number in (0, 1]",
            "vector eta_c")
        .rule([](const AccelConfig& c) { return efficiencyProblem(c.vector.efficiency); });
    table.value(
        "sram.capacity",
        [](auto& c) -> auto& { return c.sram.capacity; },
        "size",
        "on-chip bytes the residency model holds across nodes");
    table.choice(
        "sram.policy",
        [](auto& c) -> auto& { return c.sram.policy; },
        sramPolicyNames,
        "replacement policy of the residency model (On-chip memory above), or "
        "`legacy`: the per-node shortcut of earlier versions");
    table
        .value(
            "sram.bandwidth",
            [](auto& c) -> auto& { return c.sram.bandwidth; },
            "bandwidth > 0",
            "on-chip bandwidth of the chip")
        .defaultIs("—")
        .rule([](const AccelConfig& c) {
            return positiveBandwidthProblem(c.sram.bandwidth, "33 TB/s");
        });
    table
        .value(
            "sram.efficiency",
            [](auto& c) -> auto& { return c.sram.efficiency; },
            "number in (0, 1]",
            "eta_m")
        .rule([](const AccelConfig& c) { return efficiencyProblem(c.sram.efficiency); });
    table
        .value(
            "dma.engines",
            [](auto& c) -> auto& { return c.dma.engines; },
            "integer ≥ 1",
            "DMA transfers in flight")
        .rule([](const AccelConfig& c) { return atLeastOneProblem(c.dma.engines); });
    table
        .value(
            "dma.bandwidth",
            [](auto& c) -> auto& { return c.dma.bandwidth; },
            "bandwidth > 0",
            "per transfer: lasts at least bytes / bandwidth")
        .defaultIs("—")
        .rule([](const AccelConfig& c) {
            return positiveBandwidthProblem(c.dma.bandwidth, "3.35 TB/s");
        });
    table
        .value(
            "dma.chunk",
            [](auto& c) -> auto& { return c.dma.chunk; },
            "size ≥ 1 B",
            "DMA transaction and staging-buffer size")
        .rule([](const AccelConfig& c) {
            return c.dma.chunk.bytes() == 0 ? "must be at least 1 B, e.g. \"2 MiB\"" : "";
        });
    table.value(
        "dma.per_chunk",
        [](auto& c) -> auto& { return c.dma.perChunk; },
        "boolean",
        "send one transaction per chunk even where the streaming fast path applies "
        "(same times; for checking and for tools that watch chunks)");
    table.value(
        "memory.base",
        [](auto& c) -> auto& { return c.memory.base; },
        "integer",
        "first HBM address");
    table
        .value(
            "memory.capacity",
            [](auto& c) -> auto& { return c.memory.capacity; },
            "size",
            "HBM space the allocator uses (wraps around)")
        .rule([](const AccelConfig& c) {
            const MemoryMapConfig& m = c.memory;
            return m.alignment.bytes() == 0 || m.interleave.bytes() == 0 || m.channels == 0 ||
                           !(m.capacity < m.alignment + m.interleave * m.channels)
                       ? ""
                       : "must hold at least one aligned region on every channel";
        });
    table
        .value(
            "memory.alignment",
            [](auto& c) -> auto& { return c.memory.alignment; },
            "size ≥ 1 B",
            "region alignment")
        .rule([](const AccelConfig& c) {
            return c.memory.alignment.bytes() == 0 ? "must be at least 1 B" : "";
        });
    table
        .value(
            "memory.interleave",
            [](auto& c) -> auto& { return c.memory.interleave; },
            "size ≥ 1 B",
            "channel interleave of the HBM address map")
        .rule([](const AccelConfig& c) {
            return c.memory.interleave.bytes() == 0 ? "must be at least 1 B" : "";
        });
    table
        .value(
            "memory.channels",
            [](auto& c) -> auto& { return c.memory.channels; },
            "integer ≥ 1",
            "HBM channels; successive regions start on successive channels")
        .rule([](const AccelConfig& c) { return atLeastOneProblem(c.memory.channels); });
    return table;
}

// What the tensor map gave, where the model's rates follow from it: a per-clock rate from a
// given peak (only types the tile model runs: the others, FP64 on the H100, stay on the
// roofline fallback at their given peak), a systolic tile from the array, and every peak the
// map did not give from the model.
void deriveTensor(ConfigMap& tensorMap,
                  TensorConfig& tensor,
                  bool modelChanged,
                  const ParamLocations& where)
{
    PerDataType<FlopRate> givenPeaks;
    if (std::optional<ConfigNode> node = tensorMap.value("peak"))
        givenPeaks = perDataTypeOf<FlopRate>(*node);
    if (auto* gpu = std::get_if<GpuTileTensor>(&tensor.detail)) {
        PerDataType<double> givenPerClock;
        if (std::optional<ConfigNode> node = tensorMap.value("flop_per_clock_per_sm"))
            givenPerClock = perDataTypeOf<double>(*node);
        const double smClocks = static_cast<double>(gpu->smCount) * gpu->clock.hz();
        for (std::size_t i = 0; i < PerDataType<double>::size; ++i) {
            const auto type = static_cast<DataType>(i);
            if (!givenPerClock.has(type) && givenPeaks.has(type) &&
                gpu->flopPerClockPerSm.has(type) && smClocks > 0.0)
                gpu->flopPerClockPerSm.set(type, givenPeaks.get(type).flopsPerSecond() / smClocks);
        }
        if (gpu->ctasPerSm == 0 && where.count("tensor.ctas_per_sm") == 0)
            gpu->ctasPerSm = defaultCtasPerSm;
    } else if (auto* array = std::get_if<SystolicTensor>(&tensor.detail)) {
        if (array->arrays == 0 && where.count("tensor.arrays") == 0)
            array->arrays = defaultArrays;
        if (where.count("tensor.tile") == 0 && (modelChanged || array->tileRows == 0)) {
            array->tileRows = array->rows;
            array->tileCols = array->cols;
        }
    }
    const PerDataType<FlopRate> kept = tensor.peak;
    derivePeaks(tensor);
    for (std::size_t i = 0; i < PerDataType<FlopRate>::size; ++i)
        if (givenPeaks.has(static_cast<DataType>(i)))
            tensor.peak.set(static_cast<DataType>(i), kept.get(static_cast<DataType>(i)));
}

} // namespace

const char* toString(Dataflow dataflow)
{
    switch (dataflow) {
    case Dataflow::OutputStationary:
        return "output_stationary";
    case Dataflow::WeightStationary:
        return "weight_stationary";
    case Dataflow::InputStationary:
        return "input_stationary";
    }
    return "?";
}

std::optional<FlopRate> modelPeak(const TensorConfig& tensor, DataType type)
{
    if (const auto* gpu = std::get_if<GpuTileTensor>(&tensor.detail)) {
        if (!gpu->flopPerClockPerSm.has(type))
            return std::nullopt;
        return FlopRate::fromFlopsPerSecond(gpu->flopPerClockPerSm.get(type) *
                                            static_cast<double>(gpu->smCount) * gpu->clock.hz());
    }
    if (const auto* array = std::get_if<SystolicTensor>(&tensor.detail))
        return FlopRate::fromFlopsPerSecond(2.0 * array->rows * array->cols * array->arrays *
                                            array->clock.hz());
    return std::nullopt;
}

void derivePeaks(TensorConfig& tensor)
{
    const bool systolic = std::holds_alternative<SystolicTensor>(tensor.detail);
    for (std::size_t i = 0; i < PerDataType<FlopRate>::size; ++i) {
        const auto type = static_cast<DataType>(i);
        // The systolic array has one rate for every type: only the types the peak table names.
        if (systolic && !tensor.peak.has(type))
            continue;
        if (std::optional<FlopRate> rate = modelPeak(tensor, type);
            rate && rate->flopsPerSecond() > 0.0)
            tensor.peak.set(type, *rate);
    }
}

const ParamTable<AccelConfig>& accelParams()
{
    static const ParamTable<AccelConfig> table = makeAccelParams();
    return table;
}

void validateAccelConfig(const AccelConfig& config)
{
    if (std::optional<ParamViolation> bad = accelParams().firstViolation(config))
        throw Error("accel " + config.name + ": " + bad->key + ": " + bad->problem);
}

AccelConfig parseAccelConfig(ConfigMap& map)
{
    const ParamTable<AccelConfig>& table = accelParams();
    // Where each key was written, so a rule broken by the merged config is reported where
    // the user wrote the value.
    ParamLocations where;
    AccelConfig config = defaultConfig();
    table.readSection(map, "", config, &where);
    if (map.has("tensor"))
        map.nested("tensor", [&](ConfigMap& sub) {
            const TensorModel before = modelOf(config.tensor.detail);
            table.readSection(sub, "tensor", config, &where);
            deriveTensor(sub, config.tensor, modelOf(config.tensor.detail) != before, where);
        });
    for (const char* section : {"vector", "sram", "dma", "memory"})
        table.readNested(map, section, config, &where);
    // Report at the value that broke the rule; at the accelerator's map when the value came
    // from the preset or a default.
    if (std::optional<ParamViolation> bad = table.firstViolation(config))
        failAt(*bad, where, map);
    return config;
}

YAML::Node toYaml(const AccelConfig& config)
{
    return accelParams().write(config);
}

} // namespace etsim::accel
