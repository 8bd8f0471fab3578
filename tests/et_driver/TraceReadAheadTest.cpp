#include "et_driver/TraceReadAhead.h"

#include "et_driver/NodeTensors.h"
#include "et_driver/PackedNodes.h"
#include "et_driver/TraceCodec.h"
#include "et_driver/TraceSet.h"
#include "et_driver/TraceWriter.h"
#include "kernel/Error.h"
#include "tests/et_driver/TraceTestSupport.h"
#include "tests/support/TempDir.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace etsim::et {
namespace {

// Nodes with every part set in turn: all typed attributes, preserved bytes, dependencies, a
// name past the short-string buffer, and an empty node.
std::vector<TraceNode> variedNodes()
{
    std::vector<TraceNode> nodes;
    for (std::uint64_t id = 1; id <= 5; ++id)
        nodes.push_back(test::richNode(id));
    TraceNode plain;
    nodes.push_back(plain);
    TraceNode deps;
    deps.id = 99;
    deps.name = std::string(300, 'x');
    deps.type = NodeType::CommColl;
    for (std::uint64_t i = 0; i < 1000; ++i)
        (i % 3 == 0 ? deps.ctrlDeps : deps.dataDeps).push_back(i * 7);
    deps.startTimeMicros = 12;
    deps.durationMicros = 34;
    deps.setPgName("7");
    deps.setCommSize(1 << 20);
    nodes.push_back(deps);
    return nodes;
}

TEST(PackedNodes, GivesBackEveryPartOfEveryNodeInOrder)
{
    const std::vector<TraceNode> nodes = variedNodes();
    PackedNodes packed;
    for (int round = 0; round < 2; ++round) {
        SCOPED_TRACE("round " + std::to_string(round));
        packed.clear();
        EXPECT_EQ(packed.size(), 0U);
        for (const TraceNode& node : nodes)
            packed.append(node);
        EXPECT_EQ(packed.size(), nodes.size());
        // Taken over a node holding other content: nothing of it may stay.
        TraceNode into = test::richNode(4242);
        into.ctrlDeps.assign(50, 1);
        for (std::size_t i = 0; i < nodes.size(); ++i) {
            ASSERT_TRUE(packed.take(into));
            EXPECT_EQ(into, nodes[i]) << "node " << i;
            EXPECT_EQ(packed.left(), nodes.size() - i - 1);
        }
        EXPECT_FALSE(packed.take(into));
        EXPECT_EQ(into, nodes.back());
    }
}

// Tensor lists read ahead travel with their node, and a node without them stays without.
TEST(PackedNodes, GivesBackTheTensorsReadAhead)
{
    std::vector<TraceNode> nodes = variedNodes();
    nodes[0].tensorsAhead = TraceNode::TensorsAhead::Read;
    nodes[0].tensorsRead.inputs = {{7, 4096}, {8, 1}};
    nodes[0].tensorsRead.outputs = {{9, 1U << 30}};
    nodes[1].tensorsAhead = TraceNode::TensorsAhead::None;
    nodes[2].tensorsAhead = TraceNode::TensorsAhead::Read; // read, and both lists empty
    PackedNodes packed;
    for (const TraceNode& node : nodes)
        packed.append(node);
    TraceNode into;
    into.tensorsAhead = TraceNode::TensorsAhead::Read;
    into.tensorsRead.inputs.assign(5, TensorUse{1, 1});
    for (const TraceNode& node : nodes) {
        ASSERT_TRUE(packed.take(into));
        ASSERT_EQ(into.tensorsAhead, node.tensorsAhead) << "node " << node.id;
        if (node.tensorsAhead == TraceNode::TensorsAhead::Read) {
            EXPECT_EQ(into.tensorsRead, node.tensorsRead) << "node " << node.id;
        }
    }
}

// A trace of `ranks` ranks in `dir`: rank r holds 3r mod 41 nodes (some none at all), every
// fifth rank gzip'd; ids and durations tell the rank and the node apart.
void writeRanks(const etsim::test::TempDir& dir, std::uint32_t ranks)
{
    for (std::uint32_t rank = 0; rank < ranks; ++rank) {
        const std::string name = "t." + std::to_string(rank) + (rank % 5 == 0 ? ".et.gz" : ".et");
        TraceWriter writer(dir.file(name));
        const std::uint64_t count = (3 * rank) % 41;
        for (std::uint64_t i = 0; i < count; ++i) {
            TraceNode node = test::richNode(std::uint64_t{rank} * 1000 + i);
            node.durationMicros = i;
            node.dataDeps = {std::uint64_t{rank} * 1000 + i / 2};
            writer.write(node);
        }
        writer.close();
    }
}

// Read in random rank order, with batches much smaller than the ranks, the read-ahead gives
// each rank's nodes as the set itself does, and the ends: again and again once reached.
TEST(TraceReadAhead, GivesEachRanksNodesAsTheSetDoes)
{
    etsim::test::TempDir temp;
    constexpr std::uint32_t ranks = 37;
    writeRanks(temp, ranks);
    TraceSet expectedSet(temp.file("t"));
    TraceSet readSet(temp.file("t"));
    TraceReadAhead ahead(readSet, 4);
    EXPECT_EQ(ahead.batchSize(), 4U);
    std::mt19937 random(7);
    std::vector<bool> ended(ranks, false);
    std::uint32_t left = ranks;
    std::uint64_t nodes = 0;
    TraceNode expected;
    TraceNode got;
    while (left > 0) {
        const std::uint32_t rank =
            std::uniform_int_distribution<std::uint32_t>(0, ranks - 1)(random);
        const bool more = expectedSet.next(rank, expected);
        ASSERT_EQ(ahead.next(rank, got), more) << "rank " << rank;
        if (more) {
            ASSERT_EQ(got, expected) << "rank " << rank << " node " << expected.id;
            ++nodes;
        } else if (!ended[rank]) {
            ended[rank] = true;
            --left;
        }
    }
    std::uint64_t written = 0;
    for (std::uint32_t rank = 0; rank < ranks; ++rank)
        written += (3 * rank) % 41;
    EXPECT_EQ(nodes, written);
}

// A rank whose file breaks after ten nodes: its ten nodes come first, then the set's own error
// (naming the file and the record), once; the rank then ends, and the other ranks read on.
TEST(TraceReadAhead, RaisesARanksErrorAfterTheNodesBeforeIt)
{
    etsim::test::TempDir temp;
    writeRanks(temp, 4);
    {
        TraceWriter writer(temp.file("t.1.et"));
        for (std::uint64_t i = 0; i < 10; ++i)
            writer.write(test::richNode(i));
        writer.close();
        // A record announced as 100 bytes long ("d" is 100 as a one-byte varint), with 2 of them.
        std::ofstream(temp.file("t.1.et"), std::ios::binary | std::ios::app) << "dxy";
    }
    std::string expectedError;
    {
        TraceSet set(temp.file("t"));
        TraceNode node;
        for (int i = 0; i < 10; ++i)
            ASSERT_TRUE(set.next(1, node));
        try {
            set.next(1, node);
        } catch (const TraceError& error) {
            expectedError = error.what();
        }
        ASSERT_NE(expectedError.find("t.1.et"), std::string::npos) << expectedError;
    }
    TraceSet set(temp.file("t"));
    TraceReadAhead ahead(set, 3);
    TraceNode node;
    for (std::uint64_t i = 0; i < 10; ++i) {
        ASSERT_TRUE(ahead.next(1, node));
        EXPECT_EQ(node, test::richNode(i));
    }
    try {
        ahead.next(1, node);
        FAIL() << "expected the rank's error";
    } catch (const TraceError& error) {
        EXPECT_EQ(error.what(), expectedError);
    }
    EXPECT_FALSE(ahead.next(1, node));
    std::uint64_t rank3 = 0;
    while (ahead.next(3, node))
        ++rank3;
    EXPECT_EQ(rank3, 9U);
}

TEST(TraceReadAhead, RankOutOfRange)
{
    etsim::test::TempDir temp;
    writeRanks(temp, 2);
    TraceSet set(temp.file("t"));
    TraceReadAhead ahead(set);
    TraceNode node;
    try {
        ahead.next(2, node);
        FAIL() << "expected an error";
    } catch (const Error& error) {
        EXPECT_STREQ(error.what(), "rank 2 is out of range: the trace has 2 ranks");
    }
    EXPECT_TRUE(ahead.next(1, node));
}

// Left while its thread reads ahead on every rank: it stops, having read no rank further
// than its two batches.
TEST(TraceReadAhead, ReadsNoFurtherThanTwoBatchesAhead)
{
    etsim::test::TempDir temp;
    writeRanks(temp, 30);
    TraceSet set(temp.file("t"));
    {
        TraceReadAhead ahead(set, 2);
        TraceNode node;
        for (std::uint32_t rank = 1; rank < 30; ++rank)
            ASSERT_TRUE(ahead.next(rank, node));
    }
    for (std::uint32_t rank = 2; rank < 30; ++rank)
        EXPECT_LE(set.reader(rank).nodesRead(), 4U) << "rank " << rank;
    // What was read ahead is not lost to a later reader of the set: rank 2 (6 nodes) goes on.
    EXPECT_GT(set.reader(2).nodesRead(), 0U);
}

// A partitioned run reads only its own ranks: those not marked are never read ahead (their
// files might not even be on this machine), yet a next() on one still reads it: itself, as the
// thread was never asked.
TEST(TraceReadAhead, StartsOnlyOnTheRanksMarkedToRead)
{
    etsim::test::TempDir temp;
    writeRanks(temp, 6);
    TraceSet set(temp.file("t"));
    const std::vector<bool> marked{false, false, true, false, true, false};
    {
        TraceReadAhead ahead(set, 8, marked);
        TraceNode node;
        ASSERT_TRUE(ahead.next(2, node));
        EXPECT_EQ(node.id, 2000U);
        ASSERT_TRUE(ahead.next(4, node));
        EXPECT_EQ(node.id, 4000U);
    }
    for (std::uint32_t rank : {1U, 3U, 5U})
        EXPECT_EQ(set.reader(rank).nodesRead(), 0U) << "rank " << rank;
    TraceReadAhead later(set, 8, marked);
    TraceNode node;
    ASSERT_TRUE(later.next(3, node));
    EXPECT_EQ(node.id, 3000U);
    EXPECT_EQ(later.readsByCaller(), 1U);
    EXPECT_EQ(later.waits(), 0U);
    for (std::uint64_t i = 1; i < 9; ++i) {
        ASSERT_TRUE(later.next(3, node));
        EXPECT_EQ(node.id, 3000U + i);
    }
    EXPECT_FALSE(later.next(3, node));
}

// A batch the caller reads itself goes straight from the set into its node, never packed; and a
// rank's batches are freed at its end, so a many-rank run holds buffers only for ranks alive.
TEST(TraceReadAhead, PacksNothingItselfAndFreesARanksBatchesAtItsEnd)
{
    etsim::test::TempDir temp;
    writeRanks(temp, 30);
    TraceSet set(temp.file("t"));
    {
        // Nothing marked: the thread is idle until asked, and rank 3's 9 nodes end within the
        // caller's first batch, so it is never asked.
        TraceReadAhead ahead(set, 16, std::vector<bool>(30, false));
        TraceNode node;
        for (std::uint64_t i = 0; i < 9; ++i) {
            ASSERT_TRUE(ahead.next(3, node));
            EXPECT_EQ(node.id, 3000U + i);
            EXPECT_EQ(ahead.bufferedBytes(), 0U) << "node " << i;
        }
        EXPECT_FALSE(ahead.next(3, node));
        EXPECT_EQ(ahead.readsByCaller(), 1U);
    }
    TraceSet again(temp.file("t"));
    TraceReadAhead ahead(again, 2);
    TraceNode node;
    std::uint64_t nodes = 0;
    for (std::uint32_t rank = 0; rank < 30; ++rank)
        while (ahead.next(rank, node))
            ++nodes;
    EXPECT_EQ(nodes, 567U); // the sum of 3r mod 41 over the 30 ranks
    EXPECT_EQ(ahead.bufferedBytes(), 0U);
}

// Compute and memory nodes decoded by the thread carry their tensor lists, worked out there;
// a node whose tuples cannot be read carries none, so that lowering reads them again and gives
// the error at its turn; other nodes, and those the caller reads itself, carry none either.
TEST(TraceReadAhead, WorksOutTheTensorListsOfComputeAndMemoryNodes)
{
    etsim::test::TempDir temp;
    auto io = [](TraceNode& node, const std::string& values, const std::string& types) {
        ChakraProtoMsg::IOInfo info;
        info.set_values(values);
        info.set_types(types);
        TraceCodec::setInputs(node, info);
    };
    std::vector<TraceNode> written;
    for (std::uint64_t i = 0; i < 40; ++i) {
        TraceNode node;
        node.id = i;
        node.type = i % 4 == 3   ? NodeType::CommColl
                    : i % 4 == 2 ? NodeType::MemLoad
                                 : NodeType::Comp;
        node.setNumOps(1000);
        if (i % 5 == 0)
            io(node,
               "[[" + std::to_string(100 + i) + ", 1, 0, 256, 2, 'cuda:0'], 3]",
               "['Tensor(c10::BFloat16)', 'Int']");
        if (i == 17)
            io(node, "[[-4, 1, 0, 1, 1, 'cuda:0']]", "['Tensor(float)']"); // a negative id
        written.push_back(node);
    }
    {
        TraceWriter writer(temp.file("t.0.et"));
        for (const TraceNode& node : written)
            writer.write(node);
        writer.close();
    }
    TraceSet set(temp.file("t"));
    TraceReadAhead ahead(set, 8);
    TraceNode got;
    for (const TraceNode& node : written) {
        // Each batch of 8 once the thread has filled it, so that the caller reads none itself.
        if (node.id % 8 == 0)
            while (ahead.batchesFilled() < node.id / 8 + 1)
                std::this_thread::yield();
        ASSERT_TRUE(ahead.next(0, got));
        ASSERT_EQ(got, node);
        const std::optional<NodeTensors> expected =
            node.id == 17 ? std::nullopt : nodeTensors(node);
        if (node.type == NodeType::CommColl || node.id == 17) {
            EXPECT_EQ(got.tensorsAhead, TraceNode::TensorsAhead::Unknown) << "node " << node.id;
        } else if (expected) {
            EXPECT_EQ(got.tensorsAhead, TraceNode::TensorsAhead::Read) << "node " << node.id;
            EXPECT_EQ(got.tensorsRead, *expected) << "node " << node.id;
        } else {
            EXPECT_EQ(got.tensorsAhead, TraceNode::TensorsAhead::None) << "node " << node.id;
        }
    }
    EXPECT_THROW(nodeTensors(written[17]), Error);
    while (ahead.batchesFilled() < 6) // the end, found by the thread too
        std::this_thread::yield();
    EXPECT_FALSE(ahead.next(0, got));
    EXPECT_EQ(ahead.readsByCaller(), 0U);

    // The caller's own reads carry none: lowering works them out.
    TraceSet again(temp.file("t"));
    TraceReadAhead itself(again, 8, std::vector<bool>{false});
    for (const TraceNode& node : written) {
        ASSERT_TRUE(itself.next(0, got));
        if (node.id < 8) { // the first batch, which the thread was never asked for
            EXPECT_EQ(got.tensorsAhead, TraceNode::TensorsAhead::Unknown) << "node " << node.id;
        }
    }
}

TEST(TraceReadAhead, BatchesShrinkWithTheRankCountToAFloor)
{
    EXPECT_EQ(TraceReadAhead::batchNodesFor(1), 256U);
    EXPECT_EQ(TraceReadAhead::batchNodesFor(256), 256U);
    EXPECT_EQ(TraceReadAhead::batchNodesFor(1024), 64U);
    EXPECT_EQ(TraceReadAhead::batchNodesFor(4096), 16U);
    EXPECT_EQ(TraceReadAhead::batchNodesFor(65536), 16U);
}

} // namespace
} // namespace etsim::et
