// The accelerator with the bundled presets' timing (GPU tiles and waves, systolic arrays)
// through the execution protocol, on the test bench of AcceleratorBench.h.

#include "tests/models/accel/AcceleratorBench.h"
#include "tests/support/ScTest.h"

#include <gtest/gtest.h>

#include <vector>

namespace etsim::accel {
namespace {

using namespace testbench; // NOLINT(google-build-using-namespace): the bench is this test's
                           // vocabulary
using test::ScTest;

EtNodeInfo gemm(std::uint64_t id, std::uint64_t m, std::uint64_t n, std::uint64_t k)
{
    EtNodeInfo info = node(id, NodeKind::Compute, 2 * m * n * k, 2 * (m * k + k * n + m * n));
    info.gemm = GemmShape{m, n, k, 1};
    return info;
}

TEST_F(ScTest, H100PresetTimesAGemmByTilesAndWaves)
{
    AccelConfig config = legacy(accelPreset(AccelPreset::H100Sxm));
    // 1024³ BF16: the 64×128 tile gives 128 CTAs in one wave on 132 SMs,
    // 2·64·128·1024 / (4096 · 1.83 GHz · 0.8) = 2.797814 us, + 2 us launch. 6.3 MB fit in L2.
    Bench bench(config, {gemm(0, 1024, 1024, 1024)});
    sc_core::sc_start();
    EXPECT_EQ(bench.driver.finished[0], 4'797'814u);
    EXPECT_EQ(bench.stat("compute.nodes_gpu_tiles"), 1.0);
    EXPECT_EQ(bench.stat("compute.fallbacks"), 0.0);
}

// The H100 preset's DMA on a memory that moves one 2 MiB chunk per microsecond, so streamed
// times come out round.
struct H100Bench {
    explicit H100Bench(std::vector<EtNodeInfo> nodes)
        : config(legacy(accelPreset(AccelPreset::H100Sxm)))
        , stats("accel")
        , accel("accel", config, stats)
        , memory("memory", Bandwidth::fromBytesPerSecond(2'097'152e6), Time())
        , driver("driver", std::move(nodes))
    {
        driver.socket.bind(accel.target);
        accel.memory.bind(memory.socket);
    }

    AccelConfig config;
    StatGroup stats;
    Accelerator accel;
    FixedMemoryTarget memory;
    Driver driver;
};

TEST_F(ScTest, H100DecodeGemmThatFitsInL2TakesItsComputeTime)
{
    // 16×4096 · 4096×4096 BF16 moves 2·(16·4096 + 4096² + 16·4096) = 33,816,576 B: within the
    // 50 MB L2. Best tile 64×64: 64 CTAs, one wave, 2·64·64·4096 / (4096 · 1.83 GHz · 0.8)
    // = 5.595628 us; the L2 term 33,816,576 B / (33 TB/s · 0.8) = 1.280931 us is shorter.
    // + 2 us launch = 7.595628 us, and nothing goes to HBM.
    H100Bench bench({gemm(0, 16, 4096, 4096)});
    sc_core::sc_start();
    EXPECT_EQ(bench.driver.finished[0], 7'595'628u);
    EXPECT_TRUE(bench.memory.accesses().empty());
    const auto* streamed = dynamic_cast<const Counter*>(bench.stats.findStat("streamed_nodes"));
    ASSERT_NE(streamed, nullptr);
    EXPECT_EQ(streamed->value(), 0u);
}

TEST_F(ScTest, H100DecodeGemmThatSpillsStreamsFromHbm)
{
    // 16×8192 · 8192×8192 BF16 moves 134,742,016 B. On chip alone it would take
    // max(2·64·64·8192 / 5.996544e12 = 11.191257 us, 134,742,016 / 26.4e12 = 5.103864 us)
    // + 2 us = T = 13.191257 us. But 84,742,016 B do not fit in the 50 MB L2: they stream in
    // 41 chunks (40 × 2 MiB + 855,936 B), each loading in L = 1 us (the last in 408.142 ns),
    // and each slice computes T / 41 rounded down to the ps, C = 321.737 ns (the last one also
    // the remainder of 40 ps: 321.777 ns). C < L, so the memory never idles: chunk i is in at
    // (i + 1) us, the last at 40.408142 us, and its slice ends at 40.408142 + 0.321777 =
    // 40.729919 us: three times the fitting time, bound by the
    // transfer (summed without double buffering it would be 40.41 + 13.19 us).
    H100Bench bench({gemm(0, 16, 8192, 8192)});
    sc_core::sc_start();
    EXPECT_EQ(bench.driver.finished[0], 40'729'919u);
    ASSERT_EQ(bench.memory.accesses().size(), 41u);
    EXPECT_EQ(bench.memory.accesses()[39].end.ps(), 40 * us);
    EXPECT_EQ(bench.memory.accesses()[40].bytes, 855'936u);
    EXPECT_EQ(bench.memory.accesses()[40].end.ps(), 40'408'142u);
    const auto counter = [&](const char* path) {
        return dynamic_cast<const Counter&>(*bench.stats.findStat(path)).value();
    };
    EXPECT_EQ(counter("streamed_nodes"), 1u);
    EXPECT_EQ(counter("streamed_bytes"), 84'742'016u);
    EXPECT_EQ(counter("dma_transfers"), 41u);
}

TEST_F(ScTest, TpuV4PresetRunsTwoGemmsOnItsTwoTensorCores)
{
    AccelConfig config = legacy(accelPreset(AccelPreset::TpuV4));
    // 4096³ weight-stationary on one TensorCore (4 MXUs of 128×128): 1024 folds, 256 per
    // array, 4478 · 256 cycles at 1.05 GHz = 1.091779 ms, + 1 us launch. The two GEMMs run
    // on the two cores side by side; a third without a shape falls back to the roofline.
    EtNodeInfo shapeless = node(2, NodeKind::Compute, 137'500'000'000, 0);
    Bench bench(config, {gemm(0, 4096, 4096, 4096), gemm(1, 4096, 4096, 4096), shapeless});
    sc_core::sc_start();
    EXPECT_EQ(bench.driver.finished[0], 1'092'779'048u);
    EXPECT_EQ(bench.driver.finished[1], 1'092'779'048u);
    // 1.375e11 FLOP at the array's 275.2512 TFLOP/s / 2 · 0.8 per core = 1.248859 ms after
    // the first GEMM.
    EXPECT_EQ(bench.driver.finished[2], 1'092'779'048u + 1'248'859'224u + 1'000'000u);
    EXPECT_EQ(bench.stat("compute.nodes_systolic"), 2.0);
    EXPECT_EQ(bench.stat("compute.fallbacks"), 1.0);
}

// The finish time of each node of `nodes` run on `config` at once.
std::vector<std::uint64_t> finishTimes(const AccelConfig& config, std::vector<EtNodeInfo> nodes)
{
    test::ScKernel kernel;
    Bench bench(config, std::move(nodes));
    sc_core::sc_start();
    return bench.driver.finished;
}

TEST(AcceleratorSharing, ConcurrentTensorAndVectorKernelsOnTheH100ShareItsSms)
{
    // A GEMM and an element-wise kernel, both resident (no HBM), released together.
    const AccelConfig h100 = legacy(accelPreset(AccelPreset::H100Sxm));
    ASSERT_EQ(h100.tensorVector, UnitSharing::Shared);
    EtNodeInfo gemmNode = gemm(0, 4096, 4096, 4096);
    gemmNode.bytes = 1'000'000;
    EtNodeInfo add =
        node(1, NodeKind::Compute, 2'000'000'000, 40'000'000, OperatorKind::Elementwise);
    EtNodeInfo addAlone = add;
    addAlone.node = NodeId{0};
    const std::uint64_t gemmTime = finishTimes(h100, {gemmNode})[0];
    const std::uint64_t addTime = finishTimes(h100, {addAlone})[0];
    const std::vector<std::uint64_t> both = finishTimes(h100, {gemmNode, add});
    // Together they take the sum: the second kernel waits for the SMs.
    const std::uint64_t end = std::max(both[0], both[1]);
    EXPECT_GT(end, std::max(gemmTime, addTime));
    EXPECT_EQ(end, gemmTime + addTime);

    // A TPU v4 core's vector unit and MXUs are separate: the two overlap.
    AccelConfig separate = h100;
    separate.tensorVector = UnitSharing::Separate;
    const std::vector<std::uint64_t> overlapped = finishTimes(separate, {gemmNode, add});
    EXPECT_EQ(std::max(overlapped[0], overlapped[1]), std::max(gemmTime, addTime));
    EXPECT_EQ(accelPreset(AccelPreset::TpuV4).tensorVector, UnitSharing::Separate);
}

} // namespace
} // namespace etsim::accel
