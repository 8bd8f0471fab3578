// The sweep library without the command line: spec parsing and its errors, expansion of
// lists, ranges and zipped sets, and the result table.

#include "apps/sweep/SweepSpec.h"

#include "apps/sweep/Results.h"
#include "tests/support/ErrorOf.h"

#include <gtest/gtest.h>

#include <sstream>

namespace etsim::sweep {
namespace {

using etsim::test::errorOf;

SweepSpec parse(const std::string& text)
{
    return parseSweepSpec(text, "s.yaml", "/specs");
}

std::string specError(const std::string& text)
{
    return errorOf([&] { parse(text); });
}

TEST(SweepSpec, ExpandsListsRangesAndZipsAsAProduct)
{
    const SweepSpec spec = parse(R"(name: demo
platform: hgx_h100
trace: traces/job
set: [driver.mode=model]
parameters:
  - {key: a.b, values: [1, "2 GB/s"]}
  - key: c
    range: {start: 100, stop: 300, step: 100, unit: GB/s}
  - zip:
      - {key: d, values: [x, y]}
      - {key: e, range: {start: 1, stop: 1000, count: 2, scale: log}}
)");
    EXPECT_EQ(spec.name, "demo");
    EXPECT_EQ(spec.platform, "hgx_h100");
    EXPECT_EQ(spec.trace, "/specs/traces/job");
    EXPECT_EQ(spec.sets, std::vector<std::string>{"driver.mode=model"});
    EXPECT_EQ(parameterKeys(spec), (std::vector<std::string>{"a.b", "c", "d", "e"}));
    const auto points = expandPoints(spec);
    ASSERT_EQ(points.size(), 12U);
    using Values = std::vector<std::pair<std::string, std::string>>;
    EXPECT_EQ(points[0].parameters,
              (Values{{"a.b", "1"}, {"c", "100 GB/s"}, {"d", "x"}, {"e", "1"}}));
    EXPECT_EQ(points[1].parameters,
              (Values{{"a.b", "1"}, {"c", "100 GB/s"}, {"d", "y"}, {"e", "1000"}}));
    EXPECT_EQ(points[5].parameters,
              (Values{{"a.b", "1"}, {"c", "300 GB/s"}, {"d", "y"}, {"e", "1000"}}));
    EXPECT_EQ(points[6].parameters,
              (Values{{"a.b", "2 GB/s"}, {"c", "100 GB/s"}, {"d", "x"}, {"e", "1"}}));
    EXPECT_EQ(points[11].index, 11U);
}

TEST(SweepSpec, RangesRoundAndIncludeTheStop)
{
    const auto values = [](const std::string& range) {
        return parse("platform: p\ntrace: t\nparameters:\n  - {key: k, range: " + range + "}\n")
            .axes.front()
            .parameters.front()
            .values;
    };
    EXPECT_EQ(values("{start: 0.1, stop: 0.3, step: 0.1}"),
              (std::vector<std::string>{"0.1", "0.2", "0.3"}));
    EXPECT_EQ(values("{start: 1, stop: 16, count: 5, scale: log}"),
              (std::vector<std::string>{"1", "2", "4", "8", "16"}));
    EXPECT_EQ(values("{start: 10, stop: 0, step: -5}"), (std::vector<std::string>{"10", "5", "0"}));
    EXPECT_EQ(values("{start: 0, stop: 1, count: 3}"), (std::vector<std::string>{"0", "0.5", "1"}));
}

TEST(SweepSpec, WithoutParametersThereIsOnePoint)
{
    const SweepSpec spec = parse("platform: p\ngenerate: [microbench, --ranks, 8]\n");
    EXPECT_EQ(spec.generate, (std::vector<std::string>{"microbench", "--ranks", "8"}));
    EXPECT_TRUE(spec.trace.empty());
    const auto points = expandPoints(spec);
    ASSERT_EQ(points.size(), 1U);
    EXPECT_TRUE(points[0].parameters.empty());
}

TEST(SweepSpec, ErrorsNameFileLineAndKey)
{
    EXPECT_EQ(specError("trace: t\n"),
              "s.yaml:1:1: platform: missing required key (a platform file or a bundled preset "
              "name, e.g. hgx_h100)");
    EXPECT_EQ(specError("platform: p\ntrace: t\ngenerate: [x]\n"),
              "s.yaml:2:8: trace: give exactly one of trace (a prefix or folder) and generate "
              "(etsim gen arguments)");
    EXPECT_EQ(specError("platform: p\ngenerate: [microbench, --out, x]\n"),
              "s.yaml:2:11: generate: must not give --out: the sweep chooses it");
    EXPECT_EQ(specError("platform: p\ntrace: t\nset: [driver.mode]\n"),
              "s.yaml:3:7: set[0]: expected key.path=value, got \"driver.mode\"");
    EXPECT_EQ(specError("platform: p\ntrace: t\nparameters:\n  - {key: a, values: [1]}\n"
                        "  - zip:\n      - {key: b, values: [1, 2]}\n"
                        "      - {key: c, values: [1]}\n"),
              "s.yaml:7:15: parameters[1].zip[1].key: a zipped parameter must have as many "
              "values as the first (2), has 1");
    EXPECT_EQ(specError("platform: p\ntrace: t\nparameters:\n  - {key: a, range: {start: 1, "
                        "stop: 2, step: -1}}\n"),
              "s.yaml:4:47: parameters[0].range.step: must be non-zero and lead from start to "
              "stop");
    EXPECT_EQ(specError("platform: p\ntrace: t\nparameters:\n  - {key: a, range: {start: 1, "
                        "stop: 2}}\n"),
              "s.yaml:4:21: parameters[0].range.step: give exactly one of step (linear) and "
              "count (points from start to stop)");
    EXPECT_EQ(specError("platform: p\ntrace: t\nparameters:\n  - {key: a, range: {start: 0, "
                        "stop: 2, count: 3, scale: log}}\n"),
              "s.yaml:4:29: parameters[0].range.start: a log range needs start and stop above 0");
    EXPECT_EQ(specError("platform: p\ntrace: t\nparameters:\n  - {key: a, values: [1], "
                        "range: {start: 1, stop: 2, step: 1}}\n"),
              "s.yaml:4:22: parameters[0].values: give exactly one of values (a list) and range");
    EXPECT_EQ(specError("platform: p\ntrace: t\nparameters:\n  - {key: a, valus: [1]}\n"),
              "s.yaml:4:5: parameters[0].values: give exactly one of values (a list) and range");
    EXPECT_EQ(specError("platform: p\ntrace: t\nparameters:\n  - {key: a=1, values: [1]}\n"),
              "s.yaml:4:11: parameters[0].key: must be a key path such as "
              "accelerator.hbm.channels (no '=')");
    EXPECT_EQ(errorOf([] { loadSweepSpec("/no/such/sweep.yaml"); }),
              "/no/such/sweep.yaml: cannot open: No such file or directory");
}

nlohmann::json report(double simulatedNs, double computeNs)
{
    return {{"schema_version", 1},
            {"outcome", "finished"},
            {"simulated_time_ns", simulatedNs},
            {"wall_seconds", 0.5},
            {"platform", {{"name", "p"}}},
            {"ranks",
             {{{"compute_ns", computeNs},
               {"memory_ns", 0},
               {"exposed_comm_ns", simulatedNs - computeNs},
               {"idle_ns", 0}},
              {{"compute_ns", computeNs / 2},
               {"memory_ns", 10},
               {"exposed_comm_ns", 0},
               {"idle_ns", 0}}}},
            {"resources",
             {{"tensor_busy", 0.25},
              {"flop_utilisation", 0.2},
              {"hbm_utilisation", 0.1},
              {"busiest_links", {{{"name", "l0"}, {"utilisation", 0.75}}}}}},
            {"trace_files", {{{"path", "t.0.et"}, {"crc32", "0123abcd"}}}}};
}

TEST(SweepResults, FiguresAreMeansOverRanks)
{
    const RunFigures f = figuresFromReport(report(1000, 600), "r.json");
    EXPECT_EQ(f.ranks, 2U);
    EXPECT_DOUBLE_EQ(f.simulatedNs, 1000);
    EXPECT_DOUBLE_EQ(f.computeNs, 450);
    EXPECT_DOUBLE_EQ(f.memoryNs, 5);
    EXPECT_DOUBLE_EQ(f.exposedCommNs, 200);
    EXPECT_DOUBLE_EQ(f.busiestLink, 0.75);
    EXPECT_EQ(f.traceFiles, std::vector<std::string>{"t.0.et 0123abcd"});

    nlohmann::json broken = report(1000, 600);
    broken["ranks"][1].erase("idle_ns");
    EXPECT_EQ(errorOf([&] { figuresFromReport(broken, "r.json"); }),
              "r.json: ranks[1].idle_ns: missing; expected an etsim run report "
              "(docs/report.md, schema_version 1)");
    EXPECT_EQ(errorOf([] {
                  figuresFromReport(nlohmann::json{{"x", 1}}, "r.json");
              }),
              "r.json: not an etsim run report of schema_version 1 (docs/report.md)");
}

TEST(SweepResults, RanksWritesCsvAndSpeedups)
{
    Table table;
    table.parameterKeys = {"k"};
    Row base{"base", {}, "ok", 0, "", 1.0, figuresFromReport(report(2000, 100), "b")};
    table.base = base;
    table.rows.push_back(
        {"000", {{"k", "1"}}, "ok", 0, "", 1.0, figuresFromReport(report(1000, 100), "a")});
    table.rows.push_back({"001", {{"k", "2,3"}}, "failed", 1, "bad \"value\"", 0.5, std::nullopt});
    table.rows.push_back(
        {"002", {{"k", "4"}}, "ok", 0, "", 1.0, figuresFromReport(report(500, 100), "c")});
    const auto ranked = rankRows(table);
    ASSERT_EQ(ranked.size(), 3U);
    EXPECT_EQ(ranked[0]->id, "002");
    EXPECT_EQ(ranked[1]->id, "000");
    EXPECT_EQ(ranked[2]->id, "001");
    EXPECT_DOUBLE_EQ(*speedup(table, table.rows[2]), 4.0);
    EXPECT_FALSE(speedup(table, table.rows[1]).has_value());

    std::ostringstream csv;
    writeCsv(csv, table);
    std::istringstream lines(csv.str());
    std::string header;
    std::string line;
    std::getline(lines, header);
    EXPECT_EQ(header,
              "id,k,status,exit_code,simulated_time_ns,speedup,compute_ns,memory_ns,"
              "exposed_comm_ns,idle_ns,tensor_busy,flop_utilisation,hbm_utilisation,"
              "busiest_link_utilisation,sim_wall_seconds,process_wall_seconds,error");
    std::getline(lines, line);
    EXPECT_EQ(line, "base,,ok,0,2000,1,75,5,950,0,0.25,0.2,0.1,0.75,0.5,1,");
    std::getline(lines, line);
    EXPECT_EQ(line, "000,1,ok,0,1000,2,75,5,450,0,0.25,0.2,0.1,0.75,0.5,1,");
    std::getline(lines, line);
    EXPECT_EQ(line, "001,\"2,3\",failed,1,,,,,,,,,,,,0.5,\"bad \"\"value\"\"\"");

    const auto json = tableToJson(table);
    EXPECT_EQ(json["points"][2]["speedup"], 4.0);
    EXPECT_EQ(json["points"][1]["error"], "bad \"value\"");
    EXPECT_EQ(json["base"]["breakdown_ns"]["exposed_comm"], 950.0);

    std::ostringstream markdown;
    writeMarkdown(markdown, table, "T", {"breakdown.svg"});
    EXPECT_NE(markdown.str().find("| 1 | 002 | 4 | 500.0 ns | 4.000 |"), std::string::npos)
        << markdown.str();
    EXPECT_NE(markdown.str().find("- 001 (failed, exit code 1): `bad \"value\"`"),
              std::string::npos)
        << markdown.str();

    std::ostringstream svg;
    writeTimeVsParameterSvg(svg, table, "k");
    EXPECT_NE(svg.str().find("<title>002: 4, 500.0 ns</title>"), std::string::npos) << svg.str();
    EXPECT_EQ(pictureName("fabric.topology.dims[0].bandwidth"),
              "time_vs_fabric_topology_dims_0__bandwidth.svg");
}

} // namespace
} // namespace etsim::sweep
