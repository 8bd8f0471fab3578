// A rank's trace through the ET driver onto the accelerator model: the trace is written with
// TraceWriter and read back, the driver's compute and memory sockets both bind the
// accelerator, and the accelerator's DMA reaches a memory (the fixed-bandwidth stand-in, or
// the HBM model's analytic fidelity). Finish times are computed by hand in the comments from
// the formulas of docs/accel.md and docs/hbm.md.

#include "et_driver/NodeLowering.h"
#include "et_driver/RankDriver.h"
#include "et_driver/TraceReader.h"
#include "et_driver/TraceWriter.h"
#include "kernel/Simulation.h"
#include "kernel/Stats.h"
#include "models/accel/Accelerator.h"
#include "models/hbm/HbmController.h"
#include "tests/support/AccelConfigs.h"
#include "tests/support/ScTest.h"
#include "tests/support/StatValue.h"
#include "tests/support/TempDir.h"
#include "tests/support/TestTargets.h"
#include "tests/support/TraceNodes.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace etsim {
namespace {

using test::memoryNode;
using test::ScTest;
using test::traceNode;

constexpr std::uint64_t us = 1'000'000; // ps

et::TraceNode compute(std::uint64_t id,
                      std::int64_t flops,
                      std::uint64_t bytes,
                      std::vector<std::uint64_t> deps = {})
{
    et::TraceNode node = traceNode(id, et::NodeType::Comp, std::move(deps));
    node.setNumOps(flops);
    node.setTensorSize(bytes);
    return node;
}

// One rank: its trace written to a file and read back, a driver, and an accelerator whose
// target both of the driver's compute and memory sockets bind. Communication goes to a
// stand-in the traces here never use. The memory behind the DMA is bound by the test.
struct Rank {
    Rank(const test::TempDir& dir,
         const std::vector<et::TraceNode>& nodes,
         const accel::AccelConfig& config)
        : file(writeTrace(dir, nodes))
        , reader(file)
        , context(1)
        , stats("job")
        , accelerator("accel", config, stats.addGroup("accel"))
        , comm("comm", test::CommTiming{})
        , driver("rank0", RankId{0}, et::readerSource(reader), context, simulation, {}, &stats)
    {
        driver.computeSocket.bind(accelerator.target);
        driver.memorySocket.bind(accelerator.target);
        driver.communicationSocket.bind(comm.socket);
        driver.onRecord([this](const et::NodeRecord& record) {
            finishPs[toUnderlying(record.node)] = record.finishPs;
            engines[toUnderlying(record.node)] = record.engine;
        });
    }

    static std::filesystem::path writeTrace(const test::TempDir& dir,
                                            const std::vector<et::TraceNode>& nodes)
    {
        std::filesystem::path path = dir.file("job.0.et");
        et::TraceWriter writer(path);
        for (const et::TraceNode& node : nodes)
            writer.write(node);
        writer.close();
        return path;
    }

    std::uint64_t finish(std::uint64_t node) const
    {
        auto found = finishPs.find(node);
        if (found == finishPs.end()) {
            ADD_FAILURE() << "node " << node << " did not finish";
            return 0;
        }
        return found->second;
    }

    double stat(const std::string& path) const { return test::statValue(stats, path); }

    std::filesystem::path file;
    et::TraceReader reader;
    Simulation simulation;
    et::LoweringContext context;
    StatGroup stats;
    accel::Accelerator accelerator;
    test::CommTarget comm;
    et::RankDriver driver;
    std::map<std::uint64_t, std::uint64_t> finishPs;
    std::map<std::uint64_t, et::Engine> engines;
};

// Round numbers (tests/support/AccelConfigs.h): 1 TFLOP/s, 1 MB of SRAM at 1 TB/s, 100 kB DMA
// chunks on two engines of 1 TB/s, no launch overhead, efficiencies 1. These traces name no
// tensors and check the driver, the accelerator's chunk pipeline and the HBM together, so
// they run the legacy per-node shortcut (the first sram.capacity bytes of a node are on chip);
// the residency model is checked in OnChipMemoryTest and HandComputedRunTest.
accel::AccelConfig legacy(accel::AccelConfig config)
{
    config.sram.policy = accel::SramPolicy::Legacy;
    return config;
}
accel::AccelConfig roundAccelConfig()
{
    return legacy(test::roundAccelConfig());
}

TEST_F(ScTest, DriverRunsASmallTraceOnTheAcceleratorWithAFixedMemory)
{
    test::TempDir dir;
    // The memory moves 100 GB/s (1 us per 100 kB chunk), one transfer after another.
    //   1 MEM_LOAD 250 kB: chunks of 100, 100 and 50 kB served in turn         0 -> 2.5 us
    //   3 COMP 2e6 FLOP, no bytes: tensor unit, 2e6 / 1e12                     0 -> 2 us
    //   5 COMP elementwise after 3: vector unit, max(1e3 / 1e12, 0.5 MB / 1 TB/s)
    //                                                                       2 -> 2.5 us
    //   2 COMP 1e7 FLOP over 1.5 MB after 1: 0.5 MB beyond the SRAM streams in 5 chunks,
    //     L = 1 us each, C = 10 us / 5 = 2 us per chunk, double buffered:
    //     L + 4·max(L, C) + C = 11 us                                    2.5 -> 13.5 us
    //   4 MEM_STORE 100 kB after 2: one chunk                            13.5 -> 14.5 us
    et::TraceNode elementwise = compute(5, 1000, 500'000, {3});
    elementwise.setOpKind("elementwise");
    std::vector<et::TraceNode> nodes{memoryNode(1, et::NodeType::MemLoad, 250'000),
                                     compute(2, 10'000'000, 1'500'000, {1}),
                                     compute(3, 2'000'000, 0),
                                     memoryNode(4, et::NodeType::MemStore, 100'000, {2}),
                                     elementwise};
    accel::AccelConfig config = roundAccelConfig();
    Rank rank(dir, nodes, config);
    test::FixedMemoryTarget hbm("hbm", Bandwidth::fromBytesPerSecond(1e11), Time());
    rank.accelerator.memory.bind(hbm.socket);

    RunResult result = rank.simulation.run();
    EXPECT_EQ(result.outcome, RunOutcome::AllIdle);
    EXPECT_TRUE(rank.driver.done());
    EXPECT_EQ(rank.finish(1), 2 * us + us / 2);
    EXPECT_EQ(rank.finish(3), 2 * us);
    EXPECT_EQ(rank.finish(5), 2 * us + us / 2);
    EXPECT_EQ(rank.finish(2), 13 * us + us / 2);
    EXPECT_EQ(rank.finish(4), 14 * us + us / 2);
    EXPECT_EQ(rank.driver.finishPs(), 14 * us + us / 2);
    EXPECT_EQ(rank.engines.at(1), et::Engine::Memory);
    EXPECT_EQ(rank.engines.at(2), et::Engine::Compute);
    // Three load chunks, five streamed chunks, one store chunk.
    ASSERT_EQ(hbm.accesses().size(), 9u);
    EXPECT_TRUE(hbm.accesses().back().write);
    EXPECT_EQ(rank.stat("accel.compute_nodes"), 3.0);
    EXPECT_EQ(rank.stat("accel.memory_nodes"), 2.0);
    EXPECT_EQ(rank.stat("accel.dma_read_bytes"), 750'000.0);
    EXPECT_EQ(rank.stat("accel.dma_write_bytes"), 100'000.0);
    EXPECT_EQ(rank.stat("accel.compute.nodes_vector"), 1.0);
    EXPECT_EQ(rank.stat("rank0.nodes"), 5.0);
    EXPECT_EQ(rank.accelerator.inFlight(), 0u);
}

TEST_F(ScTest, DriverRunsAGemmOnTheH100PresetWithAnalyticHbm3)
{
    test::TempDir dir;
    // H100 preset (models/accel/AccelPresets.cpp), its DMA on the HBM model's hbm3_h100
    // preset at the analytic fidelity: one FIFO server, each transfer takes
    //   bytes / (peak × efficiency) + latency, peak = 5.23 Gb/s / 8 × 32 bit × 160 PCs
    //   = 3.3472 TB/s, efficiency 0.886, latency = (nRCDRD 26 + nCL 17 + nBL 2) CK at
    //   1.3075 GHz = 34.417 ns.
    // A 2 MiB DMA chunk occupies the server 2,097,152 B / 2.9656192 TB/s = 707.155 ns (the DMA
    // engine alone would need 2 MiB / 3.35 TB/s = 626.016 ns, so the memory sets the pace).
    //   1 MEM_LOAD 4 MiB: two chunks, both in flight; the second ends 2 × 707.155 + 34.417
    //                                                                   0 -> 1.448727 us
    //   2 COMP 1024³ BF16 GEMM after 1: best tile 64×128 gives 128 CTAs, one wave on 132
    //     SMs: 2·64·128·1024 / (4096 FLOP/clk · 1.83 GHz · 0.8) = 2.797814 us, + 2 us launch;
    //     its 6.29 MB fit in the 50 MB L2                       1.448727 -> 6.246541 us
    //   3 MEM_STORE 2 MiB after 2: 707.155 + 34.417 ns            6.246541 -> 6.988113 us
    et::TraceNode gemm = compute(2, 2LL * 1024 * 1024 * 1024, 6'291'456, {1});
    gemm.setOpKind("gemm");
    gemm.setGemmM(1024);
    gemm.setGemmN(1024);
    gemm.setGemmK(1024);
    gemm.setDtype("bf16");
    std::vector<et::TraceNode> nodes{memoryNode(1, et::NodeType::MemLoad, 4 * 1024 * 1024),
                                     gemm,
                                     memoryNode(3, et::NodeType::MemStore, 2 * 1024 * 1024, {2})};
    accel::AccelConfig config = legacy(accel::accelPreset(accel::AccelPreset::H100Sxm));
    Rank rank(dir, nodes, config);
    hbm::HbmConfig hbmConfig = hbm::hbmPreset(hbm::HbmPreset::Hbm3H100);
    ASSERT_EQ(hbmConfig.fidelity, hbm::Fidelity::Analytic);
    hbm::HbmController hbm("hbm", hbmConfig, rank.stats.addGroup("hbm"));
    rank.accelerator.memory.bind(hbm.socket);

    RunResult result = rank.simulation.run();
    EXPECT_EQ(result.outcome, RunOutcome::AllIdle);
    EXPECT_EQ(rank.finish(1), 1'448'727u);
    EXPECT_EQ(rank.finish(2), 6'246'541u);
    // The store at the write efficiency (0.9, not the reads' 0.886).
    EXPECT_EQ(rank.finish(3), 6'977'113u);
    EXPECT_EQ(rank.driver.finishPs(), 6'977'113u);
    EXPECT_EQ(rank.stat("hbm.transactions"), 3.0);
    EXPECT_EQ(rank.stat("hbm.bytes"), 6.0 * 1024 * 1024);
    EXPECT_EQ(rank.stat("accel.compute.nodes_gpu_tiles"), 1.0);
    EXPECT_EQ(rank.stat("accel.streamed_nodes"), 0.0);
    EXPECT_TRUE(hbm.idle());
}

} // namespace
} // namespace etsim
