// The Proxy against real peers: conservative causality, local vs proxied results, and peer
// failures (killed, stalled, malformed frame, other major version), each ending with the
// expected error within a bound.

#include "cosim/Proxy.h"

#include "cosim/peer/FixedLatencyPeer.h"
#include "cosim/transport/MemoryPair.h"
#include "kernel/ScTime.h"
#include "tests/cosim/Traffic.h"
#include "tests/support/ErrorOf.h"
#include "tests/support/ScTest.h"
#include "tests/support/TempDir.h"
#include "tests/support/TestTargets.h"

#include <gtest/gtest.h>

#include <csignal>
#include <thread>

namespace etsim::cosim {
namespace {

using test::errorOf;
using Records = std::vector<test::Traffic::Record>;

constexpr std::uint64_t latencyPs = 1000000; // 1 us
constexpr std::uint64_t psPerByte = 1;
constexpr int streams = 4;
constexpr int perStream = 25;
constexpr std::uint64_t gapPs = 300000;

std::string refPeer(const std::string& extra = "")
{
    return std::string(ETSIM_REF_PEER) + " --endpoint {endpoint} --latency-ps " +
           std::to_string(latencyPs) + " --ps-per-byte " + std::to_string(psPerByte) + " " + extra;
}

ProxyOptions
spawnOptions(const std::string& endpoint, const std::string& extra = "", IoMode io = IoMode::Inline)
{
    ProxyOptions options;
    options.io = io;
    options.peer = endpoint;
    options.spawn = refPeer(extra);
    options.lookahead = Time::fromPs(latencyPs);
    options.timeout = std::chrono::milliseconds(2000);
    options.description = "kind: fixed-latency\nlatency: 1 us\n";
    return options;
}

struct RunOutput {
    Records records;
    std::uint64_t endPs = 0;
    RunOutcome outcome = RunOutcome::Stopped;
    std::uint64_t late = 0;
};

RunOutput runLocal(int streamCount = streams)
{
    test::ScKernel kernel;
    Simulation simulation;
    test::Traffic traffic("traffic", simulation, streamCount, perStream, gapPs);
    test::FixedTarget target("target", test::FixedTiming{latencyPs, psPerByte, 0});
    traffic.socket.bind(target.socket);
    const RunResult result = simulation.run();
    return RunOutput{traffic.records(), fromScTime(result.simulatedTime).ps(), result.outcome};
}

RunOutput runProxied(const ProxyOptions& options, int streamCount = streams)
{
    test::ScKernel kernel;
    Simulation simulation;
    test::Traffic traffic("traffic", simulation, streamCount, perStream, gapPs);
    Proxy proxy("proxy", options, &simulation);
    traffic.socket.bind(proxy.socket);
    const RunResult result = simulation.run();
    EXPECT_EQ(proxy.requestsSent(), static_cast<std::uint64_t>(streamCount * perStream));
    EXPECT_EQ(proxy.responsesReceived(), static_cast<std::uint64_t>(streamCount * perStream));
    EXPECT_EQ(proxy.peer().name, "ref-peer");
    // In thread mode every frame came through the I/O thread, whose async updates woke the
    // proxy; inline, neither happened.
    if (options.io == IoMode::Thread) {
        EXPECT_GE(proxy.framesReadByIoThread(), proxy.responsesReceived());
        EXPECT_GT(proxy.arrivalWakeups(), 0u);
    } else {
        EXPECT_EQ(proxy.framesReadByIoThread(), 0u);
        EXPECT_EQ(proxy.arrivalWakeups(), 0u);
    }
    return RunOutput{traffic.records(),
                     fromScTime(result.simulatedTime).ps(),
                     result.outcome,
                     proxy.lateResponses()};
}

void expectSameResults(const RunOutput& local, const RunOutput& proxied)
{
    EXPECT_EQ(proxied.outcome, RunOutcome::AllIdle);
    EXPECT_EQ(proxied.endPs, local.endPs);
    ASSERT_EQ(proxied.records.size(), local.records.size());
    for (std::size_t index = 0; index < local.records.size(); ++index) {
        EXPECT_EQ(proxied.records[index].issuePs, local.records[index].issuePs) << index;
        EXPECT_EQ(proxied.records[index].completePs, local.records[index].completePs) << index;
    }
}

std::string ioModeName(const testing::TestParamInfo<IoMode>& info)
{
    return info.param == IoMode::Thread ? "Thread" : "Inline";
}

// The runs below hold for both ways of reading the link.
class ProxyRun : public testing::TestWithParam<IoMode> {
protected:
    static ProxyOptions options(const std::string& endpoint, const std::string& extra = "")
    {
        return spawnOptions(endpoint, extra, GetParam());
    }
};

INSTANTIATE_TEST_SUITE_P(Io, ProxyRun, testing::Values(IoMode::Inline, IoMode::Thread), ioModeName);

TEST_P(ProxyRun, ConservativeSyncKeepsCausalityOnBothSides)
{
    auto [hostEnd, peerEnd] = makeMemoryPair();
    FixedLatencyReport report;
    std::string peerError = "(no error)";
    std::uint32_t hostCapabilities = 0;
    std::thread peerThread([&, transport = std::move(peerEnd)]() mutable {
        PeerOptions peerOptions;
        peerOptions.name = "thread-peer";
        peerOptions.minLatencyPs = latencyPs;
        peerOptions.timeout = std::chrono::milliseconds(5000);
        PeerSession session(std::move(transport), peerOptions);
        peerError = errorOf([&] {
            session.accept();
            hostCapabilities = session.host().capabilities;
            report = runFixedLatencyPeer(session, FixedLatencyOptions{latencyPs, psPerByte, 0, 0});
        });
    });
    RunOutput output;
    std::uint64_t grants = 0;
    {
        test::ScKernel kernel;
        Simulation simulation;
        test::Traffic traffic("traffic", simulation, streams, perStream, gapPs);
        ProxyOptions options;
        options.lookahead = Time::fromPs(latencyPs);
        options.timeout = std::chrono::milliseconds(5000);
        options.io = GetParam();
        Proxy proxy("proxy", options, &simulation, std::move(hostEnd));
        traffic.socket.bind(proxy.socket);
        const RunResult result = simulation.run();
        output =
            RunOutput{traffic.records(), fromScTime(result.simulatedTime).ps(), result.outcome};
        grants = proxy.grantsReceived();
    }
    peerThread.join();
    EXPECT_EQ(peerError, "(no error)");
    // The host announces every sync mode, the shared-memory ring and data; no token was set.
    EXPECT_EQ(hostCapabilities,
              capability::conservative | capability::looselyTimed | capability::unsynchronised |
                  capability::sharedMemory | capability::data);
    EXPECT_EQ(output.outcome, RunOutcome::AllIdle);
    // The peer checked every request's time against its clock; the proxy checks every
    // response against the kernel's (a violation would have ended the run with an error).
    EXPECT_EQ(report.causalityViolations, 0u);
    EXPECT_EQ(report.requests, static_cast<std::uint64_t>(streams * perStream));
    EXPECT_EQ(report.responses, report.requests);
    for (const test::Traffic::Record& record : output.records)
        EXPECT_EQ(record.completePs, record.issuePs + latencyPs + record.bytes * psPerByte);
    // Grants follow interactions: a few per transaction, not one per lookahead of time.
    EXPECT_LE(grants, 4u * streams * perStream);
}

TEST_P(ProxyRun, SameResultsLocalAndProxiedOverUnixSocket)
{
    test::TempDir dir;
    const RunOutput local = runLocal();
    EXPECT_EQ(local.outcome, RunOutcome::AllIdle);
    expectSameResults(local, runProxied(options("unix:" + dir.file("peer.sock").string())));
}

TEST_P(ProxyRun, SameResultsLocalAndProxiedOverTcp)
{
    expectSameResults(runLocal(), runProxied(options("tcp:127.0.0.1:0")));
}

TEST_P(ProxyRun, SameResultsLocalAndProxiedOverSharedMemory)
{
    // "shm": etsim picks the hand-over socket and tells the spawned peer "shm:/path".
    expectSameResults(runLocal(), runProxied(options("shm")));
}

TEST_P(ProxyRun, UnsynchronisedRunCompletesEveryTransactionNeverEarly)
{
    test::TempDir dir;
    ProxyOptions options = this->options("unix:" + dir.file("peer.sock").string());
    options.sync = SyncMode::Unsynchronised;
    const RunOutput local = runLocal();
    const RunOutput proxied = runProxied(options);
    EXPECT_EQ(proxied.outcome, RunOutcome::AllIdle);
    ASSERT_EQ(proxied.records.size(), local.records.size());
    // Without sync the kernel runs other streams' events while the peer works, so a response
    // may arrive after its time has passed: it is then delivered late (counted), never early.
    std::uint64_t exact = 0;
    for (const test::Traffic::Record& record : proxied.records) {
        const std::uint64_t due = record.issuePs + latencyPs + record.bytes * psPerByte;
        EXPECT_GE(record.completePs, due);
        exact += record.completePs == due ? 1 : 0;
    }
    EXPECT_EQ(exact + proxied.late, proxied.records.size());
}

TEST_P(ProxyRun, UnsynchronisedSingleStreamMatchesTheLocalRun)
{
    // One stream: the kernel has nothing else to do while a transaction is out, so it waits
    // for each answer and nothing can be late.
    test::TempDir dir;
    ProxyOptions options = this->options("unix:" + dir.file("peer.sock").string());
    options.sync = SyncMode::Unsynchronised;
    const RunOutput proxied = runProxied(options, 1);
    EXPECT_EQ(proxied.late, 0u);
    expectSameResults(runLocal(1), proxied);
}

TEST_P(ProxyRun, SameResultsWithLooselyTimedSync)
{
    test::TempDir dir;
    ProxyOptions options = this->options("unix:" + dir.file("peer.sock").string());
    options.sync = SyncMode::LooselyTimed;
    options.quantum = Time::fromPs(latencyPs);
    // The reference peer answers every request at its own time, so with a quantum of at most
    // its latency nothing is late and the results match.
    expectSameResults(runLocal(), runProxied(options));
}

TEST_P(ProxyRun, EveryWireStatusReachesTheInitiatorAsItsTlmStatus)
{
    // One stream, so record i is request i; the peer answers request i with wireStatus[i].
    const std::uint8_t wireStatus[] = {Response::ok, 4, 3, 2, 1, 0, Response::byteEnableError};
    const tlm::tlm_response_status expected[] = {tlm::TLM_OK_RESPONSE,
                                                 tlm::TLM_INCOMPLETE_RESPONSE,
                                                 tlm::TLM_GENERIC_ERROR_RESPONSE,
                                                 tlm::TLM_ADDRESS_ERROR_RESPONSE,
                                                 tlm::TLM_COMMAND_ERROR_RESPONSE,
                                                 tlm::TLM_BURST_ERROR_RESPONSE,
                                                 tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE};
    constexpr int count = 7;
    auto [hostEnd, peerEnd] = makeMemoryPair();
    std::string peerError = "(no error)";
    std::thread peerThread([&, transport = std::move(peerEnd)]() mutable {
        PeerOptions peerOptions;
        peerOptions.name = "status-peer";
        peerOptions.timeout = std::chrono::milliseconds(5000);
        PeerSession session(std::move(transport), peerOptions);
        peerError = errorOf([&] {
            session.accept();
            std::vector<PeerSession::Arrival> arrivals;
            while (session.advance(unlimitedPs, arrivals)) {
                for (const PeerSession::Arrival& arrival : arrivals) {
                    Response response;
                    response.status = wireStatus[arrival.id % count];
                    session.respond(arrival, arrival.timePs + latencyPs, response);
                }
                arrivals.clear();
            }
        });
    });
    Records records;
    {
        test::ScKernel kernel;
        Simulation simulation;
        test::Traffic traffic("traffic", simulation, 1, count, gapPs);
        ProxyOptions options;
        options.sync = SyncMode::Unsynchronised;
        options.timeout = std::chrono::milliseconds(5000);
        options.io = GetParam();
        Proxy proxy("proxy", options, &simulation, std::move(hostEnd));
        traffic.socket.bind(proxy.socket);
        EXPECT_EQ(simulation.run().outcome, RunOutcome::AllIdle);
        records = traffic.records();
    }
    peerThread.join();
    EXPECT_EQ(peerError, "(no error)");
    ASSERT_EQ(records.size(), static_cast<std::size_t>(count));
    for (int index = 0; index < count; ++index)
        EXPECT_EQ(records[index].status, expected[index]) << "request " << index;
}

// Protocol 1.2: the peer's TERMINATE answer carries its end-of-run text to Proxy::finish();
// a peer without one (as in 1.1) leaves it empty.
std::string farewellOfARun(IoMode io, const std::string& farewell)
{
    auto [hostEnd, peerEnd] = makeMemoryPair();
    std::string peerError = "(no error)";
    std::thread peerThread([&, transport = std::move(peerEnd)]() mutable {
        PeerOptions peerOptions;
        peerOptions.name = "thread-peer";
        peerOptions.minLatencyPs = latencyPs;
        peerOptions.timeout = std::chrono::milliseconds(5000);
        if (!farewell.empty())
            peerOptions.farewell = [&farewell] { return farewell; };
        PeerSession session(std::move(transport), peerOptions);
        peerError = errorOf([&] {
            session.accept();
            runFixedLatencyPeer(session, FixedLatencyOptions{latencyPs, psPerByte, 0, 0});
        });
    });
    std::string received;
    {
        test::ScKernel kernel;
        Simulation simulation;
        test::Traffic traffic("traffic", simulation, 1, 3, gapPs);
        ProxyOptions options;
        options.lookahead = Time::fromPs(latencyPs);
        options.timeout = std::chrono::milliseconds(5000);
        options.io = io;
        Proxy proxy("proxy", options, &simulation, std::move(hostEnd));
        traffic.socket.bind(proxy.socket);
        simulation.run();
        received = proxy.finish();
        EXPECT_EQ(proxy.finish(), received) << "a second call returns the same text";
    }
    peerThread.join();
    EXPECT_EQ(peerError, "(no error)");
    return received;
}

TEST_P(ProxyRun, ThePeersTerminateAnswerReachesFinish)
{
    const std::string text = "etsim-link-usage 1\nlink 0 5 6\n";
    EXPECT_EQ(farewellOfARun(GetParam(), text), text);
    EXPECT_EQ(farewellOfARun(GetParam(), ""), "");
}

TEST(Proxy, ZeroLookaheadIsRejectedBeforeConnecting)
{
    test::ScKernel kernel;
    ProxyOptions options;
    options.peer = "unix:/nonexistent/peer.sock";
    options.lookahead = Time::fromPs(0);
    EXPECT_EQ(errorOf([&] { Proxy proxy("proxy", options); }),
              "cosim proxy 'proxy': lookahead must be greater than zero for conservative "
              "synchronisation (set it to the component's smallest latency)");
}

TEST(Proxy, LookaheadLongerThanThePeerLatencyIsRefused)
{
    test::ScKernel kernel;
    test::TempDir dir;
    const std::string endpoint = "unix:" + dir.file("peer.sock").string();
    ProxyOptions options = spawnOptions(endpoint);
    options.lookahead = Time::fromPs(2 * latencyPs);
    EXPECT_EQ(errorOf([&] { Proxy proxy("proxy", options); }),
              "cosim proxy 'proxy' (peer at " + endpoint +
                  "): handshake failed: the peer refused: lookahead 2000000 ps exceeds the "
                  "smallest latency of ref-peer (1000000 ps): causality would break; configure "
                  "a lookahead of at most the component's smallest latency");
}

TEST(Proxy, PeerSpeakingAnotherMajorVersionIsRefused)
{
    test::ScKernel kernel;
    test::TempDir dir;
    const std::string endpoint = "unix:" + dir.file("peer.sock").string();
    EXPECT_EQ(errorOf([&] { Proxy proxy("proxy", spawnOptions(endpoint, "--major 2")); }),
              "cosim proxy 'proxy' (peer at " + endpoint +
                  "): handshake failed: the peer refused: protocol major version mismatch: "
                  "ref-peer speaks 2." +
                  std::to_string(protocolMinor) + ", etsim speaks 1." +
                  std::to_string(protocolMinor));
}

// Runs traffic through a spawned peer that misbehaves; returns the error the run ends with.
// Runs against a failing peer; `took` spans the run and the proxy's teardown (the peer
// stopped), which is when etsim can exit.
std::string failingRun(const std::string& extra,
                       std::chrono::milliseconds timeout,
                       bool killAfterTen,
                       std::chrono::steady_clock::duration& took,
                       const char* scheme = "unix:",
                       IoMode io = IoMode::Inline)
{
    test::ScKernel kernel;
    test::TempDir dir;
    Simulation simulation;
    test::Traffic traffic("traffic", simulation, streams, perStream, gapPs);
    ProxyOptions options = spawnOptions(scheme + dir.file("peer.sock").string(), extra, io);
    options.timeout = timeout;
    auto proxy = std::make_unique<Proxy>("proxy", options, &simulation);
    traffic.socket.bind(proxy->socket);
    if (killAfterTen)
        traffic.onComplete = [&](std::size_t completed) {
            if (completed == 10)
                ::kill(-proxy->peerProcess(), SIGKILL); // the peer's process group
        };
    const auto start = std::chrono::steady_clock::now();
    std::string message = "(no error)";
    try {
        simulation.run();
    } catch (const sc_core::sc_report& report) {
        message = report.what();
    }
    proxy.reset();
    took = std::chrono::steady_clock::now() - start;
    return message;
}

// Every failure ends the run the same way whichever thread reads the link.
class ProxyFailure : public testing::TestWithParam<IoMode> {};

INSTANTIATE_TEST_SUITE_P(Io,
                         ProxyFailure,
                         testing::Values(IoMode::Inline, IoMode::Thread),
                         ioModeName);

TEST_P(ProxyFailure, KilledPeerEndsTheRunWithAnErrorNamingPeerChannelAndTime)
{
    std::chrono::steady_clock::duration took{};
    const std::string message =
        failingRun("", std::chrono::milliseconds(1500), true, took, "unix:", GetParam());
    EXPECT_NE(message.find("cosim proxy 'proxy': peer 'ref-peer' at unix:"), std::string::npos)
        << message;
    EXPECT_NE(message.find(", channel 0, at simulated time "), std::string::npos) << message;
    EXPECT_NE(message.find("the peer closed the connection"), std::string::npos) << message;
    EXPECT_LT(took, std::chrono::milliseconds(1500)) << "EOF is noticed without the timeout";
}

TEST_P(ProxyFailure, KilledPeerOverSharedMemoryIsNoticedThroughTheSocket)
{
    std::chrono::steady_clock::duration took{};
    const std::string message =
        failingRun("", std::chrono::milliseconds(1500), true, took, "shm:", GetParam());
    EXPECT_NE(message.find("cosim proxy 'proxy': peer 'ref-peer' at shm:"), std::string::npos)
        << message;
    EXPECT_NE(message.find(", channel 0, at simulated time "), std::string::npos) << message;
    EXPECT_NE(message.find("the peer closed the connection"), std::string::npos) << message;
    EXPECT_LT(took, std::chrono::milliseconds(1500)) << "death is noticed without the timeout";
}

TEST_P(ProxyFailure, StalledPeerOverSharedMemoryEndsTheRunAfterTheTimeout)
{
    std::chrono::steady_clock::duration took{};
    const std::string message = failingRun(
        "--stall-after 5", std::chrono::milliseconds(1000), false, took, "shm:", GetParam());
    EXPECT_NE(message.find("no frame from the peer within 1000 ms"), std::string::npos) << message;
    EXPECT_GE(took, std::chrono::milliseconds(1000));
    // The timeout, then a stalled peer is stopped after a short grace, not a second later.
    EXPECT_LT(took, std::chrono::milliseconds(1800));
}

TEST_P(ProxyFailure, StalledPeerEndsTheRunAfterTheTimeout)
{
    std::chrono::steady_clock::duration took{};
    const std::string message = failingRun(
        "--stall-after 5", std::chrono::milliseconds(1000), false, took, "unix:", GetParam());
    EXPECT_NE(message.find("peer 'ref-peer'"), std::string::npos) << message;
    EXPECT_NE(message.find("no frame from the peer within 1000 ms while waiting for a grant or "),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("(peer stalled)"), std::string::npos) << message;
    EXPECT_GE(took, std::chrono::milliseconds(1000));
    // The timeout, then a stalled peer is stopped after a short grace, not a second later.
    EXPECT_LT(took, std::chrono::milliseconds(1800));
}

TEST_P(ProxyFailure, MalformedFrameEndsTheRun)
{
    std::chrono::steady_clock::duration took{};
    const std::string message = failingRun(
        "--bad-frame-after 5", std::chrono::milliseconds(1500), false, took, "unix:", GetParam());
    EXPECT_NE(message.find("peer 'ref-peer'"), std::string::npos) << message;
    EXPECT_NE(message.find("malformed frame: bad frame magic 0xabababab"), std::string::npos)
        << message;
    EXPECT_LT(took, std::chrono::milliseconds(1500));
}

} // namespace
} // namespace etsim::cosim
