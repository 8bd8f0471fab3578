// The synchronisation of partitioned runs (platforms/partition/PartitionSync.h) without MPI:
// rounds between in-memory processes, the bound each may run to, the end, and the ROUND
// codec.

#include "platforms/partition/PartitionSync.h"

#include "tests/support/ErrorOf.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iterator>

namespace etsim::platform {
namespace {

using etsim::test::errorOf;

constexpr std::uint64_t lookahead = 1000;

// One round among `syncs`: each takes its rounds with its next event time, then receives
// what the others addressed to it.
void exchange(std::vector<PartitionSync>& syncs, const std::vector<std::uint64_t>& next)
{
    std::vector<std::vector<PartitionRound>> sent;
    for (std::size_t p = 0; p < syncs.size(); ++p)
        sent.push_back(syncs[p].takeRounds(next[p], 0));
    for (std::size_t p = 0; p < syncs.size(); ++p) {
        std::vector<PartitionRound> received(syncs.size());
        for (std::size_t q = 0; q < syncs.size(); ++q)
            if (q != p)
                received[q] = decodeRound(encodeRound(sent[q][p]), static_cast<std::uint32_t>(q));
        syncs[p].receiveRounds(received);
    }
}

net::CrossMessage collectiveTo(std::uint32_t dst, std::uint64_t arrivalPs)
{
    net::CrossMessage message;
    message.dst = dst;
    message.arrivalPs = arrivalPs;
    message.collective = 42;
    message.member = dst;
    message.chunk = 1;
    message.step = 3;
    return message;
}

TEST(PartitionSync, EveryProcessRunsToTheLowestBoundPlusTheLookahead)
{
    std::vector<PartitionSync> syncs;
    for (std::uint32_t p = 0; p < 3; ++p)
        syncs.emplace_back(3, p, lookahead);
    // Before any round: nothing can arrive from another process before the lookahead.
    EXPECT_EQ(syncs[0].bound(), lookahead);
    exchange(syncs, {5000, 7000, neverPs});
    for (const PartitionSync& sync : syncs) {
        EXPECT_EQ(sync.bound(), 6000U);
        EXPECT_FALSE(sync.finished());
    }
}

TEST(PartitionSync, AMessageInFlightHoldsEveryoneBack)
{
    // Process 2 has nothing to do, but process 0 sends it a message: process 1 must not run
    // past its arrival plus the lookahead, since process 2 may answer it then.
    std::vector<PartitionSync> syncs;
    for (std::uint32_t p = 0; p < 3; ++p)
        syncs.emplace_back(3, p, lookahead);
    syncs[0].depart(2, collectiveTo(2, 3000));
    exchange(syncs, {neverPs, 50000, neverPs});
    EXPECT_EQ(syncs[1].bound(), 4000U);
    EXPECT_FALSE(syncs[1].finished());
    EXPECT_EQ(syncs[2].messagesReceived(), 1U);
}

TEST(PartitionSync, TheRunEndsInTheSameRoundEverywhere)
{
    std::vector<PartitionSync> syncs;
    for (std::uint32_t p = 0; p < 2; ++p)
        syncs.emplace_back(2, p, lookahead);
    syncs[1].depart(0, collectiveTo(0, 9000));
    exchange(syncs, {neverPs, neverPs});
    EXPECT_FALSE(syncs[0].finished()) << "a message is in flight";
    exchange(syncs, {neverPs, neverPs});
    EXPECT_TRUE(syncs[0].finished());
    EXPECT_TRUE(syncs[1].finished());
    EXPECT_EQ(syncs[1].bound(), neverPs);
}

TEST(PartitionSync, RoundsSurviveTheirEncoding)
{
    PartitionRound round;
    round.lowerBoundPs = 123;
    round.sentThisRound = 2;
    round.nowPs = 100;
    round.messages.push_back(collectiveTo(5, 4000));
    net::CrossMessage p2p;
    p2p.pointToPoint = true;
    p2p.src = 1;
    p2p.dst = 6;
    p2p.arrivalPs = 5000;
    p2p.tag = 77;
    p2p.bytes = 4096;
    p2p.node = 9;
    round.messages.push_back(p2p);
    net::CrossMessage handOver = p2p;
    handOver.kind = net::CrossKind::HandOver;
    handOver.via = 3;
    handOver.sendId = 12;
    handOver.next = net::HandOver{1, 6, 3, 2, 4100, 4200, {9, std::uint64_t{1} << 63}};
    round.messages.push_back(handOver);
    net::CrossMessage done = p2p;
    done.kind = net::CrossKind::SendDone;
    done.via = 1;
    round.messages.push_back(done);
    const PartitionRound back = decodeRound(encodeRound(round), 1);
    EXPECT_EQ(back.lowerBoundPs, 123U);
    EXPECT_EQ(back.sentThisRound, 2U);
    ASSERT_EQ(back.messages.size(), 4U);
    EXPECT_EQ(back.messages[0].collective, 42U);
    EXPECT_EQ(back.messages[0].step, 3U);
    EXPECT_TRUE(back.messages[1].pointToPoint);
    EXPECT_EQ(back.messages[1].tag, 77U);
    EXPECT_EQ(back.messages[1].bytes, 4096U);
    EXPECT_EQ(back.messages[1].kind, net::CrossKind::Arrival);
    const net::CrossMessage& over = back.messages[2];
    EXPECT_EQ(over.kind, net::CrossKind::HandOver);
    EXPECT_TRUE(over.pointToPoint);
    EXPECT_EQ(over.via, 3U);
    EXPECT_EQ(over.sendId, 12U);
    EXPECT_EQ(over.next.src, 1U);
    EXPECT_EQ(over.next.dst, 6U);
    EXPECT_EQ(over.next.via, 3U);
    EXPECT_EQ(over.next.hop, 2U);
    EXPECT_EQ(over.next.requestedPs, 4100U);
    EXPECT_EQ(over.next.wireBytes, 4200U);
    EXPECT_EQ(over.next.order.key, 9U);
    EXPECT_EQ(over.next.order.sub, std::uint64_t{1} << 63);
    EXPECT_EQ(back.messages[3].kind, net::CrossKind::SendDone);
    EXPECT_EQ(back.messages[3].via, 1U);
}

// The fuzzer's seeds (tests/fuzz/seeds/round) are rounds as encodeRound writes them: the
// mixed one holds an arrival, a hand-over of a send, a SendDone and a hand-over of a
// collective message.
TEST(PartitionSync, TheFuzzSeedsAreRoundsOfEveryKind)
{
    const char* source = std::getenv("ETSIM_SOURCE_DIR");
    if (source == nullptr)
        GTEST_SKIP() << "ETSIM_SOURCE_DIR is not set (CTest sets it)";
    std::ifstream in(std::string(source) + "/tests/fuzz/seeds/round/mixed.round", std::ios::binary);
    const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                          std::istreambuf_iterator<char>());
    const PartitionRound round = decodeRound(bytes, 1);
    ASSERT_EQ(round.messages.size(), 4U);
    EXPECT_EQ(round.messages[0].kind, net::CrossKind::Arrival);
    EXPECT_EQ(round.messages[1].kind, net::CrossKind::HandOver);
    EXPECT_TRUE(round.messages[1].pointToPoint);
    EXPECT_EQ(round.messages[2].kind, net::CrossKind::SendDone);
    EXPECT_EQ(round.messages[3].kind, net::CrossKind::HandOver);
    EXPECT_EQ(round.messages[3].next.hop, 2U);
    EXPECT_EQ(encodeRound(round), bytes);
}

TEST(PartitionSync, BrokenRoundsNameTheirSender)
{
    std::vector<std::uint8_t> bytes = encodeRound(PartitionRound{});
    bytes.pop_back();
    EXPECT_NE(errorOf([&] { decodeRound(bytes, 3); }).find("partition 3 sent a broken ROUND: "),
              std::string::npos);
    PartitionRound unknown;
    unknown.messages.emplace_back();
    std::vector<std::uint8_t> strange = encodeRound(unknown);
    strange[32] = 7 << 1; // the first message's kind: no such CrossKind
    EXPECT_EQ(errorOf([&] { decodeRound(strange, 2); }),
              "partition 2 sent a broken ROUND: a message of unknown kind 14");
    // A count the bytes cannot hold is refused before anything is allocated for it; bytes
    // after the last message are a broken peer too.
    std::vector<std::uint8_t> empty = encodeRound(PartitionRound{});
    empty[24] = 0xff;
    empty[25] = 0xff;
    EXPECT_EQ(errorOf([&] { decodeRound(empty, 2); }),
              "partition 2 sent a broken ROUND: it announces 65535 messages in 0 bytes");
    std::vector<std::uint8_t> longer = encodeRound(PartitionRound{});
    longer.push_back(0);
    EXPECT_NE(errorOf([&] { decodeRound(longer, 2); }).find("unexpected trailing byte"),
              std::string::npos);
    EXPECT_EQ(errorOf([] { PartitionSync(2, 0, 0); }),
              "partitions: the lookahead must be > 0 (PartitionPlan refuses a cut without "
              "latency)");
}

} // namespace
} // namespace etsim::platform
