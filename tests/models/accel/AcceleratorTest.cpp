// The accelerator and its compute engine through the execution protocol, with a
// fixed-bandwidth memory standing in for HBM. Times are hand-computed from the config below.

#include "tests/models/accel/AcceleratorBench.h"
#include "tests/support/ScKernel.h"
#include "tests/support/ScTest.h"
#include "tests/support/TempDir.h"
#include "tests/support/TestTargets.h"

#include <gtest/gtest.h>
#include <tlm_utils/simple_initiator_socket.h>

#include <vector>

namespace etsim::accel {
namespace {

using namespace testbench; // NOLINT(google-build-using-namespace): the bench is this test's
                           // vocabulary
using test::ScTest;

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

// A node's named tensors must fit the memory, each tensor id counted once: an in-place update
// (the same id read and written) holds its tensor once though it moves it twice. tensor_size,
// what the node moves, may reach twice the memory.
TEST_F(ScTest, NodesMustFitTheMemoryCountingAnInPlaceTensorOnce)
{
    AccelConfig config = testConfig();
    config.memory.capacity = Size::fromBytes(10'000'000);
    EtNodeInfo inPlace = node(0, NodeKind::Compute, 1'000'000, 12'000'000);
    inPlace.tensors =
        std::make_shared<const NodeTensors>(NodeTensors{{{1, 6'000'000}}, {{1, 6'000'000}}});
    {
        Bench bench(config, {inPlace});
        sc_core::sc_start();
        ASSERT_EQ(bench.driver.status.size(), 1U);
        EXPECT_EQ(bench.driver.status[0], tlm::TLM_OK_RESPONSE);
    }
    sc_core::sc_report_handler::set_actions(sc_core::SC_ERROR, sc_core::SC_THROW);
    // Each refusal elaborates its own bench, in a kernel of its own.
    const auto refusal = [&](const EtNodeInfo& refused) {
        test::ScKernel fresh;
        Bench bench(config, {refused});
        try {
            sc_core::sc_start();
        } catch (const sc_core::sc_report& report) {
            return std::string(report.get_msg());
        }
        return std::string("no error");
    };
    EtNodeInfo copy = inPlace;
    copy.tensors =
        std::make_shared<const NodeTensors>(NodeTensors{{{1, 6'000'000}}, {{2, 6'000'000}}});
    const std::string held = refusal(copy);
    EXPECT_NE(held.find("node 0 of rank 0's inputs and outputs hold 12000000 B (each tensor id "
                        "once), more than the 10000000 B the accelerator's memory holds"),
              std::string::npos)
        << held;
    const std::string moves = refusal(node(0, NodeKind::Compute, 1'000'000, 20'000'001));
    EXPECT_NE(moves.find("moves 20000001 B (tensor_size), more than twice the 10000000 B"),
              std::string::npos)
        << moves;
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
