// What `etsim run`, `etsim gen` and `etsim trace convert` leave behind when things go wrong:
// every run that started writes its own report (a failed, interrupted or deadlocked one too),
// never a partial file, and never an earlier run's report; an unwritable --report is refused
// before the run; SIGINT, SIGTERM and SIGHUP stop a run cleanly (docs/report.md, Outcomes).
// The fabric is co-simulated by the reference peer, which can stall or send a bad frame on cue.

#include "tests/support/RunCommand.h"
#include "tests/support/TempDir.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <spawn.h>
#include <sys/wait.h>
#include <thread>

extern char** environ;

namespace etsim::apps {
namespace {

namespace fs = std::filesystem;
using etsim::test::CommandResult;
using etsim::test::contains;
using etsim::test::readFile;
using etsim::test::runCommand;
using etsim::test::runEtsim;
using etsim::test::TempDir;

// A 2-rank trace: rank 0 sends `messages` messages of 1 MiB to rank 1, one after another.
std::string writeTrace(const TempDir& dir, int messages)
{
    std::string rank0 = R"({"format": "etsim-trace-json/1", "metadata": null, "nodes": [)";
    std::string rank1 = rank0;
    for (int i = 0; i < messages; ++i) {
        const std::string deps = i == 0 ? "" : R"(, "ctrl_deps": [)" + std::to_string(i) + "]";
        const std::string attrs = R"(, "attr": [{"name": "comm_src", "int64_val": 0},)"
                                  R"( {"name": "comm_dst", "int64_val": 1},)"
                                  R"( {"name": "comm_size", "int64_val": 1048576},)"
                                  R"( {"name": "comm_tag", "int64_val": )" +
                                  std::to_string(i) + "}]";
        const std::string sep = i == 0 ? "" : ",";
        rank0 += sep + R"({"id": )" + std::to_string(i + 1) + R"(, "name": "send", "type": )" +
                 R"("COMM_SEND_NODE")" + deps + attrs + "}";
        rank1 += sep + R"({"id": )" + std::to_string(i + 1) + R"(, "name": "recv", "type": )" +
                 R"("COMM_RECV_NODE")" + deps + attrs + "}";
    }
    rank0 += "]}\n";
    rank1 += "]}\n";
    dir.write("json.0.json", rank0);
    dir.write("json.1.json", rank1);
    for (int rank = 0; rank < 2; ++rank) {
        const std::string r = std::to_string(rank);
        CommandResult convert =
            runEtsim("trace convert " + dir.file("json." + r + ".json").string() + " " +
                     dir.file("job." + r + ".et").string());
        EXPECT_EQ(convert.code, 0) << convert.output;
    }
    return dir.file("job").string();
}

// A 2-rank platform whose fabric is the reference peer, started with `peerFlags`.
std::string writePlatform(const TempDir& dir, const std::string& peerFlags)
{
    return dir
        .write("platform.yaml",
               "name: cosim2\nranks: 2\naccelerator: {preset: h100_sxm}\n"
               "driver: {mode: model}\n"
               "fabric:\n  fidelity: flow\n  topology:\n    kind: multi_dim\n    dims:\n"
               "      - {kind: switch, size: 2, bandwidth: \"50 GB/s\", latency: \"1 us\"}\n"
               "  cosim: {peer: \"unix:" +
                   dir.file("peer.sock").string() + "\", spawn: \"" + ETSIM_REF_PEER +
                   " --endpoint {endpoint} " + peerFlags + "\", lookahead: 1 us, timeout: 30 s}\n")
        .string();
}

nlohmann::json readJson(const fs::path& file)
{
    std::ifstream in(file);
    return nlohmann::json::parse(in);
}

std::vector<std::string> listing(const fs::path& folder)
{
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(folder))
        names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

TEST(RunOutputs, AFailedRunReplacesAnEarlierReportWithItsOwn)
{
    TempDir dir;
    const std::string trace = writeTrace(dir, 40);
    const fs::path report = dir.write("report.json",
                                      R"({"outcome": "finished"})"
                                      "\n");
    const fs::path timeline = dir.file("timeline.json");
    // The peer sends a malformed frame after 5 requests: the run fails in the middle.
    CommandResult run = runEtsim(
        "run --quiet --platform " + writePlatform(dir, "--bad-frame-after 5") + " --trace " +
        trace + " --report " + report.string() + " --timeline " + timeline.string());
    EXPECT_EQ(run.code, 1) << run.output;
    const nlohmann::json json = readJson(report);
    EXPECT_EQ(json["outcome"], "failed");
    const std::string problem = json["problem"];
    EXPECT_TRUE(contains(problem, "cosim proxy")) << problem;
    EXPECT_TRUE(contains(run.output, problem)) << run.output;
    EXPECT_GT(json["simulated_time_ns"].get<double>(), 0.0);
    EXPECT_EQ(json["ranks"].size(), 2U);
    // The timeline is complete JSON up to the failure.
    EXPECT_FALSE(readJson(timeline)["traceEvents"].empty());
    EXPECT_EQ(listing(dir.path()).size(),
              std::vector<std::string>({"job.0.et",
                                        "job.1.et",
                                        "json.0.json",
                                        "json.1.json",
                                        "platform.yaml",
                                        "report.json",
                                        "timeline.json"})
                  .size());
}

TEST(RunOutputs, AKilledPeerLeavesTheReportAsWellAsTheTimeline)
{
    TempDir dir;
    const std::string trace = writeTrace(dir, 40);
    const fs::path report = dir.file("report.json");
    const fs::path timeline = dir.file("timeline.json");
    // The peer stalls after 5 requests and is killed 1.5 s later, well within the timeout.
    const std::string platform =
        dir.write("platform.yaml", readFile(writePlatform(dir, "--stall-after 5"))).string();
    std::string yaml = readFile(platform);
    yaml.replace(yaml.find("spawn: \"") + 8, 0, "timeout -s KILL 1.5 ");
    dir.write("platform.yaml", yaml);
    CommandResult run =
        runEtsim("run --quiet --platform " + platform + " --trace " + trace + " --report " +
                 report.string() + " --timeline " + timeline.string());
    EXPECT_EQ(run.code, 1) << run.output;
    ASSERT_TRUE(fs::exists(report)) << run.output;
    const nlohmann::json json = readJson(report);
    EXPECT_EQ(json["outcome"], "failed");
    EXPECT_TRUE(contains(json["problem"], "ref-peer")) << json["problem"];
    EXPECT_FALSE(readJson(timeline)["traceEvents"].empty());
}

TEST(RunOutputs, AnInputErrorAlsoReplacesAnEarlierReport)
{
    TempDir dir;
    const std::string trace = writeTrace(dir, 1);
    const fs::path report = dir.write("report.json",
                                      R"({"outcome": "finished"})"
                                      "\n");
    const fs::path platform = dir.write("bad.yaml",
                                        "name: x\nranks: 2\naccelerator: {preset: "
                                        "no_such_chip}\n");
    CommandResult run = runEtsim("run --quiet --platform " + platform.string() + " --trace " +
                                 trace + " --report " + report.string());
    EXPECT_EQ(run.code, 1) << run.output;
    const nlohmann::json json = readJson(report);
    EXPECT_EQ(json["outcome"], "failed");
    EXPECT_TRUE(contains(json["problem"], "no_such_chip")) << json["problem"];
}

TEST(RunOutputs, AnUnwritableReportIsRefusedBeforeTheRunWithTheReason)
{
    TempDir dir;
    const std::string trace = writeTrace(dir, 1);
    CommandResult missing =
        runEtsim("run --platform " + writePlatform(dir, "") + " --trace " + trace + " --report " +
                 dir.file("no/such/folder/report.json").string());
    EXPECT_EQ(missing.code, 2) << missing.output;
    EXPECT_TRUE(contains(missing.output,
                         "--report " + dir.file("no/such/folder/report.json").string() +
                             ": cannot create: No such file or directory"))
        << missing.output;
    EXPECT_FALSE(contains(missing.output, "simulated time")) << missing.output;

    CommandResult folder = runEtsim("run --platform " + writePlatform(dir, "") + " --trace " +
                                    trace + " --report " + dir.path().string());
    EXPECT_EQ(folder.code, 2) << folder.output;
    EXPECT_TRUE(contains(folder.output, ": is a folder; give a file name")) << folder.output;
}

// --stats writes the stats tree of every model (docs/outputs.md): JSON, or text for a .txt
// name. It names its own file, and a failed run leaves no stats of an earlier run behind.
TEST(RunOutputs, StatsAreWrittenAsJsonOrTextAndAFailedRunLeavesNone)
{
    TempDir dir;
    CommandResult gen =
        runEtsim("gen microbench --ranks 8 --compute-flops 1e12 --out " + dir.path().string());
    ASSERT_EQ(gen.code, 0) << gen.output;
    const std::string trace = dir.file("microbench").string();
    const std::string run = "run --quiet --platform hgx_h100 --trace " + trace;

    CommandResult json = runEtsim(run + " --stats " + dir.file("stats.json").string());
    ASSERT_EQ(json.code, 0) << json.output;
    const nlohmann::json tree = readJson(dir.file("stats.json"));
    // One GEMM per rank, streamed from HBM in DMA chunks the HBM counted.
    const nlohmann::json& rank0 = tree["platform"]["rank0"];
    EXPECT_EQ(rank0["accelerator"]["compute_nodes"]["value"], 1);
    EXPECT_EQ(rank0["accelerator"]["dma_transfers"]["kind"], "counter");
    EXPECT_GT(rank0["accelerator"]["dma_transfers"]["value"].get<std::uint64_t>(), 1U);
    EXPECT_EQ(rank0["hbm"]["transactions"]["value"],
              rank0["accelerator"]["dma_transfers"]["value"]);
    EXPECT_EQ(tree["platform"]["fabric"]["collective_time"]["count"], 1);

    CommandResult text = runEtsim(run + " --stats " + dir.file("stats.txt").string());
    ASSERT_EQ(text.code, 0) << text.output;
    std::ifstream in(dir.file("stats.txt"));
    const std::string lines((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_TRUE(contains(lines, "platform.rank0.accelerator.compute_nodes ")) << lines;
    EXPECT_TRUE(contains(lines, "platform.fabric.collective_time.count ")) << lines;

    CommandResult same = runEtsim(run + " --stats " + dir.file("out.json").string() + " --report " +
                                  dir.file("out.json").string());
    EXPECT_EQ(same.code, 2) << same.output;
    EXPECT_TRUE(contains(same.output, "name the same file")) << same.output;
    CommandResult empty = runEtsim(run + " --stats \"\"");
    EXPECT_EQ(empty.code, 2) << empty.output;
    EXPECT_TRUE(contains(empty.output, "--stats needs a file name")) << empty.output;
    CommandResult partitioned =
        runEtsim(run + " --partitions 2 --stats " + dir.file("p.json").string());
    EXPECT_EQ(partitioned.code, 2) << partitioned.output;
    EXPECT_TRUE(contains(partitioned.output, "leave out --partitions")) << partitioned.output;

    // A run that fails on its input replaces nothing with stale stats.
    const fs::path bad =
        dir.write("bad.yaml", "name: x\nranks: 8\naccelerator: {preset: no_such_chip}\n");
    CommandResult failed = runEtsim("run --quiet --platform " + bad.string() + " --trace " + trace +
                                    " --stats " + dir.file("stats.json").string());
    EXPECT_EQ(failed.code, 1) << failed.output;
    EXPECT_FALSE(fs::exists(dir.file("stats.json")));
}

// Four ranks, each with its compute engine on its own reference peer, which all stall after
// their first GEMM, with a 1 s timeout. The first proxy to time out ends the run; the others
// are told to terminate together and waited for together (2 s), not 2 s + 1 s each in turn
// (which took 10 s here, and 27 s for 8 peers with a 5 s timeout).
TEST(RunOutputs, SeveralStalledPeersEndTheRunWithinOneTimeoutAndOneShutdownWait)
{
    TempDir dir;
    CommandResult gen = runEtsim("gen transformer --layers 1 --hidden 512 --heads 8 --ffn 2048 "
                                 "--seq-len 512 --dp 4 --tp 1 --out " +
                                 dir.path().string() + " --name step");
    ASSERT_EQ(gen.code, 0) << gen.output;
    const fs::path platform = dir.write(
        "platform.yaml",
        "name: stalls\nranks: 4\naccelerator:\n  preset: h100_sxm\n  compute:\n    cosim:\n"
        "      peer: \"unix:" +
            dir.file("engine{rank}.sock").string() + "\"\n      spawn: \"" + ETSIM_REF_PEER +
            " --endpoint {endpoint} --stall-after 1\"\n      lookahead: 1 us\n"
            "      timeout: 1 s\n"
            "fabric:\n  topology:\n    kind: multi_dim\n    dims:\n"
            "      - {kind: switch, size: 4, bandwidth: \"50 GB/s\", latency: \"1 us\"}\n");
    const fs::path report = dir.file("report.json");
    const auto start = std::chrono::steady_clock::now();
    CommandResult run = runEtsim("run --quiet --platform " + platform.string() + " --trace " +
                                 dir.file("step").string() + " --report " + report.string());
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_EQ(run.code, 1) << run.output;
    EXPECT_TRUE(contains(run.output, "no frame from the peer within 1000 ms")) << run.output;
    EXPECT_EQ(readJson(report)["outcome"], "failed");
    EXPECT_LT(seconds, 6.0) << run.output;
}

// Runs `command` through the shell inside a private mount namespace with a 16 KiB tmpfs at
// `folder`, then lists what is left in it; nullopt when the system allows no such namespace.
std::optional<CommandResult> onAFullDisk(const fs::path& folder, const std::string& command)
{
    fs::create_directories(folder);
    CommandResult probe = runCommand("unshare -rm true");
    if (probe.code != 0)
        return std::nullopt;
    return runCommand("unshare -rm sh -c 'mount -t tmpfs -o size=16k tmpfs " + folder.string() +
                      " && " + command + "; echo \"exit $?\"; echo left: $(ls -A " +
                      folder.string() + ")'");
}

TEST(RunOutputs, AFullDiskFailsEachOutputWithTheReasonAndLeavesNoPartialFile)
{
    TempDir dir;
    const std::string trace = writeTrace(dir, 40);
    const fs::path full = dir.file("full");
    // The timeline of 40 messages is larger than 16 KiB.
    std::optional<CommandResult> run = onAFullDisk(
        full,
        std::string(ETSIM_BINARY) + " run --quiet --platform " + writePlatform(dir, "") +
            " --trace " + trace + " --timeline " + (full / "timeline.json").string());
    if (!run)
        GTEST_SKIP() << "no private mount namespace here (unshare -rm refused)";
    EXPECT_TRUE(contains(run->output, "No space left on device")) << run->output;
    EXPECT_TRUE(contains(run->output, "exit 1") || contains(run->output, "exit 2")) << run->output;
    EXPECT_TRUE(contains(run->output, "left:\n")) << run->output;

    // etsim gen: rank files of a transformer step are larger than 16 KiB.
    std::optional<CommandResult> gen =
        onAFullDisk(full,
                    std::string(ETSIM_BINARY) +
                        " gen transformer --layers 1 --hidden 512 --heads 8 --ffn "
                        "2048 --seq-len 512 --dp 2 --tp 1 --out " +
                        full.string() + " --name step");
    EXPECT_TRUE(contains(gen->output, "No space left on device")) << gen->output;
    EXPECT_FALSE(contains(gen->output, "exit 0")) << gen->output;
    EXPECT_TRUE(contains(gen->output, "left:\n")) << gen->output;

    // etsim trace convert: 40 nodes of pretty JSON are larger than 16 KiB.
    std::optional<CommandResult> convert =
        onAFullDisk(full,
                    std::string(ETSIM_BINARY) + " trace convert " + trace + ".0.et " +
                        (full / "out.json").string());
    EXPECT_TRUE(contains(convert->output, "No space left on device")) << convert->output;
    EXPECT_FALSE(contains(convert->output, "exit 0")) << convert->output;
    EXPECT_TRUE(contains(convert->output, "left:\n")) << convert->output;
}

// Starts etsim in the background with its output in `log`; returns its process id.
pid_t startEtsim(const std::string& arguments, const fs::path& log)
{
    const std::string line =
        std::string(ETSIM_BINARY) + " " + arguments + " >" + log.string() + " 2>&1";
    const char* argv[] = {"/bin/sh", "-c", line.c_str(), nullptr};
    pid_t pid = -1;
    // exec in the shell so that the signal reaches etsim itself.
    const std::string exec = "exec " + line;
    argv[2] = exec.c_str();
    EXPECT_EQ(::posix_spawn(&pid, "/bin/sh", nullptr, nullptr, const_cast<char**>(argv), environ),
              0);
    return pid;
}

class RunSignal : public testing::TestWithParam<int> {};

INSTANTIATE_TEST_SUITE_P(Signals,
                         RunSignal,
                         testing::Values(SIGINT, SIGTERM, SIGHUP),
                         [](const testing::TestParamInfo<int>& signal) {
                             return std::string(signal.param == SIGINT    ? "Int"
                                                : signal.param == SIGTERM ? "Term"
                                                                          : "Hup");
                         });

// The peer stalls after 5 requests, with a 30 s timeout: the run waits on it when the signal
// comes, and must still end within moments, tell the peer to terminate, and write a valid
// timeline and a report that says "interrupted".
TEST_P(RunSignal, StopsTheRunCleanlyWithReportTimelineAndExitCode)
{
    TempDir dir;
    const std::string trace = writeTrace(dir, 40);
    const fs::path report = dir.file("report.json");
    const fs::path timeline = dir.file("timeline.json");
    const fs::path log = dir.file("log.txt");
    const pid_t etsim =
        startEtsim("run --quiet --platform " + writePlatform(dir, "--stall-after 5") + " --trace " +
                       trace + " --report " + report.string() + " --timeline " + timeline.string(),
                   log);
    // The timeline's temporary file appears once the run is set up (signals are then watched).
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    auto started = [&] {
        for (const std::string& name : listing(dir.path()))
            if (name.rfind(".timeline.json.", 0) == 0)
                return true;
        return false;
    };
    while (!started() && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::this_thread::sleep_for(std::chrono::milliseconds(500)); // into the stall
    const auto signalled = std::chrono::steady_clock::now();
    ASSERT_EQ(::kill(etsim, GetParam()), 0);
    int status = 0;
    ASSERT_EQ(::waitpid(etsim, &status, 0), etsim);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - signalled).count();
    const std::string output = readFile(log);
    ASSERT_TRUE(WIFEXITED(status)) << output;
    EXPECT_EQ(WEXITSTATUS(status), 128 + GetParam()) << output;
    EXPECT_LT(seconds, 10.0) << "the stop waited for the peer's timeout";
    const std::string name = GetParam() == SIGINT    ? "SIGINT"
                             : GetParam() == SIGTERM ? "SIGTERM"
                                                     : "SIGHUP";
    EXPECT_TRUE(contains(output, "interrupted by " + name + " at simulated time ")) << output;
    const nlohmann::json json = readJson(report);
    EXPECT_EQ(json["outcome"], "interrupted");
    EXPECT_TRUE(contains(json["problem"], name)) << json["problem"];
    EXPECT_GT(json["simulated_time_ns"].get<double>(), 0.0);
    EXPECT_FALSE(readJson(timeline)["traceEvents"].empty());
    // The peer was told to terminate; stalled, it did not answer, which is warned about.
    EXPECT_TRUE(contains(output,
                         "the peer failed at shutdown: did not answer TERMINATE within "
                         "2000 ms (stalled)"))
        << output;
}

} // namespace
} // namespace etsim::apps
