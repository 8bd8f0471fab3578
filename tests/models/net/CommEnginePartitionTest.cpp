// The CommEngine's side of partitioned runs without MPI: what comes in from another process is
// checked before it is used (a broken or hostile peer gets an error naming the problem, never
// an index out of range), and astra_aware hands a message over where its route enters a link
// another process times.

#include "kernel/Error.h"
#include "models/net/CommEngine.h"
#include "tests/models/net/NetTestSupport.h"
#include "tests/support/ErrorOf.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace etsim::net {
namespace {

using etsim::test::errorOf;

// This process holds ranks below `split`; what departs is kept.
class TwoProcesses final : public PartitionLink {
public:
    explicit TwoProcesses(std::uint32_t split) : split(split) {}
    bool isLocal(std::uint32_t rank) const override { return rank < split; }
    bool together(std::uint32_t a, std::uint32_t b) const override
    {
        return (a < split) == (b < split);
    }
    void depart(const CrossMessage& message) override { departed.push_back(message); }

    std::uint32_t split;
    std::vector<CrossMessage> departed;
};

TEST(CommEnginePartition, MessagesFromAnotherProcessAreCheckedBeforeUse)
{
    CommEngine engine(test::oneDimConfig("switch", 4, "default: [ring]", "astra_aware", ""), 4);
    TwoProcesses link(2);
    engine.setPartition(&link);
    auto errorFor = [&](const CrossMessage& message) {
        return errorOf([&] { engine.receive(message); });
    };
    CrossMessage message;
    message.arrivalPs = 1000;
    message.src = 2;
    message.dst = 9;
    message.via = 0;
    EXPECT_EQ(errorFor(message),
              "fabric: a message from another process names rank 9 of 4 (a broken partition)");
    message.dst = 3;
    message.via = 3;
    EXPECT_EQ(errorFor(message),
              "fabric: a message from another process for rank 3 came to "
              "another process (a broken partition)");
    message.via = 1;
    EXPECT_EQ(errorFor(message),
              "fabric: a message from another process arrives at rank 3, "
              "which this process does not simulate (a broken partition)");
    CrossMessage done;
    done.kind = CrossKind::SendDone;
    done.pointToPoint = true;
    done.arrivalPs = 1000;
    done.src = 1;
    done.dst = 3;
    done.via = 1;
    done.sendId = 7;
    EXPECT_EQ(errorFor(done),
              "fabric: a message from another process names send 7 of rank 1, "
              "which this process does not hold (a broken partition)");
    CrossMessage arrival;
    arrival.pointToPoint = true;
    arrival.arrivalPs = 1000;
    arrival.src = 3;
    arrival.dst = 0;
    arrival.via = 0;
    arrival.node = 12;
    EXPECT_EQ(errorFor(arrival),
              "fabric: the message of rank 3 node 12 to rank 0 arrived, but its send was never "
              "announced (a broken partition)");
    CrossMessage handOver;
    handOver.kind = CrossKind::HandOver;
    handOver.arrivalPs = 1000;
    handOver.src = 3;
    handOver.dst = 0;
    handOver.via = 0;
    handOver.next = HandOver{3, 0, 0, 0, 0, 4096, {}};
    EXPECT_NE(errorFor(handOver).find("was handed over at hop 0, which this process does not "
                                      "time"),
              std::string::npos);
}

// Rank 0 sends to rank 3 of the other process over switch 0: the message leaves at the down
// link to rank 3, which the other process times, when it reaches it; the send was announced
// first, at its post.
TEST(CommEnginePartition, AstraAwareHandsAMessageOverAtTheFirstLinkOfAnotherProcess)
{
    CommEngine engine(test::oneDimConfig("switch", 4, "default: [ring]", "astra_aware", ""), 4);
    TwoProcesses link(2);
    engine.setPartition(&link);
    EtNodeInfo send;
    send.rank = RankId{0};
    send.node = NodeId{5};
    send.kind = NodeKind::Send;
    send.peer = RankId{3};
    send.bytes = 65536;
    send.tag = 4;
    engine.post(send, 1);
    // The first link is served when the instant settles (the requests of one instant in one
    // order).
    EXPECT_EQ(link.departed.size(), 1U);
    engine.settle();
    ASSERT_EQ(link.departed.size(), 2U);
    const CrossMessage& posted = link.departed[0];
    EXPECT_EQ(posted.kind, CrossKind::Posted);
    EXPECT_EQ(posted.via, 3U);
    EXPECT_EQ(posted.tag, 4U);
    EXPECT_EQ(posted.node, 5U);
    const CrossMessage& over = link.departed[1];
    EXPECT_EQ(over.kind, CrossKind::HandOver);
    EXPECT_EQ(over.via, 3U);
    EXPECT_EQ(over.next.hop, 1U);
    EXPECT_EQ(over.sendId, posted.sendId);
    // 64 KiB at 100 GB/s: floor(500 + 655.36) = 1,155 ns to the switch.
    EXPECT_EQ(over.arrivalPs, 1'155'000U);
    EXPECT_EQ(over.next.requestedPs, 0U);
    EXPECT_EQ(engine.outstanding(), 1U);
}

} // namespace
} // namespace etsim::net
