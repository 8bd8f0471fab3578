#pragma once
// Parameters declared once. A configurable component (the accelerator, the HBM, the fabric,
// the platform) lists each of its keys in one ParamTable: the key path, its type or unit, its
// default, the rule it must meet and one line of help. That one declaration drives
//
//   - parsing: readSection() reads the keys of one YAML map that apply to the configuration
//     as it stands (a key of another tensor model is an unknown key there);
//   - validation: each key's rule (firstViolation()), reported at the key (file, line,
//     column, key path) when read from a file, or as "key.path: problem" for a
//     configuration built in code;
//   - the resolved-configuration echo in reports: write() gives every key with its value;
//   - `etsim config keys [COMPONENT]` and the key tables in docs/, which are generated from
//     describe() (tests/kernel/DocKeyTablesTest keeps the docs equal to the tables).
//
// This is the role of ns-3's attributes and gem5's Params. A rule may read other keys (tRC
// against tRAS + tRP); it is attached to the key that must give way, or reports at another key
// path with ruleAt(). What the parse function keeps is derivation: values filled in from others
// (a peak from per-clock rates, an address map rebuilt for a new organisation).
//
//     ParamTable<Sram> table("sram", [] { return Sram{}; });
//     table.value("capacity", [](auto& s) -> auto& { return s.capacity; }, "size",
//                 "on-chip bytes");
//     table.value("efficiency", [](auto& s) -> auto& { return s.efficiency; },
//                 "number in (0, 1]", "eta_m")
//         .rule([](const Sram& s) {
//             return s.efficiency > 0.0 && s.efficiency <= 1.0 ? "" : "must be in (0, 1]";
//         });
//
// Accessors are generic lambdas returning a reference, so the same one serves reading (C&)
// and writing (const C&).

#include "kernel/Config.h"

#include <yaml-cpp/yaml.h>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace etsim {

// What `etsim config keys` and the docs show about one key.
struct ParamInfo {
    std::string key;         ///< full key path, "accelerator.sram.capacity"
    std::string type;        ///< type or unit and range, "integer ≥ 1"
    std::string defaultText; ///< the value without the key; "required" or "—" when none
    std::string help;        ///< one line
};

/// A broken rule: the key path below the component's map, and what is wrong.
struct ParamViolation {
    std::string key;
    std::string problem;
};

/// Where each key a section read was written, by key path below the component's map.
using ParamLocations = std::map<std::string, ConfigLocation, std::less<>>;

/// Throws the ConfigError for `bad` found after `map` was read: at the value of the longest
/// key in `where` that is `bad.key` or a part above it ("tensor.tiles" for "tensor.tiles[1]"),
/// or at `map` when the value came from a preset or a default. The key path is bad.key
/// below map's path.
[[noreturn]] void
failAt(const ParamViolation& bad, const ParamLocations& where, const ConfigMap& map);

/// The docs' key table: "| key | type / unit | default | meaning |" and one row per key.
std::string paramMarkdown(const std::vector<ParamInfo>& params);

/// One key per line group for a terminal: key, type, default, help.
std::string paramListing(const std::vector<ParamInfo>& params);

/// "`open`, `closed`": the allowed names of an enum table, for a key's type column.
template <typename Names>
std::string choiceText(const Names& names)
{
    std::string text;
    for (const auto& entry : names)
        text += (text.empty() ? "`" : ", `") + std::string(entry.name) + "`";
    return text;
}

/// The text a value is echoed and documented as: the same text the parser reads back to the
/// same value ("900 GB/s", exact decimal numbers, true/false).
template <typename T>
std::string paramText(const T& value)
{
    if constexpr (std::is_same_v<T, bool>)
        return value ? "true" : "false";
    else if constexpr (std::is_same_v<T, double>)
        return exactNumberText(value);
    else if constexpr (std::is_integral_v<T>)
        return std::to_string(value);
    else if constexpr (std::is_same_v<T, std::string>)
        return value;
    else
        return toString(value); // the kernel Units printers, found by argument-dependent lookup
}

/// "must be at least 1" when value is 0; otherwise empty.
template <typename T>
std::string atLeastOneProblem(T value)
{
    return value == 0 ? "must be at least 1" : std::string();
}

template <typename C>
class ParamTable {
public:
    struct Param {
        std::string key; ///< path below the component's map: "tensor.sm_count"
        std::string type;
        std::string help;
        std::string fixedDefault; ///< shown instead of the default configuration's value
        bool isRequired = false;
        std::function<void(const ConfigNode&, C&)> read;
        std::function<YAML::Node(const C&)> write;
        std::vector<std::function<std::optional<ParamViolation>(const C&)>> checks;
        std::function<bool(const C&)> applies; ///< empty: always

        /// The key exists only while `predicate` holds (e.g. one tensor model's keys).
        Param& when(std::function<bool(const C&)> predicate)
        {
            applies = std::move(predicate);
            return *this;
        }
        /// A rule the value must meet: returns the problem, or "" when it holds. A rule may
        /// read other keys (the default data type needs a peak); it is reported here. Rules
        /// are checked in the order given.
        Param& rule(std::function<std::string(const C&)> problem)
        {
            checks.push_back([problem = std::move(problem)](const C& config) {
                std::string text = problem(config);
                return text.empty() ? std::nullopt
                                    : std::optional<ParamViolation>(ParamViolation{{}, text});
            });
            return *this;
        }
        /// A rule reported at another key path, or at a part of this key ("tensor.tiles[2]"):
        /// the violation's key is the full path below the component's map (empty: this key).
        Param& ruleAt(std::function<std::optional<ParamViolation>(const C&)> rule)
        {
            checks.push_back(std::move(rule));
            return *this;
        }
        /// What the docs show as the default when the default configuration's value would
        /// mislead (a key of a model the default does not use, a derived value).
        Param& defaultIs(std::string text)
        {
            fixedDefault = std::move(text);
            return *this;
        }
        /// A missing key is an error that quotes the help.
        Param& required()
        {
            isRequired = true;
            return *this;
        }
        bool appliesTo(const C& config) const { return !applies || applies(config); }
    };

    /// `component` names the table in `etsim config keys` and in generated docs; `prefix`
    /// is the key path of the component's map in a platform file ("accelerator.hbm"), put
    /// before every key in describe(); `defaults` makes the configuration a map without any
    /// key gives, whose values are the documented defaults.
    ParamTable(std::string component, std::string prefix, std::function<C()> defaults)
        : componentName(std::move(component))
        , keyPrefix(std::move(prefix))
        , makeDefaults(std::move(defaults))
    {
    }

    const std::string& component() const { return componentName; }
    const std::vector<Param>& params() const { return entries; }

    /// A key whose value converts through ConfigTraits and prints through paramText.
    template <typename Access>
    Param& value(std::string key, Access access, std::string type, std::string help)
    {
        using T = std::decay_t<decltype(access(std::declval<C&>()))>;
        Param param;
        param.key = std::move(key);
        param.type = std::move(type);
        param.help = std::move(help);
        param.read = [access](const ConfigNode& node, C& config) { access(config) = node.as<T>(); };
        param.write = [access](const C& config) { return YAML::Node(paramText(access(config))); };
        return add(std::move(param));
    }

    /// A key that names one entry of an EnumName table.
    template <typename Access, typename Names>
    Param& choice(std::string key, Access access, const Names& names, std::string help)
    {
        Param param;
        param.key = std::move(key);
        param.type = choiceText(names);
        param.help = std::move(help);
        param.read = [access, &names](const ConfigNode& node, C& config) {
            access(config) = detail::readEnum(node, names);
        };
        param.write = [access, &names](const C& config) {
            return YAML::Node(std::string(enumName(names, access(config))));
        };
        return add(std::move(param));
    }

    /// A key with its own reader and writer (a list, a map of rates, a derived choice).
    /// `write` returning a null node leaves the key out of the echo.
    Param& custom(std::string key,
                  std::string type,
                  std::string help,
                  std::function<void(const ConfigNode&, C&)> read,
                  std::function<YAML::Node(const C&)> write)
    {
        Param param;
        param.key = std::move(key);
        param.type = std::move(type);
        param.help = std::move(help);
        param.read = std::move(read);
        param.write = std::move(write);
        return add(std::move(param));
    }

    /// Reads, from `map` (the map of `section`: "" for the component's own map, "tensor" for
    /// its tensor: map), every key of that section that applies to `config` as it stands, in
    /// table order; keys absent keep the value `config` has. Records where each key read was
    /// written in `where` (by key path), for rules checked after the whole map is read.
    void readSection(ConfigMap& map,
                     std::string_view section,
                     C& config,
                     ParamLocations* where = nullptr) const
    {
        for (const Param& param : entries) {
            std::string_view leaf = leafIn(param.key, section);
            if (!leaf.empty())
                readParam(map, param, leaf, config, where);
        }
    }

    /// Reads the one key `key` (a full key path whose parent map is `map`) when the table
    /// declares it and it applies; for keys whose value depends on keys read after the
    /// section's others (an address map on the organisation).
    void
    readKey(ConfigMap& map, std::string_view key, C& config, ParamLocations* where = nullptr) const
    {
        const std::size_t dot = key.rfind('.');
        const std::string_view section =
            dot == std::string_view::npos ? std::string_view() : key.substr(0, dot);
        for (const Param& param : entries)
            if (param.key == key)
                readParam(map, param, leafIn(param.key, section), config, where);
    }

    /// readSection on the map of `section` (a full key path: "driver.limits"), which is the
    /// value of the section's last step in `map`, when `map` holds it.
    void readNested(ConfigMap& map,
                    std::string_view section,
                    C& config,
                    ParamLocations* where = nullptr) const
    {
        const std::size_t dot = section.rfind('.');
        const std::string_view key =
            dot == std::string_view::npos ? section : section.substr(dot + 1);
        if (map.has(key))
            map.nested(key, [&](ConfigMap& sub) { readSection(sub, section, config, where); });
    }

    /// Checks the rules of the keys of `section` (the keys readSection reads from `map`) that
    /// apply to `config`, in table order, failing at the first broken one: at its value when
    /// `map` holds the key, at `map` when the value came from a preset or a default.
    void checkSection(ConfigMap& map, std::string_view section, const C& config) const
    {
        for (const Param& param : entries) {
            std::string_view leaf = leafIn(param.key, section);
            if (leaf.empty() || !param.appliesTo(config))
                continue;
            for (const auto& check : param.checks)
                if (std::optional<ParamViolation> bad = check(config)) {
                    std::string_view key = leaf;
                    if (!bad->key.empty() && bad->key.size() > section.size() + 1 &&
                        bad->key.compare(0, section.size(), section) == 0)
                        key = std::string_view(bad->key).substr(
                            section.empty() ? 0 : section.size() + 1);
                    map.fail(key, bad->problem);
                }
        }
    }

    /// The first rule `config` breaks, in table order; nullopt when every rule holds.
    std::optional<ParamViolation> firstViolation(const C& config) const
    {
        for (const Param& param : entries) {
            if (param.checks.empty() || !param.appliesTo(config))
                continue;
            for (const auto& check : param.checks)
                if (std::optional<ParamViolation> bad = check(config)) {
                    if (bad->key.empty())
                        bad->key = param.key;
                    return bad;
                }
        }
        return std::nullopt;
    }

    /// Every key that applies to `config`, with its value, nested by key path; loading the
    /// tree back gives the same configuration.
    YAML::Node write(const C& config) const
    {
        YAML::Node root(YAML::NodeType::Map);
        for (const Param& param : entries) {
            if (!param.appliesTo(config))
                continue;
            YAML::Node value = param.write(config);
            if (!value.IsDefined() || value.IsNull())
                continue;
            place(root, param.key, value);
        }
        return root;
    }

    /// One row per key: the full key path, type, default and help.
    std::vector<ParamInfo> describe() const
    {
        const C defaults = makeDefaults();
        std::vector<ParamInfo> rows;
        rows.reserve(entries.size());
        for (const Param& param : entries) {
            ParamInfo row;
            row.key = keyPrefix.empty() ? param.key : keyPrefix + "." + param.key;
            row.type = param.type;
            row.help = param.help;
            if (!param.fixedDefault.empty())
                row.defaultText = param.fixedDefault;
            else if (param.isRequired)
                row.defaultText = "required";
            else if (!param.appliesTo(defaults))
                row.defaultText = "—";
            else
                row.defaultText = defaultText(param.write(defaults));
            rows.push_back(std::move(row));
        }
        return rows;
    }

private:
    static void readParam(
        ConfigMap& map, const Param& param, std::string_view leaf, C& config, ParamLocations* where)
    {
        if (!param.appliesTo(config))
            return;
        const std::optional<ConfigNode> node =
            param.isRequired ? std::optional<ConfigNode>(map.requiredValue(leaf, param.help))
                             : map.value(leaf);
        if (!node)
            return;
        param.read(*node, config);
        if (where)
            (*where)[param.key] = node->location();
    }

    Param& add(Param param)
    {
        entries.push_back(std::move(param));
        return entries.back();
    }

    // The key's last step when it lies directly in `section`; empty otherwise.
    static std::string_view leafIn(std::string_view key, std::string_view section)
    {
        if (section.empty())
            return key.find('.') == std::string_view::npos ? key : std::string_view();
        if (key.size() <= section.size() + 1 || key.compare(0, section.size(), section) != 0 ||
            key[section.size()] != '.')
            return {};
        std::string_view leaf = key.substr(section.size() + 1);
        return leaf.find('.') == std::string_view::npos ? leaf : std::string_view();
    }

    static void place(YAML::Node& root, std::string_view key, const YAML::Node& value)
    {
        std::size_t dot = key.find('.');
        if (dot == std::string_view::npos) {
            root[std::string(key)] = value;
            return;
        }
        const std::string head(key.substr(0, dot));
        if (!root[head].IsDefined() || !root[head].IsMap())
            root[head] = YAML::Node(YAML::NodeType::Map);
        YAML::Node child = root[head];
        place(child, key.substr(dot + 1), value);
    }

    static std::string defaultText(const YAML::Node& value)
    {
        if (!value.IsDefined() || value.IsNull())
            return "—";
        if (value.IsScalar())
            return value.Scalar().empty() ? "—" : value.Scalar();
        YAML::Emitter out;
        out << YAML::Flow << value;
        return out.c_str();
    }

    std::string componentName;
    std::string keyPrefix;
    std::function<C()> makeDefaults;
    std::vector<Param> entries;
};

} // namespace etsim
