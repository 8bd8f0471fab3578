// `mpirun -n K etsim run --partitions K` against the single-process run of the same job: the
// merged report must be the same, field by field, except what measures the host (wall time,
// SystemC delta cycles) and the command line. Label mpi; each case takes about a second.

#include "tests/support/RunCommand.h"
#include "tests/support/TempDir.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>
#include <vector>

namespace etsim::apps {
namespace {

using etsim::test::CommandResult;
using etsim::test::contains;
using etsim::test::runCommand;
using etsim::test::runEtsim;
using etsim::test::TempDir;

nlohmann::json readJson(const std::filesystem::path& path)
{
    std::ifstream in(path);
    return nlohmann::json::parse(in);
}

std::string mpirun(std::uint32_t processes)
{
    return "mpirun --allow-run-as-root --oversubscribe --bind-to none -n " +
           std::to_string(processes) + " " + ETSIM_BINARY + " ";
}

// Runs `job` in one process and in each of `counts` partitions; the reports must agree.
void expectSameReports(const TempDir& dir,
                       const std::string& job,
                       std::initializer_list<std::uint32_t> counts,
                       const std::string& by = "auto")
{
    const std::string single = dir.file("single.json").string();
    CommandResult one = runEtsim(job + " --quiet --report " + single);
    ASSERT_EQ(one.code, 0) << one.output;
    nlohmann::json expected = readJson(single);
    ASSERT_EQ(expected["outcome"], "finished");
    for (std::uint32_t count : counts) {
        SCOPED_TRACE("--partitions " + std::to_string(count) + " --partition-by " + by);
        const std::string merged = dir.file("merged" + std::to_string(count) + ".json").string();
        CommandResult run =
            runCommand("timeout 120 " + mpirun(count) + job + " --quiet --partitions " +
                       std::to_string(count) + " --partition-by " + by + " --report " + merged);
        ASSERT_EQ(run.code, 0) << run.output;
        nlohmann::json actual = readJson(merged);
        // Only the partitioned report says how the run was split.
        ASSERT_TRUE(actual.contains("partitions"));
        EXPECT_FALSE(expected.contains("partitions"));
        EXPECT_EQ(actual["partitions"]["count"], count);
        EXPECT_EQ(actual["partitions"]["ranks"].size(), count);
        std::uint64_t held = 0;
        for (const auto& ranks : actual["partitions"]["ranks"]) {
            EXPECT_GT(ranks.get<std::uint64_t>(), 0U);
            held += ranks.get<std::uint64_t>();
        }
        EXPECT_EQ(held, expected["ranks"].size());
        EXPECT_GT(actual["partitions"]["lookahead_ns"].get<double>(), 0.0);
        actual.erase("partitions");
        for (const char* host : {"wall_seconds", "events", "command_line"}) {
            expected.erase(host);
            actual.erase(host);
        }
        EXPECT_GT(expected["simulated_time_ns"].get<double>(), 0.0);
        for (auto& [key, value] : expected.items())
            EXPECT_EQ(actual[key], value) << key;
        EXPECT_EQ(actual.size(), expected.size());
    }
}

std::string generate(const TempDir& dir, const std::string& arguments)
{
    CommandResult gen =
        runEtsim("gen microbench " + arguments + " --out " + dir.path().string() + " --name job");
    EXPECT_EQ(gen.code, 0) << gen.output;
    return (dir.path() / "job").string();
}

TEST(PartitionRun, AllReduceInAnalyticalMatchesOneProcess)
{
    TempDir dir;
    const std::string trace =
        generate(dir, "--ranks 32 --size \"4 MiB\" --iterations 2 --compute-flops 1e9");
    expectSameReports(dir,
                      "run --platform hgx_h100_4node --set fabric.fidelity=analytical --trace " +
                          trace,
                      {2, 4});
}

TEST(PartitionRun, AstraUnawareMatchesOneProcessAcrossAnySplit)
{
    TempDir dir;
    const std::string trace = generate(dir, "--ranks 32 --size \"1 MiB\" --iterations 2");
    const std::string job =
        "run --platform hgx_h100_4node --set fabric.fidelity=astra_unaware --trace " + trace;
    expectSameReports(dir, job, {4}, "dim:0");
    expectSameReports(dir, job, {3}, "ranks");
}

// Flow: each process shares links among its own messages. Where no link carries messages of
// two processes (a ring all-reduce split by nodes), the run is the single-process run.
TEST(PartitionRun, FlowMatchesOneProcessWhereNoLinkCarriesTwoProcesses)
{
    TempDir dir;
    const std::string trace =
        generate(dir, "--ranks 32 --size \"4 MiB\" --iterations 2 --compute-flops 1e9");
    expectSameReports(dir, "run --platform hgx_h100_4node --trace " + trace, {2, 4});
}

// A crossbar shared by every rail carries the messages of both processes: each process's
// messages ran as if alone, so the run is faster than the single-process one, and the report
// says why its link figures are missing.
TEST(PartitionRun, FlowSaysWhenMessagesOfTwoProcessesMetOnALink)
{
    TempDir dir;
    const std::string trace = generate(dir, "--ranks 32 --size \"4 MiB\" --iterations 2");
    const std::string job =
        "run --platform hgx_h100_4node --set fabric.topology.dims[1].switch_bandwidth=100GB/s "
        "--quiet --trace " +
        trace;
    const std::string single = dir.file("single.json").string();
    CommandResult one = runEtsim(job + " --report " + single);
    ASSERT_EQ(one.code, 0) << one.output;
    const std::string merged = dir.file("merged.json").string();
    CommandResult run =
        runCommand("timeout 120 " + mpirun(2) + job + " --partitions 2 --report " + merged);
    ASSERT_EQ(run.code, 0) << run.output;
    const nlohmann::json expected = readJson(single);
    const nlohmann::json actual = readJson(merged);
    EXPECT_LT(actual["simulated_time_ns"].get<double>(),
              expected["simulated_time_ns"].get<double>());
    EXPECT_FALSE(expected["resources"].contains("links_unavailable"));
    EXPECT_EQ(actual["resources"]["links_unavailable"],
              "8 links carried messages of more than one process; a partitioned flow run "
              "shares a link only between the messages of one process, so messages of two "
              "processes that met on one ran as if alone (docs/partitioned-runs.md); run in one "
              "process for exact link figures and times");
    EXPECT_TRUE(actual["resources"]["busiest_links"].empty());
}

TEST(PartitionRun, EagerPointToPointMatchesOneProcess)
{
    TempDir dir;
    const std::string trace =
        generate(dir, "--ranks 32 --pattern ring --size \"16 KiB\" --iterations 3 --compute-us 2");
    expectSameReports(dir,
                      "run --platform hgx_h100_4node --set fabric.fidelity=analytical --trace " +
                          trace,
                      {2, 4});
}

// The timeline's events in a canonical order: a merged timeline holds the same events as the
// single-process one, in another order (each process's part after partition 0's own).
std::vector<std::string> sortedEvents(const std::filesystem::path& path)
{
    const nlohmann::json timeline = readJson(path);
    std::vector<std::string> events;
    for (const nlohmann::json& event : timeline.at("traceEvents"))
        events.push_back(event.dump());
    std::sort(events.begin(), events.end());
    return events;
}

// Runs `job` with `timeline` options in one process and in `count` partitions: the merged
// timeline holds exactly the single-process one's events, and no part file is left.
void expectSameTimeline(const TempDir& dir,
                        const std::string& job,
                        const std::string& timeline,
                        std::uint32_t count,
                        const std::string& by = "auto")
{
    SCOPED_TRACE("--partitions " + std::to_string(count) + " --partition-by " + by + " " +
                 timeline);
    const std::filesystem::path single = dir.file("single-timeline.json");
    CommandResult one = runEtsim(job + " --quiet " + timeline + " --timeline " + single.string());
    ASSERT_EQ(one.code, 0) << one.output;
    const std::filesystem::path parts = dir.file("tmp");
    std::filesystem::create_directories(parts);
    const std::filesystem::path merged = dir.file("merged-timeline.json");
    const std::string report = dir.file("merged-report.json").string();
    CommandResult run =
        runCommand("TMPDIR=" + parts.string() + " timeout 120 " +
                   "mpirun --allow-run-as-root --oversubscribe --bind-to none -x TMPDIR -n " +
                   std::to_string(count) + " " + ETSIM_BINARY + " " + job +
                   " --quiet --partitions " + std::to_string(count) + " --partition-by " + by +
                   " " + timeline + " --timeline " + merged.string() + " --report " + report);
    ASSERT_EQ(run.code, 0) << run.output;
    const std::vector<std::string> expected = sortedEvents(single);
    EXPECT_GT(expected.size(), 10U);
    EXPECT_EQ(sortedEvents(merged), expected);
    EXPECT_EQ(std::filesystem::file_size(merged), std::filesystem::file_size(single));
    EXPECT_EQ(readJson(report)["timeline"], merged.string());
    EXPECT_TRUE(std::filesystem::is_empty(parts)) << "a part of the timeline was left";
}

TEST(PartitionRun, TheTimelineHoldsTheSameEventsAsOneProcess)
{
    TempDir dir;
    const std::string trace =
        generate(dir, "--ranks 32 --size \"4 MiB\" --iterations 2 --compute-flops 1e9");
    const std::string job =
        "run --platform hgx_h100_4node --set fabric.fidelity=analytical --trace " + trace;
    // Every rank drawn with its dependency arrows, the utilisation counters per rank and per
    // node; then a few ranks of both processes, in a window of the run.
    expectSameTimeline(dir, job, "--timeline-links off", 2);
    expectSameTimeline(dir, job, "--timeline-links off", 4);
    expectSameTimeline(dir, job, "--timeline-ranks 3,20 --timeline-window 5us:60us", 2);
    // A node split between processes has no mean track, but everything else is drawn.
    expectSameTimeline(dir, job, "--timeline-links off --timeline-no-node-tracks", 4, "dim:0");
}

TEST(PartitionRun, TimelineTracksThatNeedEveryProcessAreRefused)
{
    TempDir dir;
    const std::string trace = generate(dir, "--ranks 32 --size \"1 MiB\"");
    const std::string job = "timeout 60 " + mpirun(2) +
                            "run --platform hgx_h100_4node --set fabric.fidelity=analytical "
                            "--quiet --trace " +
                            trace + " --partitions 2 --timeline " +
                            dir.file("timeline.json").string();
    CommandResult links = runCommand(job + " --timeline-links on");
    EXPECT_NE(links.code, 0) << links.output;
    EXPECT_TRUE(contains(links.output,
                         "--timeline-links on: a partitioned run draws no link tracks, because "
                         "a link's busy slices join the messages of ranks in every process"))
        << links.output;
    CommandResult split = runCommand(job + " --partition-by dim:0");
    EXPECT_NE(split.code, 0) << split.output;
    EXPECT_TRUE(contains(split.output,
                         "--timeline: node 0 (ranks 0-7) is split between partitions 0 and 1, "
                         "and its utilisation track is the mean over all its ranks: partition "
                         "by whole nodes (--partition-by nodes or auto) or leave the node "
                         "tracks out (--timeline-no-node-tracks)"))
        << split.output;
    EXPECT_FALSE(std::filesystem::exists(dir.file("timeline.json")));
}

// astra_aware keeps a FIFO queue per link: each link is timed by one process, and a message
// goes on in another process at the first link that process times (the switch's down link of
// a rank there). Splits by nodes, by GPU within the nodes, and uneven blocks of ranks.
TEST(PartitionRun, AstraAwareMatchesOneProcessAcrossAnySplit)
{
    TempDir dir;
    const std::string trace = generate(dir, "--ranks 32 --size \"1 MiB\" --iterations 2");
    const std::string job =
        "run --platform hgx_h100_4node --set fabric.fidelity=astra_aware --trace " + trace;
    expectSameReports(dir, job, {2, 4});
    expectSameReports(dir, job, {4}, "dim:0");
    expectSameReports(dir, job, {3}, "ranks");
}

// On a ring of 8, rank r sends to rank r + 4 (pairs of a strided group of 2): every message
// crosses four links, timed by up to three processes, and its send completes when the process
// that saw it arrive says so. An all-to-all (direct) queues messages of every process on each
// link.
TEST(PartitionRun, AstraAwareMessagesPassThroughOtherProcessesLinks)
{
    TempDir dir;
    const std::string platform = dir.file("ring8.yaml").string();
    std::ofstream(platform) << "name: ring8\nranks: 8\nranks_per_node: 2\n"
                               "accelerator: {preset: h100_sxm, hbm: {preset: hbm3_h100}}\n"
                               "fabric:\n  fidelity: astra_aware\n  topology:\n"
                               "    kind: multi_dim\n    dims:\n      - {kind: ring, size: 8, "
                               "bandwidth: \"100 GB/s\", latency: \"500 ns\"}\n"
                               "  collectives: {algorithms: {default: [direct]}}\n"
                               "driver: {mode: model}\n";
    const std::string far = generate(dir,
                                     "--ranks 8 --pattern pairwise --group-size 2 --group-layout "
                                     "strided --size \"64 KiB\" --iterations 3 --compute-us 1");
    expectSameReports(dir, "run --platform " + platform + " --trace " + far, {4, 3}, "ranks");
    TempDir other;
    const std::string all = generate(other, "--ranks 8 --collective all_to_all --size \"256 KiB\"");
    expectSameReports(other, "run --platform " + platform + " --trace " + all, {3}, "ranks");
}

// Replaces rank `rank`'s trace file of `trace` with point-to-point nodes, one per entry:
// (send?, peer, bytes), tag 0, no dependencies (posted in this order).
void rewriteRank(const TempDir& dir,
                 const std::string& trace,
                 std::uint32_t rank,
                 const std::vector<std::tuple<bool, std::uint32_t, std::uint64_t>>& messages)
{
    nlohmann::json nodes = nlohmann::json::array();
    for (const auto& [send, peer, bytes] : messages) {
        const std::uint32_t src = send ? rank : peer;
        const std::uint32_t dst = send ? peer : rank;
        nodes.push_back({{"id", nodes.size()},
                         {"name", (send ? "send." : "recv.") + std::to_string(nodes.size())},
                         {"type", send ? "COMM_SEND_NODE" : "COMM_RECV_NODE"},
                         {"ctrl_deps", nlohmann::json::array()},
                         {"data_deps", nlohmann::json::array()},
                         {"duration_micros", 0},
                         {"attr",
                          {{{"name", "is_cpu_op"}, {"bool_val", false}},
                           {{"name", "comm_src"}, {"int32_val", src}},
                           {{"name", "comm_dst"}, {"int32_val", dst}},
                           {{"name", "comm_size"}, {"int64_val", bytes}},
                           {{"name", "comm_tag"}, {"int32_val", 0}}}}});
    }
    const std::string json = dir.file("rank" + std::to_string(rank) + ".json").string();
    std::ofstream(json) << nlohmann::json{
        {"format", "etsim-trace-json/1"},
        {"nodes", nodes}}.dump();
    CommandResult back = runEtsim("trace convert --force " + json + " " + trace + "." +
                                  std::to_string(rank) + ".et");
    ASSERT_EQ(back.code, 0) << back.output;
}

// astra_aware point-to-point across three blocks of ranks (0-10, 11-21, 22-31 of
// hgx_h100_4node): rank 10's send to rank 5, both in the first process, crosses the second's
// links (up to GPU 5 of node 1, then down its rail); rank 0 sends 300 B and then 1 B to rank
// 11 on one tag, and the 1 B message arrives first (hops count whole ns: 936 against 937 ns),
// yet each must still match the recv posted in the same order.
TEST(PartitionRun, AstraAwareSendsMatchInPostingOrderWhateverRouteTheyTake)
{
    TempDir dir;
    const std::string trace = generate(dir, "--ranks 32 --pattern pairwise --size \"4 KiB\"");
    rewriteRank(dir, trace, 10, {{true, 5, 4096}, {false, 5, 4096}});
    rewriteRank(dir, trace, 5, {{true, 10, 4096}, {false, 10, 4096}});
    rewriteRank(dir, trace, 4, {{true, 1, 4096}, {false, 1, 4096}});
    rewriteRank(dir, trace, 1, {{true, 4, 4096}, {false, 4, 4096}});
    rewriteRank(dir, trace, 0, {{true, 11, 300}, {true, 11, 1}});
    rewriteRank(dir, trace, 11, {{false, 0, 300}, {false, 0, 1}});
    expectSameReports(dir,
                      "run --platform hgx_h100_4node --set fabric.fidelity=astra_aware --trace " +
                          trace,
                      {3, 2},
                      "ranks");
}

TEST(PartitionRun, TheProcessCountMustMatchThePlan)
{
    TempDir dir;
    const std::string trace = generate(dir, "--ranks 32 --size \"1 MiB\"");
    CommandResult run = runCommand("timeout 60 " + mpirun(2) +
                                   "run --platform hgx_h100_4node --set fabric.fidelity=analytical "
                                   "--quiet --trace " +
                                   trace + " --partitions 4");
    EXPECT_NE(run.code, 0) << run.output;
    EXPECT_TRUE(contains(run.output,
                         "--partitions 4: mpirun started 2 processes; start the run "
                         "with mpirun -n 4"))
        << run.output;
}

TEST(PartitionRun, ADeadlockNamesTheWaitingRankAndThePartitionOfItsPeer)
{
    TempDir dir;
    const std::string trace =
        generate(dir, "--ranks 32 --pattern ring --size \"16 KiB\" --compute-us 2");
    // Rank 31's send to rank 0 gets another tag: rank 0's recv can never match it.
    const std::string json = dir.file("r31.json").string();
    ASSERT_EQ(runEtsim("trace convert " + trace + ".31.et " + json).code, 0);
    nlohmann::json edited = readJson(json);
    for (auto& node : edited["nodes"])
        for (auto& attr : node["attr"])
            if (attr["name"] == "comm_tag")
                attr["int32_val"] = 5;
    std::ofstream(json) << edited.dump();
    CommandResult back = runEtsim("trace convert --force " + json + " " + trace + ".31.et");
    ASSERT_EQ(back.code, 0) << back.output;

    const std::string report = dir.file("report.json").string();
    CommandResult run = runCommand("timeout 60 " + mpirun(2) +
                                   "run --platform hgx_h100_4node --set fabric.fidelity=analytical "
                                   "--quiet --trace " +
                                   trace + " --partitions 2 --report " + report);
    EXPECT_EQ(run.code, 1) << run.output;
    nlohmann::json result = readJson(report);
    EXPECT_EQ(result["outcome"], "deadlock");
    const std::string problem = result["problem"];
    EXPECT_TRUE(contains(problem, "partition 0: deadlock: 1 of 16 ranks cannot finish")) << problem;
    EXPECT_TRUE(contains(problem,
                         "no matching send from rank 31 (simulated by partition 1) "
                         "arrived"))
        << problem;
}

} // namespace
} // namespace etsim::apps
