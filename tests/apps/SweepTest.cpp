// `etsim sweep` and `etsim compare` as a user runs them: a small sweep in parallel gives the
// same per-point results as the points run one by one, a failing point is recorded while the
// others finish, --resume reuses finished points, and two reports compare.

#include "apps/sweep/Scheduler.h"
#include "tests/support/ErrorOf.h"
#include "tests/support/RunCommand.h"
#include "tests/support/TempDir.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

namespace etsim::sweep {
namespace {

namespace fs = std::filesystem;
using etsim::test::CommandResult;
using etsim::test::readFile;
using etsim::test::TempDir;

CommandResult etsim(const std::string& arguments)
{
    return etsim::test::runCommand(std::string(ETSIM_BINARY) + " " + arguments);
}

bool contains(const std::string& text, const std::string& part)
{
    return text.find(part) != std::string::npos;
}

nlohmann::json readJson(const fs::path& path)
{
    return nlohmann::json::parse(readFile(path));
}

// 8 ranks, two all-reduces of 4 MiB each behind a GEMM: small enough to run in a blink, and
// both parameters change its time.
constexpr const char* generate =
    "generate: [microbench, --ranks, 8, --collective, all_reduce, --size, 4 MiB, "
    "--iterations, 2, --compute-flops, 1e11]\n";

fs::path writeSpec(const TempDir& dir, const std::string& efficiencies)
{
    return dir.write("spec.yaml",
                     std::string("name: small\nplatform: hgx_h100\n") + generate +
                         "parameters:\n"
                         "  - {key: \"fabric.topology.dims[0].bandwidth\", values: [200 GB/s, 450 "
                         "GB/s]}\n"
                         "  - {key: accelerator.tensor.pipe_efficiency, values: [" +
                         efficiencies + "]}\n");
}

TEST(Sweep, ParallelPointsMatchThePointsRunOneByOne)
{
    TempDir dir;
    const fs::path spec = writeSpec(dir, "0.5, 1");
    const fs::path out = dir.file("out");
    CommandResult sweep = etsim("sweep " + spec.string() + " -j 2 -o " + out.string());
    ASSERT_EQ(sweep.code, 0) << sweep.output;
    EXPECT_TRUE(contains(sweep.output, "etsim sweep: trace: generated in")) << sweep.output;
    EXPECT_TRUE(contains(sweep.output, "[5/5]")) << sweep.output;

    const nlohmann::json results = readJson(out / "results.json");
    EXPECT_EQ(results["etsim_version"], "0.1.0");
    EXPECT_EQ(results["spec"], readFile(spec));
    ASSERT_EQ(results["trace_files"].size(), 8U);
    EXPECT_TRUE(contains(results["trace_files"][0].get<std::string>(), "trace.0.et "));
    ASSERT_EQ(results["points"].size(), 4U);
    EXPECT_EQ(results["points"][3]["parameters"]["fabric.topology.dims[0].bandwidth"], "450 GB/s");
    EXPECT_EQ(results["points"][3]["parameters"]["accelerator.tensor.pipe_efficiency"], "1");

    std::vector<double> times;
    for (int i = 0; i < 4; ++i) {
        const auto& point = results["points"][i];
        EXPECT_EQ(point["status"], "ok");
        const std::string id = point["id"];
        // The same point, run on its own.
        const fs::path alone = dir.file("alone" + id + ".json");
        CommandResult run = etsim(
            "run --platform hgx_h100 --trace " + (out / "trace" / "trace").string() +
            " --quiet --report " + alone.string() + " --set \"fabric.topology.dims[0].bandwidth=" +
            point["parameters"]["fabric.topology.dims[0].bandwidth"].get<std::string>() +
            "\" --set accelerator.tensor.pipe_efficiency=" +
            point["parameters"]["accelerator.tensor.pipe_efficiency"].get<std::string>());
        ASSERT_EQ(run.code, 0) << run.output;
        const nlohmann::json own = readJson(alone);
        const nlohmann::json swept = readJson(out / "points" / id / "report.json");
        EXPECT_EQ(own["simulated_time_ns"], swept["simulated_time_ns"]) << id;
        EXPECT_EQ(own["ranks"], swept["ranks"]) << id;
        EXPECT_EQ(own["simulated_time_ns"].get<double>(), point["simulated_time_ns"].get<double>());
        times.push_back(point["simulated_time_ns"]);
    }
    // More bandwidth and more efficiency are both faster, so the parameters took effect.
    EXPECT_GT(times[0], times[1]);
    EXPECT_GT(times[0], times[2]);
    EXPECT_GT(times[2], times[3]);
    const double base = results["base"]["simulated_time_ns"];
    EXPECT_DOUBLE_EQ(results["points"][3]["speedup"].get<double>(), base / times[3]);

    const std::string csv = readFile(out / "results.csv");
    EXPECT_TRUE(contains(csv,
                         "id,fabric.topology.dims[0].bandwidth,accelerator.tensor.pipe_efficiency,"
                         "status"))
        << csv;
    EXPECT_TRUE(contains(csv, "\n003,450 GB/s,1,ok,0,")) << csv;
    EXPECT_TRUE(contains(readFile(out / "report.md"), "| 1 | 003 | 450 GB/s | 1 |"));
    EXPECT_TRUE(contains(readFile(out / "breakdown.svg"), "<svg"));
    EXPECT_TRUE(contains(readFile(out / "time_vs_accelerator_tensor_pipe_efficiency.svg"),
                         "simulated time against accelerator.tensor.pipe_efficiency"));
    EXPECT_EQ(readFile(out / "spec.yaml"), readFile(spec));
}

TEST(Sweep, AFailingPointIsRecordedAndTheOthersFinishThenResumeSkipsThem)
{
    TempDir dir;
    // Efficiency 2 is outside (0, 1]: those two points fail when their platform loads.
    const fs::path spec = writeSpec(dir, "1, 2");
    const fs::path out = dir.file("out");
    CommandResult sweep = etsim("sweep " + spec.string() + " -j 2 -o " + out.string());
    EXPECT_EQ(sweep.code, 1) << sweep.output;
    EXPECT_TRUE(contains(sweep.output, "etsim sweep: 2 run(s) failed; see results.csv"))
        << sweep.output;
    nlohmann::json results = readJson(out / "results.json");
    ASSERT_EQ(results["points"].size(), 4U);
    for (int i : {0, 2})
        EXPECT_EQ(results["points"][i]["status"], "ok") << i;
    for (int i : {1, 3}) {
        EXPECT_EQ(results["points"][i]["status"], "failed") << i;
        EXPECT_EQ(results["points"][i]["exit_code"], 1) << i;
        EXPECT_TRUE(contains(results["points"][i]["error"], "accelerator.tensor.pipe_efficiency"))
            << results["points"][i]["error"];
        EXPECT_FALSE(results["points"][i].contains("simulated_time_ns"));
    }
    EXPECT_TRUE(contains(readFile(out / "report.md"), "## Points without results"));

    // Without --resume the folder is not overwritten.
    CommandResult again = etsim("sweep " + spec.string() + " -o " + out.string());
    EXPECT_EQ(again.code, 2) << again.output;
    EXPECT_TRUE(contains(again.output, "already holds a sweep (points/); pass --resume"))
        << again.output;

    // Resume: finished points (and the trace) are reused untouched; failed ones run again.
    const auto stamp = [&](const std::string& id) {
        return fs::last_write_time(out / "points" / id / "report.json");
    };
    const auto before0 = stamp("000");
    const auto before2 = stamp("002");
    const auto beforeBase = stamp("base");
    const auto beforeTrace = fs::last_write_time(out / "trace" / "trace.0.et");
    CommandResult resumed = etsim("sweep " + spec.string() + " -j 2 --resume -o " + out.string());
    EXPECT_EQ(resumed.code, 1) << resumed.output;
    EXPECT_TRUE(contains(resumed.output, "trace: reused")) << resumed.output;
    EXPECT_TRUE(contains(resumed.output, "000: reused")) << resumed.output;
    EXPECT_TRUE(contains(resumed.output, "001: failed (exit code 1)")) << resumed.output;
    EXPECT_EQ(stamp("000"), before0);
    EXPECT_EQ(stamp("002"), before2);
    EXPECT_EQ(stamp("base"), beforeBase);
    EXPECT_EQ(fs::last_write_time(out / "trace" / "trace.0.et"), beforeTrace);
    results = readJson(out / "results.json");
    EXPECT_EQ(results["points"][0]["status"], "reused");
    EXPECT_GT(results["points"][0]["simulated_time_ns"].get<double>(), 0.0);

    // A point whose parameters changed is not reused: edit the spec, point 001 now runs.
    writeSpec(dir, "1, 0.5");
    CommandResult edited = etsim("sweep " + spec.string() + " --resume -o " + out.string());
    EXPECT_EQ(edited.code, 0) << edited.output;
    EXPECT_TRUE(contains(edited.output, "000: reused")) << edited.output;
    EXPECT_TRUE(contains(edited.output, "001: ok")) << edited.output;
    EXPECT_EQ(stamp("000"), before0);
}

TEST(Sweep, ReportsSpecErrorsAndMissingFiles)
{
    TempDir dir;
    const fs::path spec = dir.write("bad.yaml",
                                    "platform: hgx_h100\ntrace: t\nparameters:\n"
                                    "  - {key: a, values: []}\n");
    CommandResult bad = etsim("sweep " + spec.string());
    EXPECT_EQ(bad.code, 1) << bad.output;
    EXPECT_TRUE(contains(bad.output,
                         spec.string() + ":4:22: parameters[0].values: must hold at "
                                         "least one value"))
        << bad.output;
    const fs::path noPlatform = dir.write("p.yaml", "platform: nowhere\ntrace: t\n");
    CommandResult unknown = etsim("sweep " + noPlatform.string());
    EXPECT_EQ(unknown.code, 1) << unknown.output;
    EXPECT_TRUE(contains(unknown.output,
                         "platform: nowhere is neither a file (relative to the "
                         "spec) nor a bundled preset (hgx_h100"))
        << unknown.output;
    CommandResult missing = etsim("sweep " + dir.file("none.yaml").string());
    EXPECT_EQ(missing.code, 2) << missing.output;
    EXPECT_TRUE(contains(missing.output, "none.yaml: no such file")) << missing.output;
    CommandResult help = etsim("sweep --help");
    EXPECT_EQ(help.code, 0);
    EXPECT_TRUE(contains(help.output, "--resume")) << help.output;
}

TEST(Sweep, SchedulerRecordsAChildThatCannotRunAndStartsNoMoreThanAsked)
{
    TempDir dir;
    std::vector<PointJob> jobs;
    for (int i = 0; i < 3; ++i) {
        PointJob job;
        job.id = std::to_string(i);
        job.folder = dir.file(job.id);
        // A shell stands in for etsim: each job records how many siblings are running.
        job.arguments = {"-c",
                         "ls " + dir.path().string() + "/*/running 2>/dev/null | wc -l > " +
                             job.folder.string() + "/seen; touch " + job.folder.string() +
                             "/running; sleep 0.3; rm " + job.folder.string() + "/running; " +
                             (i == 1 ? "echo broken >&2; exit 3"
                                     : "touch " + job.folder.string() + "/report.json")};
        job.parameters = {{"i", i}};
        jobs.push_back(job);
    }
    SchedulerOptions options;
    options.executable = "/bin/sh";
    options.jobs = 1;
    std::size_t calls = 0;
    options.onPointDone = [&](const PointOutcome&, std::size_t done, std::size_t total) {
        EXPECT_EQ(done, ++calls);
        EXPECT_EQ(total, 3U);
    };
    const SchedulerResult result = runPoints(jobs, options);
    EXPECT_FALSE(result.interrupted);
    EXPECT_EQ(calls, 3U);
    EXPECT_EQ(result.outcomes[0].status, PointStatus::Ok);
    EXPECT_EQ(result.outcomes[1].status, PointStatus::Failed);
    EXPECT_EQ(result.outcomes[1].exitCode, 3);
    EXPECT_EQ(result.outcomes[1].error, "broken");
    EXPECT_EQ(result.outcomes[2].status, PointStatus::Ok);
    for (const PointJob& job : jobs)
        EXPECT_EQ(readFile(job.folder / "seen"), "0\n") << job.id;
    EXPECT_TRUE(isFinished(jobs[0]));
    EXPECT_FALSE(isFinished(jobs[1]));

    options.executable = dir.file("no-such-binary");
    EXPECT_EQ(etsim::test::errorOf([&] { runPoints({jobs[1]}, options); }),
              "cannot start " + dir.file("no-such-binary").string() +
                  " for point 1: No such file or directory");
}

TEST(Compare, PutsTwoReportsSideBySide)
{
    TempDir dir;
    CommandResult gen = etsim("gen microbench --ranks 8 --collective all_reduce --size \"4 MiB\" "
                              "--out " +
                              dir.path().string() + " --name t");
    ASSERT_EQ(gen.code, 0) << gen.output;
    const std::string trace = (dir.path() / "t").string();
    for (const std::string bandwidth : {"450", "225"}) {
        CommandResult run =
            etsim("run --platform hgx_h100 --trace " + trace + " --quiet --report " +
                  dir.file(bandwidth + ".json").string() +
                  " --set \"fabric.topology.dims[0].bandwidth=" + bandwidth + " GB/s\"");
        ASSERT_EQ(run.code, 0) << run.output;
    }
    const std::string a = dir.file("450.json").string();
    const std::string b = dir.file("225.json").string();
    CommandResult compare =
        etsim("compare " + a + " " + b + " --svg " + dir.file("c.svg").string() + " --json " +
              dir.file("c.json").string());
    ASSERT_EQ(compare.code, 0) << compare.output;
    EXPECT_TRUE(contains(compare.output, "speed-up")) << compare.output;
    const nlohmann::json table = readJson(dir.file("c.json"));
    EXPECT_EQ(table["base"]["id"], a);
    EXPECT_EQ(table["points"][0]["id"], b);
    const double speedup = table["points"][0]["speedup"];
    EXPECT_LT(speedup, 0.8);
    EXPECT_GT(speedup, 0.4);
    EXPECT_TRUE(contains(readFile(dir.file("c.svg")), "<title>" + b + " exposed communication"));

    CommandResult one = etsim("compare " + a);
    EXPECT_EQ(one.code, 2) << one.output;
    dir.write("bad.json", "{\"schema_version\": 2}");
    CommandResult bad = etsim("compare " + a + " " + dir.file("bad.json").string());
    EXPECT_EQ(bad.code, 1) << bad.output;
    EXPECT_TRUE(contains(bad.output, "bad.json: not an etsim run report of schema_version 1"))
        << bad.output;
}

} // namespace
} // namespace etsim::sweep
