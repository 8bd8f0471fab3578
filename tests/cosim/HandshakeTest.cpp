// HELLO and CONFIG over an in-memory pair: version, capability, lookahead and token checks.

#include "cosim/sync/Handshake.h"

#include "cosim/peer/PeerSession.h"
#include "cosim/transport/MemoryPair.h"
#include "tests/support/ErrorOf.h"

#include <gtest/gtest.h>

#include <thread>

namespace etsim::cosim {
namespace {

using test::errorOf;

struct Outcome {
    std::string host;
    std::string peer;
};

Outcome handshake(const Hello& hostHello, PeerOptions peerOptions)
{
    auto [hostEnd, peerEnd] = makeMemoryPair();
    Outcome outcome;
    peerOptions.timeout = std::chrono::milliseconds(2000);
    std::thread peerThread([&, transport = std::move(peerEnd)]() mutable {
        PeerSession session(std::move(transport), peerOptions);
        outcome.peer = errorOf([&] {
            session.accept();
            EXPECT_EQ(session.config(), "topology: ring");
        });
    });
    FrameLink link(std::move(hostEnd), Limits{}, "peer");
    outcome.host = errorOf([&] {
        handshakeAsHost(link, hostHello, "topology: ring", std::chrono::milliseconds(2000));
    });
    peerThread.join();
    return outcome;
}

Hello hostHello()
{
    Hello hello;
    hello.capabilities = capability::conservative;
    hello.mode = SyncMode::Conservative;
    hello.lookaheadPs = 1000;
    hello.name = "etsim";
    return hello;
}

PeerOptions peerOptions()
{
    PeerOptions options;
    options.name = "fabric";
    options.minLatencyPs = 1000;
    return options;
}

TEST(Handshake, Succeeds)
{
    const Outcome outcome = handshake(hostHello(), peerOptions());
    EXPECT_EQ(outcome.host, "(no error)");
    EXPECT_EQ(outcome.peer, "(no error)");
}

TEST(Handshake, MajorVersionMismatchNamesBothVersions)
{
    PeerOptions options = peerOptions();
    options.major = 2;
    const Outcome outcome = handshake(hostHello(), options);
    const std::string minor = std::to_string(protocolMinor);
    const std::string mismatch =
        "protocol major version mismatch: fabric speaks 2." + minor + ", etsim speaks 1." + minor;
    EXPECT_EQ(outcome.peer, mismatch);
    EXPECT_EQ(outcome.host, "the peer refused: " + mismatch);
}

TEST(Handshake, SyncModeMustBeACapabilityOfThePeer)
{
    PeerOptions options = peerOptions();
    options.capabilities = capability::conservative;
    Hello hello = hostHello();
    hello.mode = SyncMode::LooselyTimed;
    const Outcome outcome = handshake(hello, options);
    EXPECT_EQ(outcome.peer, "fabric cannot run loosely-timed synchronisation");
    EXPECT_EQ(outcome.host, "the peer refused: fabric cannot run loosely-timed synchronisation");
}

TEST(Handshake, LookaheadAboveTheComponentLatencyIsRefused)
{
    Hello hello = hostHello();
    hello.lookaheadPs = 1001;
    const Outcome outcome = handshake(hello, peerOptions());
    EXPECT_EQ(outcome.peer,
              "lookahead 1001 ps exceeds the smallest latency of fabric (1000 ps): causality "
              "would break; configure a lookahead of at most the component's smallest latency");
    hello.lookaheadPs = 0;
    EXPECT_EQ(handshake(hello, peerOptions()).peer,
              "lookahead must be greater than zero for conservative synchronisation");
}

TEST(Handshake, TokenMustMatch)
{
    PeerOptions options = peerOptions();
    options.token = "s3cret";
    Hello hello = hostHello();
    hello.token = "guess";
    EXPECT_EQ(handshake(hello, options).host,
              "the peer refused: token mismatch: the host presented a different shared token");
    hello.token = "s3cret";
    EXPECT_EQ(handshake(hello, options).host, "(no error)");
}

TEST(Handshake, PeerThatNeverAnswersTimesOut)
{
    auto [hostEnd, peerEnd] = makeMemoryPair();
    FrameLink link(std::move(hostEnd), Limits{}, "peer");
    const auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(
        errorOf([&] { handshakeAsHost(link, hostHello(), "", std::chrono::milliseconds(300)); }),
        "no HELLO within 300 ms while waiting for the peer's HELLO");
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

} // namespace
} // namespace etsim::cosim
