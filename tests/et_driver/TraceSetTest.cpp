#include "et_driver/TraceSet.h"

#include "et_driver/TraceWriter.h"
#include "tests/support/TempDir.h"

#include <gtest/gtest.h>

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
