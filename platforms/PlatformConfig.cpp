#include "platforms/PlatformConfig.h"

#include "cosim/CosimConfig.h"
#include "cosim/transport/AsioTransport.h"
#include "kernel/Config.h"
#include "kernel/Error.h"
#include "kernel/InputFile.h"
#include "platforms/PresetData.h"
#include "platforms/collectives/CustomAlgorithms.h"

#include <yaml-cpp/yaml.h>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>
#include <variant>

namespace etsim::platform {

namespace {

constexpr EnumName<et::SchedulingProfile> profileNames[] = {
    {"native", et::SchedulingProfile::Native},
    {"astra", et::SchedulingProfile::Astra},
};
constexpr EnumName<et::ExecutionMode> modeNames[] = {
    {"model", et::ExecutionMode::Model},
    {"replay", et::ExecutionMode::Replay},
};
constexpr EnumName<DependencyPolicy> dependencyNames[] = {
    {"data+ctrl", DependencyPolicy::DataAndCtrl},
    {"data", DependencyPolicy::DataOnly},
    {"ctrl", DependencyPolicy::CtrlOnly},
};

// A sequence index of an override's key path, as written; values beyond std::size_t saturate
// (they are out of range of every list either way).
struct PathIndex {
    std::size_t value = 0;
    std::string text;
};

// One step of an override's key path: a map key or a sequence index.
using PathStep = std::variant<std::string, PathIndex>;

std::vector<PathStep> splitPath(const Override& override)
{
    std::vector<PathStep> steps;
    const std::string& path = override.path;
    std::size_t i = 0;
    auto bad = [&](const std::string& problem) {
        throw ConfigError("--set " + path + "=" + override.value, 0, 0, "", problem);
    };
    while (i < path.size()) {
        if (path[i] == '[') {
            std::size_t close = path.find(']', i);
            if (close == std::string::npos || close == i + 1)
                bad("an index is written [N], e.g. dims[0]");
            PathIndex index{0, path.substr(i + 1, close - i - 1)};
            for (char digit : index.text) {
                if (!std::isdigit(static_cast<unsigned char>(digit)))
                    bad("an index is written [N], e.g. dims[0]");
                const auto d = static_cast<std::size_t>(digit - '0');
                constexpr std::size_t most = std::numeric_limits<std::size_t>::max();
                index.value = index.value > (most - d) / 10 ? most : index.value * 10 + d;
            }
            steps.emplace_back(std::move(index));
            i = close + 1;
            if (i < path.size() && path[i] != '.' && path[i] != '[')
                bad("an index is followed by '.', '[' or the end of the path, e.g. "
                    "dims[0].size");
            if (i < path.size() && path[i] == '.')
                ++i;
            continue;
        }
        std::size_t end = path.find_first_of(".[", i);
        if (end == std::string::npos)
            end = path.size();
        if (end == i)
            bad("empty key in the path");
        if (path.find(']', i) < end)
            bad("a ']' without its '['; an index is written [N], e.g. dims[0]");
        steps.emplace_back(path.substr(i, end - i));
        i = end;
        if (i < path.size() && path[i] == '.') {
            ++i;
            if (i == path.size())
                bad("empty key in the path");
        }
    }
    if (steps.empty())
        bad("empty key path");
    return steps;
}

YAML::Node parseYaml(const std::string& text, const std::string& fileName)
{
    YAML::Node root = parseYamlDocument(text, fileName);
    requireMapping(root, fileName, "\"ranks: 8\" (docs/platforms.md)");
    return root;
}

YAML::Node parseOverrideValue(const Override& override)
{
    const std::string where = "--set " + override.path + "=" + override.value;
    try {
        return parseYamlDocument(override.value, where);
    } catch (const ConfigError& error) {
        throw ConfigError(where, 0, 0, override.path, "invalid YAML value: " + error.problem());
    }
}

void applyOverride(YAML::Node& root, const Override& override)
{
    std::vector<PathStep> steps = splitPath(override);
    const std::string where = "--set " + override.path + "=" + override.value;
    // A copy, because the tree is linked into this platform's and later edits of it must not
    // reach the next platform loaded with the same overrides.
    YAML::Node value =
        override.parsed ? YAML::Clone(*override.parsed) : parseOverrideValue(override);
    YAML::Node current;
    current.reset(root);
    std::string walked;
    for (std::size_t i = 0; i < steps.size(); ++i) {
        const bool last = i + 1 == steps.size();
        if (const auto* key = std::get_if<std::string>(&steps[i])) {
            walked += (walked.empty() ? "" : ".") + *key;
            if (!current.IsMap() && !current.IsNull())
                throw ConfigError(
                    where, 0, 0, walked, "cannot set a key here: the value above is not a map");
            if (last) {
                current[*key] = value;
                return;
            }
            YAML::Node next = current[*key];
            if (!next.IsDefined() || next.IsNull())
                current[*key] = YAML::Node(YAML::NodeType::Map);
            YAML::Node child = current[*key];
            current.reset(child);
        } else {
            const PathIndex& step = std::get<PathIndex>(steps[i]);
            const std::size_t index = step.value;
            walked += "[" + step.text + "]";
            if (!current.IsSequence() || index >= current.size())
                throw ConfigError(where,
                                  0,
                                  0,
                                  walked,
                                  !current.IsSequence() ? "not a list"
                                  : current.size() == 0 ? "index out of range: the list is empty"
                                                        : "index out of range: the list has " +
                                                              std::to_string(current.size()) +
                                                              " elements, valid indices are 0 to " +
                                                              std::to_string(current.size() - 1));
            if (last) {
                current[index] = value;
                return;
            }
            YAML::Node child = current[index];
            current.reset(child);
        }
    }
}

// A map key as text. The fabric preset is merged before the keys are checked against the
// tables, so a key that is a list, a map or empty (`? [a]: b`) is refused here, where it stands.
std::string keyText(const YAML::Node& key, const std::string& fileName, const std::string& within)
{
    if (key.IsScalar())
        return key.Scalar();
    const char* what = key.IsSequence() ? "a list" : key.IsMap() ? "a map" : "empty";
    configLocation(fileName, key.Mark(), within)
        .fail(std::string("a key here is ") + what + "; keys are names (write `name: value`)");
}

// Lays `over` on `base`: maps merge key by key, anything else replaces. `within` names the
// map for errors.
void mergeInto(YAML::Node base,
               const YAML::Node& over,
               const std::string& fileName,
               const std::string& within)
{
    for (const auto& entry : over) {
        const std::string key = keyText(entry.first, fileName, within);
        YAML::Node existing = base[key];
        if (existing.IsDefined() && existing.IsMap() && entry.second.IsMap())
            mergeInto(existing, entry.second, fileName, within + "." + key);
        else
            base[key] = entry.second;
    }
}

// The fabric map with its `preset:` expanded.
void expandFabricPreset(YAML::Node& root, const std::string& fileName)
{
    YAML::Node fabric = root["fabric"];
    if (!fabric.IsDefined() || !fabric.IsMap())
        return;
    YAML::Node preset = fabric["preset"];
    if (!preset.IsDefined())
        return;
    const std::string name = preset.IsScalar() ? preset.Scalar() : std::string();
    YAML::Node base;
    try {
        base = YAML::Load(net::netPresetYaml(name));
    } catch (const Error& error) {
        configLocation(fileName, preset.Mark(), "fabric.preset").fail(error.what());
    }
    // The user's own nodes are merged (not clones, which drop the marks) so errors still point
    // into the file; `preset` has done its work (the presets name none themselves).
    mergeInto(base, fabric, fileName, "fabric");
    base.remove("preset");
    root["fabric"] = base;
}

nlohmann::ordered_json toJson(const YAML::Node& node)
{
    switch (node.Type()) {
    case YAML::NodeType::Map: {
        nlohmann::ordered_json object = nlohmann::ordered_json::object();
        for (const auto& entry : node)
            object[entry.first.as<std::string>()] = toJson(entry.second);
        return object;
    }
    case YAML::NodeType::Sequence: {
        nlohmann::ordered_json array = nlohmann::ordered_json::array();
        for (const auto& element : node)
            array.push_back(toJson(element));
        return array;
    }
    case YAML::NodeType::Scalar:
        return node.Scalar();
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
        break;
    }
    return nullptr;
}

// The tree a report records: every key of the platform, the accelerator, its HBM and the
// fabric with the value it resolved to (presets and defaults expanded), the co-simulation
// sections included (their token left out), keeping the accelerator's preset name for the
// reader.
YAML::Node resolvedTree(const YAML::Node& root, const PlatformConfig& config)
{
    YAML::Node tree = YAML::Clone(root);
    YAML::Node accelerator = accel::toYaml(config.accelerator);
    const YAML::Node written = root["accelerator"];
    if (written.IsMap() && written["preset"].IsDefined()) {
        YAML::Node withPreset(YAML::NodeType::Map);
        withPreset["preset"] = YAML::Clone(written["preset"]);
        for (const auto& entry : accelerator)
            withPreset[entry.first] = entry.second;
        accelerator = withPreset;
    }
    accelerator["hbm"] = hbm::toYaml(config.hbm);
    if (written.IsMap() && written["compute"].IsDefined())
        accelerator["compute"] = YAML::Clone(written["compute"]);
    if (config.computeCosim) {
        YAML::Node cosim = cosim::toYaml(config.computeCosim->proxy);
        cosim["ranks"] = config.computeCosim->rank ? std::to_string(*config.computeCosim->rank)
                                                   : std::string("all");
        accelerator["compute"]["cosim"] = cosim;
    }
    tree["accelerator"] = accelerator;
    YAML::Node fabric = net::toYaml(config.fabric);
    if (config.fabricCosim)
        fabric["cosim"] = cosim::toYaml(*config.fabricCosim);
    tree["fabric"] = fabric;
    for (const auto& entry : platformParams().write(config))
        tree[entry.first] = entry.second;
    return tree;
}

// accelerator.compute.cosim: the proxy options plus `ranks` (all, or one rank index).
ComputeCosim parseComputeCosim(ConfigMap& map, std::uint32_t rankCount)
{
    ComputeCosim cosim;
    if (auto ranks = map.optional<Located<std::string>>("ranks")) {
        if (ranks->value != "all") {
            char* end = nullptr;
            const unsigned long rank = std::strtoul(ranks->value.c_str(), &end, 10);
            if (ranks->value.empty() || *end != '\0' || rank >= rankCount)
                ranks->location.fail("expected \"all\" or one rank index below " +
                                     std::to_string(rankCount) + ", got \"" + ranks->value + "\"");
            cosim.rank = static_cast<std::uint32_t>(rank);
        }
    }
    cosim.proxy = cosim::parseCosimConfig(map);
    const bool several = !cosim.rank && rankCount > 1;
    if (several && cosim.proxy.peer.find("{rank}") == std::string::npos &&
        cosim.proxy.peer != "shm")
        map.fail("peer",
                 "every rank's engine gets its own peer, so the endpoint must differ per rank: "
                 "put {rank} in it (e.g. \"unix:/tmp/rtl{rank}.sock\"), use \"shm\" with "
                 "spawn, or select one rank with ranks: N");
    // Each rank's endpoint must be one (a port built from {rank} may run out of range): the
    // digits grow with the rank, so the first and the last decide.
    for (std::uint32_t rank : {cosim.rank.value_or(0), cosim.rank.value_or(rankCount - 1)}) {
        std::string problem;
        const std::string peer = cosim::substituteRank(cosim.proxy.peer, rank);
        if (!cosim::Endpoint::tryParse(peer, problem))
            map.fail("peer",
                     "rank " + std::to_string(rank) + "'s endpoint \"" + peer + "\": " + problem +
                         " (" + cosim::Endpoint::forms + ")");
    }
    return cosim;
}

ParamTable<PlatformConfig> makePlatformParams()
{
    ParamTable<PlatformConfig> table("platform", "", [] {
        PlatformConfig config;
        config.ranks = 1;
        config.ranksPerNode = 1;
        return config;
    });
    table.value(
        "name", [](auto& c) -> auto& { return c.name; }, "string", "name in reports");
    table.value(
        "description",
        [](auto& c) -> auto& { return c.description; },
        "string",
        "one line for listings");
    table
        .value(
            "ranks",
            [](auto& c) -> auto& { return c.ranks; },
            "integer ≥ 1",
            "number of ranks (accelerators), e.g. 8")
        .required()
        .rule([](const PlatformConfig& c) { return atLeastOneProblem(c.ranks); });
    table
        .value(
            "ranks_per_node",
            [](auto& c) -> auto& { return c.ranksPerNode; },
            "integer dividing ranks",
            "ranks of one node (one process of a partitioned run holds whole nodes)")
        .defaultIs("ranks")
        .rule([](const PlatformConfig& c) {
            return c.ranksPerNode == 0 || c.ranks % c.ranksPerNode != 0
                       ? "must divide ranks (" + std::to_string(c.ranks) + ")"
                       : std::string();
        });
    table.choice(
        "driver.profile",
        [](auto& c) -> auto& { return c.driver.profile; },
        profileNames,
        "scheduling profile of the trace driver (docs/execution-protocol.md)");
    table
        .custom(
            "driver.mode",
            choiceText(modeNames),
            "the default of the three modes below",
            [](const ConfigNode& node, PlatformConfig& c) {
                const et::ExecutionMode mode = detail::readEnum(node, modeNames);
                c.driver.compute = c.driver.memory = c.driver.communication = mode;
            },
            [](const PlatformConfig&) { return YAML::Node(); })
        .defaultIs("model");
    table.choice(
        "driver.compute_mode",
        [](auto& c) -> auto& { return c.driver.compute; },
        modeNames,
        "compute nodes: run on the models, or replay their recorded durations");
    table.choice(
        "driver.memory_mode",
        [](auto& c) -> auto& { return c.driver.memory; },
        modeNames,
        "memory nodes: the same choice");
    table.choice(
        "driver.communication_mode",
        [](auto& c) -> auto& { return c.driver.communication; },
        modeNames,
        "communication nodes: the same choice");
    table.choice(
        "driver.dependencies",
        [](auto& c) -> auto& { return c.driver.dependencies; },
        dependencyNames,
        "which dependency edges of the trace order nodes");
    table.value(
        "driver.lenient",
        [](auto& c) -> auto& { return c.driver.lenient; },
        "boolean",
        "drop dangling dependencies with a warning instead of failing");
    table
        .value(
            "driver.window",
            [](auto& c) -> auto& { return c.driver.window; },
            "integer ≥ 1",
            "nodes read ahead of completion, per rank")
        .rule([](const PlatformConfig& c) {
            return c.driver.window == 0 ? "must be at least 1 (nodes read ahead per rank)" : "";
        });
    table.value(
        "driver.limits.compute",
        [](auto& c) -> auto& { return c.driver.computeLimit; },
        "integer",
        "native profile: compute nodes in flight per rank; 0 = unlimited");
    table.value(
        "driver.limits.memory",
        [](auto& c) -> auto& { return c.driver.memoryLimit; },
        "integer",
        "native profile: memory nodes in flight per rank; 0 = unlimited");
    table.value(
        "driver.limits.communication",
        [](auto& c) -> auto& { return c.driver.communicationLimit; },
        "integer",
        "native profile: communication nodes in flight per rank; 0 = unlimited");
    table.value(
        "driver.limits.host",
        [](auto& c) -> auto& { return c.driver.hostLimit; },
        "integer",
        "native profile: host nodes in flight per rank; 0 = unlimited");
    table.value(
        "driver.eager_threshold",
        [](auto& c) -> auto& { return c.driver.eagerThreshold; },
        "size",
        "native profile: sends of at most this size are eager");
    return table;
}

PlatformConfig parseRoot(ConfigMap& map)
{
    const ParamTable<PlatformConfig>& table = platformParams();
    PlatformConfig config;
    table.readSection(map, "", config);
    if (!map.has("ranks_per_node"))
        config.ranksPerNode = config.ranks;
    table.checkSection(map, "", config);

    map.nested("accelerator", [&](ConfigMap& accelerator) {
        config.hbm = accelerator.has("hbm") ? accelerator.nested("hbm", hbm::parseHbmConfig)
                                            : hbm::hbmPreset(hbm::defaultPreset);
        if (accelerator.has("compute"))
            accelerator.nested("compute", [&](ConfigMap& compute) {
                config.computeCosim = compute.nested("cosim", [&](ConfigMap& cosim) {
                    return parseComputeCosim(cosim, config.ranks);
                });
            });
        config.accelerator = accel::parseAccelConfig(accelerator);
    });
    config.fabric = map.nested("fabric", [&config](ConfigMap& fabric) {
        if (fabric.has("cosim"))
            config.fabricCosim = fabric.nested("cosim", cosim::parseCosimConfig);
        return net::parseNetConfig(fabric);
    });
    loadCustomAlgorithms(config.fabric);
    if (config.fabric.endpointCount() != config.ranks)
        config.fabric.topologyLocation.fail(
            "the topology has " + std::to_string(config.fabric.endpointCount()) +
            " endpoints but the platform has " + std::to_string(config.ranks) +
            " ranks; make them equal");
    if (map.has("driver"))
        map.nested("driver", [&](ConfigMap& driver) {
            table.readSection(driver, "driver", config);
            table.readNested(driver, "driver.limits", config);
            table.checkSection(driver, "driver", config);
        });
    return config;
}

bool under(const std::string& path, const std::string& prefix)
{
    return path.size() > prefix.size() && path.compare(0, prefix.size(), prefix) == 0 &&
           (path[prefix.size()] == '.' || path[prefix.size()] == '[');
}

// The override an error is about: one whose value is at or above the error's key path, or
// one that created the key the error is at (a node without a position in the file).
const Override* overrideAt(const std::vector<Override>& overrides, const ConfigError& error)
{
    const std::string& keyPath = error.keyPath();
    for (auto it = overrides.rbegin(); it != overrides.rend(); ++it)
        if (keyPath == it->path || under(keyPath, it->path) ||
            (error.line() == 0 && under(it->path, keyPath)))
            return &*it;
    return nullptr;
}

} // namespace

const ParamTable<PlatformConfig>& platformParams()
{
    static const ParamTable<PlatformConfig> table = makePlatformParams();
    return table;
}

Override parseOverride(const std::string& text)
{
    std::size_t equals = text.find('=');
    if (equals == std::string::npos)
        throw Error("--set " + text + ": expected key.path=value, e.g. --set ranks=16");
    Override override{text.substr(0, equals), text.substr(equals + 1)};
    if (override.path.empty())
        throw Error("--set " + text + ": the key path before '=' is empty");
    // Syntax is checked here, before any file is read, so a typo in an override is reported
    // as the override's (and `etsim run` cannot start) rather than as the platform file's.
    splitPath(override);
    override.parsed = std::make_shared<const YAML::Node>(parseOverrideValue(override));
    return override;
}

PlatformConfig loadPlatformString(const std::string& text,
                                  const std::string& fileName,
                                  const std::vector<Override>& overrides)
{
    YAML::Node root = parseYaml(text, fileName);
    for (const Override& override : overrides)
        if (override.path == "fabric.preset")
            applyOverride(root, override);
    expandFabricPreset(root, fileName);
    for (const Override& override : overrides)
        if (override.path != "fabric.preset")
            applyOverride(root, override);

    PlatformConfig config;
    try {
        config = loadConfigYaml(root, fileName).map(parseRoot);
        validatePlatform(config);
    } catch (const ConfigError& error) {
        // Nodes an override created have no position in the file: name the override instead.
        if (const Override* override = overrideAt(overrides, error))
            throw ConfigError("--set " + override->path + "=" + override->value,
                              0,
                              0,
                              error.keyPath(),
                              error.problem());
        throw;
    }
    config.resolved = toJson(resolvedTree(root, config));
    return config;
}

PlatformConfig loadPlatformFile(const std::filesystem::path& path,
                                const std::vector<Override>& overrides)
{
    return loadPlatformString(readTextFile(path, "a platform YAML file"), path.string(), overrides);
}

std::vector<std::string> platformPresetNames()
{
    std::vector<std::string> names;
    for (const PresetText& preset : presetTexts())
        names.emplace_back(preset.name);
    return names;
}

std::string_view platformPresetYaml(const std::string& name)
{
    std::string known;
    for (const PresetText& preset : presetTexts()) {
        if (preset.name == name)
            return preset.yaml;
        known += (known.empty() ? "" : ", ") + std::string(preset.name);
    }
    throw Error("unknown platform \"" + name + "\": not a file and not a bundled preset (" + known +
                ")");
}

PlatformConfig loadPlatform(const std::string& fileOrPreset, const std::vector<Override>& overrides)
{
    std::error_code ignored;
    if (std::filesystem::exists(fileOrPreset, ignored) ||
        fileOrPreset.find('/') != std::string::npos ||
        fileOrPreset.find(".yaml") != std::string::npos)
        return loadPlatformFile(fileOrPreset, overrides);
    return loadPlatformString(
        std::string(platformPresetYaml(fileOrPreset)), "preset:" + fileOrPreset, overrides);
}

void validatePlatform(const PlatformConfig& config)
{
    if (config.ranks == 0)
        throw Error("ranks: must be at least 1");
    if (config.ranksPerNode == 0 || config.ranks % config.ranksPerNode != 0)
        throw Error("ranks_per_node: must divide ranks (" + std::to_string(config.ranks) + ")");
    if (config.fabric.endpointCount() != config.ranks)
        throw Error("fabric.topology: the topology has " +
                    std::to_string(config.fabric.endpointCount()) +
                    " endpoints but the platform has " + std::to_string(config.ranks) +
                    " ranks; make them equal");
    if (config.driver.window == 0)
        throw Error("driver.window: must be at least 1");
    // The compatibility profile builds neither an accelerator nor an HBM model.
    if (config.astra)
        return;
    accel::validateAccelConfig(config.accelerator);
    hbm::validate(config.hbm);
}

} // namespace etsim::platform
