// The parameter table (kernel/ParamTable.h): one declaration per key drives reading, the
// rules, the echo and the docs rows.

#include "kernel/ParamTable.h"

#include "kernel/Units.h"

#include <gtest/gtest.h>

namespace etsim {
namespace {

enum class Shape : std::uint8_t { Square, Wide };
constexpr EnumName<Shape> shapeNames[] = {{"square", Shape::Square}, {"wide", Shape::Wide}};

struct Widget {
    std::uint32_t count = 2;
    Shape shape = Shape::Square;
    Bandwidth rate = Bandwidth::fromBytesPerSecond(1e9);
    std::uint32_t width = 0; // a key of wide widgets only
    Time delay;
};

ParamTable<Widget> widgetTable()
{
    ParamTable<Widget> table("widget", "box.widget", [] { return Widget{}; });
    table
        .value(
            "count", [](auto& w) -> auto& { return w.count; }, "integer ≥ 1", "how many")
        .rule([](const Widget& w) { return atLeastOneProblem(w.count); });
    table.choice(
        "shape", [](auto& w) -> auto& { return w.shape; }, shapeNames, "outline");
    table
        .value(
            "link.rate", [](auto& w) -> auto& { return w.rate; }, "bandwidth", "line rate")
        .rule([](const Widget& w) {
            return w.rate.bytesPerSecond() > 0.0 ? "" : "must be above 0 B/s";
        });
    table
        .value(
            "link.width", [](auto& w) -> auto& { return w.width; }, "integer", "lanes")
        .when([](const Widget& w) { return w.shape == Shape::Wide; })
        .ruleAt([](const Widget& w) -> std::optional<ParamViolation> {
            if (w.width > w.count)
                return ParamViolation{"count", "must be at least link.width"};
            return std::nullopt;
        });
    table
        .value(
            "delay", [](auto& w) -> auto& { return w.delay; }, "time", "wait")
        .required();
    return table;
}

Widget parse(const std::string& text)
{
    const ParamTable<Widget> table = widgetTable();
    return loadConfigString(text, "w.yaml").map([&](ConfigMap& map) {
        Widget widget;
        ParamLocations where;
        table.readSection(map, "", widget, &where);
        table.readNested(map, "link", widget, &where);
        if (std::optional<ParamViolation> bad = table.firstViolation(widget))
            failAt(*bad, where, map);
        return widget;
    });
}

std::string parseError(const std::string& text)
{
    try {
        parse(text);
    } catch (const ConfigError& error) {
        return error.what();
    }
    return "no error";
}

TEST(ParamTable, ReadsTheKeysGivenAndKeepsTheOthers)
{
    Widget widget = parse("count: 5\ndelay: 3 ns\nlink: {rate: 2 GB/s}\n");
    EXPECT_EQ(widget.count, 5U);
    EXPECT_EQ(widget.shape, Shape::Square);
    EXPECT_DOUBLE_EQ(widget.rate.bytesPerSecond(), 2e9);
    EXPECT_EQ(widget.delay.ps(), 3000U);
}

TEST(ParamTable, AKeyExistsOnlyWhereItsConditionHolds)
{
    EXPECT_EQ(parse("shape: wide\ncount: 4\ndelay: 0 ns\nlink: {width: 4}\n").width, 4U);
    // Read in table order: the shape decides before the link map is read.
    EXPECT_EQ(parseError("delay: 0 ns\nlink: {width: 4}\n"),
              "w.yaml:2:8: link.width: unknown key; known keys: rate");
}

TEST(ParamTable, RulesAreReportedWhereTheValueWasWritten)
{
    EXPECT_EQ(parseError("count: 0\ndelay: 0 ns\n"), "w.yaml:1:8: count: must be at least 1");
    EXPECT_EQ(parseError("delay: 0 ns\nlink: {rate: 0 B/s}\n"),
              "w.yaml:2:14: link.rate: must be above 0 B/s");
    // A rule of one key reported at another: at that key's value.
    EXPECT_EQ(parseError("shape: wide\ncount: 2\ndelay: 0 ns\nlink: {width: 3}\n"),
              "w.yaml:2:8: count: must be at least link.width");
    // A value the file does not hold: at the map.
    EXPECT_EQ(parseError("shape: wide\ndelay: 0 ns\nlink: {width: 3}\n"),
              "w.yaml:1:1: count: must be at least link.width");
    EXPECT_EQ(parseError("count: 1\n"), "w.yaml:1:1: delay: missing required key (wait)");
}

TEST(ParamTable, WritesEveryKeyThatAppliesSoItReadsBack)
{
    const ParamTable<Widget> table = widgetTable();
    Widget widget;
    widget.count = 7;
    widget.delay = Time::fromPs(1500);
    YAML::Node tree = table.write(widget);
    EXPECT_EQ(tree["count"].Scalar(), "7");
    EXPECT_EQ(tree["shape"].Scalar(), "square");
    EXPECT_EQ(tree["link"]["rate"].Scalar(), "1 GB/s");
    EXPECT_FALSE(tree["link"]["width"].IsDefined()); // not a key of square widgets
    YAML::Emitter out;
    out << tree;
    Widget again = parse(out.c_str());
    EXPECT_EQ(again.count, 7U);
    EXPECT_EQ(again.delay.ps(), 1500U);
    EXPECT_DOUBLE_EQ(again.rate.bytesPerSecond(), 1e9);
}

TEST(ParamTable, DescribesEveryKeyWithItsDefault)
{
    const std::vector<ParamInfo> rows = widgetTable().describe();
    ASSERT_EQ(rows.size(), 5U);
    EXPECT_EQ(rows[0].key, "box.widget.count");
    EXPECT_EQ(rows[0].defaultText, "2");
    EXPECT_EQ(rows[1].type, "`square`, `wide`");
    EXPECT_EQ(rows[2].defaultText, "1 GB/s");
    EXPECT_EQ(rows[3].defaultText, "—"); // does not apply to the default widget
    EXPECT_EQ(rows[4].defaultText, "required");
    EXPECT_EQ(paramMarkdown({rows[2]}),
              "| key | type / unit | default | meaning |\n|---|---|---|---|\n"
              "| `box.widget.link.rate` | bandwidth | `1 GB/s` | line rate |\n");
}

TEST(ParamTable, CodeBuiltConfigurationsNameTheKeyPath)
{
    Widget widget;
    widget.count = 0;
    std::optional<ParamViolation> bad = widgetTable().firstViolation(widget);
    ASSERT_TRUE(bad);
    EXPECT_EQ(bad->key, "count");
    EXPECT_EQ(bad->problem, "must be at least 1");
    EXPECT_FALSE(widgetTable().firstViolation(Widget{}));
}

} // namespace
} // namespace etsim
