#include "models/net/Fabric.h"

#include "kernel/Extensions.h"
#include "kernel/ScTime.h"
#include "kernel/Stats.h"
#include "kernel/Timeline.h"
#include "tests/support/Ranks.h"
#include "tests/support/ScTest.h"
#include "tests/support/TempDir.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <systemc>
#include <tlm>

#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace etsim::net {
namespace {

using test::Ranks;

EtNodeInfo collective(std::uint32_t rank, std::uint64_t bytes, std::uint64_t sequence)
{
    EtNodeInfo info;
    info.rank = RankId{rank};
    info.node = NodeId{10 + sequence};
    info.kind = NodeKind::Collective;
    info.collective = CollectiveType::AllReduce;
    info.bytes = bytes;
    info.groupSequence = sequence;
    return info;
}

// Analytical timing keeps the late-member case free of link sharing: the late rank finds
// messages waiting and sends several at once on one link.
NetConfig ringOfFour()
{
    return loadNetConfigString(R"(fidelity: analytical
topology:
  kind: multi_dim
  dims:
    - {kind: ring, size: 4, bandwidth: "100 GB/s", latency: "500 ns"}
)");
}

class FabricTest : public test::ScTest {};

// Two all-reduces back to back on a ring of 4: 4 MB each takes 6 (500 ns + 10 us) = 63 us;
// rank 3 posts the second one 100 us late, and every rank then ends as the ring's
// dependencies on rank 3's messages say.
TEST_F(FabricTest, CollectivesCompleteOnTheBackwardPathAtTheirTime)
{
    StatGroup root("root");
    Fabric fabric("fabric", ringOfFour(), 4, root);
    Ranks ranks("ranks", 4);
    for (auto& socket : ranks.sockets)
        socket->bind(fabric.socket);
    for (std::uint32_t rank = 0; rank < 4; ++rank)
        ranks.posts.push_back({0, collective(rank, 4000000, 0)});
    for (std::uint32_t rank = 0; rank < 4; ++rank)
        ranks.posts.push_back(
            {rank == 3 ? 163000000ULL : 63000000ULL, collective(rank, 4000000, 1)});
    sc_core::sc_start();
    std::uint64_t delta = 10500000;
    for (std::size_t index = 0; index < 4; ++index) {
        EXPECT_EQ(ranks.donePs[index], 6 * delta);
        EXPECT_EQ(ranks.status[index], tlm::TLM_OK_RESPONSE);
    }
    // Rank 3 starts at 163 us; rank i ends at 163 us + j delta, j the number of ring steps
    // back from rank i to rank 3 (plus 4 while j + 4 <= 6).
    std::uint64_t late = 163000000;
    EXPECT_EQ(ranks.donePs[7], late + 4 * delta); // rank 3: j = 4
    EXPECT_EQ(ranks.donePs[4], late + 5 * delta); // rank 0: j = 1 or 5
    EXPECT_EQ(ranks.donePs[5], late + 6 * delta); // rank 1: j = 2 or 6
    EXPECT_EQ(ranks.donePs[6], late + 3 * delta); // rank 2: j = 3
    EXPECT_TRUE(fabric.idle());
    EXPECT_EQ(ranks.holding(), 0U);
    ASSERT_EQ(fabric.collectives().size(), 2U);
    EXPECT_EQ(fabric.collectives()[0].endPs, 6 * delta);
    EXPECT_EQ(sc_core::sc_time_stamp(), toScTime(Time::fromPs(late + 6 * delta)));
    // Stats: 2 collectives, 2 x 24 messages, each of the 4 clockwise links carried 12 MB/...
    const auto* collectives = dynamic_cast<const Formula*>(root.findStat("fabric.collectives"));
    ASSERT_NE(collectives, nullptr);
    EXPECT_EQ(collectives->value(0), 2.0);
    const auto* bytes = dynamic_cast<const Formula*>(root.findStat("fabric.links.link0.bytes"));
    ASSERT_NE(bytes, nullptr);
    EXPECT_EQ(bytes->value(0), 2 * 6 * 1e6);
    const auto* time = dynamic_cast<const Distribution*>(root.findStat("fabric.collective_time"));
    ASSERT_NE(time, nullptr);
    EXPECT_EQ(time->count(), 2U);
    EXPECT_DOUBLE_EQ(time->min(), 63.0);
}

// Busy slices per link read back from a timeline file: track name -> (start, duration, bytes),
// times in ps.
struct Slice {
    std::uint64_t startPs;
    std::uint64_t durationPs;
    std::uint64_t bytes;
    bool operator==(const Slice& other) const
    {
        return startPs == other.startPs && durationPs == other.durationPs && bytes == other.bytes;
    }
};

std::uint64_t picoseconds(const nlohmann::json& microseconds)
{
    return static_cast<std::uint64_t>(std::llround(microseconds.get<double>() * 1e6));
}

std::map<std::string, std::vector<Slice>>
linkTracks(const std::string& path, std::uint32_t process, std::string& processLabel)
{
    nlohmann::json document = nlohmann::json::parse(test::readFile(path));
    std::map<std::uint64_t, std::string> names;
    for (const auto& event : document["traceEvents"])
        if (event["ph"] == "M" && event["pid"] == process && event["name"] == "thread_name")
            names[event["tid"].get<std::uint64_t>()] = event["args"]["name"];
        else if (event["ph"] == "M" && event["pid"] == process && event["name"] == "process_name")
            processLabel = event["args"]["name"];
    std::map<std::string, std::vector<Slice>> tracks;
    for (const auto& event : document["traceEvents"]) {
        if (event["ph"] != "X" || event["pid"] != process)
            continue;
        EXPECT_EQ(event["name"], "busy");
        EXPECT_EQ(event["cat"], "link");
        tracks[names.at(event["tid"].get<std::uint64_t>())].push_back(
            Slice{picoseconds(event["ts"]),
                  picoseconds(event["dur"]),
                  event["args"]["bytes"].get<std::uint64_t>()});
    }
    return tracks;
}

// Ring of 4 in flow mode, one 4 MB all-reduce: in each of the 6 steps every rank sends 1 MB
// clockwise, busy 10 us at 100 GB/s, then idle for the 500 ns latency until the next step
// starts. So each clockwise link has one track of 6 separate 10 us slices at k x 10.5 us; the
// counter-clockwise links never carry data and get no track.
TEST_F(FabricTest, TimelineHasOneTrackPerBusyLinkWithItsBusyIntervals)
{
    test::TempDir dir;
    std::string path = dir.file("fabric.json").string();
    {
        Timeline timeline(path);
        StatGroup root("root");
        NetConfig config = ringOfFour();
        config.fidelity = Fidelity::Flow;
        Fabric fabric("fabric", config, 4, root, false);
        fabric.attachTimeline(timeline, 9);
        Ranks ranks("ranks", 4);
        for (auto& socket : ranks.sockets)
            socket->bind(fabric.socket);
        for (std::uint32_t rank = 0; rank < 4; ++rank)
            ranks.posts.push_back({0, collective(rank, 4000000, 0)});
        sc_core::sc_start();
        EXPECT_EQ(ranks.donePs[0], 63000000U);
        timeline.close();
    }
    std::string process;
    auto tracks = linkTracks(path, 9, process);
    EXPECT_EQ(process, "fabric");
    ASSERT_EQ(tracks.size(), 4U);
    for (std::uint32_t rank = 0; rank < 4; ++rank) {
        std::string name = "link " + std::to_string(2 * rank) + ": device " + std::to_string(rank) +
                           " -> " + std::to_string((rank + 1) % 4);
        ASSERT_EQ(tracks.count(name), 1U) << name;
        std::vector<Slice> expected;
        for (std::uint64_t step = 0; step < 6; ++step)
            expected.push_back(Slice{step * 10500000, 10000000, 1000000});
        EXPECT_EQ(tracks[name], expected) << name;
    }
}

// ASTRA-sim's FIFO links: two 1 MB sends from rank 0 to rank 1 posted together hold link 0
// back to back (0-10 us, 10-20 us); the track merges them into one slice of 2 MB.
TEST_F(FabricTest, TimelineMergesBackToBackMessagesIntoOneSlice)
{
    test::TempDir dir;
    std::string path = dir.file("fabric.json").string();
    {
        Timeline timeline(path);
        StatGroup root("root");
        NetConfig config = ringOfFour();
        config.fidelity = Fidelity::AstraAware;
        Fabric fabric("net", config, 4, root, false);
        fabric.attachTimeline(timeline, 0);
        Ranks ranks("ranks", 4);
        for (auto& socket : ranks.sockets)
            socket->bind(fabric.socket);
        for (std::uint64_t copy = 0; copy < 2; ++copy) {
            EtNodeInfo send;
            send.rank = RankId{0};
            send.node = NodeId{1 + copy};
            send.kind = NodeKind::Send;
            send.peer = RankId{1};
            send.bytes = 1000000;
            ranks.posts.push_back({0, send});
            EtNodeInfo recv = send;
            recv.rank = RankId{1};
            recv.kind = NodeKind::Recv;
            recv.peer = RankId{0};
            ranks.posts.push_back({0, recv});
        }
        sc_core::sc_start();
        EXPECT_EQ(ranks.donePs[2], 20500000U);
        timeline.close();
    }
    std::string process;
    auto tracks = linkTracks(path, 0, process);
    EXPECT_EQ(process, "net");
    ASSERT_EQ(tracks.size(), 1U);
    EXPECT_EQ(tracks["link 0: device 0 -> 1"], (std::vector<Slice>{Slice{0, 20000000, 2000000}}));
}

TEST_F(FabricTest, BlockingTransportReturnsAtCompletion)
{
    StatGroup root("root");
    Fabric fabric("fabric", ringOfFour(), 4, root, false);
    Ranks ranks("ranks", 4);
    ranks.blocking = true;
    for (auto& socket : ranks.sockets)
        socket->bind(fabric.socket);
    EtNodeInfo send;
    send.rank = RankId{0};
    send.node = NodeId{1};
    send.kind = NodeKind::Send;
    send.peer = RankId{1};
    send.bytes = 1000000;
    ranks.posts.push_back({1000000, send});
    sc_core::sc_start();
    EXPECT_EQ(ranks.donePs[0], 1000000U + 10500000U);
    EXPECT_EQ(ranks.status[0], tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(ranks.holding(), 0U);
}

TEST_F(FabricTest, BadNodeGetsErrorResponseAndReport)
{
    StatGroup root("root");
    Fabric fabric("fabric", ringOfFour(), 4, root, false);
    Ranks ranks("ranks", 4);
    for (auto& socket : ranks.sockets)
        socket->bind(fabric.socket);
    EtNodeInfo bad;
    bad.rank = RankId{2};
    bad.node = NodeId{42};
    bad.kind = NodeKind::Compute;
    ranks.posts.push_back({0, bad});
    sc_core::sc_report_handler::set_actions(sc_core::SC_ERROR, sc_core::SC_LOG);
    sc_core::sc_start();
    EXPECT_EQ(ranks.status[0], tlm::TLM_GENERIC_ERROR_RESPONSE);
    EXPECT_EQ(ranks.holding(), 0U) << "the error response ends the transaction too";
    EXPECT_EQ(sc_core::sc_report_handler::get_count(sc_core::SC_ERROR), 1);
    const sc_core::sc_report* report = sc_core::sc_report_handler::get_cached_report();
    (void)report;
}

} // namespace
} // namespace etsim::net
