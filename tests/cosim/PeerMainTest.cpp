// The start of every peer program (cosim/peer/PeerMain.h): its command line, its errors, and
// the connection to etsim over a socket and over the shared-memory hand-over.

#include "cosim/peer/PeerMain.h"

#include "cosim/transport/AsioTransport.h"
#include "cosim/transport/SharedMemoryTransport.h"
#include "cosim/wire/Frame.h"
#include "tests/support/ErrorOf.h"
#include "tests/support/TempDir.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace etsim::cosim {
namespace {

using test::errorOf;

constexpr std::chrono::milliseconds timeout{2000};

// A command line as main() receives it.
struct Argv {
    explicit Argv(std::vector<std::string> words) : words(std::move(words))
    {
        for (std::string& word : this->words)
            pointers.push_back(word.data());
    }
    int argc() const { return static_cast<int>(pointers.size()); }
    char** argv() { return pointers.data(); }

    std::vector<std::string> words;
    std::vector<char*> pointers;
};

// Sends `text` one way and returns what arrives on the other side.
std::string carry(Transport& from, Transport& to, const std::string& text)
{
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(text.data());
    EXPECT_EQ(from.writeSome(bytes, text.size()).bytes, text.size());
    std::string received;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (received.size() < text.size()) {
        std::uint8_t buffer[64];
        const IoResult result = to.readSome(buffer, sizeof buffer);
        EXPECT_TRUE(result.ok()) << result.error;
        if (!result.ok())
            break;
        received.append(reinterpret_cast<const char*>(buffer), result.bytes);
        if (result.bytes == 0 && !to.waitIo(false, deadline))
            break;
    }
    return received;
}

TEST(PeerCommandLine, ConsumesEndpointAndListenAndHandsOverTheRest)
{
    Argv args({"peer",
               "--endpoint",
               "unix:/tmp/x.sock",
               "--latency-ps",
               "1500",
               "--listen",
               "--name",
               "tile"});
    PeerCommandLine line(args.argc(), args.argv());
    ASSERT_TRUE(line.next());
    EXPECT_EQ(line.option(), "--latency-ps");
    EXPECT_EQ(line.wholeNumber(), 1500u);
    ASSERT_TRUE(line.next());
    EXPECT_EQ(line.option(), "--name");
    EXPECT_STREQ(line.value(), "tile");
    EXPECT_FALSE(line.next());
    EXPECT_EQ(line.endpoint(), "unix:/tmp/x.sock");
    EXPECT_TRUE(line.listen());
}

TEST(PeerCommandLine, DefaultsToConnectingWithNoEndpoint)
{
    Argv args({"peer"});
    PeerCommandLine line(args.argc(), args.argv());
    EXPECT_FALSE(line.next());
    EXPECT_EQ(line.endpoint(), "");
    EXPECT_FALSE(line.listen());
    EXPECT_EQ(errorOf<CosimError>([&] { line.open(timeout); }),
              "--endpoint is required (unix:/path, tcp:127.0.0.1:PORT or shm:/path)");
}

TEST(PeerCommandLine, RefusesAMissingValue)
{
    Argv endpoint({"peer", "--endpoint"});
    PeerCommandLine first(endpoint.argc(), endpoint.argv());
    EXPECT_EQ(errorOf<CosimError>([&] { first.next(); }), "--endpoint needs a value");

    Argv latency({"peer", "--latency-ps"});
    PeerCommandLine second(latency.argc(), latency.argv());
    ASSERT_TRUE(second.next());
    EXPECT_EQ(errorOf<CosimError>([&] { second.wholeNumber(); }), "--latency-ps needs a value");
}

TEST(PeerCommandLine, RefusesAValueThatIsNotAWholeNumber)
{
    Argv args({"peer", "--mtu", "9k", "--mtu", ""});
    PeerCommandLine line(args.argc(), args.argv());
    ASSERT_TRUE(line.next());
    EXPECT_EQ(errorOf<CosimError>([&] { line.wholeNumber(); }),
              "--mtu: \"9k\" is not a whole number");
    ASSERT_TRUE(line.next());
    EXPECT_EQ(errorOf<CosimError>([&] { line.wholeNumber(); }),
              "--mtu: \"\" is not a whole number");
    EXPECT_EQ(parseWholeNumber("--major", "7"), 7u);
}

TEST(OpenPeerTransport, RefusesBadEndpoints)
{
    EXPECT_EQ(errorOf<CosimError>([] { openPeerTransport("", false, timeout); }),
              "--endpoint is required (unix:/path, tcp:127.0.0.1:PORT or shm:/path)");
    EXPECT_EQ(errorOf<CosimError>([] { openPeerTransport("shm", true, timeout); }),
              "--endpoint shm needs the socket path: shm:/path");
    EXPECT_NE(errorOf<CosimError>([] {
                  openPeerTransport("pipe:/x", false, timeout);
              }).find("cosim: peer endpoint \"pipe:/x\""),
              std::string::npos);
}

TEST(OpenPeerTransport, ListeningGivesUpAfterTheTimeout)
{
    const test::TempDir dir;
    const std::string path = dir.file("p.sock").string();
    const std::string message = errorOf<CosimError>(
        [&] { openPeerTransport("unix:" + path, true, std::chrono::milliseconds(50)); });
    EXPECT_NE(message.find("cosim: no peer connected to unix:" + path), std::string::npos)
        << message;
}

TEST(OpenPeerTransport, ListensForTheHost)
{
    const test::TempDir dir;
    const std::string path = dir.file("p.sock").string();
    std::unique_ptr<Transport> peer;
    std::thread listener([&] { peer = openPeerTransport("unix:" + path, true, timeout); });
    std::unique_ptr<Transport> host;
    // The peer binds in its thread: retry until the socket exists.
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!host && std::chrono::steady_clock::now() < deadline) {
        try {
            host = connectTo(Endpoint::parse("unix:" + path), std::chrono::milliseconds(100));
        } catch (const CosimError&) {
        }
    }
    listener.join();
    ASSERT_TRUE(host);
    ASSERT_TRUE(peer);
    EXPECT_EQ(peer->describe(), "unix:" + path);
    EXPECT_EQ(carry(*host, *peer, "hello"), "hello");
}

TEST(OpenPeerTransport, ConnectsAndTakesTheSharedMemoryHandOver)
{
    const test::TempDir dir;
    const std::string path = dir.file("h.sock").string();
    Listener listener(Endpoint::parse("unix:" + path));
    std::unique_ptr<Transport> peer;
    std::string peerError;
    std::thread connector([&] {
        try {
            peer = openPeerTransport("shm:" + path, false, timeout);
        } catch (const CosimError& error) {
            peerError = error.what();
        }
    });
    std::unique_ptr<Transport> host = offerSharedMemory(listener.accept(timeout));
    connector.join();
    ASSERT_TRUE(peer) << peerError;
    EXPECT_EQ(carry(*host, *peer, "rings"), "rings");
    EXPECT_EQ(carry(*peer, *host, "back"), "back");
}

} // namespace
} // namespace etsim::cosim
