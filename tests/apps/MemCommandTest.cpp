// `etsim mem` as a user runs it: exit codes, text and JSON reports with numbers computed by hand
// (see tests/models/hbm/MemTrafficTest.cpp for the derivations), traces and their errors.

#include "tests/support/RunCommand.h"
#include "tests/support/TempDir.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

namespace etsim {
namespace {

using test::CommandResult;
using test::contains;

CommandResult mem(const std::string& arguments)
{
    return test::runEtsim("mem " + arguments);
}

// stdout and stderr are merged; the JSON object is the text from the first '{'.
nlohmann::json jsonOf(const CommandResult& result)
{
    std::size_t start = result.output.find('{');
    if (start == std::string::npos) {
        ADD_FAILURE() << "no JSON in: " << result.output;
        return {};
    }
    return nlohmann::json::parse(result.output.substr(start));
}

constexpr const char* quietConfig = "preset: hbm3_6400\n"
                                    "fidelity: detailed\n"
                                    "controller: {refresh: none}\n";

TEST(MemCommand, HelpShowsTheDefaults)
{
    CommandResult help = mem("--help");
    EXPECT_EQ(help.code, 0);
    for (const char* line : {"--preset TEXT=hbm3_6400",
                             "--fidelity TEXT=detailed",
                             "--pattern TEXT=sequential",
                             "--size TEXT=64 B",
                             "--count UINT=10000",
                             "--outstanding UINT=16",
                             "--trace",
                             "--json"})
        EXPECT_TRUE(contains(help.output, line)) << line << "\n" << help.output;
}

TEST(MemCommand, SequentialStreamReportsRowHitsAsText)
{
    test::TempDir dir;
    std::string config = dir.write("quiet.yaml", quietConfig).string();
    CommandResult run = mem("--config " + config + " --count 2048 --size 32 --outstanding 0");
    ASSERT_EQ(run.code, 0) << run.output;
    EXPECT_TRUE(contains(run.output, "memory: hbm3_6400, detailed, peak 819.2 GB/s")) << run.output;
    EXPECT_TRUE(contains(run.output, "requests: 2048 (2048 reads, 0 writes), 65536 B"))
        << run.output;
    EXPECT_TRUE(contains(run.output,
                         "row buffer: 1920 hits, 128 misses (idle bank), 0 conflicts; hit rate "
                         "93.8 %"))
        << run.output;
    EXPECT_TRUE(contains(run.output, "latency (ns): min 33.125")) << run.output;
}

TEST(MemCommand, AnalyticClosedLoopAsJson)
{
    CommandResult run = mem("--fidelity analytic --count 3 --outstanding 1 --size 64 --json");
    ASSERT_EQ(run.code, 0) << run.output;
    nlohmann::json report = jsonOf(run);
    EXPECT_EQ(report["memory"]["preset"], "hbm3_6400");
    EXPECT_EQ(report["memory"]["fidelity"], "analytic");
    EXPECT_EQ(report["requests"], 3);
    EXPECT_EQ(report["lastDonePs"], 99630);
    EXPECT_DOUBLE_EQ(report["latencyNs"]["p50"].get<double>(), 33.21);
    EXPECT_DOUBLE_EQ(report["bandwidthBytesPerSecond"].get<double>(), 192.0 / 99630e-12);
    EXPECT_TRUE(report["rowBuffer"].is_null());
    EXPECT_EQ(report["traffic"]["source"], "generator");
    EXPECT_EQ(report["latencyNs"]["histogram"][2]["count"], 3);
    EXPECT_EQ(report["latencyNs"]["histogram"][2]["upToNs"], 40.0);
}

TEST(MemCommand, RandomWritesAndRateAreReported)
{
    CommandResult run = mem("--pattern random --size 32 --count 500 --write-fraction 0.5 "
                            "--rate \"100 GB/s\" --json");
    ASSERT_EQ(run.code, 0) << run.output;
    nlohmann::json report = jsonOf(run);
    EXPECT_EQ(report["reads"], 250);
    EXPECT_EQ(report["writes"], 250);
    EXPECT_EQ(report["traffic"]["pattern"], "random");
    EXPECT_DOUBLE_EQ(report["traffic"]["rateBytesPerSecond"].get<double>(), 100e9);
    // 16 in flight bound the throughput below the offered 100 GB/s (Little's law): about
    // 16 × 32 B / mean latency.
    double bandwidth = report["bandwidthBytesPerSecond"].get<double>();
    double meanSeconds = report["latencyNs"]["mean"].get<double>() * 1e-9;
    EXPECT_LT(bandwidth, 100e9);
    EXPECT_NEAR(bandwidth, 16 * 32 / meanSeconds, 0.05 * bandwidth);
    EXPECT_LT(report["rowBuffer"]["hitRate"].get<double>(), 0.05);
}

TEST(MemCommand, CopyPatternReportsItsBursts)
{
    CommandResult text = mem("--pattern copy --burst 4 --count 16 --size 64 --range \"1 KiB\"");
    ASSERT_EQ(text.code, 0) << text.output;
    EXPECT_TRUE(contains(text.output,
                         "traffic: copy, 64 B requests, 50.0 % writes in bursts of 4, 16 "
                         "outstanding"))
        << text.output;
    EXPECT_TRUE(contains(text.output, "requests: 16 (8 reads, 8 writes), 1024 B")) << text.output;

    CommandResult json = mem("--pattern copy --count 200 --size 64 --json");
    ASSERT_EQ(json.code, 0) << json.output;
    nlohmann::json report = jsonOf(json);
    EXPECT_EQ(report["traffic"]["pattern"], "copy");
    EXPECT_EQ(report["traffic"]["burst"], 64);
    EXPECT_DOUBLE_EQ(report["traffic"]["writeFraction"].get<double>(), 0.5);
    // Bursts of 64 by default: reads 0-63, writes 64-127, reads 128-191, writes 192-199.
    EXPECT_EQ(report["reads"], 128);
    EXPECT_EQ(report["writes"], 72);
}

TEST(MemCommand, ReplaysAnStlTrace)
{
    test::TempDir dir;
    std::string config = dir.write("quiet.yaml", quietConfig).string();
    std::string trace = dir.write("t.stl",
                                  "# three requests\n"
                                  "0: read 0x0\n"
                                  "160: read 0x1000\n"
                                  "320: (64) write 0x100000 ffff\n")
                            .string();
    CommandResult run = mem("--config " + config + " --trace " + trace + " --size 32 --json");
    ASSERT_EQ(run.code, 0) << run.output;
    nlohmann::json report = jsonOf(run);
    EXPECT_EQ(report["traffic"]["source"], "trace");
    EXPECT_EQ(report["traffic"]["format"], "stl");
    EXPECT_EQ(report["reads"], 2);
    EXPECT_EQ(report["writes"], 1);
    EXPECT_EQ(report["bytesWritten"], 64);
    EXPECT_DOUBLE_EQ(report["traffic"]["clockHz"].get<double>(), 1.6e9);
    // 0x0 and 0x1000 are column 0 and 1 of row 0 in channel 0, PC 0, bank group 0: a miss,
    // then a hit 100 ns later (nCL + nBL = 13.75 ns).
    EXPECT_DOUBLE_EQ(report["latencyNs"]["min"].get<double>(), 13.75);
    EXPECT_EQ(report["rowBuffer"]["hits"], 1);
}

TEST(MemCommand, RelativeStlByExtension)
{
    test::TempDir dir;
    std::string trace = dir.write("t.rstl", "10: read 0x0\n10: read 0x40\n").string();
    CommandResult run = mem("--trace " + trace + " --json --clock \"1 GHz\"");
    ASSERT_EQ(run.code, 0) << run.output;
    nlohmann::json report = jsonOf(run);
    EXPECT_EQ(report["traffic"]["format"], "rstl");
    // Issued at 10 and 20 ns.
    EXPECT_EQ(report["firstIssuePs"], 10000);
}

TEST(MemCommand, MalformedTraceIsAnInputProblem)
{
    test::TempDir dir;
    std::string trace = dir.write("bad.stl", "0: read 0x0\n1: rd 0x40\n").string();
    CommandResult run = mem("--trace " + trace);
    EXPECT_EQ(run.code, 1) << run.output;
    EXPECT_TRUE(
        contains(run.output, "etsim mem: " + trace + ":2: expected read or write, got \"rd\""))
        << run.output;
}

TEST(MemCommand, ConfigThatBreaksARuleIsAnInputProblem)
{
    test::TempDir dir;
    std::string config = dir.write("bad.yaml", "preset: hbm3_6400\ntiming: {rc: 60}\n").string();
    CommandResult run = mem("--config " + config);
    EXPECT_EQ(run.code, 1) << run.output;
    EXPECT_TRUE(contains(run.output,
                         "timing.rc: tRC (60) must be at least tRAS + tRP (45 + 26 = 71 cycles)"))
        << run.output;
}

TEST(MemCommand, BadUsageCannotStart)
{
    struct Case {
        const char* arguments;
        const char* message;
    };
    for (const Case& c : {
             Case{"--pattern zigzag", "--pattern zigzag: use sequential, strided, random, copy"},
             Case{"--preset hbm9", "--preset hbm9: use hbm2, hbm2e_a100"},
             Case{"--fidelity exact", "--fidelity exact: use analytic, detailed"},
             Case{"--size 0", "--size 0: a request moves at least 1 B"},
             Case{"--size lots", "--size: "},
             Case{"--write-fraction 2", "the write fraction must be in [0, 1]"},
             Case{"--pattern copy --write-fraction 0.5",
                  "--write-fraction: the copy pattern writes every block it reads"},
             Case{"--burst 8", "--burst: only the copy pattern issues bursts; add --pattern copy"},
             Case{"--pattern copy --burst 0", "the copy burst must be at least 1 request"},
             Case{"--trace /nonexistent/t.stl", "--trace /nonexistent/t.stl: cannot open"},
             Case{"--config /nonexistent/m.yaml", "--config /nonexistent/m.yaml: cannot open"},
             Case{"--base 0xzz", "--base 0xzz: give an address"},
             Case{"--range \"16 B\"", "the address range (16 B) is smaller than one request"},
             Case{"--trace /dev/null --format csv", "--format csv: use stl"},
             Case{"--no-such-option", "--no-such-option"},
         }) {
        CommandResult run = mem(c.arguments);
        EXPECT_EQ(run.code, 2) << c.arguments << "\n" << run.output;
        EXPECT_TRUE(contains(run.output, c.message)) << c.arguments << "\n" << run.output;
    }
}

} // namespace
} // namespace etsim
