// `etsim run` and `etsim plot` as a user runs them: exit codes, the text and JSON reports,
// the timeline and the picture.

#include "tests/support/RunCommand.h"

#include "tests/support/TempDir.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>

namespace etsim::apps {
namespace {

using etsim::test::CommandResult;
using etsim::test::TempDir;

CommandResult etsim(const std::string& arguments)
{
    return etsim::test::runCommand(std::string(ETSIM_BINARY) + " " + arguments);
}

bool contains(const std::string& text, const std::string& part)
{
    return text.find(part) != std::string::npos;
}

// An 8-rank (dp 2 x tp 4) transformer step in dir/step.*.et.
std::string generate(const TempDir& dir)
{
    CommandResult gen = etsim("gen transformer --layers 1 --hidden 512 --heads 8 --ffn 2048 "
                              "--seq-len 512 --dp 2 --tp 4 --offload activations --out " +
                              dir.path().string() + " --name step");
    EXPECT_EQ(gen.code, 0) << gen.output;
    return (dir.path() / "step").string();
}

TEST(RunCommand, RunsAPresetAndWritesReportTimelineAndPicture)
{
    TempDir dir;
    std::string trace = generate(dir);
    std::string report = dir.file("report.json").string();
    std::string timeline = dir.file("timeline.json").string();
    CommandResult run = etsim("run --platform hgx_h100 --trace " + trace + " --report " + report +
                              " --timeline " + timeline);
    ASSERT_EQ(run.code, 0) << run.output;
    EXPECT_TRUE(contains(run.output, "etsim run: hgx_h100, 8 ranks")) << run.output;
    EXPECT_TRUE(contains(run.output, "simulated time: ")) << run.output;
    EXPECT_TRUE(contains(run.output, "all_reduce")) << run.output;
    EXPECT_TRUE(contains(run.output, "tensor units busy")) << run.output;
    EXPECT_TRUE(contains(run.output, "events/s")) << run.output;

    std::ifstream in(report);
    nlohmann::json json = nlohmann::json::parse(in);
    EXPECT_EQ(json["schema_version"], 1);
    EXPECT_EQ(json["outcome"], "finished");
    ASSERT_EQ(json["ranks"].size(), 8U);
    for (const auto& rank : json["ranks"]) {
        double sum = rank["compute_ns"].get<double>() + rank["memory_ns"].get<double>() +
                     rank["exposed_comm_ns"].get<double>() + rank["idle_ns"].get<double>();
        EXPECT_NEAR(sum, rank["finish_ns"].get<double>(), 1e-3);
    }
    EXPECT_GT(json["simulated_time_ns"].get<double>(), 0.0);
    EXPECT_EQ(json["collectives"][0]["type"], "all_reduce");
    EXPECT_TRUE(json["resources"].contains("hbm_utilisation"));
    EXPECT_GE(json["wall_seconds"].get<double>(), 0.0);
    EXPECT_GT(json["events"].get<std::uint64_t>(), 0U);
    EXPECT_EQ(json["trace_files"].size(), 8U);
    EXPECT_EQ(json["trace_files"][0]["crc32"].get<std::string>().size(), 8U);
    EXPECT_EQ(json["platform"]["resolved"]["accelerator"]["preset"], "h100_sxm");
    EXPECT_EQ(json["command_line"][1], "run");
    EXPECT_GT(etsim::test::readFile(timeline).size(), 1000U);

    std::string svg = dir.file("report.svg").string();
    CommandResult plot = etsim("plot " + report + " -o " + svg);
    ASSERT_EQ(plot.code, 0) << plot.output;
    std::string picture = etsim::test::readFile(svg);
    EXPECT_EQ(picture.rfind("<svg", 0), 0U);
    EXPECT_TRUE(contains(picture, "rank 7"));
    EXPECT_TRUE(contains(picture, "HBM bandwidth"));
}

TEST(RunCommand, ExitCodes)
{
    TempDir dir;
    std::string trace = generate(dir);
    // Cannot start (2): missing platform, missing trace, bad --set syntax, unknown option.
    CommandResult missingPlatform = etsim("run --platform nope.yaml --trace " + trace);
    EXPECT_EQ(missingPlatform.code, 2);
    EXPECT_TRUE(contains(missingPlatform.output, "--platform nope.yaml: no such file"))
        << missingPlatform.output;
    CommandResult missingTrace =
        etsim("run --platform hgx_h100 --trace " + dir.file("none").string());
    EXPECT_EQ(missingTrace.code, 2) << missingTrace.output;
    CommandResult badSet = etsim("run --platform hgx_h100 --trace " + trace + " --set ranks");
    EXPECT_EQ(badSet.code, 2);
    EXPECT_TRUE(contains(badSet.output, "expected key.path=value")) << badSet.output;
    EXPECT_EQ(etsim("run --platform hgx_h100 --trace " + trace + " --frobnicate").code, 2);

    // Input problems (1): unknown --set key, rank mismatch, a bad platform file.
    CommandResult unknownKey =
        etsim("run --platform hgx_h100 --trace " + trace + " --set accelerator.sramm.capacity=1");
    EXPECT_EQ(unknownKey.code, 1);
    EXPECT_TRUE(contains(unknownKey.output,
                         "--set accelerator.sramm.capacity=1: accelerator.sramm: unknown key"))
        << unknownKey.output;
    CommandResult mismatch = etsim("run --platform tpu_v4_torus --trace " + trace);
    EXPECT_EQ(mismatch.code, 1);
    EXPECT_TRUE(contains(mismatch.output, "has 8 rank(s) but the platform \"tpu_v4_torus\" has 64"))
        << mismatch.output;
    std::string bad =
        dir.write("bad.yaml",
                  "ranks: 8\naccelerator: {preset: h100_sxm}\nfabric: {preset: tpu_torus}\n")
            .string();
    CommandResult badPlatform = etsim("run --platform " + bad + " --trace " + trace);
    EXPECT_EQ(badPlatform.code, 1);
    EXPECT_TRUE(
        contains(badPlatform.output, "the topology has 64 endpoints but the platform has 8 ranks"))
        << badPlatform.output;

    CommandResult quiet =
        etsim("run --platform hgx_h100 --trace " + trace + " --quiet --mode replay");
    EXPECT_EQ(quiet.code, 0) << quiet.output;
    EXPECT_FALSE(contains(quiet.output, "simulated time")) << quiet.output;
}

TEST(RunCommand, ListsPlatforms)
{
    CommandResult list = etsim("run --list-platforms");
    EXPECT_EQ(list.code, 0);
    EXPECT_EQ(list.output, "hgx_h100\nhgx_h100_4node\ntpu_v4_torus\nng1\ndgx_a100_cluster\n");
}

TEST(PlotCommand, RejectsWhatIsNotAReport)
{
    TempDir dir;
    std::string notReport = dir.write("x.json", "{\"a\": 1}").string();
    CommandResult plot = etsim("plot " + notReport + " -o " + dir.file("x.svg").string());
    EXPECT_EQ(plot.code, 1);
    EXPECT_TRUE(contains(plot.output, "not an etsim run report")) << plot.output;
    EXPECT_EQ(etsim("plot " + dir.file("none.json").string() + " -o x.svg").code, 2);
}

} // namespace
} // namespace etsim::apps
