// The shared-memory ring transport: the hand-over on a Unix socket, byte streams larger than
// a ring both ways at once, frames through FrameLink, a peer that dies, and malformed
// hand-overs.

#include "cosim/transport/AsioTransport.h"
#include "cosim/transport/FrameLink.h"
#include "cosim/transport/SharedMemoryTransport.h"
#include "tests/support/ErrorOf.h"
#include "tests/support/TempDir.h"

#include <gtest/gtest.h>

#include <sys/socket.h>
#include <thread>

namespace etsim::cosim {
namespace {

using test::errorOf;
using Clock = std::chrono::steady_clock;

constexpr std::chrono::milliseconds timeout{2000};

struct RingPair {
    std::unique_ptr<Transport> host;
    std::unique_ptr<Transport> peer;
};

// Connects a host and a peer on a Unix socket and runs the hand-over (rings of `ringBytes`).
RingPair connectRings(const test::TempDir& dir, std::size_t ringBytes = 4096)
{
    Listener listener(Endpoint::parse("unix:" + dir.file("h.sock").string()));
    std::unique_ptr<Transport> peerSocket;
    std::thread connector(
        [&] { peerSocket = connectTo(listener.endpoint(), std::chrono::milliseconds(2000)); });
    std::unique_ptr<Transport> hostSocket = listener.accept(timeout);
    connector.join();
    RingPair pair;
    pair.host = offerSharedMemory(std::move(hostSocket), ringBytes);
    pair.peer = acceptSharedMemory(std::move(peerSocket), timeout);
    return pair;
}

// Writes all bytes, waiting for space; reads what arrives meanwhile into `received`.
void pump(Transport& transport,
          const std::vector<std::uint8_t>& out,
          std::vector<std::uint8_t>& received,
          std::size_t expected)
{
    std::size_t written = 0;
    std::uint8_t buffer[1000];
    const auto deadline = Clock::now() + std::chrono::seconds(10);
    while (written < out.size() || received.size() < expected) {
        if (written < out.size()) {
            const IoResult result = transport.writeSome(out.data() + written, out.size() - written);
            ASSERT_TRUE(result.ok()) << result.error;
            written += result.bytes;
        }
        const IoResult result = transport.readSome(buffer, sizeof buffer);
        ASSERT_TRUE(result.ok()) << result.error;
        received.insert(received.end(), buffer, buffer + result.bytes);
        const bool more = written < out.size() || received.size() < expected;
        if (result.bytes == 0 && more) {
            ASSERT_TRUE(transport.waitIo(written < out.size(), deadline))
                << "written " << written << " of " << out.size() << ", received " << received.size()
                << " of " << expected;
        }
    }
}

std::vector<std::uint8_t> pattern(std::size_t size, std::uint8_t seed)
{
    std::vector<std::uint8_t> bytes(size);
    for (std::size_t index = 0; index < size; ++index)
        bytes[index] = static_cast<std::uint8_t>(index * 31 + seed + index / 251);
    return bytes;
}

TEST(SharedMemory, StreamsLargerThanTheRingsFlowBothWaysAtOnce)
{
    test::TempDir dir;
    RingPair pair = connectRings(dir, 4096);
    EXPECT_EQ(pair.host->describe(), "shm:" + dir.file("h.sock").string());
    // 100 kB each way through 4 KiB rings: both sides write while the other's ring is full.
    const std::vector<std::uint8_t> toPeer = pattern(100000, 1);
    const std::vector<std::uint8_t> toHost = pattern(100000, 7);
    std::vector<std::uint8_t> atPeer;
    std::vector<std::uint8_t> atHost;
    std::thread peer([&] { pump(*pair.peer, toHost, atPeer, toPeer.size()); });
    pump(*pair.host, toPeer, atHost, toHost.size());
    peer.join();
    EXPECT_TRUE(atPeer == toPeer);
    EXPECT_TRUE(atHost == toHost);
}

TEST(SharedMemory, FrameRoundTripsThroughFrameLinks)
{
    test::TempDir dir;
    RingPair pair = connectRings(dir);
    FrameLink host(std::move(pair.host), Limits{}, "peer");
    FrameLink peer(std::move(pair.peer), Limits{}, "etsim");
    std::thread echo([&] {
        for (int index = 0; index < 1000; ++index) {
            std::optional<Frame> frame = peer.wait(std::chrono::seconds(5));
            ASSERT_TRUE(frame);
            frame->header.flags = frameflags::response;
            frame->header.type = MessageType::Response;
            peer.send(*frame);
        }
    });
    for (std::uint64_t index = 0; index < 1000; ++index) {
        Frame frame;
        frame.header.type = MessageType::Request;
        frame.header.requestId = index;
        frame.header.timestampPs = index * 1000;
        // Payloads from 0 to 9,990 bytes: some wrap around the 4 KiB ring, some exceed it.
        frame.payload = pattern(static_cast<std::size_t>(index * 10), 3);
        host.send(frame);
        std::optional<Frame> answer = host.wait(std::chrono::seconds(5));
        ASSERT_TRUE(answer);
        EXPECT_EQ(answer->header.type, MessageType::Response);
        EXPECT_EQ(answer->header.requestId, index);
        EXPECT_EQ(answer->header.timestampPs, index * 1000);
        EXPECT_TRUE(answer->payload == frame.payload) << index;
    }
    echo.join();
}

TEST(SharedMemory, WithAConcurrentReaderTheWriterWaitsForRoomOnly)
{
    // The Proxy's I/O-thread mode: one thread reads the host's link while another sends
    // frames that together fill the 4 KiB rings many times over, and the peer echoes each. The
    // sender never reads; the reader thread keeps the peer's writes moving.
    test::TempDir dir;
    RingPair pair = connectRings(dir);
    FrameLink host(std::move(pair.host), Limits{}, "peer");
    host.setConcurrentReader(true);
    FrameLink peer(std::move(pair.peer), Limits{}, "etsim");
    constexpr std::uint64_t count = 300;
    auto payloadOf = [](std::uint64_t index) {
        return pattern(1000 + static_cast<std::size_t>(index % 7) * 500, 5);
    };
    std::thread echo([&] {
        for (std::uint64_t index = 0; index < count; ++index) {
            std::optional<Frame> frame = peer.wait(std::chrono::seconds(5));
            ASSERT_TRUE(frame);
            frame->header.type = MessageType::Response;
            frame->header.flags = frameflags::response;
            peer.send(*frame);
        }
    });
    std::uint64_t received = 0;
    bool intact = true;
    std::thread reader([&] {
        while (received < count) {
            std::optional<Frame> frame = host.wait(std::chrono::seconds(5));
            if (!frame)
                return;
            intact = intact && frame->header.requestId == received &&
                     frame->payload == payloadOf(received);
            ++received;
        }
    });
    for (std::uint64_t index = 0; index < count; ++index) {
        Frame frame;
        frame.header.type = MessageType::Request;
        frame.header.requestId = index;
        frame.payload = payloadOf(index);
        host.send(frame);
    }
    reader.join();
    echo.join();
    EXPECT_EQ(received, count);
    EXPECT_TRUE(intact);
}

TEST(SharedMemory, FramesSentBeforeThePeerClosedAreDeliveredThenTheEnd)
{
    test::TempDir dir;
    RingPair pair = connectRings(dir);
    FrameLink host(std::move(pair.host), Limits{}, "peer");
    {
        FrameLink peer(std::move(pair.peer), Limits{}, "etsim");
        Frame bye;
        bye.header.type = MessageType::Terminate;
        peer.send(bye);
    } // the peer's side is gone: its socket closed
    std::optional<Frame> frame = host.wait(std::chrono::seconds(2));
    ASSERT_TRUE(frame);
    EXPECT_EQ(frame->header.type, MessageType::Terminate);
    const auto start = Clock::now();
    EXPECT_EQ(errorOf([&] { host.wait(std::chrono::seconds(2)); }),
              "the peer closed the connection (end of stream or reset)");
    EXPECT_LT(Clock::now() - start, std::chrono::milliseconds(500));
    Frame request;
    request.header.type = MessageType::Request;
    EXPECT_EQ(errorOf([&] { host.send(request); }),
              "cannot send REQUEST: shm:" + dir.file("h.sock").string() +
                  ": write failed: the peer closed the connection");
}

TEST(SharedMemory, MalformedOrMissingHandOverIsRefused)
{
    test::TempDir dir;
    Listener listener(Endpoint::parse("unix:" + dir.file("h.sock").string()));
    std::unique_ptr<Transport> peerSocket = connectTo(listener.endpoint(), timeout);
    std::unique_ptr<Transport> hostSocket = listener.accept(timeout);
    const std::string where =
        "cosim: shared-memory hand-over on unix:" + dir.file("h.sock").string() + ": ";
    EXPECT_EQ(
        errorOf([&] { acceptSharedMemory(std::move(peerSocket), std::chrono::milliseconds(100)); }),
        where + "nothing received within 100 ms");

    std::unique_ptr<Transport> second = connectTo(listener.endpoint(), timeout);
    std::unique_ptr<Transport> hostSecond = listener.accept(timeout);
    const std::vector<std::uint8_t> hello(16, 'X');
    ASSERT_EQ(hostSecond->writeSome(hello.data(), hello.size()).bytes, 16u);
    EXPECT_EQ(errorOf([&] { acceptSharedMemory(std::move(second), timeout); }),
              where + "expected the 16-byte hand-over starting with \"ETSM\", got 16 other bytes "
                      "(is the host using \"shm\"?)");
    EXPECT_EQ(errorOf([&] { offerSharedMemory(std::move(hostSocket), 1000); }),
              where + "ring size 1000 bytes is not a power of two from 4096 to 2^30");
}

} // namespace
} // namespace etsim::cosim
