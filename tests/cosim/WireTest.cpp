// The wire codec (cosim/PROTOCOL.md): round trips, exact bytes, and every rejection.

#include "cosim/NodeInfoWire.h"
#include "cosim/sync/SyncState.h"
#include "cosim/transport/AsioTransport.h"
#include "cosim/wire/Frame.h"
#include "cosim/wire/Messages.h"
#include "tests/support/ErrorOf.h"

#include <gtest/gtest.h>

namespace etsim::cosim {
namespace {

using test::errorOf;

Frame sampleFrame()
{
    Frame frame;
    frame.header.type = MessageType::Request;
    frame.header.flags = frameflags::posted;
    frame.header.channel = 0x01020304;
    frame.header.requestId = 0x1122334455667788ull;
    frame.header.timestampPs = 1000000;
    frame.payload = {9, 8, 7};
    return frame;
}

TEST(Frame, HeaderIsLittleEndianWithTheDocumentedLayout)
{
    const std::vector<std::uint8_t> bytes = encodeFrame(sampleFrame());
    ASSERT_EQ(bytes.size(), 35u);
    const std::vector<std::uint8_t> header(bytes.begin(), bytes.begin() + 32);
    const std::vector<std::uint8_t> expected = {
        'E',  'T',  'S',  'C',  1,    2,    3,    2,    // magic, version 1.2, type, flags
        0x04, 0x03, 0x02, 0x01, 3,    0,    0,    0,    // channel, payload length
        0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, // request id
        0x40, 0x42, 0x0F, 0,    0,    0,    0,    0};   // 1,000,000 ps
    EXPECT_EQ(header, expected);
    EXPECT_EQ(bytes[32], 9);
}

TEST(Frame, RoundTrip)
{
    const Frame in = sampleFrame();
    const std::vector<std::uint8_t> bytes = encodeFrame(in);
    const Frame out = decodeFrame(bytes.data(), bytes.size(), Limits{}, "test");
    EXPECT_EQ(out.header.type, MessageType::Request);
    EXPECT_EQ(out.header.flags, frameflags::posted);
    EXPECT_EQ(out.header.channel, 0x01020304u);
    EXPECT_EQ(out.header.payloadLength, 3u);
    EXPECT_EQ(out.header.requestId, 0x1122334455667788ull);
    EXPECT_EQ(out.header.timestampPs, 1000000u);
    EXPECT_EQ(out.payload, in.payload);
}

TEST(Frame, RejectsBadMagic)
{
    std::vector<std::uint8_t> bytes = encodeFrame(sampleFrame());
    bytes[0] = 'X';
    EXPECT_EQ(errorOf([&] { decodeFrame(bytes.data(), bytes.size(), Limits{}, "peer 'p'"); }),
              "peer 'p': bad frame magic 0x43535458 (expected 0x43535445 \"ETSC\"); the other "
              "side does not speak the etsim co-simulation protocol or the stream lost its "
              "framing");
}

TEST(Frame, RejectsUnknownTypes)
{
    std::vector<std::uint8_t> bytes = encodeFrame(sampleFrame());
    bytes[6] = 8;
    EXPECT_EQ(errorOf([&] { decodeFrame(bytes.data(), bytes.size(), Limits{}, "w"); }),
              "w: unknown message type 8 (known: 1 HELLO .. 7 ERROR)");
    bytes[6] = 0;
    EXPECT_EQ(errorOf([&] { decodeFrame(bytes.data(), bytes.size(), Limits{}, "w"); }),
              "w: unknown message type 0 (known: 1 HELLO .. 7 ERROR)");
}

TEST(Frame, RejectsUnknownFlags)
{
    std::vector<std::uint8_t> bytes = encodeFrame(sampleFrame());
    bytes[7] = 0x84;
    EXPECT_EQ(errorOf([&] { decodeFrame(bytes.data(), bytes.size(), Limits{}, "w"); }),
              "w: unknown flag bits 132 in REQUEST frame");
}

TEST(Frame, RejectsOversizeLengthFromTheHeaderAlone)
{
    Frame frame = sampleFrame();
    frame.payload.assign(100, 0);
    const std::vector<std::uint8_t> bytes = encodeFrame(frame);
    Limits limits;
    limits.maxPayload = 99;
    // Only the 32 header bytes are given: the check happens before the payload is read.
    EXPECT_EQ(errorOf([&] { decodeHeader(bytes.data(), limits, "w"); }),
              "w: REQUEST frame announces a payload of 100 bytes, more than the limit of 99");
    std::vector<std::uint8_t> huge = encodeFrame(sampleFrame());
    huge[12] = huge[13] = huge[14] = huge[15] = 0xFF;
    EXPECT_EQ(errorOf([&] { decodeHeader(huge.data(), Limits{}, "w"); }),
              "w: REQUEST frame announces a payload of 4294967295 bytes, more than the limit of "
              "1048576");
}

TEST(Frame, RejectsTruncatedAndTrailingBytes)
{
    const std::vector<std::uint8_t> bytes = encodeFrame(sampleFrame());
    EXPECT_EQ(errorOf([&] { decodeFrame(bytes.data(), 20, Limits{}, "w"); }),
              "w: truncated frame: 20 byte(s), a header needs 32");
    EXPECT_EQ(errorOf([&] { decodeFrame(bytes.data(), 34, Limits{}, "w"); }),
              "w: truncated REQUEST frame: payload length 3 but only 2 byte(s) follow");
    std::vector<std::uint8_t> longer = bytes;
    longer.push_back(0);
    EXPECT_EQ(errorOf([&] { decodeFrame(longer.data(), longer.size(), Limits{}, "w"); }),
              "w: 1 trailing byte(s) after a REQUEST frame");
}

WireNodeInfo fullNode()
{
    WireNodeInfo node;
    node.rank = 7;
    node.node = 123456789012ull;
    node.kind = 6;
    node.onHost = true;
    node.bytes = 1ull << 40;
    node.flops = 99;
    node.collective = 1;
    node.peer = 3;
    node.tag = 42;
    node.group = 5;
    node.groupRanks = std::vector<std::uint32_t>{0, 2, 4, 6};
    node.groupSequence = 11;
    node.involvedDims = 0b101;
    node.durationPs = 777;
    node.dataType = 4;
    node.op = 1;
    node.reduceOp = 1;
    node.gemm = WireNodeInfo::Gemm{128, 256, 512, 2};
    node.attributes = {
        {"name", std::string("allreduce.0")}, {"eager", std::int64_t{1}}, {"scale", 0.5}};
    return node;
}

TEST(Messages, RequestRoundTripKeepsEveryNodeField)
{
    Request in;
    in.command = 1;
    in.address = 0xDEADBEEF00ull;
    in.node = fullNode();
    in.data = {1, 2, 3, 4};
    const Request out = decodeRequest(encodeRequest(in));
    EXPECT_EQ(out.command, 1);
    EXPECT_EQ(out.address, 0xDEADBEEF00ull);
    ASSERT_TRUE(out.node.has_value());
    EXPECT_TRUE(*out.node == *in.node);
    EXPECT_EQ(out.data, in.data);

    Request bare;
    const Request bareOut = decodeRequest(encodeRequest(bare));
    EXPECT_FALSE(bareOut.node.has_value());
    EXPECT_TRUE(bareOut.data.empty());
}

TEST(Messages, NodeInfoConvertsBothWays)
{
    EtNodeInfo info;
    info.rank = RankId{3};
    info.node = NodeId{99};
    info.kind = NodeKind::Collective;
    info.bytes = 1 << 20;
    info.collective = CollectiveType::AllReduce;
    info.group = ProcessGroupId{2};
    info.groupRanks =
        std::make_shared<std::vector<RankId>>(std::vector<RankId>{RankId{0}, RankId{3}});
    info.groupSequence = 4;
    info.dataType = DataType::Bf16;
    info.op = OperatorKind::Gemm;
    info.reduceOp = ReduceOp::Sum;
    info.gemm = GemmShape{1, 2, 3, 4};
    info.setAttribute("name", "ar");
    info.setAttribute("eager", 1);
    const EtNodeInfo back =
        fromWire(decodeRequest(encodeRequest(Request{0, 0, toWire(info), {}})).node.value());
    EXPECT_EQ(back, info);
}

TEST(Messages, RequestRejections)
{
    Request in;
    in.node = fullNode();
    const std::vector<std::uint8_t> good = encodeRequest(in);

    std::vector<std::uint8_t> bad = good;
    bad[0] = 3;
    EXPECT_EQ(errorOf([&] { decodeRequest(bad); }),
              "cosim: REQUEST payload at offset 1: command 3 is not a tlm_command (0 read, 1 "
              "write, 2 ignore)");

    bad = good;
    bad[16 + 12] = 8; // node kind
    EXPECT_EQ(errorOf([&] { decodeRequest(bad); }),
              "cosim: REQUEST node info at offset 13: field 'kind' has value 8, the highest "
              "known is 7");

    bad = good;
    bad.resize(30);
    EXPECT_EQ(errorOf([&] { decodeRequest(bad); }).substr(0, 60),
              "cosim: REQUEST payload is truncated: field 'node info' needs");

    bad = good;
    bad.push_back(0);
    EXPECT_EQ(errorOf([&] { decodeRequest(bad); }),
              "cosim: REQUEST payload has 1 unexpected trailing byte(s) at offset " +
                  std::to_string(good.size()));

    // A group rank count that the block cannot hold is refused before reserving memory.
    Request lying;
    WireNodeInfo node = fullNode();
    node.groupRanks = std::vector<std::uint32_t>{};
    lying.node = node;
    bad = encodeRequest(lying);
    const std::size_t countAt = 16 + 4 + 8 + 1 + 1 + 8 + 8 + 1 + 1 + 4 + 8 + 1 + 4;
    bad[countAt] = bad[countAt + 1] = bad[countAt + 2] = 0xFF;
    bad[countAt + 3] = 0x7F;
    EXPECT_EQ(errorOf([&] { decodeRequest(bad); }).substr(0, 80),
              "cosim: REQUEST node info at offset 53: groupRanks count 2147483647 needs 8589934");
}

TEST(Messages, ResponseGrantAndTextRoundTrip)
{
    Response in;
    in.status = 2;
    in.data = {5, 6};
    const Response out = decodeResponse(encodeResponse(in));
    EXPECT_EQ(out.status, 2);
    EXPECT_EQ(out.data, in.data);
    // 1.1: the byte-enable error has its own code; anything above it is refused.
    in.status = Response::byteEnableError;
    EXPECT_EQ(decodeResponse(encodeResponse(in)).status, 6);
    std::vector<std::uint8_t> bad = encodeResponse(in);
    bad[0] = 7;
    EXPECT_EQ(errorOf([&] { decodeResponse(bad); }),
              "cosim: RESPONSE payload at offset 1: status 7 is not a wire response status (0..6: "
              "tlm_response_status + 4, or 6 for TLM_BYTE_ENABLE_ERROR_RESPONSE)");
    // Encoding into a used buffer replaces its contents.
    std::vector<std::uint8_t> reused = {9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9};
    encodeResponse(in, reused);
    EXPECT_EQ(reused, encodeResponse(in));
    EXPECT_EQ(decodeGrant(encodeGrant(123456)), 123456u);
    EXPECT_EQ(errorOf([&] {
                  decodeGrant({1, 2, 3});
              }),
              "cosim: GRANT payload is truncated: field 'acknowledged' needs 8 byte(s) at offset "
              "0, 3 left");
    EXPECT_EQ(decodeText(encodeText("bye")), "bye");
}

TEST(Messages, HelloRoundTripAndExtensionsAreSkipped)
{
    Hello in;
    in.capabilities = capability::conservative | capability::data;
    in.mode = SyncMode::LooselyTimed;
    in.lookaheadPs = 1000;
    in.quantumPs = 5000;
    in.name = "etsim";
    in.token = "secret";
    std::vector<std::uint8_t> bytes = encodeHello(in);
    Hello out = decodeHello(bytes);
    EXPECT_EQ(out.capabilities, in.capabilities);
    EXPECT_EQ(out.mode, SyncMode::LooselyTimed);
    EXPECT_EQ(out.lookaheadPs, 1000u);
    EXPECT_EQ(out.quantumPs, 5000u);
    EXPECT_EQ(out.name, "etsim");
    EXPECT_EQ(out.token, "secret");
    // A later minor version appends extensions; a 1.0 reader skips them.
    bytes.insert(bytes.end(), {1, 2, 3, 4});
    EXPECT_EQ(decodeHello(bytes).name, "etsim");

    std::vector<std::uint8_t> bad = encodeHello(in);
    bad[4] = 3;
    EXPECT_EQ(errorOf([&] { decodeHello(bad); }),
              "cosim: HELLO payload at offset 5: unknown sync mode 3 (0 conservative, 1 loosely "
              "timed, 2 unsynchronised)");
    bad = encodeHello(in);
    bad[6] = 200;
    EXPECT_EQ(errorOf([&] { decodeHello(bad); }),
              "cosim: HELLO payload at offset 39: extension offset 200 lies outside the payload "
              "(39..39)");
}

TEST(SyncState, BoundFollowsGrantsAndUnacknowledgedSends)
{
    SyncState sync(1000); // the other side reacts 1000 ps after our frames at the earliest
    EXPECT_EQ(sync.bound(), 0u) << "nothing may run before the first grant";
    sync.granted(unlimitedPs, 0);
    EXPECT_EQ(sync.bound(), unlimitedPs);
    sync.sent(5000);
    sync.sent(7000);
    EXPECT_EQ(sync.bound(), 6000u);
    sync.granted(9000, 1); // acknowledges the first frame only
    EXPECT_EQ(sync.bound(), 8000u);
    sync.granted(9000, 2);
    EXPECT_EQ(sync.bound(), 9000u);
    sync.sent(~std::uint64_t{0} - 10);
    EXPECT_EQ(sync.bound(), 9000u) << "saturates instead of wrapping";
}

TEST(SyncState, GrantsAreSentOnlyWhenTheyTellSomethingNew)
{
    SyncState sync(0);
    EXPECT_TRUE(sync.takeGrant(100));
    EXPECT_FALSE(sync.takeGrant(100));
    sync.received();
    EXPECT_TRUE(sync.takeGrant(100));
    EXPECT_TRUE(sync.takeGrant(200));
    EXPECT_EQ(sync.receivedCount(), 1u);
}

TEST(Endpoint, ParsesAndRejects)
{
    EXPECT_EQ(Endpoint::parse("unix:/tmp/x.sock").path, "/tmp/x.sock");
    const Endpoint tcp = Endpoint::parse("tcp:127.0.0.1:5000");
    EXPECT_EQ(tcp.host, "127.0.0.1");
    EXPECT_EQ(tcp.port, 5000);
    EXPECT_EQ(tcp.toString(), "tcp:127.0.0.1:5000");
    EXPECT_EQ(Endpoint::parse("shm").kind, Endpoint::Kind::SharedMemory);
    EXPECT_EQ(Endpoint::parse("shm").path, "");
    EXPECT_EQ(Endpoint::parse("shm:/tmp/h.sock").path, "/tmp/h.sock");
    EXPECT_EQ(Endpoint::parse("shm:/tmp/h.sock").toString(), "shm:/tmp/h.sock");
    EXPECT_EQ(errorOf([] { Endpoint::parse("tcp:127.0.0.1:70000"); }),
              "cosim: peer endpoint \"tcp:127.0.0.1:70000\": port \"70000\" is not a number from "
              "0 to 65535 (use \"unix:/path\", \"tcp:127.0.0.1:PORT\", \"shm\" or \"shm:/path\")");
    EXPECT_EQ(errorOf([] { Endpoint::parse("udp:x"); }),
              "cosim: peer endpoint \"udp:x\": unknown scheme (use \"unix:/path\", "
              "\"tcp:127.0.0.1:PORT\", \"shm\" or \"shm:/path\")");
    EXPECT_EQ(errorOf([] { Endpoint::parse("unix:"); }),
              "cosim: peer endpoint \"unix:\": the socket path is empty (use \"unix:/path\", "
              "\"tcp:127.0.0.1:PORT\", \"shm\" or \"shm:/path\")");
}

} // namespace
} // namespace etsim::cosim
