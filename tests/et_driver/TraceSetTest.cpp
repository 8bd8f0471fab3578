#include "et_driver/TraceSet.h"

#include "et_driver/TraceWriter.h"
#include "kernel/OpenFileLimit.h"
#include "tests/support/TempDir.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace etsim::et {
namespace {

namespace fs = std::filesystem;

TEST(TraceSet, ManyRanksWithBoundedOpenFiles)
{
    etsim::test::TempDir temp;
    constexpr uint32_t ranks = 300;
    constexpr uint64_t nodesPerRank = 20;
    for (uint32_t rank = 0; rank < ranks; ++rank) {
        // Every 7th rank gzip'd, to resume inflating after a suspension too.
        std::string name = "m." + std::to_string(rank) + (rank % 7 == 0 ? ".et.gz" : ".et");
        TraceWriter writer(temp.file(name));
        for (uint64_t i = 0; i < nodesPerRank; ++i) {
            TraceNode node;
            node.id = rank * 1000 + i;
            node.name = "n";
            node.type = NodeType::Comp;
            node.durationMicros = i;
            writer.write(node);
        }
        writer.close();
    }
    TraceSetOptions options;
    options.maxOpenFiles = 8;
    TraceSet set(temp.file("m"), options);
    ASSERT_EQ(set.rankCount(), ranks);
    // Round robin, one node per rank at a time: the worst case for descriptors.
    TraceNode node;
    std::size_t maxOpen = 0;
    for (uint64_t i = 0; i < nodesPerRank; ++i) {
        for (uint32_t rank = 0; rank < ranks; ++rank) {
            ASSERT_TRUE(set.next(rank, node)) << "rank " << rank << " node " << i;
            ASSERT_EQ(node.id, rank * 1000 + i);
            ASSERT_EQ(node.durationMicros, i);
            maxOpen = std::max(maxOpen, set.openFiles());
        }
    }
    for (uint32_t rank = 0; rank < ranks; ++rank)
        EXPECT_FALSE(set.next(rank, node));
    EXPECT_LE(maxOpen, 8U);
    EXPECT_EQ(set.openFiles(), 0U);
}

// A replicated one-rank trace: one file read by many more ranks than may hold it open, each
// rank at its own place in it (the staggered reads would interleave if ranks shared a reader).
TEST(TraceSet, OneFileServesManyRanksEachAtItsOwnPlace)
{
    etsim::test::TempDir temp;
    constexpr uint64_t nodes = 12;
    {
        TraceWriter writer(temp.file("one.0.et.gz"));
        for (uint64_t i = 0; i < nodes; ++i) {
            TraceNode node;
            node.id = 100 + i;
            node.name = "n";
            node.type = NodeType::Comp;
            writer.write(node);
        }
        writer.close();
    }
    constexpr uint32_t ranks = 200;
    std::vector<RankFile> files(ranks);
    for (uint32_t rank = 0; rank < ranks; ++rank)
        files[rank] = {rank, temp.file("one.0.et.gz")};
    TraceSetOptions options;
    options.maxOpenFiles = 4;
    TraceSet set(std::move(files), options);
    ASSERT_EQ(set.rankCount(), ranks);
    std::vector<uint64_t> read(ranks, 0);
    TraceNode node;
    std::size_t maxOpen = 0;
    // Rank r reads r % 5 + 1 nodes per round, so every rank is somewhere else in the file.
    for (bool progress = true; progress;) {
        progress = false;
        for (uint32_t rank = 0; rank < ranks; ++rank)
            for (uint32_t step = 0; step <= rank % 5 && read[rank] < nodes; ++step) {
                ASSERT_TRUE(set.next(rank, node)) << "rank " << rank;
                ASSERT_EQ(node.id, 100 + read[rank]) << "rank " << rank;
                ++read[rank];
                progress = true;
                maxOpen = std::max(maxOpen, set.openFiles());
            }
    }
    for (uint32_t rank = 0; rank < ranks; ++rank)
        EXPECT_FALSE(set.next(rank, node));
    EXPECT_LE(maxOpen, 4U);
}

TEST(TraceSet, AutomaticOpenFilesLeavesAQuarterOfTheLimitToTheRest)
{
    EXPECT_EQ(automaticOpenFiles(1024), 768U);
    EXPECT_EQ(automaticOpenFiles(20000), 15000U);
    EXPECT_EQ(automaticOpenFiles(200), 136U); // a reserve of at least 64
    EXPECT_EQ(automaticOpenFiles(70), 16U);
    EXPECT_EQ(automaticOpenFiles(0), 16U);
}

TEST(TraceSet, ByDefaultKeepsAsManyFilesOpenAsTheDescriptorLimitAllows)
{
    etsim::test::TempDir temp;
    constexpr uint32_t ranks = 300;
    for (uint32_t rank = 0; rank < ranks; ++rank) {
        TraceWriter writer(temp.file("d." + std::to_string(rank) + ".et"));
        for (uint64_t i = 0; i < 3; ++i) {
            TraceNode node;
            node.id = i;
            node.name = "n";
            node.type = NodeType::Comp;
            writer.write(node);
        }
        writer.close();
    }
    TraceSet set(temp.file("d"));
    TraceNode node;
    std::size_t maxOpen = 0;
    for (uint32_t rank = 0; rank < ranks; ++rank) {
        ASSERT_TRUE(set.next(rank, node));
        maxOpen = std::max(maxOpen, set.openFiles());
    }
    // Nothing was suspended if the limit allows: the old fixed bound of 256 did.
    EXPECT_EQ(maxOpen, std::min<std::size_t>(ranks, automaticOpenFiles(openFileLimit())));
}

TEST(TraceSet, RecordsLargerThanTheBufferOfAResumptionReadWhole)
{
    // Two ranks alternating through one open file: every read resumes a suspended reader,
    // whose buffer then holds about twice the record read before it (at least 4 KiB), so the
    // records below, of 1 B to 20 KiB, start and end anywhere across its refills.
    etsim::test::TempDir temp;
    constexpr uint64_t count = 60;
    auto nameOf = [](uint32_t rank, uint64_t i) {
        std::size_t length = ((i * 7919 + rank * 104729) % 20480) + 1;
        return std::string(length, static_cast<char>('a' + (i + rank) % 26));
    };
    for (uint32_t rank = 0; rank < 2; ++rank) {
        TraceWriter writer(temp.file("big." + std::to_string(rank) + ".et"));
        for (uint64_t i = 0; i < count; ++i) {
            TraceNode node;
            node.id = i;
            node.name = nameOf(rank, i);
            node.type = NodeType::Comp;
            writer.write(node);
        }
        writer.close();
    }
    TraceSetOptions options;
    options.maxOpenFiles = 1;
    TraceSet set(temp.file("big"), options);
    TraceNode node;
    for (uint64_t i = 0; i < count; ++i) {
        for (uint32_t rank = 0; rank < 2; ++rank) {
            ASSERT_TRUE(set.next(rank, node)) << "rank " << rank << " node " << i;
            ASSERT_EQ(node.id, i);
            ASSERT_EQ(node.name, nameOf(rank, i)) << "rank " << rank << " node " << i;
            EXPECT_LE(set.openFiles(), 1U);
        }
    }
    EXPECT_FALSE(set.next(0, node));
    EXPECT_FALSE(set.next(1, node));
}

TEST(TraceSet, RankOutOfRange)
{
    etsim::test::TempDir temp;
    TraceWriter(temp.file("x.0.et")).close();
    TraceSet set(temp.path());
    TraceNode node;
    try {
        set.next(1, node);
        FAIL() << "expected an error";
    } catch (const Error& error) {
        EXPECT_STREQ(error.what(), "rank 1 is out of range: the trace has 1 ranks");
    }
    EXPECT_FALSE(set.next(0, node));
}

} // namespace
} // namespace etsim::et
