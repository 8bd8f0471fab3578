#include "et_driver/PendingNodes.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>
#include <vector>

namespace etsim::et {
namespace {

LoweredNode nodeWithBytes(std::uint64_t bytes)
{
    LoweredNode node;
    node.info.bytes = bytes;
    node.engine = Engine::Compute;
    return node;
}

std::uint32_t insertWithBytes(PendingNodes& pending, std::uint64_t id, std::uint64_t bytes)
{
    const std::uint32_t slot = pending.insert(id);
    pending.at(slot) = nodeWithBytes(bytes);
    return slot;
}

TEST(PendingNodes, FindsWhatWasInsertedAndForgetsWhatWasErased)
{
    PendingNodes pending;
    const std::uint32_t seven = insertWithBytes(pending, 7, 70);
    const std::uint32_t three = insertWithBytes(pending, 3, 30);
    EXPECT_EQ(pending.size(), 2U);
    EXPECT_EQ(pending.find(7), seven);
    EXPECT_EQ(pending.find(3), three);
    EXPECT_EQ(pending.find(5), PendingNodes::none);
    EXPECT_EQ(pending.idAt(seven), 7U);
    EXPECT_EQ(pending.at(three).info.bytes, 30U);
    pending.erase(seven);
    EXPECT_EQ(pending.find(7), PendingNodes::none);
    EXPECT_EQ(pending.find(3), three);
    // The freed slot is reused: the slab is sized by the nodes pending at once.
    EXPECT_EQ(insertWithBytes(pending, 11, 110), seven);
    EXPECT_EQ(pending.at(seven).info.bytes, 110U);
    EXPECT_EQ(pending.size(), 2U);
}

// A reused slot still holds the node erased from it, into whose buffers the driver lowers
// the next node.
TEST(PendingNodes, AReusedSlotHoldsTheNodeErasedFromIt)
{
    PendingNodes pending;
    const std::uint32_t slot = insertWithBytes(pending, 7, 70);
    pending.erase(slot);
    EXPECT_EQ(pending.insert(11), slot);
    EXPECT_EQ(pending.at(slot).info.bytes, 70U);
    EXPECT_EQ(pending.find(11), slot);
    EXPECT_EQ(pending.find(7), PendingNodes::none);
}

// Against std::map over a window that slides as a driver's does, with ids that collide in a
// small table (multiples of its size) and a growth in the middle: every probe run must stay
// reachable after backward-shift deletions.
TEST(PendingNodes, AgreesWithAnOrderedMapUnderRandomInsertsAndErases)
{
    for (const std::uint64_t stride : {1ULL, 16ULL, 1024ULL, 0x100000001ULL}) {
        PendingNodes pending;
        std::map<std::uint64_t, std::uint32_t> expected;
        std::mt19937_64 random(stride);
        std::uint64_t next = 0;
        for (int step = 0; step < 20000; ++step) {
            const std::size_t window = step < 10000 ? 12 : 300;
            if (expected.size() < window && (expected.empty() || random() % 3 != 0)) {
                const std::uint64_t id = next++ * stride;
                expected[id] = insertWithBytes(pending, id, id + 1);
                continue;
            }
            auto victim = expected.begin();
            std::advance(victim, static_cast<long>(random() % expected.size()));
            pending.erase(victim->second);
            expected.erase(victim);
            ASSERT_EQ(pending.size(), expected.size());
            for (const auto& [id, slot] : expected) {
                ASSERT_EQ(pending.find(id), slot) << "id " << id << ", stride " << stride;
                ASSERT_EQ(pending.at(slot).info.bytes, id + 1);
            }
            ASSERT_EQ(pending.find(next * stride), PendingNodes::none);
        }
    }
}

} // namespace
} // namespace etsim::et
