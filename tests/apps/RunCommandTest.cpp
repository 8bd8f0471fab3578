// `etsim run` and `etsim plot` as a user runs them: exit codes, the text and JSON reports,
// the timeline and the picture.

#include "tests/support/RunCommand.h"

#include "kernel/HugePages.h"
#include "tests/support/TempDir.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <set>
#include <string>

namespace etsim::apps {
namespace {

using etsim::test::CommandResult;
using etsim::test::contains;
using etsim::test::runCommand;
using etsim::test::runEtsim;
using etsim::test::TempDir;

// An 8-rank (dp 2 x tp 4) transformer step in dir/step.*.et.
std::string generate(const TempDir& dir)
{
    CommandResult gen = runEtsim("gen transformer --layers 1 --hidden 512 --heads 8 --ffn 2048 "
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
    CommandResult run = runEtsim("run --platform hgx_h100 --trace " + trace + " --report " +
                                 report + " --timeline " + timeline);
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
    EXPECT_EQ(json["trace_files"][0]["sha256"].get<std::string>().size(), 64U);
    EXPECT_EQ(json["platform"]["resolved"]["accelerator"]["preset"], "h100_sxm");
    EXPECT_EQ(json["command_line"][1], "run");
    EXPECT_GT(etsim::test::readFile(timeline).size(), 1000U);

    std::string svg = dir.file("report.svg").string();
    CommandResult plot = runEtsim("plot " + report + " -o " + svg);
    ASSERT_EQ(plot.code, 0) << plot.output;
    std::string picture = etsim::test::readFile(svg);
    EXPECT_EQ(picture.rfind("<svg", 0), 0U);
    EXPECT_TRUE(contains(picture, "rank 7"));
    EXPECT_TRUE(contains(picture, "HBM bandwidth"));
}

// `etsim run --profile`: a "wall time by part" section in the text report and a "profile"
// object in the JSON report; the simulated result is the same as without it.
TEST(RunCommand, ProfileReportsWallTimePerPartAndTheSameResult)
{
    TempDir dir;
    std::string trace = generate(dir);
    auto runTo = [&](const std::string& name, const std::string& extra) {
        std::string report = dir.file(name).string();
        CommandResult run =
            runEtsim("run --platform hgx_h100 --trace " + trace + " --report " + report + extra);
        EXPECT_EQ(run.code, 0) << run.output;
        std::ifstream in(report);
        return std::make_pair(run.output, nlohmann::json::parse(in));
    };
    auto [plainText, plain] = runTo("plain.json", "");
    auto [profiledText, profiled] = runTo("profiled.json", " --profile");
    EXPECT_FALSE(plain.contains("profile"));
    EXPECT_FALSE(contains(plainText, "wall time by part"));
    EXPECT_EQ(profiled["simulated_time_ns"], plain["simulated_time_ns"]);
    EXPECT_EQ(profiled["events"], plain["events"]);
    EXPECT_EQ(profiled["ranks"], plain["ranks"]);
    ASSERT_TRUE(profiled.contains("profile")) << profiled.dump();
    const auto& profile = profiled["profile"];
    double sum = profile["other_seconds"].get<double>();
    for (const char* part : {"driver", "accelerator", "hbm", "fabric", "cosim"}) {
        ASSERT_TRUE(profile["parts"].contains(part)) << part;
        sum += profile["parts"][part]["seconds"].get<double>();
    }
    EXPECT_NEAR(sum, profile["seconds"].get<double>(), 1e-9);
    EXPECT_GT(profile["parts"]["driver"]["entries"].get<std::uint64_t>(), 0U);
    EXPECT_TRUE(contains(profiledText, "wall time by part (--profile, ")) << profiledText;
    EXPECT_TRUE(contains(profiledText, "\n  driver ")) << profiledText;
    EXPECT_TRUE(contains(profiledText, "\n  other ")) << profiledText;
}

// etsim starts itself again with huge pages asked of malloc where the kernel gives them only
// when asked (kernel/HugePages.h), unless ETSIM_HUGE_PAGES=0; --profile says which happened.
TEST(RunCommand, ProfileSaysWhetherTheHeapAsksForHugePages)
{
    const std::string mode = etsim::thpMode();
    if (mode != "madvise")
        GTEST_SKIP() << "transparent huge pages are in mode \"" << mode
                     << "\" here, not madvise, so etsim has nothing to ask for";
    TempDir dir;
    std::string trace = generate(dir);
    auto heapOf = [&](const std::string& prefix) {
        std::string report = dir.file("report.json").string();
        CommandResult run = runCommand(prefix + ETSIM_BINARY + " run --platform hgx_h100 --trace " +
                                       trace + " --profile --report " + report);
        EXPECT_EQ(run.code, 0) << run.output;
        EXPECT_TRUE(contains(run.output, "  heap huge pages: ")) << run.output;
        std::ifstream in(report);
        return nlohmann::json::parse(in)["profile"]["heap_huge_pages"].get<std::string>();
    };
    EXPECT_EQ(heapOf("env -u GLIBC_TUNABLES -u ETSIM_HUGE_PAGES "),
              "asked (glibc.malloc.hugetlb=1)");
    EXPECT_EQ(heapOf("env -u GLIBC_TUNABLES ETSIM_HUGE_PAGES=0 "),
              "not asked (ETSIM_HUGE_PAGES=0)");
    // The user's own setting is kept, not overridden.
    EXPECT_EQ(heapOf("env -u ETSIM_HUGE_PAGES GLIBC_TUNABLES=glibc.malloc.hugetlb=0 "),
              "not asked");
}

TEST(RunCommand, LogOptionShowsInfoLines)
{
    TempDir dir;
    std::string trace = generate(dir);
    std::string run = "run --platform hgx_h100 --trace " + trace;
    CommandResult quiet = runEtsim(run);
    ASSERT_EQ(quiet.code, 0) << quiet.output;
    EXPECT_FALSE(contains(quiet.output, "[info]")) << quiet.output;
    CommandResult info = runEtsim("--log info " + run);
    ASSERT_EQ(info.code, 0) << info.output;
    EXPECT_TRUE(contains(info.output, "[info] simulation: run ")) << info.output;
    CommandResult bad = runEtsim("--log loud " + run);
    EXPECT_EQ(bad.code, 2);
    EXPECT_TRUE(contains(bad.output, "log level \"loud\": expected LEVEL or LOGGER=LEVEL"))
        << bad.output;
}

TEST(RunCommand, ExitCodes)
{
    TempDir dir;
    std::string trace = generate(dir);
    // Cannot start (2): missing platform, missing trace, bad --set syntax, unknown option.
    CommandResult missingPlatform = runEtsim("run --platform nope.yaml --trace " + trace);
    EXPECT_EQ(missingPlatform.code, 2);
    EXPECT_TRUE(contains(missingPlatform.output, "--platform nope.yaml: no such file"))
        << missingPlatform.output;
    CommandResult missingTrace =
        runEtsim("run --platform hgx_h100 --trace " + dir.file("none").string());
    EXPECT_EQ(missingTrace.code, 2) << missingTrace.output;
    CommandResult badSet = runEtsim("run --platform hgx_h100 --trace " + trace + " --set ranks");
    EXPECT_EQ(badSet.code, 2);
    EXPECT_TRUE(contains(badSet.output, "expected key.path=value")) << badSet.output;
    EXPECT_EQ(runEtsim("run --platform hgx_h100 --trace " + trace + " --frobnicate").code, 2);

    // Input problems (1): unknown --set key, rank mismatch, a bad platform file.
    CommandResult unknownKey = runEtsim("run --platform hgx_h100 --trace " + trace +
                                        " --set accelerator.sramm.capacity=1");
    EXPECT_EQ(unknownKey.code, 1);
    EXPECT_TRUE(contains(unknownKey.output,
                         "--set accelerator.sramm.capacity=1: accelerator.sramm: unknown key"))
        << unknownKey.output;
    CommandResult mismatch = runEtsim("run --platform tpu_v4_torus --trace " + trace);
    EXPECT_EQ(mismatch.code, 1);
    EXPECT_TRUE(contains(mismatch.output, "has 8 rank(s) but the platform \"tpu_v4_torus\" has 64"))
        << mismatch.output;
    std::string bad =
        dir.write("bad.yaml",
                  "ranks: 8\naccelerator: {preset: h100_sxm}\nfabric: {preset: tpu_torus}\n")
            .string();
    CommandResult badPlatform = runEtsim("run --platform " + bad + " --trace " + trace);
    EXPECT_EQ(badPlatform.code, 1);
    EXPECT_TRUE(
        contains(badPlatform.output, "the topology has 64 endpoints but the platform has 8 ranks"))
        << badPlatform.output;

    CommandResult quiet =
        runEtsim("run --platform hgx_h100 --trace " + trace + " --quiet --mode replay");
    EXPECT_EQ(quiet.code, 0) << quiet.output;
    EXPECT_FALSE(contains(quiet.output, "simulated time")) << quiet.output;
}

// The timeline's filters: two ranks in detail, a window, per-node and per-rank utilisation
// counters, the fabric's link tracks; every event inside the window.
TEST(RunCommand, TimelineFiltersAndAggregatedTracks)
{
    TempDir dir;
    std::string trace = generate(dir);
    std::string full = dir.file("full.json").string();
    CommandResult whole =
        runEtsim("run --quiet --platform hgx_h100 --trace " + trace + " --timeline " + full +
                 " --report " + dir.file("report.json").string());
    ASSERT_EQ(whole.code, 0) << whole.output;
    nlohmann::json report = nlohmann::json::parse(etsim::test::readFile(dir.file("report.json")));
    const double endUs = report["simulated_time_ns"].get<double>() / 1000.0;
    // Every rank drawn: the fabric's link tracks are on by default (auto).
    std::size_t fullLinks = 0;
    const nlohmann::json fullTimeline = nlohmann::json::parse(etsim::test::readFile(full));
    for (const auto& event : fullTimeline["traceEvents"])
        if (event["ph"] == "X" && event["pid"] == 8)
            ++fullLinks;
    EXPECT_GT(fullLinks, 0U);

    std::string part = dir.file("part.json").string();
    const std::string window = std::to_string(endUs / 4) + "us:" + std::to_string(endUs / 2) + "us";
    CommandResult filtered =
        runEtsim("run --quiet --platform hgx_h100 --trace " + trace + " --timeline " + part +
                 " --timeline-ranks 1,6-7 --timeline-links on --timeline-window " + window);
    ASSERT_EQ(filtered.code, 0) << filtered.output;
    nlohmann::json events = nlohmann::json::parse(etsim::test::readFile(part))["traceEvents"];
    std::set<int> slicesOf;
    std::set<std::string> processes;
    std::size_t counters = 0;
    std::size_t links = 0;
    for (const auto& event : events) {
        const std::string phase = event["ph"];
        if (phase == "M" && event["name"] == "process_name")
            processes.insert(event["args"]["name"].get<std::string>());
        if (phase == "M")
            continue;
        const double ts = event["ts"].get<double>();
        EXPECT_GE(ts, endUs / 4 - 1e-3);
        EXPECT_LT(ts, endUs / 2 + 1e-3);
        if (phase == "X" && event["pid"].get<int>() < 8)
            slicesOf.insert(event["pid"].get<int>());
        if (phase == "X" && event["pid"].get<int>() == 8)
            ++links;
        if (phase == "C") {
            ++counters;
            for (const char* series : {"compute", "memory", "communication"}) {
                EXPECT_GE(event["args"][series].get<double>(), 0.0);
                EXPECT_LE(event["args"][series].get<double>(), 1.0);
            }
        }
    }
    EXPECT_EQ(slicesOf, (std::set<int>{1, 6, 7}));
    EXPECT_TRUE(processes.count("node 0 (ranks 0-7, mean)")) << events.dump();
    EXPECT_TRUE(processes.count("rank 6"));
    EXPECT_FALSE(processes.count("rank 0"));
    EXPECT_GT(counters, 4U);
    EXPECT_GT(links, 0U);
    EXPECT_LT(etsim::test::readFile(part).size(), etsim::test::readFile(full).size());
}

TEST(RunCommand, TimelineOptionErrors)
{
    TempDir dir;
    std::string trace = generate(dir);
    const std::string run = "run --quiet --platform hgx_h100 --trace " + trace + " --timeline " +
                            dir.file("t.json").string();
    CommandResult noUnit = runEtsim(run + " --timeline-window 2:3ms");
    EXPECT_EQ(noUnit.code, 2);
    EXPECT_TRUE(contains(noUnit.output, "--timeline-window 2:3ms: \"2\" is not a time"))
        << noUnit.output;
    CommandResult noColon = runEtsim(run + " --timeline-window 2ms");
    EXPECT_EQ(noColon.code, 2);
    EXPECT_TRUE(contains(noColon.output, "expected START:END with units, e.g. 2ms:3ms"))
        << noColon.output;
    CommandResult backwards = runEtsim(run + " --timeline-window 3ms:2ms");
    EXPECT_EQ(backwards.code, 2);
    EXPECT_TRUE(contains(backwards.output, "the end (2 ms) must come after the start (3 ms)"))
        << backwards.output;
    CommandResult badRanks = runEtsim(run + " --timeline-ranks 1,x");
    EXPECT_EQ(badRanks.code, 2);
    EXPECT_TRUE(contains(badRanks.output, "\"x\" is not a rank or a range")) << badRanks.output;
    CommandResult outside = runEtsim(run + " --timeline-ranks 9");
    EXPECT_EQ(outside.code, 1);
    EXPECT_TRUE(
        contains(outside.output, "timeline rank 9: the platform \"hgx_h100\" has ranks 0 to 7"))
        << outside.output;
    CommandResult zeroSample = runEtsim(run + " --timeline-sample 0us");
    EXPECT_EQ(zeroSample.code, 2);
    EXPECT_TRUE(contains(zeroSample.output, "--timeline-sample 0us: must be at least 1 ps"))
        << zeroSample.output;
    CommandResult badLinks = runEtsim(run + " --timeline-links maybe");
    EXPECT_EQ(badLinks.code, 2);
    EXPECT_TRUE(contains(badLinks.output, "--timeline-links")) << badLinks.output;
    CommandResult withoutFile =
        runEtsim("run --platform hgx_h100 --trace " + trace + " --timeline-window 1us:2us");
    EXPECT_EQ(withoutFile.code, 2);
    EXPECT_TRUE(contains(withoutFile.output, "add --timeline FILE.json")) << withoutFile.output;
}

TEST(RunCommand, ListsPlatforms)
{
    CommandResult list = runEtsim("run --list-platforms");
    EXPECT_EQ(list.code, 0);
    EXPECT_EQ(list.output, "hgx_h100\nhgx_h100_4node\ntpu_v4_torus\nng1\ndgx_a100_cluster\n");
}

TEST(PlotCommand, RejectsWhatIsNotAReport)
{
    TempDir dir;
    std::string notReport = dir.write("x.json", "{\"a\": 1}").string();
    CommandResult plot = runEtsim("plot " + notReport + " -o " + dir.file("x.svg").string());
    EXPECT_EQ(plot.code, 1);
    EXPECT_TRUE(contains(plot.output, "not an etsim run report")) << plot.output;
    EXPECT_EQ(runEtsim("plot " + dir.file("none.json").string() + " -o x.svg").code, 2);
}

} // namespace
} // namespace etsim::apps
