// Whole runs: every preset with a generated trace that fits it, the shared traces that fit a
// preset, hand-computed small cases, and the errors of a job that cannot run.

#include "platforms/Job.h"
#include "platforms/Platform.h"
#include "platforms/PlatformConfig.h"
#include "tests/support/ErrorOf.h"
#include "tests/support/ScKernel.h"
#include "tests/support/ScTest.h"
#include "tests/support/SharedTraces.h"
#include "tests/support/SmallTransformer.h"
#include "tests/support/TempDir.h"
#include "workloads/Transformer.h"
#include "workloads/Workload.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <sys/resource.h>

namespace etsim::platform {
namespace {

using etsim::test::errorOf;
using etsim::test::ScTest;
using etsim::test::TempDir;
namespace fs = std::filesystem;

constexpr const char* twoRanks = R"(name: pair
ranks: 2
accelerator: {preset: h100_sxm}
fabric:
  fidelity: analytical
  topology:
    kind: multi_dim
    dims:
      - {kind: switch, size: 2, bandwidth: "100 GB/s", latency: "1 us"}
driver:
  mode: replay
)";

// A workload written rank by rank by a function.
class Scripted final : public workloads::Workload {
public:
    Scripted(std::uint32_t ranks, std::function<void(std::uint32_t, workloads::RankEmitter&)> emit)
        : ranks(ranks), emit(std::move(emit))
    {
    }
    std::uint32_t rankCount() const override { return ranks; }
    std::string description() const override { return "scripted test workload"; }
    std::vector<workloads::CommGroup> groupsOf(std::uint32_t /*rank*/) const override { return {}; }
    void
    forEachGroup(const std::function<void(const workloads::CommGroup&)>& /*visit*/) const override
    {
    }
    void emitRank(std::uint32_t rank, workloads::RankEmitter& out) const override
    {
        emit(rank, out);
    }

private:
    std::uint32_t ranks;
    std::function<void(std::uint32_t, workloads::RankEmitter&)> emit;
};

JobSpec job(const fs::path& trace, std::uint32_t replicate = 0)
{
    JobSpec spec;
    spec.trace = trace;
    spec.replicate = replicate;
    return spec;
}

fs::path write(const workloads::Workload& workload, const TempDir& dir)
{
    workloads::WriteOptions options;
    options.folder = dir.path();
    options.name = "job";
    return workloads::writeWorkload(workload, options).prefix;
}

fs::path transformer(std::uint32_t dp, std::uint32_t tp, const TempDir& dir)
{
    return etsim::test::writeSmallTransformer(dp, tp, dir.path());
}

void expectConsistent(const RunReport& report, std::uint32_t ranks)
{
    ASSERT_TRUE(report.finished) << report.problem;
    ASSERT_EQ(report.ranks.size(), ranks);
    EXPECT_GT(report.simulatedPs, 0U);
    for (const RankBreakdown& rank : report.ranks) {
        EXPECT_EQ(rank.computePs + rank.memoryPs + rank.exposedCommPs + rank.idlePs, rank.finishPs);
        EXPECT_LE(rank.finishPs, report.simulatedPs);
        EXPECT_GT(rank.computePs, 0U);
    }
    ASSERT_FALSE(report.traceFiles.empty());
    EXPECT_EQ(report.traceFiles.front().crc32.size(), 8U);
    EXPECT_EQ(report.traceFiles.front().sha256.size(), 64U);
    EXPECT_GT(report.traceFiles.front().bytes, 0U);
}

void runPreset(const std::string& preset, std::uint32_t dp, std::uint32_t tp)
{
    TempDir dir;
    PlatformConfig config = loadPlatform(preset);
    RunReport report = runJob(config, job(transformer(dp, tp, dir)));
    expectConsistent(report, dp * tp);
    EXPECT_EQ(report.traceFiles.size(), dp * tp);
    ASSERT_FALSE(report.collectives.empty());
    EXPECT_EQ(report.collectives.front().type, "all_reduce");
    EXPECT_GT(report.resources.tensorBusy, 0.0);
    EXPECT_LT(report.resources.tensorBusy, 1.0);
    EXPECT_GT(report.resources.hbmUtilisation, 0.0);
    EXPECT_LT(report.resources.hbmUtilisation, 1.0);
    EXPECT_FALSE(report.resources.busiestLinks.empty());
    EXPECT_EQ(report.platformName, preset);
}

TEST_F(ScTest, Hgx8GpuRunsADataAndTensorParallelStep)
{
    runPreset("hgx_h100", 2, 4);
}

TEST_F(ScTest, Hgx4NodeRunsADataAndTensorParallelStep)
{
    runPreset("hgx_h100_4node", 4, 8);
}

TEST_F(ScTest, TpuTorusRunsADataAndTensorParallelStep)
{
    runPreset("tpu_v4_torus", 16, 4);
}

TEST_F(ScTest, Ng1RunsADataAndTensorParallelStep)
{
    runPreset("ng1", 9, 8);
}

// Replay: rank 0 computes 10 us then 5 us; rank 1 computes 20 us. Nothing else happens.
// --profile (JobOptions::profile): the report says how the run's wall time divides among the
// parts of the platform, each part entered as often as its models were called. (That measuring
// changes nothing of the result is RunCommand.ProfileReportsWallTimePerPartAndTheSameResult:
// one SystemC run per test process.)
TEST_F(ScTest, AProfiledRunReportsWallTimePerPart)
{
    TempDir dir;
    JobOptions options;
    options.profile = true;
    const RunReport profiled =
        runJob(loadPlatform("hgx_h100"), job(transformer(2, 4, dir)), options);
    ASSERT_TRUE(profiled.finished) << profiled.problem;
    ASSERT_TRUE(profiled.profile.has_value());
    const WallProfileSummary& profile = *profiled.profile;
    ASSERT_EQ(profile.parts.size(), 5U);
    std::map<std::string, WallShare> parts;
    double sum = profile.otherSeconds;
    for (const WallShare& part : profile.parts) {
        parts[part.part] = part;
        sum += part.seconds;
        EXPECT_GE(part.seconds, 0.0) << part.part;
    }
    EXPECT_EQ(profile.parts.front().part, "driver");
    // Every rank's driver steps and hears back; every compute node reaches an accelerator and
    // every collective the fabric. The analytic HBM is priced inside the accelerator, and no
    // peer is attached.
    EXPECT_GE(parts["driver"].entries, 8U);
    EXPECT_GE(parts["accelerator"].entries, profiled.nodes / 2);
    EXPECT_GT(parts["fabric"].entries, 0U);
    EXPECT_EQ(parts["cosim"].entries, 0U);
    EXPECT_GT(parts["driver"].seconds, 0.0);
    // The parts and `other` divide the measured time, which lies within the run's wall time.
    EXPECT_NEAR(sum, profile.seconds, 1e-9);
    EXPECT_GT(profile.seconds, 0.0);
    EXPECT_LE(profile.seconds, profiled.wallSeconds + 1e-3);

    const nlohmann::ordered_json json = reportToJson(profiled, {}, "test");
    ASSERT_TRUE(json.contains("profile"));
    EXPECT_EQ(json["profile"]["parts"]["fabric"]["entries"].get<std::uint64_t>(),
              parts["fabric"].entries);
    RunReport plain = profiled;
    plain.profile.reset();
    EXPECT_FALSE(reportToJson(plain, {}, "test").contains("profile"));
}

// The split of a partitioned run, in both reports; absent from a one-process report.
TEST(RunReport, SaysHowAPartitionedRunWasSplit)
{
    RunReport report;
    report.outcome = "finished";
    report.finished = true;
    std::ostringstream plainText;
    writeReportText(plainText, report);
    EXPECT_EQ(plainText.str().find("partitions"), std::string::npos);
    EXPECT_FALSE(reportToJson(report, {}, "test").contains("partitions"));

    PartitionSummary split;
    split.count = 2;
    split.scheme = "by the outermost dimension (dimension 3)";
    split.ranks = {32768, 32768};
    split.lookaheadPs = 10'000'000;
    report.partitions = split;
    std::ostringstream text;
    writeReportText(text, report);
    EXPECT_NE(text.str().find("2 partitions (by the outermost dimension (dimension 3)), ranks "
                              "per partition: 32768, 32768; lookahead 10.000 us\n"),
              std::string::npos)
        << text.str();
    const nlohmann::ordered_json json = reportToJson(report, {}, "test");
    EXPECT_EQ(json["partitions"]["count"], 2);
    EXPECT_EQ(json["partitions"]["split"], split.scheme);
    EXPECT_EQ(json["partitions"]["ranks"].get<std::vector<std::uint32_t>>(),
              (std::vector<std::uint32_t>{32768, 32768}));
    EXPECT_EQ(json["partitions"]["lookahead_ns"], 10000.0);
}

TEST_F(ScTest, ReplayedComputeIsExact)
{
    TempDir dir;
    Scripted workload(2, [](std::uint32_t rank, workloads::RankEmitter& out) {
        if (rank == 0) {
            std::uint64_t first = out.delay("a", 10, {});
            out.delay("b", 5, {first});
        } else {
            out.delay("c", 20, {});
        }
    });
    RunReport report = runJob(loadPlatformString(twoRanks, "pair.yaml"), job(write(workload, dir)));
    expectConsistent(report, 2);
    EXPECT_EQ(report.simulatedPs, 20000000U);
    EXPECT_EQ(report.ranks[0].finishPs, 15000000U);
    EXPECT_EQ(report.ranks[0].computePs, 15000000U);
    EXPECT_EQ(report.ranks[0].idlePs, 0U);
    EXPECT_EQ(report.ranks[1].computePs, 20000000U);
    EXPECT_EQ(report.nodes, 3U);
    EXPECT_TRUE(report.collectives.empty());
}

// Replay, then an all-reduce: rank 0 arrives 10 us before rank 1, and waits for it; the wait
// is exposed communication. The collective starts at the first post (10 us).
TEST_F(ScTest, WaitingForACollectiveIsExposedCommunication)
{
    TempDir dir;
    Scripted workload(2, [](std::uint32_t rank, workloads::RankEmitter& out) {
        std::uint64_t work = out.delay("work", rank == 0 ? 10 : 20, {});
        out.collective("ar", et::CollectiveType::AllReduce, 1 << 20, "", {work});
    });
    PlatformConfig config = loadPlatformString(twoRanks, "pair.yaml", {{"driver.mode", "model"}});
    RunReport report = runJob(config, job(write(workload, dir)));
    expectConsistent(report, 2);
    ASSERT_EQ(report.collectives.size(), 1U);
    EXPECT_EQ(report.collectives[0].count, 1U);
    EXPECT_EQ(report.collectives[0].bytes, 1U << 20);
    const RankBreakdown& early = report.ranks[0];
    const RankBreakdown& late = report.ranks[1];
    EXPECT_EQ(early.computePs, 10000000U);
    EXPECT_EQ(late.computePs, 20000000U);
    EXPECT_EQ(early.exposedCommPs, early.finishPs - 10000000U);
    EXPECT_EQ(late.exposedCommPs, late.finishPs - 20000000U);
    EXPECT_GE(early.exposedCommPs, 10000000U);
    EXPECT_EQ(early.astraExposedCommPs, early.exposedCommPs);
    EXPECT_EQ(report.collectives[0].timePs, report.simulatedPs - 10000000U);
}

// A receive posted first and matched at the end, with 5,000 nodes finishing while it waits:
// the breakdown is swept as they finish (platforms/BreakdownSweep.h), opening the receive
// from its driver, and still counts it as communication from its post.
TEST_F(ScTest, ABreakdownSweptWhileAReceiveWaitsCountsItFromItsPost)
{
    TempDir dir;
    Scripted workload(2, [](std::uint32_t rank, workloads::RankEmitter& out) {
        if (rank == 0)
            out.recv("r", 1, 1 << 20, 1, {});
        std::uint64_t last = out.delay("d0", 1, {});
        for (int i = 1; i < (rank == 0 ? 5000 : 6000); ++i)
            last = out.delay("d" + std::to_string(i), 1, {last});
        if (rank == 1)
            out.send("s", 0, 1 << 20, 1, {last});
    });
    PlatformConfig config = loadPlatformString(twoRanks, "pair.yaml", {{"driver.mode", "model"}});
    RunReport report = runJob(config, job(write(workload, dir)));
    expectConsistent(report, 2);
    const RankBreakdown& waiting = report.ranks[0];
    EXPECT_EQ(waiting.nodes, 5001U);
    EXPECT_GT(waiting.finishPs, std::uint64_t{6000} * 1000000);
    EXPECT_EQ(waiting.computePs, std::uint64_t{5000} * 1000000);
    EXPECT_EQ(waiting.overlapPs, std::uint64_t{5000} * 1000000);
    EXPECT_EQ(waiting.commPs, waiting.finishPs);
    EXPECT_EQ(waiting.exposedCommPs, waiting.finishPs - std::uint64_t{5000} * 1000000);
    EXPECT_EQ(waiting.idlePs, 0U);
}

TEST_F(ScTest, ReplicateRunsOneRankAsMany)
{
    TempDir dir;
    Scripted workload(1, [](std::uint32_t, workloads::RankEmitter& out) {
        std::uint64_t work = out.delay("work", 7, {});
        out.collective("ar", et::CollectiveType::AllReduce, 4096, "", {work});
    });
    fs::path prefix = write(workload, dir);
    RunReport report =
        runJob(loadPlatformString(twoRanks, "pair.yaml", {{"driver.communication_mode", "model"}}),
               job(prefix, 2));
    expectConsistent(report, 2);
    ASSERT_EQ(report.collectives.size(), 1U);
    EXPECT_EQ(report.ranks[0].computePs, 7000000U);
    EXPECT_EQ(report.traceFiles.size(), 1U);
}

// Replicas read through one bounded set of readers: more replicas than the process may hold
// files open (a 65,536-rank replica under a descriptor limit of 20,000) still read every node.
TEST(TraceInput, ReplicasNeedNotAllHoldTheirFileOpen)
{
    TempDir dir;
    Scripted workload(1, [](std::uint32_t, workloads::RankEmitter& out) {
        out.delay("a", 1, {});
        out.delay("b", 2, {});
    });
    fs::path prefix = write(workload, dir);
    rlimit saved{};
    ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &saved), 0);
    rlimit lowered = saved;
    lowered.rlim_cur = 256;
    ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &lowered), 0);
    std::string failure;
    try {
        constexpr std::uint32_t replicas = 1000;
        TraceInput input(prefix, replicas);
        std::vector<et::NodeSource> sources = input.sources();
        et::TraceNode node;
        for (int step = 0; step < 2; ++step)
            for (std::uint32_t rank = 0; rank < replicas && failure.empty(); ++rank)
                if (!sources[rank](node) || node.name != (step == 0 ? "a" : "b"))
                    failure = "rank " + std::to_string(rank) + " node " + std::to_string(step);
    } catch (const std::exception& error) {
        failure = error.what();
    }
    setrlimit(RLIMIT_NOFILE, &saved);
    EXPECT_EQ(failure, "");
}

TEST_F(ScTest, RankCountMismatchIsAClearError)
{
    TempDir dir;
    Scripted workload(3,
                      [](std::uint32_t, workloads::RankEmitter& out) { out.delay("work", 1, {}); });
    fs::path prefix = write(workload, dir);
    EXPECT_EQ(errorOf([&] { runJob(loadPlatformString(twoRanks, "pair.yaml"), job(prefix)); }),
              "rank count mismatch: the trace " + prefix.string() +
                  " has 3 rank(s) but the platform \"pair\" has 2; pick a platform with 3 ranks");
    EXPECT_EQ(errorOf([&] { runJob(loadPlatformString(twoRanks, "pair.yaml"), job(prefix, 2)); }),
              "--replicate 2 runs a one-rank trace, but " + prefix.string() +
                  " has 3 ranks; drop --replicate");
}

TEST_F(ScTest, OneRankTraceOnALargerPlatformSuggestsReplicate)
{
    TempDir dir;
    Scripted workload(1,
                      [](std::uint32_t, workloads::RankEmitter& out) { out.delay("work", 1, {}); });
    fs::path prefix = write(workload, dir);
    EXPECT_EQ(errorOf([&] { runJob(loadPlatform("hgx_h100"), job(prefix)); }),
              "rank count mismatch: the trace " + prefix.string() +
                  " has 1 rank(s) but the platform \"hgx_h100\" has 8; run a one-rank trace as "
                  "many ranks with --replicate 8");
}

// The C++ API a user's sc_main calls, with a replaced component kind.
TEST_F(ScTest, RegistryReplacesAComponentKind)
{
    TempDir dir;
    Scripted workload(2,
                      [](std::uint32_t, workloads::RankEmitter& out) { out.delay("work", 3, {}); });
    TraceInput input(write(workload, dir));
    Simulation simulation;
    StatGroup stats("platform");
    ComponentRegistry registry = ComponentRegistry::defaults();
    int memories = 0;
    registry.setMemory([&memories, base = ComponentRegistry::defaults()](const std::string& name,
                                                                         const RankContext& rank) {
        ++memories;
        return base.makeMemory(name, rank);
    });
    Platform platform(
        "platform", loadPlatformString(twoRanks, "pair.yaml"), simulation, stats, registry);
    platform.attach(input.sources());
    RunResult result = simulation.run();
    EXPECT_EQ(result.outcome, RunOutcome::AllIdle);
    EXPECT_EQ(memories, 2);
    ASSERT_EQ(platform.drivers().size(), 2U);
    EXPECT_EQ(platform.drivers()[1]->finishPs(), 3000000U);
    EXPECT_TRUE(platform.idle());
    EXPECT_EQ(errorOf([&] { platform.attach(input.sources()); }),
              "platform: a job is already attached");
}

// A target that takes one binding, in front of the native accelerator.
class OneBindingAccelerator final : public Component {
public:
    explicit OneBindingAccelerator(std::unique_ptr<Component> inner) : inner(std::move(inner)) {}
    TargetSocket& target() override { return inner->target(); }
    bool idle() const override { return inner->idle(); }

private:
    std::unique_ptr<Component> inner;
};

// A compute node, then a load: both of the driver's sockets carry work to the accelerator.
std::uint64_t runComputeThenLoad(bool oneBinding, bool& fanInBuilt)
{
    TempDir dir;
    Scripted workload(2, [](std::uint32_t, workloads::RankEmitter& out) {
        const std::uint64_t work = out.delay("work", 3, {});
        out.memory("load", false, 64ULL << 20, {work});
    });
    TraceInput input(write(workload, dir));
    Simulation simulation;
    StatGroup stats("platform");
    ComponentRegistry registry = ComponentRegistry::defaults();
    if (oneBinding)
        registry.setAccelerator([base = ComponentRegistry::defaults()](
                                    const std::string& name,
                                    const RankContext& rank,
                                    TargetSocket& memory) -> std::unique_ptr<Component> {
            return std::make_unique<OneBindingAccelerator>(
                base.makeAccelerator(name, rank, memory));
        });
    // The models price the load (replay would give it its recorded duration).
    std::string config = twoRanks;
    config.replace(config.find("mode: replay"), 12, "mode: model");
    Platform platform(
        "platform", loadPlatformString(config, "pair.yaml"), simulation, stats, registry);
    platform.attach(input.sources());
    fanInBuilt = sc_core::sc_find_object("platform.rank0_fanin") != nullptr;
    EXPECT_EQ(simulation.run().outcome, RunOutcome::AllIdle);
    return platform.drivers()[0]->finishPs();
}

// The native accelerator routes the driver's two sockets itself, with no FanIn between them;
// a target that takes one binding gets a FanIn in front. The times are the same.
TEST(PlatformWiring, FanInOnlyInFrontOfAOneBindingTarget)
{
    bool direct = true;
    bool fannedIn = false;
    std::uint64_t directPs = 0;
    std::uint64_t fannedInPs = 0;
    {
        etsim::test::ScKernel kernel;
        directPs = runComputeThenLoad(false, direct);
    }
    {
        etsim::test::ScKernel kernel;
        fannedInPs = runComputeThenLoad(true, fannedIn);
    }
    EXPECT_FALSE(direct);
    EXPECT_TRUE(fannedIn);
    EXPECT_EQ(directPs, fannedInPs);
    // 3 us of work, then the load, priced by the models (not the 1 ns of an empty node).
    EXPECT_GT(directPs, 3'000'000U + 10'000'000U);
}

// The 64-rank ResNet-50 data-parallel trace fits the 64-chip torus.
TEST_F(ScTest, SharedResnet64RanksRunOnTheTorus)
{
    std::optional<fs::path> traces = test::sharedTraces();
    if (!traces)
        GTEST_SKIP() << "shared traces not found: set ETSIM_TRACES to the traces folder";
    PlatformConfig config = loadPlatform("tpu_v4_torus",
                                         {{"driver.mode", "replay"},
                                          {"driver.communication_mode", "model"},
                                          {"driver.dependencies", "ctrl"}});
    RunReport report =
        runJob(config, job(*traces / "text-resnet50-dp-64r-legacy" / "resnet50_DataParallel"));
    expectConsistent(report, 64);
    EXPECT_EQ(report.nodes, 64U * 215U);
    ASSERT_EQ(report.collectives.size(), 1U);
    EXPECT_EQ(report.collectives[0].count, 54U);
}

// One-rank PyTorch traces run as the 8 ranks of the HGX node.
TEST_F(ScTest, SharedOneRankTracesRunReplicatedOnHgx)
{
    std::optional<fs::path> traces = test::sharedTraces();
    if (!traces)
        GTEST_SKIP() << "shared traces not found: set ETSIM_TRACES to the traces folder";
    PlatformConfig config =
        loadPlatform("hgx_h100", {{"driver.mode", "replay"}, {"driver.dependencies", "data"}});
    RunReport report = runJob(config, job(*traces / "chakra-feeder-test" / "chakra", 8));
    expectConsistent(report, 8);
    EXPECT_EQ(report.nodes, 8U * 3664U);
    // The trace file is recorded once, with the hashes of traces/README.md.
    ASSERT_EQ(report.traceFiles.size(), 1U);
    EXPECT_EQ(report.traceFiles[0].bytes, 2'978'371U);
    EXPECT_EQ(report.traceFiles[0].sha256,
              "e4ae8172ef0d18f94cb12371b28c8d78095bac13b0375986cf56c86e2ba2d4ed");
}

// Rank 0 of a real 8-rank PyTorch job (gzip'd, mid-2024 converter: 12 all-reduces and 2
// broadcasts, all on the GPU) replicated to the HGX node: every collective is one instance
// spanning the 8 replicas (not 8 local ones), and every rank spends time in it.
TEST_F(ScTest, SharedPytorchRankReplicatedCollectivesSpanAllRanks)
{
    std::optional<fs::path> traces = test::sharedTraces();
    if (!traces)
        GTEST_SKIP() << "shared traces not found: set ETSIM_TRACES to the traces folder";
    PlatformConfig config = loadPlatform("hgx_h100",
                                         {{"driver.mode", "replay"},
                                          {"driver.communication_mode", "model"},
                                          {"driver.dependencies", "data"}});
    RunReport report = runJob(config, job(*traces / "pytorch-linked-1.1.0-r0" / "chakra", 8));
    expectConsistent(report, 8);
    EXPECT_EQ(report.nodes, 8U * 11347U);
    std::map<std::string, std::uint64_t> counts;
    for (const CollectiveSummary& collective : report.collectives)
        counts[collective.type] = collective.count;
    EXPECT_EQ(counts, (std::map<std::string, std::uint64_t>{{"all_reduce", 12}, {"broadcast", 2}}));
    for (const RankBreakdown& rank : report.ranks)
        EXPECT_GT(rank.commPs, 0U) << "rank " << rank.rank;
}

} // namespace
} // namespace etsim::platform
