// The accelerator and its compute engine through the execution protocol, with a
// fixed-bandwidth memory standing in for HBM. Times are hand-computed from the config below.

#include "models/accel/Accelerator.h"

#include "kernel/PayloadPool.h"
#include "kernel/ScTime.h"
#include "tests/support/AccelConfigs.h"
#include "tests/support/ScKernel.h"
#include "tests/support/ScTest.h"
#include "tests/support/TempDir.h"
#include "tests/support/TestTargets.h"

#include <gtest/gtest.h>
#include <tlm_utils/simple_initiator_socket.h>

#include <vector>

namespace etsim::accel {
namespace {

using test::FixedMemoryTarget;
using test::ScTest;

// The tests of streaming mechanics (chunks, staging buffers, units) below give a node a known
// number of bytes to stream with the legacy per-node shortcut (the first sram.capacity bytes of
// a node are on chip); what the residency model streams is tested in OnChipMemoryTest and in
// ResidencyStreamsMissesAndWritesThroughTheDma below.
AccelConfig legacy(AccelConfig config)
{
    config.sram.policy = SramPolicy::Legacy;
    return config;
}

// Round numbers (tests/support/AccelConfigs.h): 1 TFLOP/s, 1 MB of SRAM at 1 TB/s, 100 kB DMA
// chunks, no launch overhead, efficiencies 1. The test memory moves 100 GB/s (1 us per chunk).
AccelConfig testConfig(std::uint32_t units = 1)
{
    return legacy(test::roundAccelConfig(units));
}

EtNodeInfo node(std::uint64_t id,
                NodeKind kind,
                std::uint64_t flops,
                std::uint64_t bytes,
                OperatorKind op = OperatorKind::Gemm)
{
    EtNodeInfo info;
    info.rank = RankId{0};
    info.node = NodeId{id};
    info.kind = kind;
    info.flops = flops;
    info.bytes = bytes;
    info.op = op;
    info.dataType = DataType::Bf16;
    return info;
}

// Sends its nodes at time 0 through nb_transport and records each completion time (ps).
class Driver final : public sc_core::sc_module {
public:
    tlm_utils::simple_initiator_socket<Driver> socket;

    SC_HAS_PROCESS(Driver);
    Driver(sc_core::sc_module_name name, std::vector<EtNodeInfo> nodes)
        : sc_module(name), socket("socket"), nodes(std::move(nodes)), pool("driver.pool")
    {
        finished.assign(this->nodes.size(), 0);
        socket.register_nb_transport_bw(this, &Driver::nbTransportBw);
        SC_METHOD(issue);
    }

    std::vector<std::uint64_t> finished;
    std::vector<tlm::tlm_response_status> status;
    /// Payloads still out of the pool: held by a target that has not answered.
    std::uint64_t outstanding() const { return pool.inUse(); }

private:
    void issue()
    {
        status.assign(nodes.size(), tlm::TLM_INCOMPLETE_RESPONSE);
        for (std::size_t i = 0; i < nodes.size(); ++i) {
            tlm::tlm_generic_payload& payload = pool.acquire();
            payload.set_command(tlm::TLM_READ_COMMAND);
            payload.set_extension(new EtNodeExtension(nodes[i]));
            tlm::tlm_phase phase = tlm::BEGIN_REQ;
            sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
            tlm::tlm_sync_enum answer = tlm::TLM_ACCEPTED;
            try {
                answer = socket->nb_transport_fw(payload, phase, delay);
            } catch (...) {
                // A target's error report stopped the run; the reference is still ours.
                payload.release();
                throw;
            }
            EXPECT_EQ(answer, tlm::TLM_UPDATED);
            EXPECT_EQ(phase, tlm::END_REQ);
            payload.release();
        }
    }

    tlm::tlm_sync_enum
    nbTransportBw(tlm::tlm_generic_payload& payload, tlm::tlm_phase& phase, sc_core::sc_time& delay)
    {
        EXPECT_EQ(phase, tlm::BEGIN_RESP);
        std::uint64_t id = toUnderlying(EtNodeExtension::get(payload).info.node);
        finished[id] = fromScTime(sc_core::sc_time_stamp() + delay).ps();
        status[id] = payload.get_response_status();
        return tlm::TLM_COMPLETED;
    }

    std::vector<EtNodeInfo> nodes;
    PayloadPool pool;
};

// An accelerator wired to the fixed memory and driven by a Driver.
struct Bench {
    Bench(const AccelConfig& config, std::vector<EtNodeInfo> nodes)
        : stats("accel")
        , accel("accel", config, stats)
        , memory("memory", Bandwidth::fromBytesPerSecond(1e11), Time())
        , driver("driver", std::move(nodes))
    {
        driver.socket.bind(accel.target);
        accel.memory.bind(memory.socket);
    }

    double stat(const std::string& path) const
    {
        const Stat* found = stats.findStat(path);
        EXPECT_NE(found, nullptr) << path;
        if (const auto* counter = dynamic_cast<const Counter*>(found))
            return static_cast<double>(counter->value());
        if (const auto* scalar = dynamic_cast<const Scalar*>(found))
            return scalar->value();
        return -1.0;
    }

    StatGroup stats;
    Accelerator accel;
    FixedMemoryTarget memory;
    Driver driver;
};

constexpr std::uint64_t us = 1'000'000; // ps

TEST_F(ScTest, NodeThatFitsInSramTakesItsComputeTime)
{
    AccelConfig config = testConfig();
    // 1e9 FLOP at 1 TFLOP/s = 1 ms; 0.5 MB at 1 TB/s = 0.5 us; nothing streams.
    Bench bench(config, {node(0, NodeKind::Compute, 1'000'000'000, 500'000)});
    sc_core::sc_start();
    EXPECT_EQ(bench.driver.finished[0], 1000 * us);
    EXPECT_EQ(bench.driver.status[0], tlm::TLM_OK_RESPONSE);
    EXPECT_TRUE(bench.memory.accesses().empty());
    EXPECT_EQ(bench.stat("compute.nodes_roofline"), 1.0);
    EXPECT_DOUBLE_EQ(bench.stat("compute.tensor_busy"), 1e-3);
    EXPECT_DOUBLE_EQ(bench.stat("compute.flops"), 1e9);
    EXPECT_EQ(bench.accel.inFlight(), 0u);
    EXPECT_EQ(bench.driver.outstanding(), 0u);
}

TEST_F(ScTest, SpilledBytesStreamWithComputeOverlappingTransfers)
{
    AccelConfig config = testConfig();
    // 1.5 MB: 0.5 MB over the SRAM streams in 5 chunks of 100 kB, L = 1 us each at 100 GB/s.
    // Compute 1e7 FLOP = 10 us, C = 2 us per chunk. Double buffered:
    // L + 4·max(L, C) + C = 1 + 8 + 2 = 11 us (summed it would be 5·(1 + 2) = 15 us).
    Bench bench(config, {node(0, NodeKind::Compute, 10'000'000, 1'500'000)});
    sc_core::sc_start();
    EXPECT_EQ(bench.driver.finished[0], 11 * us);
    ASSERT_EQ(bench.memory.accesses().size(), 5u);
    for (std::size_t i = 0; i < 5; ++i) {
        EXPECT_EQ(bench.memory.accesses()[i].bytes, 100'000u);
        EXPECT_EQ(bench.memory.accesses()[i].address, i * 100'000);
        EXPECT_FALSE(bench.memory.accesses()[i].write);
    }
    // Loads run ahead of compute by at most two buffers: chunk 2 starts when chunk 0's
    // compute frees its buffer at 3 us.
    EXPECT_EQ(bench.memory.accesses()[1].start.ps(), 1 * us);
    EXPECT_EQ(bench.memory.accesses()[2].start.ps(), 3 * us);
    EXPECT_EQ(bench.stat("streamed_nodes"), 1.0);
    EXPECT_EQ(bench.stat("streamed_bytes"), 500'000.0);
    EXPECT_EQ(bench.stat("dma_read_bytes"), 500'000.0);
    EXPECT_DOUBLE_EQ(bench.stat("compute.tensor_busy"), 10e-6);
}

TEST_F(ScTest, TransferBoundStreamHidesTheCompute)
{
    AccelConfig config = testConfig();
    // Compute 1e6 FLOP = 1 us but 1.5 MB on chip at 1 TB/s = 1.5 us: C = 0.3 us per chunk.
    // L > C, so 5·L + C = 5.3 us.
    Bench bench(config, {node(0, NodeKind::Compute, 1'000'000, 1'500'000)});
    sc_core::sc_start();
    EXPECT_EQ(bench.driver.finished[0], 5 * us + 300'000);
}

TEST_F(ScTest, BothStagingBuffersLoadAtOnceToHideMemoryLatency)
{
    AccelConfig config = testConfig();
    StatGroup stats("accel");
    Accelerator accel("accel", config, stats);
    // 1 us per chunk on the memory plus 0.5 us latency.
    FixedMemoryTarget memory("memory", Bandwidth::fromBytesPerSecond(1e11), Time::fromPs(us / 2));
    Driver driver("driver", {node(0, NodeKind::Compute, 1'000'000, 1'500'000)});
    driver.socket.bind(accel.target);
    accel.memory.bind(memory.socket);
    sc_core::sc_start();
    // C = 0.3 us. Loads 0 and 1 occupy the memory [0, 1] and [1, 2] (done 1.5, 2.5); each
    // finished compute frees a buffer and the next load queues behind the memory: loads 2, 3, 4
    // occupy [2, 3], [3, 4], [4, 5] and are done at 3.5, 4.5, 5.5; the last compute ends at
    // 5.8 us. One load at a time would take 5 · 1.5 + 0.3 = 7.8 us.
    EXPECT_EQ(driver.finished[0], 5 * us + 800'000);
    ASSERT_EQ(memory.accesses().size(), 5u);
    EXPECT_EQ(memory.accesses()[1].start.ps(), 1 * us);
    EXPECT_EQ(memory.accesses()[4].start.ps(), 4 * us);
}

TEST_F(ScTest, IndependentNodesRunConcurrentlyOnUnits)
{
    // Two units of 0.5 TFLOP/s each: both 1e9-FLOP nodes run side by side, 2 ms each.
    AccelConfig two = testConfig(2);
    Bench bench(two,
                {node(0, NodeKind::Compute, 1'000'000'000, 0),
                 node(1, NodeKind::Compute, 1'000'000'000, 0)});
    sc_core::sc_start();
    EXPECT_EQ(bench.driver.finished[0], 2000 * us);
    EXPECT_EQ(bench.driver.finished[1], 2000 * us);
    EXPECT_DOUBLE_EQ(bench.stat("compute.unit0.tensor_busy"), 2e-3);
    EXPECT_DOUBLE_EQ(bench.stat("compute.unit1.tensor_busy"), 2e-3);
}

TEST_F(ScTest, OneUnitRunsNodesInTurnButTensorAndVectorOverlap)
{
    AccelConfig one = testConfig(1);
    // Two GEMMs queue on the tensor unit (1 ms, then 2 ms); an element-wise node of 0.5 MB
    // (0.5 us at 1 TB/s) runs on the vector unit meanwhile.
    Bench bench(one,
                {node(0, NodeKind::Compute, 1'000'000'000, 0),
                 node(1, NodeKind::Compute, 1'000'000'000, 0),
                 node(2, NodeKind::Compute, 1000, 500'000, OperatorKind::Elementwise)});
    sc_core::sc_start();
    EXPECT_EQ(bench.driver.finished[0], 1000 * us);
    EXPECT_EQ(bench.driver.finished[1], 2000 * us);
    EXPECT_EQ(bench.driver.finished[2], us / 2);
    EXPECT_EQ(bench.stat("compute.nodes_vector"), 1.0);
    EXPECT_DOUBLE_EQ(bench.stat("compute.vector_busy"), 0.5e-6);
}

TEST_F(ScTest, LoadAndStoreNodesMoveTheirBytesThroughTheDma)
{
    AccelConfig config = testConfig();
    // 250 kB in chunks of 100, 100 and 50 kB; the memory serves them in turn: 2.5 us. The
    // store gets a fresh region on the next channel: align(250000, 4 KiB) + 256 B.
    EtNodeInfo store = node(1, NodeKind::MemStore, 0, 100'000);
    Bench bench(config, {node(0, NodeKind::MemLoad, 0, 250'000), store});
    sc_core::sc_start();
    EXPECT_EQ(bench.driver.finished[0], 2 * us + us / 2);
    EXPECT_EQ(bench.driver.finished[1], 3 * us + us / 2);
    ASSERT_EQ(bench.memory.accesses().size(), 4u);
    EXPECT_EQ(bench.memory.accesses()[2].bytes, 50'000u);
    EXPECT_EQ(bench.memory.accesses()[2].address, 200'000u);
    EXPECT_TRUE(bench.memory.accesses()[3].write);
    EXPECT_EQ(bench.memory.accesses()[3].address, 253'952u + 256);
    EXPECT_EQ(bench.stat("memory_nodes"), 2.0);
    EXPECT_EQ(bench.stat("dma_write_bytes"), 100'000.0);
    EXPECT_EQ(bench.stat("dma_transfers"), 4.0);
}

TEST_F(ScTest, NodesNamingTheSameTensorShareItsRegion)
{
    AccelConfig config = testConfig();
    EtNodeInfo first = node(0, NodeKind::MemStore, 0, 100'000);
    first.setAttribute(Accelerator::tensorIdAttribute, 7);
    EtNodeInfo other = node(1, NodeKind::MemStore, 0, 100'000);
    EtNodeInfo again = node(2, NodeKind::MemLoad, 0, 100'000);
    again.setAttribute(Accelerator::tensorIdAttribute, 7);
    Bench bench(config, {first, other, again});
    sc_core::sc_start();
    ASSERT_EQ(bench.memory.accesses().size(), 3u);
    EXPECT_EQ(bench.memory.accesses()[0].address, 0u);
    EXPECT_EQ(bench.memory.accesses()[1].address, 102'400u + 256);
    EXPECT_EQ(bench.memory.accesses()[2].address, 0u);
}

TEST_F(ScTest, DmaBandwidthLimitsATransfer)
{
    AccelConfig config = testConfig();
    config.dma.bandwidth = Bandwidth::fromBytesPerSecond(1e10); // 10 us per 100 kB chunk
    config.dma.engines = 1;
    Bench bench(config, {node(0, NodeKind::MemLoad, 0, 200'000)});
    sc_core::sc_start();
    EXPECT_EQ(bench.driver.finished[0], 20 * us);
}

// Calls b_transport from a thread and records when each call returned.
class BlockingDriver final : public sc_core::sc_module {
public:
    tlm_utils::simple_initiator_socket<BlockingDriver> socket;

    SC_HAS_PROCESS(BlockingDriver);
    BlockingDriver(sc_core::sc_module_name name, std::vector<EtNodeInfo> nodes)
        : sc_module(name), socket("socket"), nodes(std::move(nodes))
    {
        SC_THREAD(run);
    }

    std::vector<std::uint64_t> returned;

private:
    void run()
    {
        for (const EtNodeInfo& info : nodes) {
            tlm::tlm_generic_payload payload;
            payload.set_command(tlm::TLM_READ_COMMAND);
            EtNodeExtension extension(info);
            payload.set_extension(&extension);
            sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
            socket->b_transport(payload, delay);
            payload.clear_extension(&extension);
            EXPECT_EQ(payload.get_response_status(), tlm::TLM_OK_RESPONSE);
            returned.push_back(fromScTime(sc_core::sc_time_stamp() + delay).ps());
        }
    }

    std::vector<EtNodeInfo> nodes;
};

TEST_F(ScTest, BlockingTransportCompletesAtTheSameTimes)
{
    AccelConfig config = testConfig();
    StatGroup stats("accel");
    Accelerator accel("accel", config, stats);
    FixedMemoryTarget memory("memory", Bandwidth::fromBytesPerSecond(1e11), Time());
    BlockingDriver driver("driver",
                          {node(0, NodeKind::Compute, 1'000'000'000, 500'000),
                           node(1, NodeKind::Compute, 10'000'000, 1'500'000)});
    driver.socket.bind(accel.target);
    accel.memory.bind(memory.socket);
    sc_core::sc_start();
    // 1 ms, then the streamed node's 11 us after it.
    EXPECT_EQ(driver.returned, (std::vector<std::uint64_t>{1000 * us, 1011 * us}));
}

// The residency model (docs/accel.md, On-chip memory) on the round config, nodes one after the
// other (b_transport). Node 0 reads tensor 1 (200 kB, nobody wrote it: a miss, 2 chunks from
// HBM) and writes tensor 2 (1.2 MB, more than the 800 kB left beside tensor 1: written straight
// to HBM, 12 write chunks). 14 chunks of 1 us each on the memory, one after the other; each
// slice is 1.4 MB at 1 TB/s / 14 = 0.1 us: done at 14 + 0.1 = 14.1 us. Node 1 reads tensor 1
// (on chip: a hit) and writes tensor 3 (100 kB, kept on chip): nothing moves, it takes its
// compute time, 1e6 FLOP at 1 TFLOP/s = 1 us, and returns at 15.1 us.
TEST_F(ScTest, ResidencyStreamsMissesAndWritesThroughTheDma)
{
    AccelConfig config = test::roundAccelConfig(1);
    ASSERT_EQ(config.sram.policy, SramPolicy::Lru);
    StatGroup stats("accel");
    Accelerator accel("accel", config, stats);
    FixedMemoryTarget memory("memory", Bandwidth::fromBytesPerSecond(1e11), Time());
    EtNodeInfo first = node(0, NodeKind::Compute, 1'000'000, 1'400'000);
    first.tensors =
        std::make_shared<const NodeTensors>(NodeTensors{{{1, 200'000}}, {{2, 1'200'000}}});
    EtNodeInfo second = node(1, NodeKind::Compute, 1'000'000, 300'000);
    second.tensors =
        std::make_shared<const NodeTensors>(NodeTensors{{{1, 200'000}}, {{3, 100'000}}});
    BlockingDriver driver("driver", {first, second});
    driver.socket.bind(accel.target);
    accel.memory.bind(memory.socket);
    sc_core::sc_start();
    ASSERT_EQ(driver.returned.size(), 2u);
    EXPECT_EQ(driver.returned[0], 14 * us + 100'000);
    EXPECT_EQ(driver.returned[1], 15 * us + 100'000);
    ASSERT_EQ(memory.accesses().size(), 14u);
    for (std::size_t i = 0; i < 14; ++i) {
        EXPECT_EQ(memory.accesses()[i].write, i >= 2) << i;
        EXPECT_EQ(memory.accesses()[i].bytes, 100'000u) << i;
    }
    const auto counter = [&](const char* path) {
        return dynamic_cast<const Counter&>(*stats.findStat(path)).value();
    };
    EXPECT_EQ(counter("dma_read_bytes"), 200'000u);
    EXPECT_EQ(counter("dma_write_bytes"), 1'200'000u);
    EXPECT_EQ(counter("sram.hits"), 1u);
    EXPECT_EQ(counter("sram.misses"), 1u);
    EXPECT_EQ(counter("sram.bypass_bytes"), 1'200'000u);
    EXPECT_EQ(counter("streamed_nodes"), 1u);
}

TEST_F(ScTest, ComputeEngineAloneAnswersBothTransports)
{
    AccelConfig config = testConfig();
    StatGroup stats("engine");
    ComputeEngine engine("engine", config, stats);
    BlockingDriver blocking("blocking", {node(0, NodeKind::Compute, 2'000'000, 0)});
    blocking.socket.bind(engine.target);
    sc_core::sc_start();
    // b_transport returns at once with a delay of 2 us.
    EXPECT_EQ(blocking.returned, (std::vector<std::uint64_t>{2 * us}));
}

TEST_F(ScTest, ExternalEngineBindingLeavesTheSocketToThePlatform)
{
    AccelConfig config = testConfig();
    StatGroup stats("accel");
    Accelerator accel("accel", config, stats, EngineBinding::External);
    StatGroup engineStats("engine");
    ComputeEngine engine("engine", config, engineStats);
    accel.engineSocket.bind(engine.target);
    FixedMemoryTarget memory("memory", Bandwidth::fromBytesPerSecond(1e11), Time());
    accel.memory.bind(memory.socket);
    Driver driver("driver", {node(0, NodeKind::Compute, 10'000'000, 1'500'000)});
    driver.socket.bind(accel.target);
    sc_core::sc_start();
    EXPECT_EQ(accel.engine(), nullptr);
    EXPECT_EQ(driver.finished[0], 11 * us);
    EXPECT_EQ(engineStats.findStat("nodes_roofline") != nullptr, true);
}

TEST_F(ScTest, NodeOfAnotherKindIsAnErrorNamingIt)
{
    sc_core::sc_report_handler::set_actions(sc_core::SC_ERROR, sc_core::SC_THROW);
    AccelConfig config = testConfig();
    Bench bench(config, {node(0, NodeKind::Send, 0, 100)});
    try {
        sc_core::sc_start();
        FAIL() << "expected an error report";
    } catch (const sc_core::sc_report& report) {
        EXPECT_STREQ(report.get_msg_type(), Accelerator::reportType);
        EXPECT_NE(std::string(report.get_msg()).find("accel: node 0 of rank 0 is a send node"),
                  std::string::npos)
            << report.get_msg();
    }
    EXPECT_EQ(bench.driver.status[0], tlm::TLM_GENERIC_ERROR_RESPONSE);
}

TEST_F(ScTest, EngineRejectsNodesThatAreNotCompute)
{
    sc_core::sc_report_handler::set_actions(sc_core::SC_ERROR, sc_core::SC_THROW);
    AccelConfig config = testConfig();
    StatGroup stats("engine");
    ComputeEngine engine("engine", config, stats);
    Driver driver("driver", {node(0, NodeKind::MemLoad, 0, 100)});
    driver.socket.bind(engine.target);
    try {
        sc_core::sc_start();
        FAIL() << "expected an error report";
    } catch (const sc_core::sc_report& report) {
        EXPECT_NE(std::string(report.get_msg())
                      .find("engine: node 0 of rank 0 is a mem_load node; the compute engine "
                            "runs compute nodes only"),
                  std::string::npos)
            << report.get_msg();
    }
    // The engine reported before taking a reference, so the stopped run leaves it nothing.
    EXPECT_EQ(driver.outstanding(), 0U);
}

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

TEST_F(ScTest, RejectedNodesAreAnsweredWithAnErrorStatusWhenReportsDoNotThrow)
{
    sc_core::sc_report_handler::set_actions(sc_core::SC_ERROR, sc_core::SC_DO_NOTHING);
    const int errorsBefore = sc_core::sc_report_handler::get_count(sc_core::SC_ERROR);
    AccelConfig config = testConfig();
    Bench bench(config,
                {node(0, NodeKind::Collective, 0, 100), node(1, NodeKind::Compute, 2'000'000, 0)});
    StatGroup stats("engine");
    ComputeEngine engine("lone_engine", config, stats);
    Driver direct("direct", {node(0, NodeKind::MemStore, 0, 100)});
    direct.socket.bind(engine.target);
    sc_core::sc_start();
    EXPECT_EQ(bench.driver.status[0], tlm::TLM_GENERIC_ERROR_RESPONSE);
    EXPECT_EQ(bench.driver.finished[0], 0u);
    // The other node is unaffected: 2e6 FLOP at 1 TFLOP/s.
    EXPECT_EQ(bench.driver.status[1], tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(bench.driver.finished[1], 2 * us);
    EXPECT_EQ(direct.status[0], tlm::TLM_GENERIC_ERROR_RESPONSE);
    EXPECT_EQ(engine.inFlight(), 0u);
    EXPECT_EQ(sc_core::sc_report_handler::get_count(sc_core::SC_ERROR) - errorsBefore, 2);
}

TEST_F(ScTest, EngineRecordsATimelineTrackPerUnit)
{
    test::TempDir dir;
    AccelConfig config = testConfig(2);
    {
        Timeline timeline(dir.file("trace.json").string());
        Bench bench(config,
                    {node(0, NodeKind::Compute, 1'000'000, 0),
                     node(1, NodeKind::Compute, 1000, 500'000, OperatorKind::Softmax)});
        bench.accel.engine()->attachTimeline(timeline, 3);
        sc_core::sc_start();
        timeline.close();
    }
    std::string trace = test::readFile(dir.file("trace.json"));
    EXPECT_NE(trace.find("accel.engine.unit1.vector"), std::string::npos);
    // Node 0: 1e6 FLOP at 0.5 TFLOP/s = 2 us on unit 0's tensor unit (thread 0).
    EXPECT_NE(trace.find("\"name\":\"node 0\""), std::string::npos) << trace;
    EXPECT_NE(trace.find("\"dur\":2"), std::string::npos) << trace;
}

} // namespace
} // namespace etsim::accel
