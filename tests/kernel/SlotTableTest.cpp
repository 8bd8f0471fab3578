// SlotTable (kernel/SlotTable.h): ids are reused after removal, an acquired slot keeps its last
// record, references stay valid while records are added, and an id not in flight is an error
// naming the owner.

#include "kernel/SlotTable.h"

#include <gtest/gtest.h>

#include <string>

namespace etsim {
namespace {

TEST(SlotTable, ReusesFreedIdsAndCountsRecordsInFlight)
{
    SlotTable<std::string> table("model");
    EXPECT_EQ(table.size(), 0U);
    EXPECT_EQ(table.add("a"), 0U);
    EXPECT_EQ(table.add("b"), 1U);
    EXPECT_EQ(table.add("c"), 2U);
    EXPECT_EQ(table.size(), 3U);
    table.remove(1);
    table.remove(0);
    EXPECT_EQ(table.size(), 1U);
    // The last freed id comes back first, holding the new record.
    EXPECT_EQ(table.add("d"), 0U);
    EXPECT_EQ(table.at(0), "d");
    EXPECT_EQ(table.add("e"), 1U);
    EXPECT_EQ(table.at(1), "e");
    EXPECT_EQ(table.add("f"), 3U);
    EXPECT_EQ(table.at(2), "c");
    EXPECT_EQ(table.size(), 4U);
}

// acquire() hands out a slot without a new record: a freed slot keeps what its last user left
// (the driver lowers the next node into the buffers of the one that left), a new one is empty.
TEST(SlotTable, AcquiredSlotKeepsWhatItsLastUserLeft)
{
    SlotTable<std::string> table("driver");
    const std::uint64_t id = table.add("spent node");
    table.remove(id);
    EXPECT_EQ(table.acquire(), id);
    EXPECT_EQ(table.at(id), "spent node");
    EXPECT_EQ(table.size(), 1U);
    const std::uint64_t fresh = table.acquire();
    EXPECT_EQ(fresh, 1U);
    EXPECT_EQ(table.at(fresh), "");
    EXPECT_EQ(table.size(), 2U);
    table.remove(fresh);
    EXPECT_THROW(table.at(fresh), Error);
}

TEST(SlotTable, ReferencesSurviveAdditions)
{
    SlotTable<std::string> table("model");
    const std::uint64_t first = table.add("first");
    std::string& kept = table.at(first);
    for (int i = 0; i < 10000; ++i)
        table.add(std::to_string(i));
    EXPECT_EQ(&kept, &table.at(first));
    EXPECT_EQ(kept, "first");
}

TEST(SlotTable, AnIdNotInFlightIsAnError)
{
    SlotTable<int> table("accelerator");
    const std::uint64_t id = table.add(7);
    table.remove(id);
    try {
        table.at(id);
        FAIL() << "a freed id was accepted";
    } catch (const Error& error) {
        EXPECT_STREQ(error.what(), "accelerator: internal: no record in flight has id 0");
    }
    EXPECT_THROW(table.remove(id), Error);
    EXPECT_THROW(table.at(5), Error);
    EXPECT_EQ(table.size(), 0U);
}

} // namespace
} // namespace etsim
