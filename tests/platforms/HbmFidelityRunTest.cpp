// A whole-platform run with each HBM fidelity on the job bundled with the hgx_h100 preset (the
// Makefile's `run` target: a 4-layer transformer training step, hidden 2048, 16 heads, FFN
// 8192, vocabulary 32000, sequence 2048, micro-batch 2, data x tensor parallel 2 x 4,
// activations offloaded), once with the analytic HBM and once with the detailed one. The two
// must run the same nodes in the same order on every rank and agree on each rank's memory time
// within 15 %.
//
// The bundled job itself is too slow for a test at cycle level: its ranks move 69.6 GB through
// their HBM, which the detailed model took 3,525 CPU seconds to simulate (docs/hbm.md gives
// that run's figures: +1.89 % memory time, same node order, and the script that repeats it).
// The test runs its reduced form, named so below:
// the same generator settings with every size divided by 8 (hidden 256, FFN 1024, vocabulary
// 4000, sequence 256; 4 heads, the fewest tensor parallelism 4 divides) and 1 of its 4 layers,
// which moves 294 MB (37 MB per rank) since the on-chip residency model sends operands to HBM.
//
// Why 15 %: the analytic fidelity is the detailed model's streaming efficiency plus one idle
// latency per node (docs/hbm.md, "Two fidelities"; within 2 % on long DMA streams,
// HbmControllerTest). The reduced job's memory nodes are small, so the analytic idle latency
// per node weighs more than the detailed model's overlap of a node's first accesses: the
// detailed model measures -10.5 % on every rank (docs/hbm.md states it). The full-size job's
// nodes are about 64 times larger (their bytes scale with hidden x FFN or sequence x hidden),
// and there the two agree within 2 % (measured once, docs/hbm.md). Two runs take seconds
// (about 17 s of wall time on a loaded machine), hence the `integration` label.

#include "platforms/Job.h"
#include "platforms/Platform.h"
#include "platforms/PlatformConfig.h"
#include "tests/support/TempDir.h"
#include "workloads/Transformer.h"
#include "workloads/Workload.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <sys/wait.h>
#include <tuple>
#include <unistd.h>
#include <vector>

namespace etsim::platform {
namespace {

using etsim::test::TempDir;
namespace fs = std::filesystem;

struct RankFigures {
    std::uint64_t memoryPs = 0;
    std::uint64_t computePs = 0;
};

struct StepRun {
    bool finished = false;
    std::uint64_t nodes = 0;
    std::vector<RankFigures> ranks;
    // Per rank, the node names in order of their end time.
    std::map<std::uint32_t, std::vector<std::string>> order;
};

// The reduced form of the bundled job (see the top of this file); returns the trace prefix.
fs::path writeBundledJobReduced(const fs::path& folder)
{
    workloads::TransformerSpec spec;
    spec.model.layers = 1;   // bundled: 4
    spec.model.hidden = 256; // 2048
    spec.model.heads = 4;    // 16
    spec.model.ffn = 1024;   // 8192
    spec.model.vocab = 4000; // 32000
    spec.seqLen = 256;       // 2048
    spec.microBatch = 2;     // as bundled
    spec.parallel.dp = 2;    // as bundled
    spec.parallel.tp = 4;    // as bundled
    spec.offload = workloads::Offload::Activations;
    workloads::WriteOptions options;
    options.folder = folder;
    options.name = "step";
    return workloads::writeWorkload(workloads::Transformer(spec), options).prefix;
}

// A SystemC kernel runs once per process: each run is a child process, which leaves its
// figures and its timeline in `dir`.
StepRun runWith(const std::string& fidelity, const fs::path& trace, const TempDir& dir)
{
    fs::path figures = dir.path() / ("figures-" + fidelity + ".txt");
    fs::path timelinePath = dir.path() / ("timeline-" + fidelity + ".json");
    std::fflush(nullptr);
    pid_t pid = fork();
    if (pid == 0) {
        int code = 1;
        try {
            PlatformConfig config =
                loadPlatform("hgx_h100", {{"accelerator.hbm.fidelity", fidelity}});
            JobSpec job;
            job.trace = trace;
            JobOptions options;
            options.timeline.path = timelinePath.string();
            options.timeline.nodeTracks = false;
            options.timeline.linkTracks = false;
            RunReport report = runJob(config, job, options);
            std::ofstream out(figures);
            out << report.finished << ' ' << report.nodes << ' '
                << report.platform["accelerator"]["hbm"]["fidelity"].get<std::string>() << '\n';
            for (const RankBreakdown& rank : report.ranks)
                out << rank.memoryPs << ' ' << rank.computePs << '\n';
            code = out ? 0 : 1;
        } catch (const std::exception& error) {
            std::fprintf(stderr, "%s\n", error.what());
        }
        std::fflush(nullptr);
        _exit(code);
    }
    StepRun run;
    int status = 0;
    EXPECT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << fidelity << " run failed";
    std::ifstream in(figures);
    std::string ranFidelity;
    in >> run.finished >> run.nodes >> ranFidelity;
    EXPECT_EQ(ranFidelity, fidelity);
    RankFigures rank;
    while (in >> rank.memoryPs >> rank.computePs)
        run.ranks.push_back(rank);
    std::ifstream timelineFile(timelinePath);
    nlohmann::json timeline = nlohmann::json::parse(timelineFile);
    const nlohmann::json& events = timeline.is_array() ? timeline : timeline["traceEvents"];
    std::map<std::uint32_t, std::vector<std::tuple<double, double, std::string>>> slices;
    for (const nlohmann::json& e : events)
        if (e.value("ph", "") == "X" && e.contains("pid"))
            slices[e["pid"].get<std::uint32_t>()].emplace_back(
                e["ts"].get<double>(), e.value("dur", 0.0), e.value("name", ""));
    for (auto& [rankIndex, list] : slices) {
        std::stable_sort(list.begin(), list.end(), [](const auto& x, const auto& y) {
            return std::get<0>(x) + std::get<1>(x) < std::get<0>(y) + std::get<1>(y);
        });
        for (const auto& slice : list)
            run.order[rankIndex].push_back(std::get<2>(slice));
    }
    return run;
}

TEST(HbmFidelityRun, DetailedAndAnalyticHbmAgreeOnTheBundledJobReduced)
{
    TempDir dir;
    fs::path trace = writeBundledJobReduced(dir.path());
    StepRun analytic = runWith("analytic", trace, dir);
    StepRun detailed = runWith("detailed", trace, dir);
    ASSERT_TRUE(analytic.finished);
    ASSERT_TRUE(detailed.finished);
    EXPECT_EQ(analytic.nodes, detailed.nodes);
    ASSERT_EQ(analytic.order.size(), 8U);
    EXPECT_EQ(analytic.order, detailed.order);
    ASSERT_EQ(analytic.ranks.size(), 8U);
    ASSERT_EQ(detailed.ranks.size(), 8U);
    for (std::size_t r = 0; r < analytic.ranks.size(); ++r) {
        const RankFigures& a = analytic.ranks[r];
        const RankFigures& d = detailed.ranks[r];
        ASSERT_GT(a.memoryPs, 0U) << "rank " << r;
        double difference = static_cast<double>(d.memoryPs) / static_cast<double>(a.memoryPs) - 1;
        EXPECT_LE(std::abs(difference), 0.15) << "rank " << r << ": memory " << d.memoryPs
                                              << " ps detailed, " << a.memoryPs << " ps analytic";
        std::printf("rank %zu: memory %.3f us analytic, %.3f us detailed (%+.2f %%)\n",
                    r,
                    static_cast<double>(a.memoryPs) * 1e-6,
                    static_cast<double>(d.memoryPs) * 1e-6,
                    difference * 100);
    }
}

} // namespace
} // namespace etsim::platform
