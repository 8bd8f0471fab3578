// A platform whose compute engine's GEMMs run on the RTL tile engine through etsim-rtl
// (accelerator.compute.cosim): the same trace on an RTL rank and on an analytical rank, every
// rank on the RTL, and the peer killed mid-run.

#include "cosim/adapters/verilator/GemmTile.h"
#include "models/accel/compute/SystolicTiming.h"
#include "platforms/Job.h"
#include "platforms/PlatformConfig.h"
#include "tests/support/ScTest.h"
#include "tests/support/TempDir.h"
#include "workloads/Workload.h"

#include <gtest/gtest.h>

#include <csignal>
#include <fstream>
#include <unistd.h>

namespace etsim::platform {
namespace {

using etsim::test::ScTest;
using etsim::test::TempDir;
namespace fs = std::filesystem;

constexpr std::uint32_t memoryLatency = 2;

// Two ranks of a 16x16 output-stationary array at 1 GHz whose memory term never binds; the
// engine of `ranks` runs on etsim-rtl. `spawn` is the command line's head.
std::string platform(const std::string& ranks, const std::string& spawn)
{
    return R"(name: rtl_pair
ranks: 2
accelerator:
  name: tile16
  tensor:
    model: systolic
    rows: 16
    cols: 16
    clock: 1 GHz
    dataflow: output_stationary
    peak: {int8: 512 GFLOP/s, bf16: 512 GFLOP/s}
  vector: {peak: {bf16: 1 TFLOP/s, fp32: 1 TFLOP/s}}
  sram: {capacity: 1 GiB, bandwidth: 1000 TB/s, policy: legacy}  # no tensors named: on chip
  dma: {bandwidth: 100 GB/s}
  compute:
    cosim:
      ranks: )" +
           ranks + R"(
      peer: shm
      spawn: ")" +
           spawn + R"( --endpoint {endpoint} --mem-latency )" + std::to_string(memoryLatency) + R"("
      lookahead: 1 ns
      timeout: 5 s
fabric:
  fidelity: analytical
  topology:
    kind: multi_dim
    dims:
      - {kind: switch, size: 2, bandwidth: "100 GB/s", latency: "1 us"}
)";
}

struct Gemm {
    std::int64_t m, n, k;
};

// A chain: GEMMs (full and edge folds) with an element-wise operator between them, which the
// local model runs (the peer refuses operators without a GEMM shape, so a finished run shows
// they never reached it).
const Gemm chain[] = {{64, 64, 64}, {128, 32, 256}, {48, 80, 100}, {30, 20, 10}, {256, 256, 256}};

class Chain final : public workloads::Workload {
public:
    std::uint32_t rankCount() const override { return 2; }
    std::string description() const override { return "GEMM chain"; }
    std::vector<workloads::CommGroup> groupsOf(std::uint32_t) const override { return {}; }
    void forEachGroup(const std::function<void(const workloads::CommGroup&)>&) const override {}
    void emitRank(std::uint32_t, workloads::RankEmitter& out) const override
    {
        std::vector<std::uint64_t> deps;
        int index = 0;
        for (const Gemm& gemm : chain) {
            et::OperatorInfo info;
            info.kind = et::OpKind::Gemm;
            info.dtype = et::DataType::Bf16;
            info.gemms.push_back({gemm.m, gemm.n, gemm.k, 1});
            const std::uint64_t node =
                out.compute("gemm" + std::to_string(index++), info, 4096, deps);
            deps = {out.compute("relu" + std::to_string(index),
                                et::OpKind::Elementwise,
                                et::DataType::Bf16,
                                static_cast<std::int64_t>(gemm.m * gemm.n),
                                4096,
                                {node})};
        }
    }
};

fs::path writeChain(const TempDir& dir)
{
    workloads::WriteOptions options;
    options.folder = dir.path();
    options.name = "chain";
    return workloads::writeWorkload(Chain(), options).prefix;
}

JobSpec job(const fs::path& trace)
{
    JobSpec spec;
    spec.trace = trace;
    return spec;
}

// The RTL's cycles minus the model's systolic cycles over the chain, ps at 1 GHz: the
// formula's known error, (L + 1) per full fold, less for edge folds the model charges fully.
std::int64_t expectedDifferencePs()
{
    accel::SystolicParams params;
    params.rows = params.cols = params.tileRows = params.tileCols = 16;
    params.clock = Frequency::fromHz(1e9);
    accel::SystolicTiming model(params, accel::RooflineTiming({}));
    std::int64_t cycles = 0;
    for (const Gemm& gemm : chain) {
        const std::uint64_t m = static_cast<std::uint64_t>(gemm.m);
        const std::uint64_t n = static_cast<std::uint64_t>(gemm.n);
        const std::uint64_t k = static_cast<std::uint64_t>(gemm.k);
        cycles += static_cast<std::int64_t>(rtl::formulaCycles(16, 16, m, n, k, memoryLatency)) -
                  static_cast<std::int64_t>(model.plan(GemmShape{m, n, k, 1}).cycles);
    }
    return cycles * 1000;
}

TEST_F(ScTest, GemmsOnTheRtlFinishWithinTheFormulasKnownErrorOfTheModel)
{
    TempDir dir;
    const fs::path trace = writeChain(dir);
    RunReport report =
        runJob(loadPlatformString(platform("0", ETSIM_RTL), "rtl_pair.yaml"), job(trace));
    ASSERT_TRUE(report.finished) << report.problem;
    ASSERT_EQ(report.ranks.size(), 2U);
    const std::int64_t rtl = static_cast<std::int64_t>(report.ranks[0].finishPs);
    const std::int64_t model = static_cast<std::int64_t>(report.ranks[1].finishPs);
    const std::int64_t expected = expectedDifferencePs();
    std::printf("finish on the RTL %lld ps, analytical %lld ps, difference %lld ps (%.3f %%), "
                "expected from the formulas %lld ps\n",
                static_cast<long long>(rtl),
                static_cast<long long>(model),
                static_cast<long long>(rtl - model),
                100.0 * static_cast<double>(rtl - model) / static_cast<double>(model),
                static_cast<long long>(expected));
    EXPECT_EQ(rtl - model, expected);
    EXPECT_LT(std::abs(static_cast<double>(rtl - model)) / static_cast<double>(model), 0.02);
}

TEST_F(ScTest, EveryRankOnItsOwnRtlPeer)
{
    TempDir dir;
    const fs::path trace = writeChain(dir);
    RunReport report =
        runJob(loadPlatformString(platform("all", ETSIM_RTL), "rtl_pair.yaml"), job(trace));
    ASSERT_TRUE(report.finished) << report.problem;
    EXPECT_EQ(report.ranks[0].finishPs, report.ranks[1].finishPs);
    // The RTL rank's finish of the test above (one kernel per process, so not rerun here).
    EXPECT_EQ(report.ranks[0].finishPs, 87285168U);
}

// The parent of process `pid`, or 0.
pid_t parentOf(pid_t pid)
{
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string id;
    std::string comm;
    std::string state;
    pid_t parent = 0;
    return in >> id >> comm >> state >> parent ? parent : 0;
}

// The process named `name` that this test started, directly or through the shell etsim runs
// `spawn` with (/bin/sh -c LINE), or -1.
pid_t childNamed(const std::string& name)
{
    for (const auto& entry : fs::directory_iterator("/proc")) {
        std::ifstream in(entry.path() / "stat");
        std::string pid;
        std::string comm;
        std::string state;
        pid_t parent = 0;
        if (in >> pid >> comm >> state >> parent && comm == "(" + name + ")" &&
            (parent == ::getpid() || parentOf(parent) == ::getpid()))
            return static_cast<pid_t>(std::stol(pid));
    }
    return -1;
}

TEST_F(ScTest, KillingTheRtlPeerMidRunEndsWithTheBridgesError)
{
    TempDir dir;
    const fs::path trace = writeChain(dir);
    // Every fold runs clock by clock, so the last GEMM takes long enough in wall time to be
    // killed in the middle.
    const std::string spawn = std::string(ETSIM_RTL) + " --full-folds";
    JobOptions options;
    bool killed = false;
    options.progress = [&](const JobProgress& progress) {
        if (killed || progress.nodesDone < 8)
            return;
        if (const pid_t pid = childNamed("etsim-rtl"); pid > 0) {
            ::kill(pid, SIGKILL);
            killed = true;
        }
    };
    std::string message = "(no error)";
    const auto start = std::chrono::steady_clock::now();
    try {
        RunReport report =
            runJob(loadPlatformString(platform("0", spawn), "rtl.yaml"), job(trace), options);
        message = report.finished ? "(finished)" : report.problem;
    } catch (const std::exception& error) {
        message = error.what();
    }
    const auto took = std::chrono::steady_clock::now() - start;
    EXPECT_TRUE(killed);
    EXPECT_NE(
        message.find("cosim proxy 'platform.rank0_accelerator_proxy': peer 'etsim-rtl gemm_tile'"),
        std::string::npos)
        << message;
    EXPECT_NE(message.find(", channel 0, at simulated time "), std::string::npos) << message;
    EXPECT_NE(message.find("the peer closed the connection"), std::string::npos) << message;
    EXPECT_LT(took, std::chrono::seconds(5)) << "death is noticed without the timeout";
}

TEST(RtlPlatformConfig, RankSelectorAndEndpointErrors)
{
    auto error = [](const std::string& ranks, const std::string& peer) {
        std::string text = platform(ranks, "x");
        text.replace(text.find("peer: shm"), 9, "peer: " + peer);
        try {
            loadPlatformString(text, "p.yaml");
        } catch (const std::exception& caught) {
            return std::string(caught.what());
        }
        return std::string("(no error)");
    };
    EXPECT_EQ(error("2", "shm"),
              "p.yaml:17:14: accelerator.compute.cosim.ranks: expected \"all\" or one rank index "
              "below 2, got \"2\"");
    EXPECT_EQ(error("first", "shm"),
              "p.yaml:17:14: accelerator.compute.cosim.ranks: expected \"all\" or one rank index "
              "below 2, got \"first\"");
    EXPECT_NE(error("all", "\"unix:/tmp/rtl.sock\"")
                  .find("accelerator.compute.cosim.peer: every rank's engine gets its own peer, "
                        "so the endpoint must differ per rank: put {rank} in it"),
              std::string::npos);
    EXPECT_EQ(error("all", "\"unix:/tmp/rtl{rank}.sock\""), "(no error)");
    EXPECT_EQ(error("0", "\"unix:/tmp/rtl.sock\""), "(no error)");
    PlatformConfig config = loadPlatformString(platform("1", "x"), "p.yaml");
    ASSERT_TRUE(config.computeCosim);
    EXPECT_FALSE(config.computeCosim->covers(0));
    EXPECT_TRUE(config.computeCosim->covers(1));
    EXPECT_EQ(config.computeCosim->proxy.lookahead, Time::fromPs(1000));
}

} // namespace
} // namespace etsim::platform
