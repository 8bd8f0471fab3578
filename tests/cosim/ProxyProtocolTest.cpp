// The Proxy against a scripted peer that breaks PROTOCOL.md on purpose, over a real Unix
// socket: each violation ends the handshake or the run with the rule named; an ERROR sent
// while etsim writes is still shown; a peer that does not answer TERMINATE fails the end of
// the run; a stop request ends a wait on a stalled peer at once; a spawned peer that exits
// is noticed without the timeout, with its exit status.

#include "cosim/Proxy.h"
#include "cosim/transport/AsioTransport.h"
#include "cosim/transport/FrameLink.h"
#include "kernel/StopRequest.h"
#include "tests/cosim/Traffic.h"
#include "tests/support/ErrorOf.h"
#include "tests/support/ScTest.h"
#include "tests/support/TempDir.h"

#include <gtest/gtest.h>
#include <tlm_utils/simple_initiator_socket.h>

#include <chrono>
#include <functional>
#include <thread>

namespace etsim::cosim {
namespace {

using test::errorOf;
using namespace std::chrono_literals;

constexpr std::uint64_t latencyPs = 1000000;

// The peer's side: connects to etsim, answers HELLO (as `adjust` changes it) and CONFIG, then
// runs `script` on the link. Runs on its own thread; what went wrong there is in `error`.
class ScriptedPeer {
public:
    using Script = std::function<void(FrameLink&)>;

    ScriptedPeer(std::string endpoint,
                 std::function<void(Hello&)> adjust,
                 Script script,
                 Limits limits = {})
        : thread([=] { run(endpoint, adjust, script, limits); })
    {
    }
    ~ScriptedPeer() { thread.join(); }

    std::string error = "(no error)";

private:
    void run(const std::string& endpoint,
             const std::function<void(Hello&)>& adjust,
             const Script& script,
             Limits limits)
    {
        error = errorOf([&] {
            FrameLink link(connectTo(Endpoint::parse(endpoint), 5000ms), limits, "etsim");
            Frame hello = next(link);
            Hello ours = decodeHello(hello.payload);
            ours.name = "scripted-peer";
            ours.token.clear();
            if (adjust)
                adjust(ours);
            Frame answer;
            answer.header.type = MessageType::Hello;
            answer.header.flags = frameflags::response;
            answer.payload = encodeHello(ours);
            link.send(answer);
            std::optional<Frame> config = link.wait(5000000us);
            if (!config || config->header.type != MessageType::Config)
                return; // the host refused our HELLO
            Frame accepted;
            accepted.header.type = MessageType::Config;
            accepted.header.flags = frameflags::response;
            link.send(accepted);
            // Idle so far: nothing from us before etsim sends something (PROTOCOL.md 5).
            Frame grant;
            grant.header.type = MessageType::Grant;
            grant.header.timestampPs = unlimitedPs;
            grant.payload = encodeGrant(0);
            link.send(grant);
            script(link);
        });
    }

    std::thread thread;

public:
    static Frame next(FrameLink& link)
    {
        std::optional<Frame> frame = link.wait(5000000us);
        if (!frame)
            throw CosimError("scripted peer: no frame from etsim within 5 s");
        return std::move(*frame);
    }
};

Frame frameOf(MessageType type,
              std::uint8_t flags,
              std::uint64_t requestId,
              std::uint64_t timestampPs,
              std::vector<std::uint8_t> payload)
{
    Frame frame;
    frame.header.type = type;
    frame.header.flags = flags;
    frame.header.requestId = requestId;
    frame.header.timestampPs = timestampPs;
    frame.payload = std::move(payload);
    return frame;
}

ProxyOptions listening(const test::TempDir& dir)
{
    ProxyOptions options;
    options.peer = "unix:" + dir.file("peer.sock").string();
    options.listen = true;
    options.lookahead = Time::fromPs(latencyPs);
    options.timeout = 3000ms;
    return options;
}

std::string handshakeError(const std::function<void(Hello&)>& adjust)
{
    test::ScKernel kernel;
    test::TempDir dir;
    const ProxyOptions options = listening(dir);
    ScriptedPeer peer(options.peer, adjust, [](FrameLink&) {});
    return errorOf([&] { Proxy proxy("proxy", options); });
}

TEST(ProxyProtocol, AHelloEchoingAnotherSyncModeIsRefused)
{
    const std::string error = handshakeError([](Hello& hello) {
        hello.mode = SyncMode::LooselyTimed;
        hello.capabilities |= capability::conservative;
    });
    EXPECT_NE(error.find("handshake failed: the peer's HELLO echoes loosely-timed synchronisation, "
                         "but etsim requested conservative (PROTOCOL.md section 3: the peer "
                         "echoes the requested sync mode)"),
              std::string::npos)
        << error;
}

TEST(ProxyProtocol, AHelloLookaheadAboveTheOfferIsRefused)
{
    const std::string error =
        handshakeError([](Hello& hello) { hello.lookaheadPs = 2 * latencyPs; });
    EXPECT_NE(error.find("handshake failed: the peer's HELLO lookahead 2000000 ps is above the "
                         "1000000 ps etsim offered (PROTOCOL.md section 3"),
              std::string::npos)
        << error;
}

// One proxied run of light traffic against `script`; the error the run ends with.
std::string runError(const ScriptedPeer::Script& script,
                     Limits peerLimits = {},
                     int streams = 1,
                     int perStream = 3)
{
    test::ScKernel kernel;
    test::TempDir dir;
    const ProxyOptions options = listening(dir);
    ScriptedPeer peer(options.peer, nullptr, script, peerLimits);
    std::string message = "(no error)";
    {
        Simulation simulation;
        test::Traffic traffic("traffic", simulation, streams, perStream, 300000);
        Proxy proxy("proxy", options, &simulation);
        traffic.socket.bind(proxy.socket);
        try {
            simulation.run();
        } catch (const sc_core::sc_report& report) {
            message = report.what();
        }
    }
    return message;
}

// Waits for the first REQUEST (skipping grants); returns it.
Frame firstRequest(FrameLink& link)
{
    while (true) {
        Frame frame = ScriptedPeer::next(link);
        if (frame.header.type == MessageType::Request)
            return frame;
    }
}

TEST(ProxyProtocol, AResponseWithoutTheResponseFlagIsRefused)
{
    const std::string error = runError([](FrameLink& link) {
        const Frame request = firstRequest(link);
        link.send(frameOf(MessageType::Response,
                          0,
                          request.header.requestId,
                          request.header.timestampPs + latencyPs,
                          encodeResponse(Response{})));
        (void)link.wait(3000000us);
    });
    EXPECT_NE(error.find("RESPONSE to request 0 without the Response flag (PROTOCOL.md section "
                         "1: a frame that answers a request sets flag bit 0)"),
              std::string::npos)
        << error;
}

TEST(ProxyProtocol, AGrantWhoseCountDiffersFromItsHeaderIsRefused)
{
    const std::string error = runError([](FrameLink& link) {
        (void)firstRequest(link);
        link.send(frameOf(MessageType::Grant, 0, 1, 5 * latencyPs, encodeGrant(0)));
        (void)link.wait(3000000us);
    });
    EXPECT_NE(error.find("GRANT acknowledges 0 frames in its payload but 1 in its header's "
                         "request id (PROTOCOL.md section 2"),
              std::string::npos)
        << error;
}

TEST(ProxyProtocol, AGrantTimeThatGoesBackIsRefused)
{
    const std::string error = runError([](FrameLink& link) {
        (void)firstRequest(link);
        link.send(frameOf(MessageType::Grant, 0, 1, 800000, encodeGrant(1)));
        link.send(frameOf(MessageType::Grant, 0, 1, 500000, encodeGrant(1)));
        (void)link.wait(3000000us);
    });
    EXPECT_NE(error.find("GRANT time 500000 ps is below the previous GRANT's 800000 ps with no "
                         "new frame acknowledged (PROTOCOL.md section 5"),
              std::string::npos)
        << error;
}

TEST(ProxyProtocol, AGrantAcknowledgingFramesNeverSentIsRefused)
{
    const std::string error = runError([](FrameLink& link) {
        (void)firstRequest(link);
        link.send(frameOf(MessageType::Grant, 0, 9, 800000, encodeGrant(9)));
        (void)link.wait(3000000us);
    });
    EXPECT_NE(error.find("GRANT acknowledges 9 frames, but only 1 were sent"), std::string::npos)
        << error;
}

// Writes one transaction with 900 KB of data (more than a socket buffer holds) by b_transport.
struct BigWrite : sc_core::sc_module {
    tlm_utils::simple_initiator_socket<BigWrite> socket{"socket"};
    SC_HAS_PROCESS(BigWrite);
    BigWrite(const sc_core::sc_module_name& name, Simulation& simulation)
        : sc_core::sc_module(name), activity(simulation.enroll(std::string(this->name())))
    {
        activity.busy();
        SC_THREAD(write);
    }
    void write()
    {
        std::vector<unsigned char> data(900 * 1024, 0x5a);
        tlm::tlm_generic_payload payload;
        payload.set_command(tlm::TLM_WRITE_COMMAND);
        payload.set_data_ptr(data.data());
        payload.set_data_length(static_cast<unsigned>(data.size()));
        sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
        socket->b_transport(payload, delay);
        activity.idle();
    }
    ActivityToken activity;
};

// A peer that takes no payload above 1 KiB: it refuses the big REQUEST from its header with
// `answer` and closes while etsim is still writing the payload. Returns the run's error.
std::string bigWriteRefusedWith(IoMode io,
                                const std::function<void(FrameLink&, const CosimError&)>& answer)
{
    test::ScKernel kernel;
    test::TempDir dir;
    ProxyOptions options = listening(dir);
    options.io = io;
    Limits small;
    small.maxPayload = 1024;
    ScriptedPeer peer(
        options.peer,
        nullptr,
        [&answer](FrameLink& link) {
            try {
                (void)firstRequest(link);
            } catch (const CosimError& error) {
                answer(link, error);
                link.close();
            }
        },
        small);
    Simulation simulation;
    BigWrite writer("writer", simulation);
    Proxy proxy("proxy", options, &simulation);
    writer.socket.bind(proxy.socket);
    try {
        simulation.run();
    } catch (const sc_core::sc_report& report) {
        return report.what();
    }
    return "(no error)";
}

const char* modeName(IoMode io)
{
    return io == IoMode::Inline ? "inline" : "thread";
}

// The peer answers with ERROR: the run must quote it, not the write's "Broken pipe".
TEST(ProxyProtocol, AnErrorSentWhileEtsimWritesIsShown)
{
    for (const IoMode io : {IoMode::Inline, IoMode::Thread}) {
        const std::string message =
            bigWriteRefusedWith(io, [](FrameLink& link, const CosimError& error) {
                link.send(frameOf(MessageType::Error,
                                  0,
                                  0,
                                  0,
                                  encodeText(std::string("refused: ") + error.what())));
            });
        EXPECT_NE(message.find("the peer reported an error: refused: "), std::string::npos)
            << modeName(io) << ": " << message;
        EXPECT_EQ(message.find("Broken pipe"), std::string::npos)
            << modeName(io) << ": " << message;
    }
}

// The peer answers with garbage (a frame header of 0xab bytes): the run must name the
// malformed frame, not the write's "Broken pipe".
TEST(ProxyProtocol, AMalformedFrameSentWhileEtsimWritesIsShown)
{
    for (const IoMode io : {IoMode::Inline, IoMode::Thread}) {
        const std::string message = bigWriteRefusedWith(io, [](FrameLink& link, const CosimError&) {
            link.sendEncoded(std::vector<std::uint8_t>(headerSize, 0xab));
        });
        EXPECT_NE(message.find("malformed frame: bad frame magic 0xabababab"), std::string::npos)
            << modeName(io) << ": " << message;
        EXPECT_EQ(message.find("Broken pipe"), std::string::npos)
            << modeName(io) << ": " << message;
    }
}

// A finished run whose peer does not answer TERMINATE: Proxy::shutdownProblem says so.
std::string shutdownOf(const ScriptedPeer::Script& afterTerminate)
{
    test::ScKernel kernel;
    test::TempDir dir;
    const ProxyOptions options = listening(dir);
    ScriptedPeer peer(options.peer, nullptr, [&](FrameLink& link) {
        // Answer every request at once, with a grant that lets etsim run to the answer.
        std::uint64_t received = 0;
        while (true) {
            Frame frame = ScriptedPeer::next(link);
            if (frame.header.type == MessageType::Terminate) {
                afterTerminate(link);
                return;
            }
            if (frame.header.type != MessageType::Request)
                continue;
            ++received;
            const std::uint64_t due = frame.header.timestampPs + latencyPs;
            link.send(frameOf(MessageType::Response,
                              frameflags::response,
                              frame.header.requestId,
                              due,
                              encodeResponse(Response{})));
            link.send(frameOf(MessageType::Grant, 0, received, unlimitedPs, encodeGrant(received)));
        }
    });
    std::string problem;
    {
        Simulation simulation;
        test::Traffic traffic("traffic", simulation, 1, 2, 300000);
        Proxy proxy("proxy", options, &simulation);
        traffic.socket.bind(proxy.socket);
        EXPECT_EQ(simulation.run().outcome, RunOutcome::AllIdle);
        problem = proxy.shutdownProblem();
    }
    return problem;
}

TEST(ProxyProtocol, APeerThatClosesInsteadOfAnsweringTerminateFailedAtShutdown)
{
    const std::string problem = shutdownOf([](FrameLink& link) { link.close(); });
    EXPECT_NE(problem.find("cosim proxy 'proxy': peer 'scripted-peer' at unix:"), std::string::npos)
        << problem;
    EXPECT_NE(problem.find(": the peer failed at shutdown: did not answer TERMINATE: "),
              std::string::npos)
        << problem;
}

TEST(ProxyProtocol, APeerThatStaysSilentAfterTerminateFailedAtShutdown)
{
    const auto start = std::chrono::steady_clock::now();
    const std::string problem = shutdownOf([](FrameLink&) { std::this_thread::sleep_for(2500ms); });
    EXPECT_NE(problem.find("the peer failed at shutdown: did not answer TERMINATE within 2000 ms "
                           "(stalled)"),
              std::string::npos)
        << problem;
    EXPECT_LT(std::chrono::steady_clock::now() - start, 6s);
}

TEST(ProxyProtocol, APeerThatAnswersTerminateEndsCleanly)
{
    EXPECT_EQ(shutdownOf([](FrameLink& link) {
                  link.send(frameOf(MessageType::Terminate, frameflags::response, 0, 0, {}));
              }),
              "");
}

// A stop request (a signal) ends the run while the proxy waits on a silent peer, long before
// the peer's timeout.
TEST(ProxyProtocol, AStopRequestEndsAWaitOnAStalledPeer)
{
    test::ScKernel kernel;
    test::TempDir dir;
    ProxyOptions options = listening(dir);
    options.timeout = 20000ms;
    StopRequest stop;
    options.stop = &stop;
    ScriptedPeer peer(options.peer, nullptr, [](FrameLink& link) {
        (void)firstRequest(link);
        // Silent, but reads on until etsim says TERMINATE, which it then answers.
        while (true) {
            std::optional<Frame> frame = link.wait(10000000us);
            if (!frame || frame->header.type == MessageType::Terminate)
                break;
        }
        link.send(frameOf(MessageType::Terminate, frameflags::response, 0, 0, {}));
    });
    SimulationOptions simulationOptions;
    simulationOptions.stop = &stop;
    Simulation simulation(simulationOptions);
    test::Traffic traffic("traffic", simulation, 1, 3, 300000);
    Proxy proxy("proxy", options, &simulation);
    traffic.socket.bind(proxy.socket);
    std::thread requester([&] {
        std::this_thread::sleep_for(300ms);
        stop.request("SIGINT");
    });
    const auto start = std::chrono::steady_clock::now();
    const RunResult result = simulation.run();
    requester.join();
    EXPECT_EQ(result.outcome, RunOutcome::Interrupted);
    EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
    EXPECT_EQ(proxy.shutdownProblem(), "") << "the peer got TERMINATE and answered it";
}

TEST(ProxyProtocol, ASpawnedPeerThatExitsIsNoticedAtOnceWithItsStatus)
{
    test::ScKernel kernel;
    test::TempDir dir;
    ProxyOptions options;
    options.peer = "unix:" + dir.file("peer.sock").string();
    options.spawn = "EXIT_WITH=3 sh -c 'exit $EXIT_WITH'";
    options.lookahead = Time::fromPs(latencyPs);
    options.timeout = 20000ms;
    const auto start = std::chrono::steady_clock::now();
    const std::string error = errorOf([&] { Proxy proxy("proxy", options); });
    EXPECT_NE(error.find("the spawned peer exited with status 3 before it connected"),
              std::string::npos)
        << error;
    EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
}

} // namespace
} // namespace etsim::cosim
