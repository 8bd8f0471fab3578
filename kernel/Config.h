#pragma once
// Typed access to YAML configuration with errors that name the file, line, column and key path:
//
//     platform.yaml:12:5: fabric.links[2].bandwidth: expected a bandwidth such as "900 GB/s"
//
// A module declares its schema as a parse function over a ConfigMap. Defaults are named
// constexpr constants next to the schema, so the value a user gets without the key is visible
// where the key is declared:
//
//     enum class PagePolicy { Open, Closed };
//     constexpr EnumName<PagePolicy> pagePolicyNames[] = {{"open", PagePolicy::Open},
//                                                         {"closed", PagePolicy::Closed}};
//     constexpr std::uint32_t defaultHbmChannels = 8;
//     constexpr PagePolicy defaultPagePolicy = PagePolicy::Open;
//
//     struct HbmSchema {
//         std::uint32_t channels;
//         PagePolicy pagePolicy;
//         double clockGhz;
//     };
//
//     HbmSchema parseHbm(ConfigMap& map)
//     {
//         HbmSchema hbm;
//         hbm.channels = map.optional("channels", defaultHbmChannels);
//         hbm.pagePolicy = map.enumField("page_policy", pagePolicyNames, defaultPagePolicy);
//         hbm.clockGhz = map.required<double>("clock_ghz", "device clock in GHz, e.g. 1.6");
//         return hbm;
//     }
//
//     HbmSchema hbm = loadConfigFile("hbm.yaml").map(parseHbm);
//
// Unknown keys: a ConfigMap records every key its parse function asks for. ConfigMaps are only
// ever created by the config layer, which runs the parse function and then reports the first
// key in the map that was never read ("unknown key (did you mean ...)"). Because user code
// cannot construct a ConfigMap or obtain one outside a parse call, a schema cannot forget the
// check, and no destructor has to throw.
//
// New value types plug in by specialising ConfigTraits<T> (see below); that is how the kernel
// Units types ("900 GB/s", "700 ns") become readable. docs/config.md has the full guide.

#include "kernel/Error.h"

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace etsim {

class ConfigMap;

// Where a value sits in a configuration file: enough to report a problem found later, e.g.
// while building runtime structs from schema structs.
struct ConfigLocation {
    std::string file;
    int line = 0;   ///< 1-based; 0 when unknown
    int column = 0; ///< 1-based; 0 when unknown
    std::string keyPath;

    /// Throws ConfigError at this location with the given problem ("must be at least 1").
    [[noreturn]] void fail(const std::string& problem) const;
};

/// Where yaml-cpp's `mark` points in `file`, for a problem with `keyPath`.
ConfigLocation configLocation(const std::string& file, const YAML::Mark& mark, std::string keyPath);

// A value together with the place it was read from; read it as map.required<Located<T>>(key).
template <typename T>
struct Located {
    T value;
    ConfigLocation location;
};

// One entry of an enum's string table, declared by the module that owns the enum:
//     constexpr EnumName<Routing> routingNames[] = {{"minimal", Routing::Minimal}, ...};
template <typename E>
struct EnumName {
    std::string_view name;
    E value;
};

/// The name of `value` in `table`; empty when the table does not list it.
template <typename Table, typename E>
std::string_view enumName(const Table& table, E value);

// Extension point: how a YAML node becomes a T. Specialise it with ONE of
//
//     static constexpr std::string_view expected = "a bandwidth such as \"900 GB/s\"";
//     static T fromScalar(const std::string& text);      // a scalar such as "900 GB/s"
//
//     static T fromMap(ConfigMap& map);                  // a map; unknown keys are checked after
//
//     static T fromNode(const ConfigNode& node);         // anything else (full control)
//
// A converter reports bad input by throwing etsim::Error (or UnitError); its message becomes
// the problem of a ConfigError located at the node. `expected` is used when the node is not a
// scalar ("expected a bandwidth such as "900 GB/s", got a map").
template <typename T, typename Enable = void>
struct ConfigTraits {
};

// A YAML node with its location. Obtained from loadConfigFile/loadConfigString or from a
// ConfigMap; the YAML tree it points into stays alive as long as any ConfigNode does.
class ConfigNode {
public:
    enum class Kind { Null, Scalar, Sequence, Map };

    ConfigNode(const ConfigNode&) = default;
    // Assigning a YAML::Node rewrites the node it refers to rather than rebinding the handle,
    // so assignment is not offered at all.
    ConfigNode& operator=(const ConfigNode&) = delete;

    Kind kind() const;
    bool isNull() const { return kind() == Kind::Null; }
    bool isScalar() const { return kind() == Kind::Scalar; }
    bool isSequence() const { return kind() == Kind::Sequence; }
    bool isMap() const { return kind() == Kind::Map; }

    const ConfigLocation& location() const { return where; }
    const std::string& keyPath() const { return where.keyPath; }

    /// The scalar's text; throws "expected <expected>, got a map" (or sequence, empty value).
    const std::string& scalar(std::string_view expected) const;

    /// The value converted through ConfigTraits<T>.
    template <typename T>
    T as() const;

    /// Runs parse(ConfigMap&) on this node, which must be a map, then reports unknown keys.
    /// Returns what parse returns.
    template <typename Parse>
    auto map(Parse&& parse) const;

    /// The elements of a sequence, with key paths "<path>[i]".
    std::vector<ConfigNode> elements() const;

    /// Throws ConfigError at this node with the given problem.
    [[noreturn]] void fail(const std::string& problem) const { where.fail(problem); }

private:
    friend class ConfigMap;
    friend ConfigNode loadConfigYaml(const YAML::Node& root, const std::string& fileName);
    ConfigNode(const YAML::Node& yaml, ConfigLocation where);

    // Runs fn, turning a plain etsim::Error it throws into a ConfigError at this node.
    template <typename Fn>
    auto guard(Fn&& fn) const;

    YAML::Node yaml;
    ConfigLocation where;
};

// The keys of one YAML map, read by a schema's parse function. See the top of this file.
class ConfigMap {
public:
    ConfigMap(const ConfigMap&) = delete;
    ConfigMap& operator=(const ConfigMap&) = delete;

    /// Where the map starts (its first key) and its key path.
    const ConfigLocation& location() const { return where; }

    /// Whether the map holds `key`. Declares the key and counts it as read: a schema that asks
    /// whether a key exists has dealt with it, whatever it then does.
    bool has(std::string_view key);

    /// The value of `key`; a missing key is an error that quotes `help` (what the key means,
    /// its unit, an example).
    template <typename T>
    T required(std::string_view key, std::string_view help = {});

    /// The value of `key`, or `fallback` when the map does not hold it. Pass a named constexpr
    /// default so the default is documented at the schema.
    template <typename T>
    T optional(std::string_view key, T fallback);

    /// The value of `key`, or nullopt when the map does not hold it.
    template <typename T>
    std::optional<T> optional(std::string_view key);

    /// A required enum read through a table of EnumName<E>; errors list the allowed names.
    template <typename Table>
    auto enumField(std::string_view key, const Table& table);

    /// An optional enum; `fallback` when the map does not hold `key`.
    template <typename Table, typename E>
    E enumField(std::string_view key, const Table& table, E fallback);

    /// Runs parse on the required nested map (parse takes ConfigMap&) or node (parse takes
    /// const ConfigNode&) under `key`; returns what parse returns.
    template <typename Parse>
    auto nested(std::string_view key, Parse&& parse);

    /// Runs parse on each element of the required sequence under `key` (parse takes
    /// ConfigMap& for a sequence of maps, or const ConfigNode&); returns the results in order.
    template <typename Parse>
    auto sequence(std::string_view key, Parse&& parse);

    /// The raw node of `key` for values a schema inspects itself; nullopt when absent.
    std::optional<ConfigNode> value(std::string_view key);

    /// The raw node of the required `key`; a missing key is the error required() gives.
    ConfigNode requiredValue(std::string_view key, std::string_view help = {})
    {
        return takeRequired(key, help);
    }

    /// Accepts `key` without reading it (e.g. a key only another tool uses).
    void ignore(std::string_view key);

    /// Accepts every key not read so far and returns where each one is, so that a schema
    /// for another tool's files can warn about them instead of failing. Call it last.
    std::vector<ConfigLocation> acceptUnread();

    /// Throws ConfigError at the value of `key` (at the map when the key is absent), for rules
    /// that involve several keys: map.fail("banks", "must be a multiple of bank_groups").
    [[noreturn]] void fail(std::string_view key, const std::string& problem) const;

private:
    friend class ConfigNode;
    explicit ConfigMap(const ConfigNode& node);

    struct Field {
        std::string key;
        ConfigLocation keyLocation;
        ConfigNode value;
        bool read = false;
    };

    void declare(std::string_view key);
    Field* find(std::string_view key);
    const Field* find(std::string_view key) const;
    // Declares and reads `key`; nullptr when absent.
    const ConfigNode* take(std::string_view key);
    // Declares and reads `key`; throws "missing required key" when absent.
    const ConfigNode& takeRequired(std::string_view key, std::string_view help);
    // Reports the first key no one read.
    void finish() const;

    ConfigLocation where;
    std::vector<Field> fields;
    std::vector<std::string> declared;
};

/// Loads a YAML file holding one document. An unreadable file or a syntax error is a
/// ConfigError naming the file (and the line and column of the syntax error).
ConfigNode loadConfigFile(const std::filesystem::path& path);

/// Loads YAML text; errors name `fileName` as if the text came from that file.
ConfigNode loadConfigString(const std::string& text, const std::string& fileName = "<string>");

/// Parses YAML text holding one document (none: a Null node) within the limits of
/// kernel/InputLimits.h. A syntax error, a second document or too deep a nesting is a
/// ConfigError naming `fileName`, line and column.
YAML::Node parseYamlDocument(const std::string& text, const std::string& fileName);

/// Throws ConfigError unless `root` is a map: "the file is not a mapping of keys: its top
/// level is "hello"; it must hold key: value lines such as <example>".
void requireMapping(const YAML::Node& root, const std::string& fileName, std::string_view example);

/// Wraps a YAML tree a caller has already loaded and edited (e.g. a platform file with its
/// command-line overrides applied). Nodes keep the marks yaml-cpp gave them; nodes created in
/// code have none, so errors at them carry no line (line 0).
ConfigNode loadConfigYaml(const YAML::Node& root, const std::string& fileName);

/// The shortest decimal text ("%g" style) that reads back as exactly `value`, for the numbers
/// of a YAML tree written from a configuration, so that it loads back to the same doubles.
std::string exactNumberText(double value);

// ---------------------------------------------------------------------------------------------
// Conversions for the basic types.

template <>
struct ConfigTraits<bool> {
    static constexpr std::string_view expected = "true or false";
    static bool fromScalar(const std::string& text);
};

template <>
struct ConfigTraits<double> {
    static constexpr std::string_view expected = "a number";
    static double fromScalar(const std::string& text);
};

template <>
struct ConfigTraits<std::string> {
    static constexpr std::string_view expected = "a string";
    static std::string fromScalar(const std::string& text) { return text; }
};

// Quantities with units (kernel/Units.h) read straight from a config file: "900 GB/s".
template <typename Quantity>
struct ConfigTraits<Quantity,
                    std::void_t<decltype(Quantity::kindName), decltype(Quantity::parse(""))>> {
    static constexpr std::string_view expected = Quantity::kindName;
    static Quantity fromScalar(const std::string& text) { return Quantity::parse(text); }
};

namespace detail {

// Both throw etsim::Error "expected an integer from <min> to <max>, got "<text>"". Decimal or
// 0x-prefixed hexadecimal, optional sign; fractions and exponents are errors, not truncated.
std::int64_t parseSigned(const std::string& text, std::int64_t min, std::int64_t max);
std::uint64_t parseUnsigned(const std::string& text, std::uint64_t max);

} // namespace detail

// Every integer type except bool and char, range-checked against the target type.
template <typename T>
struct ConfigTraits<T,
                    std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool> &&
                                     !std::is_same_v<T, char>>> {
    static constexpr std::string_view expected = "an integer";
    static T fromScalar(const std::string& text)
    {
        if constexpr (std::is_signed_v<T>)
            return static_cast<T>(detail::parseSigned(
                text, std::numeric_limits<T>::min(), std::numeric_limits<T>::max()));
        else
            return static_cast<T>(detail::parseUnsigned(text, std::numeric_limits<T>::max()));
    }
};

// A sequence of any convertible type: "[1, 2, 3]" or a block list.
template <typename T>
struct ConfigTraits<std::vector<T>> {
    static std::vector<T> fromNode(const ConfigNode& node)
    {
        std::vector<T> values;
        for (const ConfigNode& element : node.elements())
            values.push_back(element.as<T>());
        return values;
    }
};

template <typename T>
struct ConfigTraits<Located<T>> {
    static Located<T> fromNode(const ConfigNode& node) { return {node.as<T>(), node.location()}; }
};

// ---------------------------------------------------------------------------------------------
// Template implementations.

namespace detail {

template <typename T>
inline constexpr bool alwaysFalse = false;

template <typename Traits, typename = void>
struct HasFromScalar : std::false_type {
};
template <typename Traits>
struct HasFromScalar<Traits,
                     std::void_t<decltype(Traits::fromScalar(std::declval<const std::string&>()))>>
    : std::true_type {
};

template <typename Traits, typename = void>
struct HasFromMap : std::false_type {
};
template <typename Traits>
struct HasFromMap<Traits, std::void_t<decltype(Traits::fromMap(std::declval<ConfigMap&>()))>>
    : std::true_type {
};

template <typename Traits, typename = void>
struct HasFromNode : std::false_type {
};
template <typename Traits>
struct HasFromNode<Traits,
                   std::void_t<decltype(Traits::fromNode(std::declval<const ConfigNode&>()))>>
    : std::true_type {
};

// "one of open, closed" and the problem for a name not in the list.
std::string enumChoices(const std::vector<std::string_view>& names);
std::string unknownEnumProblem(const std::vector<std::string_view>& names, const std::string& text);

template <typename Table>
std::vector<std::string_view> enumNames(const Table& table)
{
    std::vector<std::string_view> names;
    names.reserve(std::size(table));
    for (const auto& entry : table)
        names.push_back(entry.name);
    return names;
}

template <typename Table>
auto readEnum(const ConfigNode& node, const Table& table)
{
    std::vector<std::string_view> names = enumNames(table);
    const std::string& text = node.scalar(enumChoices(names));
    for (const auto& entry : table)
        if (entry.name == text)
            return entry.value;
    node.fail(unknownEnumProblem(names, text));
}

} // namespace detail

template <typename Table, typename E>
std::string_view enumName(const Table& table, E value)
{
    for (const auto& entry : table)
        if (entry.value == value)
            return entry.name;
    return {};
}

template <typename Fn>
auto ConfigNode::guard(Fn&& fn) const
{
    try {
        return fn();
    } catch (const ConfigError&) {
        throw;
    } catch (const Error& error) {
        fail(error.what());
    }
}

template <typename T>
T ConfigNode::as() const
{
    using Traits = ConfigTraits<T>;
    if constexpr (detail::HasFromNode<Traits>::value) {
        return guard([&] { return Traits::fromNode(*this); });
    } else if constexpr (detail::HasFromMap<Traits>::value) {
        return map([](ConfigMap& fields) { return Traits::fromMap(fields); });
    } else if constexpr (detail::HasFromScalar<Traits>::value) {
        const std::string& text = scalar(Traits::expected);
        return guard([&] { return Traits::fromScalar(text); });
    } else {
        static_assert(detail::alwaysFalse<T>,
                      "no conversion from YAML: specialise etsim::ConfigTraits<T> with "
                      "fromScalar (and expected), fromMap or fromNode");
    }
}

template <typename Parse>
auto ConfigNode::map(Parse&& parse) const
{
    ConfigMap fields(*this);
    if constexpr (std::is_void_v<std::invoke_result_t<Parse, ConfigMap&>>) {
        guard([&] { std::invoke(parse, fields); });
        fields.finish();
    } else {
        auto result = guard([&] { return std::invoke(parse, fields); });
        fields.finish();
        return result;
    }
}

namespace detail {

// Calls parse with a ConfigMap when it takes one, otherwise with the node itself.
template <typename Parse>
auto applyParse(const ConfigNode& node, Parse& parse)
{
    if constexpr (std::is_invocable_v<Parse&, ConfigMap&>)
        return node.map(parse);
    else
        return std::invoke(parse, node);
}

} // namespace detail

template <typename T>
T ConfigMap::required(std::string_view key, std::string_view help)
{
    return takeRequired(key, help).template as<T>();
}

template <typename T>
T ConfigMap::optional(std::string_view key, T fallback)
{
    const ConfigNode* node = take(key);
    return node ? node->template as<T>() : std::move(fallback);
}

template <typename T>
std::optional<T> ConfigMap::optional(std::string_view key)
{
    const ConfigNode* node = take(key);
    if (!node)
        return std::nullopt;
    return node->template as<T>();
}

template <typename Table>
auto ConfigMap::enumField(std::string_view key, const Table& table)
{
    return detail::readEnum(takeRequired(key, detail::enumChoices(detail::enumNames(table))),
                            table);
}

template <typename Table, typename E>
E ConfigMap::enumField(std::string_view key, const Table& table, E fallback)
{
    const ConfigNode* node = take(key);
    return node ? detail::readEnum(*node, table) : fallback;
}

template <typename Parse>
auto ConfigMap::nested(std::string_view key, Parse&& parse)
{
    return detail::applyParse(takeRequired(key, {}), parse);
}

template <typename Parse>
auto ConfigMap::sequence(std::string_view key, Parse&& parse)
{
    std::vector<ConfigNode> elements = takeRequired(key, {}).elements();
    using Result = decltype(detail::applyParse(elements.front(), parse));
    std::vector<Result> results;
    results.reserve(elements.size());
    for (const ConfigNode& element : elements)
        results.push_back(detail::applyParse(element, parse));
    return results;
}

} // namespace etsim
