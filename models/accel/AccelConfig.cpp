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

// A broken rule: the key path below the accelerator's map and what is wrong.
struct Violation {
    std::string key;
    std::string problem;
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

std::optional<Violation> checkEfficiency(double value, const char* key)
{
    if (!(value > 0.0 && value <= 1.0))
        return Violation{key, "must be in (0, 1], got " + std::to_string(value)};
    return std::nullopt;
}

std::optional<Violation> checkDetail(const AccelConfig& config, const RooflineTensor&)
{
    return std::nullopt;
}

std::optional<Violation> checkDetail(const AccelConfig& config, const GpuTileTensor& gpu)
{
    if (gpu.smCount == 0)
        return Violation{"tensor.sm_count", "must be at least 1 (streaming multiprocessors)"};
    if (gpu.clock.hz() <= 0.0)
        return Violation{"tensor.clock", "must be above 0 Hz, e.g. \"1.83 GHz\""};
    if (gpu.tiles.empty())
        return Violation{"tensor.tiles", "list at least one output tile, e.g. [[128, 256]]"};
    for (std::size_t i = 0; i < gpu.tiles.size(); ++i)
        if (gpu.tiles[i].m == 0 || gpu.tiles[i].n == 0)
            return Violation{"tensor.tiles[" + std::to_string(i) + "]",
                             "tile dimensions must be at least 1"};
    if (gpu.ctasPerSm == 0)
        return Violation{"tensor.ctas_per_sm", "must be at least 1"};
    if (!gpu.flopPerClockPerSm.has(config.defaultDataType))
        return Violation{"tensor.flop_per_clock_per_sm",
                         std::string("give a rate for the default data type ") +
                             etsim::toString(config.defaultDataType)};
    if (gpu.smCount % config.computeUnits != 0)
        return Violation{"compute_units",
                         "must divide tensor.sm_count (" + std::to_string(gpu.smCount) +
                             ") so every unit has the same SMs"};
    return checkEfficiency(gpu.pipeEfficiency, "tensor.pipe_efficiency");
}

std::optional<Violation> checkDetail(const AccelConfig& config, const SystolicTensor& array)
{
    if (array.rows == 0 || array.cols == 0)
        return Violation{array.rows == 0 ? "tensor.rows" : "tensor.cols",
                         "array dimensions must be at least 1"};
    if (array.arrays == 0)
        return Violation{"tensor.arrays", "must be at least 1"};
    if (array.clock.hz() <= 0.0)
        return Violation{"tensor.clock", "must be above 0 Hz, e.g. \"1.05 GHz\""};
    if (array.tileRows == 0 || array.tileCols == 0)
        return Violation{"tensor.tile", "tile dimensions must be at least 1"};
    if (array.tileRows > array.rows || array.tileCols > array.cols)
        return Violation{"tensor.tile",
                         std::to_string(array.tileRows) + "x" + std::to_string(array.tileCols) +
                             " is larger than the " + std::to_string(array.rows) + "x" +
                             std::to_string(array.cols) + " array; use at most the array size"};
    if (array.arrays % config.computeUnits != 0)
        return Violation{"compute_units",
                         "must divide tensor.arrays (" + std::to_string(array.arrays) +
                             ") so every unit has the same arrays"};
    return std::nullopt;
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
std::optional<Violation> checkPeaks(const TensorConfig& tensor)
{
    const bool gpu = std::holds_alternative<GpuTileTensor>(tensor.detail);
    for (const DataTypeKey& entry : dataTypeKeys) {
        const std::optional<FlopRate> model = modelPeak(tensor, entry.first);
        if (!model || !tensor.peak.has(entry.first) || model->flopsPerSecond() <= 0.0)
            continue;
        const double given = tensor.peak.get(entry.first).flopsPerSecond();
        if (std::abs(given / model->flopsPerSecond() - 1.0) <= peakTolerance)
            continue;
        return Violation{"tensor.peak." + std::string(entry.name),
                         rateText(tensor.peak.get(entry.first)) + " disagrees with the " +
                             rateText(*model) +
                             (gpu ? " of tensor.flop_per_clock_per_sm × sm_count × clock"
                                  : " of the systolic array (2 × rows × cols × arrays × clock)") +
                             "; give only one of them (the other is derived), or make them agree"};
    }
    return std::nullopt;
}

std::optional<Violation> findViolation(const AccelConfig& config)
{
    if (config.computeUnits == 0)
        return Violation{"compute_units", "must be at least 1"};
    if (!config.tensor.peak.has(config.defaultDataType))
        return Violation{"tensor.peak",
                         std::string("give a peak rate for the default data type ") +
                             etsim::toString(config.defaultDataType)};
    if (auto bad = checkEfficiency(config.tensor.efficiency, "tensor.efficiency"))
        return bad;
    if (auto bad = std::visit([&](const auto& detail) { return checkDetail(config, detail); },
                              config.tensor.detail))
        return bad;
    if (auto bad = checkPeaks(config.tensor))
        return bad;
    if (!config.vector.peak.has(config.defaultDataType))
        return Violation{"vector.peak",
                         std::string("give a peak rate for the default data type ") +
                             etsim::toString(config.defaultDataType)};
    if (auto bad = checkEfficiency(config.vector.efficiency, "vector.efficiency"))
        return bad;
    if (config.sram.bandwidth.bytesPerSecond() <= 0.0)
        return Violation{"sram.bandwidth", "must be above 0 B/s, e.g. \"33 TB/s\""};
    if (auto bad = checkEfficiency(config.sram.efficiency, "sram.efficiency"))
        return bad;
    if (config.dma.engines == 0)
        return Violation{"dma.engines", "must be at least 1"};
    if (config.dma.bandwidth.bytesPerSecond() <= 0.0)
        return Violation{"dma.bandwidth", "must be above 0 B/s, e.g. \"3.35 TB/s\""};
    if (config.dma.chunk.bytes() == 0)
        return Violation{"dma.chunk", "must be at least 1 B, e.g. \"2 MiB\""};
    if (config.memory.alignment.bytes() == 0)
        return Violation{"memory.alignment", "must be at least 1 B"};
    if (config.memory.interleave.bytes() == 0)
        return Violation{"memory.interleave", "must be at least 1 B"};
    if (config.memory.channels == 0)
        return Violation{"memory.channels", "must be at least 1"};
    if (config.memory.capacity <
        config.memory.alignment + config.memory.interleave * config.memory.channels)
        return Violation{"memory.capacity",
                         "must hold at least one aligned region on every channel"};
    return std::nullopt;
}

// Reads the per-data-type map under `key` into `table` (entries not named keep their value).
template <typename T>
void readPerDataType(ConfigMap& map, std::string_view key, PerDataType<T>& table)
{
    if (!map.has(key))
        return;
    map.nested(key, [&](ConfigMap& rates) {
        for (const DataTypeKey& entry : dataTypeKeys) {
            if (std::optional<T> value = rates.template optional<T>(entry.name)) {
                table.set(entry.first, *value);
                table.set(entry.second, *value);
            }
        }
    });
}

template <typename T>
void readOptional(ConfigMap& map, std::string_view key, T& target)
{
    if (std::optional<T> value = map.optional<T>(key))
        target = *value;
}

std::vector<TileShape> readTiles(const ConfigNode& node)
{
    std::vector<TileShape> tiles;
    for (const ConfigNode& element : node.elements()) {
        auto dims = element.as<std::vector<std::uint32_t>>();
        if (dims.size() != 2)
            element.fail("expected a tile [m, n], got " + std::to_string(dims.size()) + " numbers");
        tiles.push_back({dims[0], dims[1]});
    }
    return tiles;
}

void readTensor(ConfigMap& map, TensorConfig& tensor)
{
    TensorModel current = std::visit(
        [](const auto& detail) {
            using Detail = std::decay_t<decltype(detail)>;
            if constexpr (std::is_same_v<Detail, GpuTileTensor>)
                return TensorModel::GpuTiles;
            else if constexpr (std::is_same_v<Detail, SystolicTensor>)
                return TensorModel::Systolic;
            else
                return TensorModel::Roofline;
        },
        tensor.detail);
    TensorModel model = map.enumField("model", tensorModelNames, current);
    if (model != current) {
        // A different model starts from its own defaults, not from the preset's.
        if (model == TensorModel::GpuTiles)
            tensor.detail = GpuTileTensor{};
        else if (model == TensorModel::Systolic)
            tensor.detail = SystolicTensor{};
        else
            tensor.detail = RooflineTensor{};
    }
    // Which peaks this map gives: those are kept (and the tile model's per-clock rate of a
    // type it runs follows from them where the map gives none); the others are derived from
    // the model.
    PerDataType<FlopRate> givenPeaks;
    readPerDataType(map, "peak", givenPeaks);
    for (const DataTypeKey& entry : dataTypeKeys)
        if (givenPeaks.has(entry.first)) {
            tensor.peak.set(entry.first, givenPeaks.get(entry.first));
            tensor.peak.set(entry.second, givenPeaks.get(entry.second));
        }
    readOptional(map, "efficiency", tensor.efficiency);
    if (auto* gpu = std::get_if<GpuTileTensor>(&tensor.detail)) {
        readOptional(map, "sm_count", gpu->smCount);
        readOptional(map, "clock", gpu->clock);
        PerDataType<double> givenPerClock;
        readPerDataType(map, "flop_per_clock_per_sm", givenPerClock);
        const double smClocks = static_cast<double>(gpu->smCount) * gpu->clock.hz();
        for (std::size_t i = 0; i < PerDataType<double>::size; ++i) {
            const auto type = static_cast<DataType>(i);
            if (givenPerClock.has(type))
                gpu->flopPerClockPerSm.set(type, givenPerClock.get(type));
            // Only types the tile model runs: the others (FP64 on the H100) stay on the
            // roofline fallback at their given peak.
            else if (givenPeaks.has(type) && gpu->flopPerClockPerSm.has(type) && smClocks > 0.0)
                gpu->flopPerClockPerSm.set(type, givenPeaks.get(type).flopsPerSecond() / smClocks);
        }
        if (std::optional<ConfigNode> tiles = map.value("tiles"))
            gpu->tiles = readTiles(*tiles);
        gpu->ctasPerSm =
            map.optional("ctas_per_sm", gpu->ctasPerSm == 0 ? defaultCtasPerSm : gpu->ctasPerSm);
        readOptional(map, "pipe_efficiency", gpu->pipeEfficiency);
    } else if (auto* array = std::get_if<SystolicTensor>(&tensor.detail)) {
        readOptional(map, "rows", array->rows);
        readOptional(map, "cols", array->cols);
        array->arrays = map.optional("arrays", array->arrays == 0 ? defaultArrays : array->arrays);
        readOptional(map, "clock", array->clock);
        array->dataflow = map.enumField("dataflow", dataflowNames, array->dataflow);
        if (std::optional<ConfigNode> tile = map.value("tile")) {
            auto dims = tile->as<std::vector<std::uint32_t>>();
            if (dims.size() != 2)
                tile->fail("expected a tile [rows, cols], got " + std::to_string(dims.size()) +
                           " numbers");
            array->tileRows = dims[0];
            array->tileCols = dims[1];
        } else if (model != current || array->tileRows == 0) {
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

template <typename T>
std::string scalarText(const T& value)
{
    if constexpr (std::is_same_v<T, double>)
        return exactNumberText(value);
    else if constexpr (std::is_integral_v<T>)
        return std::to_string(value);
    else
        return etsim::toString(value);
}

// The entries a per-data-type table has, under the keys readPerDataType reads.
template <typename T>
YAML::Node perDataTypeYaml(const PerDataType<T>& table)
{
    YAML::Node node(YAML::NodeType::Map);
    for (const DataTypeKey& entry : dataTypeKeys)
        if (table.has(entry.first))
            node[std::string(entry.name)] = scalarText(table.get(entry.first));
    return node;
}

YAML::Node tileYaml(std::uint32_t first, std::uint32_t second)
{
    YAML::Node tile(YAML::NodeType::Sequence);
    tile.SetStyle(YAML::EmitterStyle::Flow);
    tile.push_back(std::to_string(first));
    tile.push_back(std::to_string(second));
    return tile;
}

YAML::Node tensorYaml(const TensorConfig& tensor)
{
    YAML::Node node(YAML::NodeType::Map);
    if (const auto* gpu = std::get_if<GpuTileTensor>(&tensor.detail)) {
        node["model"] = "gpu_tiles";
        node["peak"] = perDataTypeYaml(tensor.peak);
        node["efficiency"] = exactNumberText(tensor.efficiency);
        node["sm_count"] = std::to_string(gpu->smCount);
        node["clock"] = etsim::toString(gpu->clock);
        node["flop_per_clock_per_sm"] = perDataTypeYaml(gpu->flopPerClockPerSm);
        YAML::Node tiles(YAML::NodeType::Sequence);
        for (const TileShape& tile : gpu->tiles)
            tiles.push_back(tileYaml(tile.m, tile.n));
        node["tiles"] = tiles;
        node["ctas_per_sm"] = std::to_string(gpu->ctasPerSm);
        node["pipe_efficiency"] = exactNumberText(gpu->pipeEfficiency);
    } else if (const auto* array = std::get_if<SystolicTensor>(&tensor.detail)) {
        node["model"] = "systolic";
        node["peak"] = perDataTypeYaml(tensor.peak);
        node["efficiency"] = exactNumberText(tensor.efficiency);
        node["rows"] = std::to_string(array->rows);
        node["cols"] = std::to_string(array->cols);
        node["arrays"] = std::to_string(array->arrays);
        node["clock"] = etsim::toString(array->clock);
        node["dataflow"] = toString(array->dataflow);
        node["tile"] = tileYaml(array->tileRows, array->tileCols);
    } else {
        node["model"] = "roofline";
        node["peak"] = perDataTypeYaml(tensor.peak);
        node["efficiency"] = exactNumberText(tensor.efficiency);
    }
    return node;
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

void validateAccelConfig(const AccelConfig& config)
{
    if (std::optional<Violation> bad = findViolation(config))
        throw Error("accel " + config.name + ": " + bad->key + ": " + bad->problem);
}

AccelConfig parseAccelConfig(ConfigMap& map)
{
    // Locations of the keys read, so a rule broken by the merged config is reported where
    // the user wrote the value.
    std::map<std::string, ConfigLocation, std::less<>> where;
    auto note = [&](ConfigMap& section, std::string_view prefix, std::string_view key) {
        if (std::optional<ConfigNode> node = section.value(key))
            where[std::string(prefix) + std::string(key)] = node->location();
    };

    AccelConfig config = defaultConfig();
    if (auto preset = map.optional<Located<std::string>>("preset")) {
        bool found = false;
        for (const auto& entry : accelPresetNames)
            if (entry.name == preset->value) {
                config = accelPreset(entry.value);
                found = true;
            }
        if (!found) {
            std::ostringstream names;
            for (const auto& entry : accelPresetNames)
                names << (names.tellp() > 0 ? ", " : "") << entry.name;
            preset->location.fail("unknown preset \"" + preset->value + "\"; one of " +
                                  names.str());
        }
    }
    readOptional(map, "name", config.name);
    readOptional(map, "compute_units", config.computeUnits);
    note(map, "", "compute_units");
    config.tensorVector = map.enumField("tensor_vector", unitSharingNames, config.tensorVector);
    readOptional(map, "launch_overhead", config.launchOverhead);
    config.defaultDataType =
        map.enumField("default_dtype", defaultDataTypeNames, config.defaultDataType);

    if (map.has("tensor"))
        map.nested("tensor", [&](ConfigMap& sub) {
            readTensor(sub, config.tensor);
            // Only the keys the chosen model reads: value() counts a key as known.
            std::vector<const char*> keys = {"peak", "efficiency"};
            if (std::holds_alternative<GpuTileTensor>(config.tensor.detail))
                keys.insert(keys.end(),
                            {"sm_count",
                             "clock",
                             "flop_per_clock_per_sm",
                             "tiles",
                             "ctas_per_sm",
                             "pipe_efficiency"});
            else if (std::holds_alternative<SystolicTensor>(config.tensor.detail))
                keys.insert(keys.end(), {"rows", "cols", "arrays", "clock", "tile"});
            for (const char* key : keys)
                note(sub, "tensor.", key);
        });
    if (map.has("vector"))
        map.nested("vector", [&](ConfigMap& sub) {
            readPerDataType(sub, "peak", config.vector.peak);
            readOptional(sub, "efficiency", config.vector.efficiency);
            note(sub, "vector.", "peak");
            note(sub, "vector.", "efficiency");
        });
    if (map.has("sram"))
        map.nested("sram", [&](ConfigMap& sub) {
            readOptional(sub, "capacity", config.sram.capacity);
            readOptional(sub, "bandwidth", config.sram.bandwidth);
            readOptional(sub, "efficiency", config.sram.efficiency);
            config.sram.policy = sub.enumField("policy", sramPolicyNames, config.sram.policy);
            for (const char* key : {"capacity", "bandwidth", "efficiency", "policy"})
                note(sub, "sram.", key);
        });
    if (map.has("dma"))
        map.nested("dma", [&](ConfigMap& sub) {
            readOptional(sub, "engines", config.dma.engines);
            readOptional(sub, "bandwidth", config.dma.bandwidth);
            readOptional(sub, "chunk", config.dma.chunk);
            readOptional(sub, "per_chunk", config.dma.perChunk);
            for (const char* key : {"engines", "bandwidth", "chunk", "per_chunk"})
                note(sub, "dma.", key);
        });
    if (map.has("memory"))
        map.nested("memory", [&](ConfigMap& sub) {
            readOptional(sub, "base", config.memory.base);
            readOptional(sub, "capacity", config.memory.capacity);
            readOptional(sub, "alignment", config.memory.alignment);
            readOptional(sub, "interleave", config.memory.interleave);
            readOptional(sub, "channels", config.memory.channels);
            for (const char* key : {"capacity", "alignment", "interleave", "channels"})
                note(sub, "memory.", key);
        });

    if (std::optional<Violation> bad = findViolation(config)) {
        // Report at the value that broke the rule; at the accelerator's map when the value
        // came from the preset or a default.
        // The recorded key that is the longest prefix of the broken one ("tensor.tiles" for
        // "tensor.tiles[1]").
        const ConfigLocation* at = nullptr;
        std::size_t atLength = 0;
        for (const auto& [key, location] : where)
            if (bad->key.compare(0, key.size(), key) == 0 && key.size() > atLength) {
                at = &location;
                atLength = key.size();
            }
        if (at != nullptr) {
            ConfigLocation location = *at;
            location.keyPath =
                map.location().keyPath.empty() ? bad->key : map.location().keyPath + "." + bad->key;
            location.fail(bad->problem);
        }
        ConfigLocation location = map.location();
        location.keyPath = location.keyPath.empty() ? bad->key : location.keyPath + "." + bad->key;
        location.fail(bad->problem);
    }
    return config;
}

YAML::Node toYaml(const AccelConfig& config)
{
    YAML::Node node(YAML::NodeType::Map);
    node["name"] = config.name;
    node["compute_units"] = std::to_string(config.computeUnits);
    node["tensor_vector"] = std::string(enumName(unitSharingNames, config.tensorVector));
    node["launch_overhead"] = etsim::toString(config.launchOverhead);
    node["default_dtype"] = std::string(enumName(defaultDataTypeNames, config.defaultDataType));
    node["tensor"] = tensorYaml(config.tensor);
    YAML::Node vector(YAML::NodeType::Map);
    vector["peak"] = perDataTypeYaml(config.vector.peak);
    vector["efficiency"] = exactNumberText(config.vector.efficiency);
    node["vector"] = vector;
    YAML::Node sram(YAML::NodeType::Map);
    sram["capacity"] = etsim::toString(config.sram.capacity);
    sram["bandwidth"] = etsim::toString(config.sram.bandwidth);
    sram["efficiency"] = exactNumberText(config.sram.efficiency);
    sram["policy"] = std::string(enumName(sramPolicyNames, config.sram.policy));
    node["sram"] = sram;
    YAML::Node dma(YAML::NodeType::Map);
    dma["engines"] = std::to_string(config.dma.engines);
    dma["bandwidth"] = etsim::toString(config.dma.bandwidth);
    dma["chunk"] = etsim::toString(config.dma.chunk);
    if (config.dma.perChunk) // only when set, so the default dump stays as it was
        dma["per_chunk"] = "true";
    node["dma"] = dma;
    YAML::Node memory(YAML::NodeType::Map);
    memory["base"] = std::to_string(config.memory.base);
    memory["capacity"] = etsim::toString(config.memory.capacity);
    memory["alignment"] = etsim::toString(config.memory.alignment);
    memory["interleave"] = etsim::toString(config.memory.interleave);
    memory["channels"] = std::to_string(config.memory.channels);
    node["memory"] = memory;
    return node;
}

} // namespace etsim::accel
