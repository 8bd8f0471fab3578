// Longer than most files: one case per value type, error position and override form of the
// typed configuration (kernel/Config.h), which every component's parser relies on.
#include "kernel/Config.h"

#include "kernel/Error.h"
#include "kernel/InputLimits.h"
#include "tests/support/TempDir.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace etsim {

// ---------------------------------------------------------------------------------------------
// A small value type standing in for the kernel Units types: it plugs into the config layer
// through ConfigTraits and reports bad text with a UnitError, as Units will.

struct TestBandwidth {
    double gigabytesPerSecond;
};

template <>
struct ConfigTraits<TestBandwidth> {
    static constexpr std::string_view expected = "a bandwidth such as \"900 GB/s\"";
    static TestBandwidth fromScalar(const std::string& text)
    {
        const std::string suffix = " GB/s";
        if (text.size() <= suffix.size() ||
            text.compare(text.size() - suffix.size(), suffix.size(), suffix) != 0)
            throw UnitError("expected a bandwidth such as \"900 GB/s\"");
        return {std::stod(text.substr(0, text.size() - suffix.size()))};
    }
};

// ---------------------------------------------------------------------------------------------
// A schema declared the way modules are meant to declare theirs: enums with string tables,
// named constexpr defaults next to the struct, one parse function per map.

enum class Topology { Ring, Switch, Torus };
constexpr EnumName<Topology> topologyNames[] = {
    {"ring", Topology::Ring},
    {"switch", Topology::Switch},
    {"torus", Topology::Torus},
};

enum class PagePolicy { Open, Closed };
constexpr std::array<EnumName<PagePolicy>, 2> pagePolicyNames{{
    {"open", PagePolicy::Open},
    {"closed", PagePolicy::Closed},
}};

constexpr std::uint32_t defaultHbmChannels = 8;
constexpr PagePolicy defaultPagePolicy = PagePolicy::Open;
constexpr bool defaultRefresh = true;
constexpr double defaultLinkLatencyNs = 500.0;

struct HbmSchema {
    std::uint32_t channels = 0;
    TestBandwidth bandwidth{};
    PagePolicy pagePolicy = PagePolicy::Open;
    bool refresh = false;
};

struct LinkSchema {
    int from = 0;
    int to = 0;
    TestBandwidth bandwidth{};
    double latencyNs = 0.0;
};

struct PlatformSchema {
    std::string name;
    std::uint16_t accelerators = 0;
    HbmSchema hbm;
    Topology topology = Topology::Ring;
    std::vector<LinkSchema> links;
    std::vector<std::int64_t> dims;
};

HbmSchema parseHbm(ConfigMap& map)
{
    HbmSchema hbm;
    hbm.channels = map.optional("channels", defaultHbmChannels);
    hbm.bandwidth = map.required<TestBandwidth>("bandwidth", "peak bandwidth of one stack");
    hbm.pagePolicy = map.enumField("page_policy", pagePolicyNames, defaultPagePolicy);
    hbm.refresh = map.optional("refresh", defaultRefresh);
    return hbm;
}

// A map type that plugs in through ConfigTraits::fromMap, so it can sit in a std::vector.
template <>
struct ConfigTraits<LinkSchema> {
    static LinkSchema fromMap(ConfigMap& map)
    {
        LinkSchema link;
        link.from = map.required<int>("from");
        link.to = map.required<int>("to");
        link.bandwidth = map.required<TestBandwidth>("bandwidth");
        link.latencyNs = map.optional("latency_ns", defaultLinkLatencyNs);
        if (link.from == link.to)
            throw Error("a link must join two different ports");
        return link;
    }
};

namespace {

PlatformSchema parsePlatform(ConfigMap& map)
{
    PlatformSchema platform;
    platform.name = map.required<std::string>("name");
    platform.accelerators = map.required<std::uint16_t>("accelerators");
    platform.hbm = map.nested("hbm", parseHbm);
    map.nested("fabric", [&](ConfigMap& fabric) {
        platform.topology = fabric.enumField("topology", topologyNames);
        platform.links = fabric.required<std::vector<LinkSchema>>("links");
        platform.dims = fabric.optional<std::vector<std::int64_t>>("dims", {});
    });
    return platform;
}

// Runs `parse` on YAML text named "platform.yaml" and returns the error message it raises.
template <typename Parse>
std::string errorOf(const std::string& text, Parse parse)
{
    try {
        loadConfigString(text, "platform.yaml").map(parse);
    } catch (const ConfigError& error) {
        return error.what();
    }
    return "no error";
}

std::string errorOfPlatform(const std::string& text)
{
    return errorOf(text, parsePlatform);
}

constexpr const char* goodPlatform = R"(name: hgx
accelerators: 8
hbm:
  bandwidth: 3350 GB/s
  page_policy: closed
fabric:
  topology: switch
  links:
    - {from: 0, to: 1, bandwidth: 900 GB/s}
    - from: 1
      to: 2
      bandwidth: 450 GB/s
      latency_ns: 250.5
  dims: [2, 0x10, -3]
)";

TEST(Config, ParsesNestedSchemaAndAppliesNamedDefaults)
{
    PlatformSchema platform = loadConfigString(goodPlatform).map(parsePlatform);
    EXPECT_EQ(platform.name, "hgx");
    EXPECT_EQ(platform.accelerators, 8);
    EXPECT_EQ(platform.hbm.channels, defaultHbmChannels);
    EXPECT_DOUBLE_EQ(platform.hbm.bandwidth.gigabytesPerSecond, 3350.0);
    EXPECT_EQ(platform.hbm.pagePolicy, PagePolicy::Closed);
    EXPECT_EQ(platform.hbm.refresh, defaultRefresh);
    EXPECT_EQ(platform.topology, Topology::Switch);
    ASSERT_EQ(platform.links.size(), 2u);
    EXPECT_EQ(platform.links[0].from, 0);
    EXPECT_EQ(platform.links[0].to, 1);
    EXPECT_DOUBLE_EQ(platform.links[0].bandwidth.gigabytesPerSecond, 900.0);
    EXPECT_DOUBLE_EQ(platform.links[0].latencyNs, defaultLinkLatencyNs);
    EXPECT_DOUBLE_EQ(platform.links[1].latencyNs, 250.5);
    EXPECT_EQ(platform.dims, (std::vector<std::int64_t>{2, 16, -3}));
}

TEST(Config, ExplicitValuesOverrideDefaults)
{
    HbmSchema hbm = loadConfigString("channels: 16\nbandwidth: 1 GB/s\npage_policy: open\n"
                                     "refresh: FALSE\n")
                        .map(parseHbm);
    EXPECT_EQ(hbm.channels, 16u);
    EXPECT_EQ(hbm.pagePolicy, PagePolicy::Open);
    EXPECT_FALSE(hbm.refresh);
}

// --- error format and locations --------------------------------------------------------------

TEST(Config, ConverterErrorIsLocatedWithKeyPath)
{
    const std::string text = R"(name: hgx
accelerators: 8
hbm: {bandwidth: 1 GB/s}
fabric:
  topology: ring
  links:
    - {from: 0, to: 1, bandwidth: 900 GB/s}
    - {from: 1, to: 2, bandwidth: 900 GB/s}
    - from: 2
      to: 3
      bandwidth: 900 GBs
)";
    try {
        loadConfigString(text, "platform.yaml").map(parsePlatform);
        FAIL() << "expected a ConfigError";
    } catch (const ConfigError& error) {
        EXPECT_STREQ(error.what(),
                     "platform.yaml:11:18: fabric.links[2].bandwidth: expected a bandwidth such as "
                     "\"900 GB/s\"");
        EXPECT_EQ(error.file(), "platform.yaml");
        EXPECT_EQ(error.line(), 11);
        EXPECT_EQ(error.column(), 18);
        EXPECT_EQ(error.keyPath(), "fabric.links[2].bandwidth");
        EXPECT_EQ(error.problem(), "expected a bandwidth such as \"900 GB/s\"");
    }
}

TEST(Config, PlainErrorFromMapParserIsLocatedAtThatMap)
{
    const std::string text =
        "name: x\naccelerators: 1\nhbm: {bandwidth: 1 GB/s}\nfabric:\n"
        "  topology: ring\n  links:\n    - {from: 0, to: 1, bandwidth: 1 GB/s}\n"
        "    - {from: 3, to: 3, bandwidth: 1 GB/s}\n";
    EXPECT_EQ(errorOfPlatform(text),
              "platform.yaml:8:7: fabric.links[1]: a link must join two different ports");
}

TEST(Config, NestedSequencePathsUseDotsAndIndices)
{
    auto parse = [](ConfigMap& root) {
        return root.nested("a", [](ConfigMap& a) {
            return a.sequence("b", [](ConfigMap& b) { return b.required<int>("c"); });
        });
    };
    EXPECT_EQ(loadConfigString("a:\n  b:\n    - c: 1\n    - c: 2\n").map(parse),
              (std::vector<int>{1, 2}));
    EXPECT_EQ(errorOf("a:\n  b:\n    - c: 1\n    - c: 2\n    - c: two\n", parse),
              "platform.yaml:5:10: a.b[2].c: expected an integer from -2147483648 to "
              "2147483647, got \"two\"");

    auto matrix = [](ConfigMap& root) {
        return root.required<std::vector<std::vector<std::uint8_t>>>("matrix");
    };
    EXPECT_EQ(loadConfigString("matrix: [[1, 2], [3]]").map(matrix),
              (std::vector<std::vector<std::uint8_t>>{{1, 2}, {3}}));
    EXPECT_EQ(errorOf("matrix:\n  - [1, 2]\n  - [3, 256]\n", matrix),
              "platform.yaml:3:9: matrix[1][1]: expected an integer from 0 to 255, got \"256\"");
}

// --- unknown keys ------------------------------------------------------------------------------

TEST(Config, UnknownKeySuggestsNearestDeclaredKey)
{
    // A misspelt required key surfaces as missing, pointing at the misspelling; a misspelt
    // optional key as unknown, naming the declared key it resembles (declared keys count even
    // when the file does not give them).
    const std::string text = "name: x\naccelerators: 1\nhbm:\n  bandwith: 1 GB/s\n";
    EXPECT_EQ(errorOfPlatform(text),
              "platform.yaml:4:3: hbm.bandwidth: missing required key (peak bandwidth of one "
              "stack); is \"bandwith\" on line 4 a misspelling?");

    const std::string typoOfOptional =
        "name: x\naccelerators: 1\nhbm:\n  bandwidth: 1 GB/s\n  chanels: 4\n";
    EXPECT_EQ(errorOfPlatform(typoOfOptional),
              "platform.yaml:5:3: hbm.chanels: unknown key (did you mean \"channels\"?)");

    const std::string swapped = "name: x\naccelerators: 1\nhbm:\n  bandwidth: 1 GB/s\n"
                                "  refrehs: true\n";
    EXPECT_EQ(errorOfPlatform(swapped),
              "platform.yaml:5:3: hbm.refrehs: unknown key (did you mean \"refresh\"?)");
}

TEST(Config, UnknownKeyFarFromEveryKeyListsTheKnownOnes)
{
    const std::string text = "name: x\naccelerators: 1\nhbm:\n  bandwidth: 1 GB/s\n"
                             "  vendor: acme\n";
    EXPECT_EQ(errorOfPlatform(text),
              "platform.yaml:5:3: hbm.vendor: unknown key; known keys: channels, bandwidth, "
              "page_policy, refresh");
    EXPECT_EQ(errorOf("extra: 1\n", [](ConfigMap&) {}),
              "platform.yaml:1:1: extra: unknown key; this map takes no keys");
}

TEST(Config, UnknownKeyIsReportedEvenWhenParseReturnsEarly)
{
    auto parse = [](ConfigMap& map) {
        if (!map.optional("enabled", false))
            return 0;
        return map.required<int>("size");
    };
    // The check runs after the early return; only keys the parse function asked for can be
    // suggested, and "size" was never asked for on this path.
    EXPECT_EQ(errorOf("sise: 3\n", parse),
              "platform.yaml:1:1: sise: unknown key; known keys: enabled");
    EXPECT_EQ(loadConfigString("enabled: true\nsize: 3\n").map(parse), 3);
    EXPECT_EQ(errorOf("enabled: true\nsise: 3\n", parse),
              "platform.yaml:1:1: size: missing required key; is \"sise\" on line 2 a "
              "misspelling?");
}

TEST(Config, IgnoredKeysAreAccepted)
{
    int size = loadConfigString("size: 3\nnote: for humans\n").map([](ConfigMap& map) {
        map.ignore("note");
        map.ignore("absent");
        return map.required<int>("size");
    });
    EXPECT_EQ(size, 3);
}

TEST(Config, MergeKeysAreRejectedWithAnExplanation)
{
    const std::string text = "base: &b {size: 1}\nitem:\n  <<: *b\n  size: 2\n";
    auto parse = [](ConfigMap& map) {
        map.ignore("base");
        return map.nested("item", [](ConfigMap& item) { return item.required<int>("size"); });
    };
    EXPECT_EQ(errorOf(text, parse),
              "platform.yaml:3:3: item.<<: merge keys (<<) are not supported (yaml-cpp 0.7); "
              "repeat the keys or alias the whole map");
}

// --- required keys ---------------------------------------------------------------------------

TEST(Config, MissingRequiredKeyNamesTheMapAndTheFullPath)
{
    const std::string text = "name: x\naccelerators: 1\nhbm: {bandwidth: 1 GB/s}\nfabric:\n"
                             "  topology: ring\n  links:\n    - from: 0\n      bandwidth: 1 GB/s\n";
    EXPECT_EQ(errorOfPlatform(text), "platform.yaml:7:7: fabric.links[0].to: missing required key");
    EXPECT_EQ(errorOfPlatform("name: x\n"),
              "platform.yaml:1:1: accelerators: missing required key");
    EXPECT_EQ(errorOfPlatform("name: x\naccelerators: 1\nhbm: {bandwidth: 1 GB/s}\nfabric:\n"
                              "  links: []\n"),
              "platform.yaml:5:3: fabric.topology: missing required key (one of ring, switch, "
              "torus)");
}

// --- enums -----------------------------------------------------------------------------------

TEST(Config, EnumErrorsListTheAllowedNames)
{
    auto parse = [](ConfigMap& map) { return map.enumField("topology", topologyNames); };
    EXPECT_EQ(loadConfigString("topology: torus").map(parse), Topology::Torus);
    EXPECT_EQ(errorOf("topology: rnig\n", parse),
              "platform.yaml:1:11: topology: expected one of ring, switch, torus, got \"rnig\" "
              "(did you mean \"ring\"?)");
    EXPECT_EQ(errorOf("topology: mesh\n", parse),
              "platform.yaml:1:11: topology: expected one of ring, switch, torus, got \"mesh\"");
    EXPECT_EQ(errorOf("topology: [ring]\n", parse),
              "platform.yaml:1:11: topology: expected one of ring, switch, torus, got a sequence");
    // Names are matched exactly: YAML is case-sensitive and so are the tables.
    EXPECT_EQ(errorOf("topology: Ring\n", parse),
              "platform.yaml:1:11: topology: expected one of ring, switch, torus, got \"Ring\" "
              "(did you mean \"ring\"?)");
}

TEST(Config, OptionalEnumFallsBackToItsDefault)
{
    auto parse = [](ConfigMap& map) {
        return map.enumField("page_policy", pagePolicyNames, defaultPagePolicy);
    };
    EXPECT_EQ(loadConfigString("{}").map(parse), defaultPagePolicy);
    EXPECT_EQ(loadConfigString("page_policy: closed").map(parse), PagePolicy::Closed);
    EXPECT_EQ(errorOf("page_policy: shut", parse),
              "platform.yaml:1:14: page_policy: expected one of open, closed, got \"shut\"");
}

TEST(Config, EnumNameLooksUpTheTable)
{
    EXPECT_EQ(enumName(topologyNames, Topology::Switch), "switch");
    EXPECT_EQ(enumName(pagePolicyNames, static_cast<PagePolicy>(7)), "");
}

// --- scalar conversions ----------------------------------------------------------------------

template <typename T>
T convert(const std::string& text)
{
    return loadConfigString("v: " + text).map([](ConfigMap& map) { return map.required<T>("v"); });
}

template <typename T>
std::string conversionError(const std::string& text)
{
    return errorOf("v: " + text, [](ConfigMap& map) { return map.required<T>("v"); });
}

TEST(Config, IntegersAreRangeCheckedAndNeverTruncated)
{
    EXPECT_EQ(convert<int>("42"), 42);
    EXPECT_EQ(convert<int>("+7"), 7);
    EXPECT_EQ(convert<int>("-0"), 0);
    EXPECT_EQ(convert<int>("\"12\""), 12);
    EXPECT_EQ(convert<std::uint32_t>("0xFF"), 255u);
    EXPECT_EQ(convert<std::int8_t>("-128"), -128);
    EXPECT_EQ(convert<std::int8_t>("127"), 127);
    EXPECT_EQ(convert<std::int64_t>("-9223372036854775808"),
              std::numeric_limits<std::int64_t>::min());
    EXPECT_EQ(convert<std::uint64_t>("18446744073709551615"),
              std::numeric_limits<std::uint64_t>::max());

    EXPECT_EQ(conversionError<int>("3.5"),
              "platform.yaml:1:4: v: expected an integer from -2147483648 to 2147483647, got "
              "\"3.5\"");
    EXPECT_EQ(conversionError<int>("1e3"),
              "platform.yaml:1:4: v: expected an integer from -2147483648 to 2147483647, got "
              "\"1e3\"");
    EXPECT_EQ(conversionError<std::uint8_t>("256"),
              "platform.yaml:1:4: v: expected an integer from 0 to 255, got \"256\"");
    EXPECT_EQ(conversionError<std::int8_t>("-129"),
              "platform.yaml:1:4: v: expected an integer from -128 to 127, got \"-129\"");
    EXPECT_EQ(conversionError<std::uint32_t>("-1"),
              "platform.yaml:1:4: v: expected an integer from 0 to 4294967295, got \"-1\"");
    EXPECT_EQ(conversionError<std::uint64_t>("18446744073709551616"),
              "platform.yaml:1:4: v: expected an integer from 0 to 18446744073709551615, got "
              "\"18446744073709551616\"");
    EXPECT_EQ(conversionError<std::int64_t>("-9223372036854775809"),
              "platform.yaml:1:4: v: expected an integer from -9223372036854775808 to "
              "9223372036854775807, got \"-9223372036854775809\"");
    EXPECT_EQ(conversionError<int>("+-1"),
              "platform.yaml:1:4: v: expected an integer from -2147483648 to 2147483647, got "
              "\"+-1\"");
    EXPECT_EQ(conversionError<int>("0x"),
              "platform.yaml:1:4: v: expected an integer from -2147483648 to 2147483647, got "
              "\"0x\"");
    EXPECT_EQ(conversionError<int>("''"),
              "platform.yaml:1:4: v: expected an integer from -2147483648 to 2147483647, got "
              "\"\"");
    EXPECT_EQ(conversionError<short>("1 000"),
              "platform.yaml:1:4: v: expected an integer from -32768 to 32767, got \"1 000\"");
}

TEST(Config, BooleansUseTheYaml12Spellings)
{
    EXPECT_TRUE(convert<bool>("true"));
    EXPECT_TRUE(convert<bool>("True"));
    EXPECT_TRUE(convert<bool>("TRUE"));
    EXPECT_FALSE(convert<bool>("false"));
    EXPECT_FALSE(convert<bool>("False"));
    EXPECT_EQ(conversionError<bool>("yes"),
              "platform.yaml:1:4: v: expected true or false, got \"yes\"");
    EXPECT_EQ(conversionError<bool>("1"),
              "platform.yaml:1:4: v: expected true or false, got \"1\"");
}

TEST(Config, DoublesMustBeFiniteNumbers)
{
    EXPECT_DOUBLE_EQ(convert<double>("1.5"), 1.5);
    EXPECT_DOUBLE_EQ(convert<double>("-2e3"), -2000.0);
    EXPECT_DOUBLE_EQ(convert<double>("+0.25"), 0.25);
    EXPECT_DOUBLE_EQ(convert<double>("7"), 7.0);
    EXPECT_EQ(conversionError<double>("fast"),
              "platform.yaml:1:4: v: expected a number, got \"fast\"");
    EXPECT_EQ(conversionError<double>("1.5x"),
              "platform.yaml:1:4: v: expected a number, got \"1.5x\"");
    EXPECT_EQ(conversionError<double>("1e999"),
              "platform.yaml:1:4: v: expected a finite number, got \"1e999\"");
    EXPECT_EQ(conversionError<double>("nan"),
              "platform.yaml:1:4: v: expected a finite number, got \"nan\"");
    EXPECT_EQ(conversionError<double>(".inf"),
              "platform.yaml:1:4: v: expected a number, got \".inf\"");
}

TEST(Config, StringsTakeAnyScalar)
{
    EXPECT_EQ(convert<std::string>("plain text"), "plain text");
    EXPECT_EQ(convert<std::string>("'  padded '"), "  padded ");
    EXPECT_EQ(convert<std::string>("12"), "12");
    EXPECT_EQ(convert<std::string>("''"), "");
}

// --- wrong node kinds ------------------------------------------------------------------------

TEST(Config, WrongNodeKindsSayWhatWasExpected)
{
    EXPECT_EQ(conversionError<int>("{a: 1}"),
              "platform.yaml:1:4: v: expected an integer, got a map");
    EXPECT_EQ(conversionError<std::string>("[a, b]"),
              "platform.yaml:1:4: v: expected a string, got a sequence");
    EXPECT_EQ(conversionError<TestBandwidth>("\n  a: 1\n"),
              "platform.yaml:2:3: v: expected a bandwidth such as \"900 GB/s\", got a map");
    EXPECT_EQ(conversionError<std::vector<int>>("5"),
              "platform.yaml:1:4: v: expected a sequence, got \"5\"");
    EXPECT_EQ(conversionError<LinkSchema>("[1, 2]"),
              "platform.yaml:1:4: v: expected a map, got a sequence");
    EXPECT_EQ(errorOf("a: 1\nb: 2\n", [](ConfigMap& map) {}),
              "platform.yaml:1:1: a: unknown key; "
              "this map takes no keys");
    EXPECT_EQ(errorOf("- 1\n- 2\n", [](ConfigMap&) {}),
              "platform.yaml:1:1: the file is not a mapping of keys: its top level is a sequence; "
              "it must hold key: value lines");
}

TEST(Config, EmptyValuesAreLocatedAtTheirKey)
{
    // yaml-cpp marks an empty value at the next token (here line 3); the key is the useful place.
    EXPECT_EQ(errorOf("a: 1\nv:\nw: 2\n",
                      [](ConfigMap& map) {
                          map.ignore("a");
                          map.ignore("w");
                          return map.required<int>("v");
                      }),
              "platform.yaml:2:1: v: expected an integer, got an empty value");
    EXPECT_EQ(errorOf("hbm:\nx: 1\n", [](ConfigMap& map) { return map.nested("hbm", parseHbm); }),
              "platform.yaml:1:1: hbm: expected a map, got an empty value (write {} for a map "
              "without keys)");
    EXPECT_EQ(conversionError<std::vector<int>>("\n  - 1\n  -\n  - 3\n"),
              "platform.yaml:2:3: v[1]: expected an integer, got an empty value");
}

TEST(Config, NonScalarKeysAreRejected)
{
    EXPECT_EQ(errorOf("? [a, b]\n: 1\n", [](ConfigMap&) {}),
              "platform.yaml:1:3: expected a plain key, got a sequence");
}

// --- duplicate keys --------------------------------------------------------------------------

TEST(Config, DuplicateKeysAreErrors)
{
    // yaml-cpp 0.7 accepts repeated keys and keeps both entries; the config layer reports them.
    EXPECT_EQ(errorOf("hbm:\n  channels: 4\n  bandwidth: 1 GB/s\n  channels: 8\n",
                      [](ConfigMap& map) { return map.nested("hbm", parseHbm); }),
              "platform.yaml:4:3: hbm.channels: duplicate key (first defined at line 2)");
}

// --- custom types, locations, cross-key rules ------------------------------------------------

TEST(Config, LocatedValuesReportProblemsFoundLater)
{
    auto located = loadConfigString("hbm:\n  banks: 12\n", "hbm.yaml").map([](ConfigMap& map) {
        return map.nested("hbm",
                          [](ConfigMap& hbm) { return hbm.required<Located<int>>("banks"); });
    });
    EXPECT_EQ(located.value, 12);
    EXPECT_EQ(located.location.line, 2);
    EXPECT_EQ(located.location.column, 10);
    try {
        located.location.fail("must be a power of two");
        FAIL() << "expected a ConfigError";
    } catch (const ConfigError& error) {
        EXPECT_STREQ(error.what(), "hbm.yaml:2:10: hbm.banks: must be a power of two");
    }
}

TEST(Config, FailNamesTheKeyOrTheMap)
{
    auto parse = [](ConfigMap& map) {
        int banks = map.required<int>("banks");
        int groups = map.optional("bank_groups", 4);
        if (banks % groups != 0)
            map.fail("banks", "must be a multiple of bank_groups (" + std::to_string(groups) + ")");
        if (!map.has("mode"))
            map.fail("mode", "is needed when banks is given");
        return banks;
    };
    EXPECT_EQ(errorOf("bank_groups: 4\nbanks: 6\n", parse),
              "platform.yaml:2:8: banks: must be a multiple of bank_groups (4)");
    EXPECT_EQ(errorOf("banks: 8\n", parse),
              "platform.yaml:1:1: mode: is needed when banks is given");
}

// Accepts either "4" or "{count: 4, spare: 1}": a type that needs full control uses fromNode.
struct Replicas {
    int count = 0;
    int spare = 0;
};

} // namespace

template <>
struct ConfigTraits<Replicas> {
    static Replicas fromNode(const ConfigNode& node)
    {
        if (node.isScalar())
            return {node.as<int>(), 0};
        return node.map([](ConfigMap& map) {
            return Replicas{map.required<int>("count"), map.optional("spare", 0)};
        });
    }
};

namespace {

TEST(Config, FromNodeTraitsSeeTheWholeNode)
{
    auto parse = [](ConfigMap& map) { return map.required<std::vector<Replicas>>("r"); };
    auto replicas = loadConfigString("r: [4, {count: 2, spare: 1}]").map(parse);
    ASSERT_EQ(replicas.size(), 2u);
    EXPECT_EQ(replicas[0].count, 4);
    EXPECT_EQ(replicas[1].spare, 1);
    EXPECT_EQ(errorOf("r: [4, {count: 2, spar: 1}]", parse),
              "platform.yaml:1:19: r[1].spar: unknown key (did you mean \"spare\"?)");
}

TEST(Config, RawValueAndOptionalWithoutDefault)
{
    auto parse = [](ConfigMap& map) {
        std::optional<ConfigNode> raw = map.value("raw");
        std::optional<int> count = map.optional<int>("count");
        return std::make_pair(raw ? raw->keyPath() : std::string("none"), count);
    };
    auto both = loadConfigString("raw: [1]\ncount: 3\n").map(parse);
    EXPECT_EQ(both.first, "raw");
    EXPECT_EQ(both.second, 3);
    auto neither = loadConfigString("{}").map(parse);
    EXPECT_EQ(neither.first, "none");
    EXPECT_FALSE(neither.second.has_value());
}

TEST(Config, SequenceParseCanTakeNodes)
{
    auto names = loadConfigString("ranks: [a, b, c]").map([](ConfigMap& map) {
        return map.sequence("ranks", [](const ConfigNode& node) { return node.keyPath(); });
    });
    EXPECT_EQ(names, (std::vector<std::string>{"ranks[0]", "ranks[1]", "ranks[2]"}));
}

// --- loading ---------------------------------------------------------------------------------

TEST(Config, LoadsFilesAndNamesThemInErrors)
{
    test::TempDir dir;
    auto good = dir.write("hbm.yaml", "bandwidth: 12 GB/s\nchannels: 2\n");
    HbmSchema hbm = loadConfigFile(good).map(parseHbm);
    EXPECT_EQ(hbm.channels, 2u);
    EXPECT_DOUBLE_EQ(hbm.bandwidth.gigabytesPerSecond, 12.0);

    auto bad = dir.write("bad.yaml", "bandwidth: 12 GB/s\nchannels: many\n");
    try {
        loadConfigFile(bad).map(parseHbm);
        FAIL() << "expected a ConfigError";
    } catch (const ConfigError& error) {
        EXPECT_EQ(error.file(), bad.string());
        EXPECT_EQ(std::string(error.what()),
                  bad.string() +
                      ":2:11: channels: expected an integer from 0 to 4294967295, got \"many\"");
    }
}

std::string loadError(const std::filesystem::path& path)
{
    try {
        loadConfigFile(path).map([](ConfigMap& map) { map.ignore("a"); });
    } catch (const ConfigError& error) {
        return error.what();
    }
    return "no error";
}

TEST(Config, UnreadableFilesAndSyntaxErrorsAreConfigErrors)
{
    test::TempDir dir;
    EXPECT_EQ(loadError(dir.file("missing.yaml")),
              dir.file("missing.yaml").string() + ": cannot open: No such file or directory");
    EXPECT_EQ(loadError(dir.path()),
              dir.path().string() + ": cannot read: is a folder, expected a YAML file");
    auto broken = dir.write("broken.yaml", "a: [1, 2\nb: 3\n");
    EXPECT_EQ(loadError(broken),
              broken.string() + ":2:2: invalid YAML: end of sequence flow not found");
    auto twoDocs = dir.write("two.yaml", "a: 1\n---\na: 2\n");
    EXPECT_EQ(loadError(twoDocs),
              twoDocs.string() +
                  ":2:1: a second YAML document starts here; a config file holds exactly one");
    // yaml-cpp alone never ends on these: its parser stays at the ',' and the documents grow
    // without bound.
    auto comma = dir.write("comma.yaml", ",");
    EXPECT_EQ(loadError(comma),
              comma.string() +
                  ":1:1: invalid YAML: the parser cannot read past this character (a ',', ']' or "
                  "'}' outside a [ ] or { } collection?)");
    auto trailing = dir.write("trailing.yaml", "{a: 1},\n");
    EXPECT_EQ(loadError(trailing),
              trailing.string() +
                  ":1:7: invalid YAML: the parser cannot read past this character (a ',', ']' or "
                  "'}' outside a [ ] or { } collection?)");
    auto empty = dir.write("empty.yaml", "");
    EXPECT_EQ(loadError(empty),
              empty.string() +
                  ":1:1: the file is not a mapping of keys: its top level is an empty value; it "
                  "must hold key: value lines");
}

// A binary file or text in another encoding is refused at its first byte that is not UTF-8,
// before the YAML parser reads it as escapes or indentation.
TEST(Config, FilesThatAreNotUtf8TextAreRefusedAtTheFirstBadByte)
{
    test::TempDir dir;
    const std::string advice = " is not UTF-8 text, and a config file is YAML text: is this a "
                               "binary file, or one saved in another encoding? Give the YAML "
                               "file, saved as UTF-8";
    auto nul = dir.write("nul.yaml", std::string("a: 1\nb: x\0y\n", 12));
    EXPECT_EQ(loadError(nul), nul.string() + ":2:5: byte 0x00" + advice);
    auto latin1 = dir.write("latin1.yaml", "name: caf\xE9\n");
    EXPECT_EQ(loadError(latin1), latin1.string() + ":1:10: byte 0xE9" + advice);
    auto first = dir.write("first.yaml", "\xFF\x01");
    EXPECT_EQ(loadError(first), first.string() + ":1:1: byte 0xFF" + advice);
    // UTF-8 itself, a byte order mark included, is text.
    auto utf8 = dir.write("utf8.yaml",
                          "\xEF\xBB\xBF"
                          "a: \xC3\xA9\xE2\x82\xAC\n");
    EXPECT_EQ(loadError(utf8), "no error");
    // UTF-16 with its byte order mark is yaml-cpp's to read.
    auto utf16 = dir.write("utf16.yaml",
                           std::string("\xFF\xFE"
                                       "a\0:\0 \0"
                                       "1\0\n\0",
                                       12));
    EXPECT_EQ(loadError(utf16), "no error");
}

TEST(Config, StringsUseTheirPseudoFileName)
{
    try {
        loadConfigString("a: [").map([](ConfigMap&) {});
        FAIL() << "expected a ConfigError";
    } catch (const ConfigError& error) {
        EXPECT_EQ(error.file(), "<string>");
        EXPECT_GT(error.line(), 0);
        EXPECT_EQ(error.problem().rfind("invalid YAML: ", 0), 0u) << error.problem();
    }
    EXPECT_EQ(errorOf("a: 1\n  b: 2\n", [](ConfigMap&) {}),
              "platform.yaml:2:4: invalid YAML: illegal map value");
}

TEST(Config, ExactNumberTextIsTheShortestTextThatReadsBack)
{
    EXPECT_EQ(exactNumberText(0.7), "0.7");
    EXPECT_EQ(exactNumberText(2.0), "2");
    EXPECT_EQ(exactNumberText(0.1 + 0.2), "0.30000000000000004");
    EXPECT_EQ(exactNumberText(1e20), "1e+20");
    EXPECT_EQ(exactNumberText(-2.5e-7), "-2.5e-07");
    for (double value : {0.85, 1.0 / 3.0, 123456.789, 5e-324})
        EXPECT_EQ(loadConfigString(exactNumberText(value)).as<double>(), value);
}

} // namespace
namespace {

std::string loadStringError(const std::string& text)
{
    try {
        loadConfigString(text, "deep.yaml");
    } catch (const ConfigError& error) {
        return error.what();
    }
    return "no error";
}

} // namespace

TEST(Config, NestingIsBoundedAtTheStatedLimit)
{
    // "v: " is one level; 99 lists inside it reach the limit of 100, 100 pass it.
    EXPECT_EQ(loadStringError("v: " + std::string(99, '[') + std::string(99, ']')), "no error");
    const std::string error =
        loadStringError("v: " + std::string(100, '[') + std::string(100, ']'));
    // At the list that opens level 101: column 4 is the first '['.
    EXPECT_EQ(error.substr(0, 15), "deep.yaml:1:103") << error;
    EXPECT_NE(error.find("nested deeper than 100 levels of lists and maps"), std::string::npos)
        << error;
    // Far past yaml-cpp's own depth guard: the same message, no crash.
    EXPECT_NE(loadStringError(std::string(100000, '[')).find("nested deeper than 100 levels"),
              std::string::npos);
}

TEST(Config, AliasesCannotExpandBeyondTheValueLimit)
{
    // Each level repeats the one before ten times: 10^7 values from a few lines.
    std::string text = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
    for (int level = 1; level < 7; ++level) {
        const std::string previous = "*a" + std::to_string(level - 1);
        text += "a" + std::to_string(level) + ": &a" + std::to_string(level) + " [";
        for (int i = 0; i < 10; ++i)
            text += (i == 0 ? "" : ", ") + previous;
        text += "]\n";
    }
    const std::string error = loadStringError(text);
    EXPECT_NE(error.find("expands to more than 1000000 values"), std::string::npos) << error;
}

TEST(Config, JsonNestingIgnoresBracketsInStrings)
{
    const std::string inString = "[\"" + std::string(500, '[') + "\"]";
    EXPECT_EQ(jsonNestingOverflow(inString), std::string_view::npos);
    const std::string deep = std::string(101, '{');
    EXPECT_EQ(jsonNestingOverflow(deep), 100U);
    EXPECT_EQ(jsonNestingOverflow(std::string(100, '[') + std::string(100, ']')),
              std::string_view::npos);
}

} // namespace etsim
