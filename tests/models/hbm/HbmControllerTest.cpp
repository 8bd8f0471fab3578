// The controller as a TLM-2.0 target: the execution protocol's non-blocking path and
// b_transport, for both fidelities, and the two fidelities agreeing on sustained bandwidth.

#include "models/hbm/HbmController.h"

#include "kernel/Extensions.h"
#include "models/hbm/AnalyticHbm.h"
#include "tests/support/ScTest.h"

#include <gtest/gtest.h>
#include <tlm_utils/simple_initiator_socket.h>

#include <cmath>
#include <memory>
#include <random>
#include <vector>

namespace etsim::hbm::test {
namespace {

using etsim::test::ScTest;

// Issues transactions on the non-blocking path and records when each response arrived.
class Initiator : public sc_core::sc_module {
public:
    tlm_utils::simple_initiator_socket<Initiator> socket;

    explicit Initiator(const sc_core::sc_module_name& name) : sc_module(name), socket("socket")
    {
        socket.register_nb_transport_bw(this, &Initiator::nbTransportBw);
    }

    /// Sends a request now; returns its index.
    std::size_t send(std::uint64_t address, std::uint64_t bytes, bool write)
    {
        auto payload = std::make_unique<tlm::tlm_generic_payload>();
        payload->set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
        payload->set_address(address);
        payload->set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
        EtNodeInfo info;
        info.kind = write ? NodeKind::MemStore : NodeKind::MemLoad;
        info.bytes = bytes;
        payload->set_extension(new EtNodeExtension(info));
        tlm::tlm_phase phase = tlm::BEGIN_REQ;
        sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
        tlm::tlm_sync_enum status = socket->nb_transport_fw(*payload, phase, delay);
        EXPECT_EQ(status, tlm::TLM_UPDATED);
        EXPECT_EQ(phase, tlm::END_REQ);
        payloads.push_back(std::move(payload));
        responses.push_back(sc_core::SC_ZERO_TIME);
        return payloads.size() - 1;
    }

    /// Sends `count` reads of `size` from address 0 on, keeping `window` in flight (a DMA
    /// engine's outstanding limit); the next goes out from the response of an earlier one.
    void stream(std::uint64_t size, std::size_t count, std::size_t window)
    {
        streamSize = size;
        streamLeft = count;
        for (std::size_t i = 0; i < window && streamLeft > 0; ++i)
            sendNext();
    }

    std::vector<std::unique_ptr<tlm::tlm_generic_payload>> payloads;
    std::vector<sc_core::sc_time> responses; // completion time of each, 0 until it arrives
    std::size_t completed = 0;

private:
    tlm::tlm_sync_enum
    nbTransportBw(tlm::tlm_generic_payload& payload, tlm::tlm_phase& phase, sc_core::sc_time& delay)
    {
        EXPECT_EQ(phase, tlm::BEGIN_RESP);
        EXPECT_EQ(payload.get_response_status(), tlm::TLM_OK_RESPONSE);
        for (std::size_t i = 0; i < payloads.size(); ++i)
            if (payloads[i].get() == &payload)
                responses[i] = sc_core::sc_time_stamp() + delay;
        ++completed;
        if (streamLeft > 0)
            sendNext();
        return tlm::TLM_COMPLETED;
    }

    void sendNext()
    {
        --streamLeft;
        send(payloads.size() * streamSize, streamSize, false);
    }

    std::uint64_t streamSize = 0;
    std::size_t streamLeft = 0;
};

HbmConfig withFidelity(Fidelity fidelity)
{
    HbmConfig config = hbmPreset(HbmPreset::Hbm3_6400);
    config.fidelity = fidelity;
    return config;
}

using HbmControllerTest = ScTest;

TEST_F(HbmControllerTest, DetailedReadCompletesAfterActivateAndRead)
{
    StatGroup stats("hbm");
    HbmController hbm("hbm", withFidelity(Fidelity::Detailed), stats);
    Initiator initiator("initiator");
    initiator.socket.bind(hbm.socket);
    sc_core::sc_start(sc_core::SC_ZERO_TIME);
    initiator.send(0, 64, false);
    sc_core::sc_start(1, sc_core::SC_US);
    EXPECT_EQ(initiator.completed, 1U);
    // Two bursts on two PCs in parallel: ACT, RD after 31 CK, data ends 22 CK later.
    EXPECT_EQ(initiator.responses[0], sc_core::sc_time(33125, sc_core::SC_PS));
    EXPECT_TRUE(hbm.idle());
    EXPECT_EQ(dynamic_cast<const Counter*>(stats.findStat("bytes_read"))->value(), 64U);
}

TEST_F(HbmControllerTest, AnalyticIsLatencyPlusSizeOverSustainedBandwidth)
{
    StatGroup stats("hbm");
    HbmConfig config = withFidelity(Fidelity::Analytic);
    HbmController hbm("hbm", config, stats);
    Initiator initiator("initiator");
    initiator.socket.bind(hbm.socket);
    sc_core::sc_start(sc_core::SC_ZERO_TIME);
    initiator.send(0, 1 << 20, false);
    initiator.send(1 << 20, 1 << 20, true); // queues behind the first on the one server
    sc_core::sc_start(1, sc_core::SC_MS);
    // 1 MiB read at 819.2 GB/s × 0.919 = 1392.8 ns, plus the idle-bank latency 33.125 ns.
    double transferPs = 1048576.0 / (819.2e9 * 0.919) * 1e12;
    EXPECT_NEAR(initiator.responses[0].to_seconds() * 1e12, transferPs + 33125, 1.0);
    // The write starts the 41 ns turnaround after the read's transfer and moves at the write
    // efficiency 0.927: 1380.8 ns.
    double writePs = 1048576.0 / (819.2e9 * 0.927) * 1e12;
    EXPECT_NEAR(
        initiator.responses[1].to_seconds() * 1e12, transferPs + 41000 + writePs + 33125, 2.0);
}

// The analytic server keeps its last transfer time per direction, as a stream asks for one
// chunk size over and over: runs of one size, other sizes and both directions must each get
// llround(bytes / rate) as if asked first.
TEST(AnalyticHbm, EverySizeAndDirectionGetsItsOwnTransferTime)
{
    StatGroup stats("hbm");
    const HbmConfig config = withFidelity(Fidelity::Analytic);
    AnalyticHbm hbm(config, stats);
    const double peak = config.organisation.devicePeak().bytesPerSecond() * 1e-12;
    const double readRate = peak * config.analytic.efficiency;
    const double writeRate = peak * config.analytic.writeShare();
    const std::uint64_t latency = config.analytic.latency.ps();
    struct Ask {
        std::uint64_t bytes;
        bool write;
    };
    const std::vector<Ask> asks{{2 << 20, false},
                                {2 << 20, false},
                                {100, false},
                                {2 << 20, true},
                                {2 << 20, true},
                                {100, false},
                                {2 << 20, false},
                                {64, true},
                                {0, true},
                                {64, true}};
    for (const Ask& ask : asks) {
        AnalyticHbm::Server idle; // each on an idle server: it starts on arrival
        const double rate = ask.write ? writeRate : readRate;
        const auto transfer =
            static_cast<std::uint64_t>(std::llround(static_cast<double>(ask.bytes) / rate));
        EXPECT_EQ(hbm.serve(idle, 1000, ask.bytes, ask.write), 1000 + transfer + latency)
            << ask.bytes << " B " << (ask.write ? "write" : "read");
    }
}

// settled() rewrites a server only where no arrival from `fromPs` on can tell: every
// transaction sequence arriving from then on completes at the same times on both, and both end
// in the same state. A server still busy, or turning around, keeps its times.
TEST(AnalyticHbm, SettledServerServesLaterArrivalsAlike)
{
    StatGroup stats("hbm");
    AnalyticHbm hbm(withFidelity(Fidelity::Analytic), stats);
    std::mt19937_64 random(20261207);
    auto pick = [&](std::uint64_t low, std::uint64_t high) {
        return std::uniform_int_distribution<std::uint64_t>(low, high)(random);
    };
    int idle = 0;
    for (int trial = 0; trial < 2000; ++trial) {
        const AnalyticHbm::Server server{pick(0, 200'000), pick(0, 1) == 1, pick(0, 1) == 1};
        const std::uint64_t from = pick(0, 200'000);
        AnalyticHbm::Server settled = hbm.settled(server, from);
        if (settled.freePs == from && !settled.used)
            ++idle;
        else
            EXPECT_EQ(settled.freePs, server.freePs) << "trial " << trial;
        AnalyticHbm::Server original = server;
        std::uint64_t arrival = from + pick(0, 1) * pick(0, 100'000);
        for (int ask = 0; ask < 3; ++ask) {
            const std::uint64_t bytes = pick(1, 4) * 65536;
            const bool write = pick(0, 1) == 1;
            ASSERT_EQ(hbm.serve(original, arrival, bytes, write),
                      hbm.serve(settled, arrival, bytes, write))
                << "trial " << trial << ", transaction " << ask;
            arrival += pick(0, 50'000);
        }
        EXPECT_EQ(original.freePs, settled.freePs);
        EXPECT_EQ(original.lastWrite, settled.lastWrite);
    }
    // Both kinds were drawn.
    EXPECT_GT(idle, 200);
    EXPECT_LT(idle, 1800);
}

// Sends `count` reads of `size` from a thread through b_transport and records the end time.
class BlockingInitiator : public sc_core::sc_module {
public:
    SC_HAS_PROCESS(BlockingInitiator);
    tlm_utils::simple_initiator_socket<BlockingInitiator> socket;

    BlockingInitiator(const sc_core::sc_module_name& name, std::uint64_t size)
        : sc_module(name), socket("socket"), size(size)
    {
        SC_THREAD(run);
    }

    sc_core::sc_time finished;

private:
    void run()
    {
        tlm::tlm_generic_payload payload;
        payload.set_command(tlm::TLM_READ_COMMAND);
        payload.set_address(0);
        payload.set_data_length(static_cast<unsigned>(size)); // no extension: data length
        sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
        socket->b_transport(payload, delay);
        EXPECT_EQ(payload.get_response_status(), tlm::TLM_OK_RESPONSE);
        finished = sc_core::sc_time_stamp() + delay;
    }

    std::uint64_t size;
};

TEST_F(HbmControllerTest, BlockingTransportGivesTheSameTimesAsTheNonBlockingPath)
{
    StatGroup detailedStats("detailed");
    StatGroup analyticStats("analytic");
    HbmController detailed("detailed", withFidelity(Fidelity::Detailed), detailedStats);
    HbmController analytic("analytic", withFidelity(Fidelity::Analytic), analyticStats);
    BlockingInitiator toDetailed("toDetailed", 32);
    BlockingInitiator toAnalytic("toAnalytic", 4096);
    toDetailed.socket.bind(detailed.socket);
    toAnalytic.socket.bind(analytic.socket);
    sc_core::sc_start(1, sc_core::SC_US);
    EXPECT_EQ(toDetailed.finished, sc_core::sc_time(33125, sc_core::SC_PS));
    double transferPs = 4096.0 / (819.2e9 * 0.919) * 1e12;
    EXPECT_NEAR(toAnalytic.finished.to_seconds() * 1e12, transferPs + 33125, 1.0);
}

TEST_F(HbmControllerTest, FidelitiesAgreeOnStreamingBandwidth)
{
    // 32 MiB of streaming reads as 128 DMA transactions of 256 KiB, two in flight: the
    // analytic model was calibrated on this pattern, so the completion times agree within 2 %.
    StatGroup detailedStats("detailed");
    StatGroup analyticStats("analytic");
    HbmController detailed("detailed", withFidelity(Fidelity::Detailed), detailedStats);
    HbmController analytic("analytic", withFidelity(Fidelity::Analytic), analyticStats);
    Initiator toDetailed("toDetailed");
    Initiator toAnalytic("toAnalytic");
    toDetailed.socket.bind(detailed.socket);
    toAnalytic.socket.bind(analytic.socket);
    sc_core::sc_start(sc_core::SC_ZERO_TIME);
    toDetailed.stream(256 * 1024, 128, 2);
    toAnalytic.stream(256 * 1024, 128, 2);
    sc_core::sc_start(1, sc_core::SC_MS);
    ASSERT_EQ(toDetailed.completed, 128U);
    ASSERT_EQ(toAnalytic.completed, 128U);
    double detailedEnd = toDetailed.responses.back().to_seconds();
    double analyticEnd = toAnalytic.responses.back().to_seconds();
    for (const sc_core::sc_time& t : toDetailed.responses)
        detailedEnd = std::max(detailedEnd, t.to_seconds());
    EXPECT_NEAR(detailedEnd / analyticEnd, 1.0, 0.02);
}

TEST_F(HbmControllerTest, InvalidConfigIsRefusedAtConstruction)
{
    StatGroup stats("hbm");
    HbmConfig config = withFidelity(Fidelity::Detailed);
    config.timing.rc = 10;
    try {
        HbmController hbm("hbm", config, stats);
        FAIL() << "no error";
    } catch (const Error& error) {
        EXPECT_EQ(std::string(error.what()),
                  "hbm.timing.rc: tRC (10) must be at least tRAS + tRP (45 + 26 = 71 cycles)");
    }
}

} // namespace
} // namespace etsim::hbm::test
