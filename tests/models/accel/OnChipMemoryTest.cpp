// The on-chip residency model on hand-worked sequences (docs/accel.md, On-chip memory): which
// tensors hit, which come from HBM, what is evicted and written back, under LRU and FIFO.

#include "models/accel/residency/OnChipMemory.h"

#include "kernel/Stats.h"
#include "models/accel/residency/FifoPolicy.h"
#include "models/accel/residency/LruPolicy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <list>
#include <memory>
#include <random>

namespace etsim::accel {
namespace {

// The policies' order against a std::list kept by the rule each documents (placement and, for
// LRU, every use move an id to the newest end; the victim is the oldest the filter accepts),
// under random placements, uses, removals and filters.
template <typename Policy>
void expectOrderMatchesAList(bool useMoves)
{
    Policy policy;
    std::list<std::uint64_t> order;
    std::mt19937_64 random(5);
    auto toNewest = [&](std::uint64_t id) {
        order.remove(id);
        order.push_back(id);
    };
    for (int step = 0; step < 20000; ++step) {
        const std::uint64_t id = random() % 64;
        const bool present = std::find(order.begin(), order.end(), id) != order.end();
        switch (random() % 4) {
        case 0:
            policy.inserted(id);
            toNewest(id);
            break;
        case 1:
            if (present) {
                policy.accessed(id);
                if (useMoves)
                    toNewest(id);
            }
            break;
        case 2:
            policy.removed(id);
            order.remove(id);
            break;
        default: {
            const std::uint64_t refused = random() % 64;
            auto accept = [&](std::uint64_t candidate) { return candidate % 7 != refused % 7; };
            std::optional<std::uint64_t> expected;
            for (std::uint64_t candidate : order)
                if (accept(candidate)) {
                    expected = candidate;
                    break;
                }
            ASSERT_EQ(policy.victim(accept), expected) << "step " << step;
        }
        }
    }
}

TEST(ReplacementPolicy, LruOrderMatchesAListUnderRandomUse)
{
    expectOrderMatchesAList<LruPolicy>(true);
}

TEST(ReplacementPolicy, FifoOrderMatchesAListUnderRandomUse)
{
    expectOrderMatchesAList<FifoPolicy>(false);
}

NodeTensors tensors(std::vector<TensorUse> inputs, std::vector<TensorUse> outputs)
{
    return NodeTensors{std::move(inputs), std::move(outputs)};
}

std::uint64_t counter(const StatGroup& stats, const char* name)
{
    const auto* stat = dynamic_cast<const Counter*>(stats.findStat(name));
    EXPECT_NE(stat, nullptr) << name;
    return stat != nullptr ? stat->value() : 0;
}

struct Memory {
    explicit Memory(std::uint64_t capacity, SramPolicy policy = SramPolicy::Lru)
        : stats("sram"), onChip(capacity, makeReplacementPolicy(policy), stats)
    {
    }
    StatGroup stats;
    OnChipMemory onChip;
};

void expectTraffic(const ResidencyTraffic& traffic, std::uint64_t read, std::uint64_t write)
{
    EXPECT_EQ(traffic.readBytes, read);
    EXPECT_EQ(traffic.writeBytes, write);
}

TEST(OnChipMemory, ATensorProducedThenConsumedHits)
{
    Memory m(100);
    // Node A writes tensor 1 (40 B): on chip, dirty, nothing moves to HBM (write-back).
    expectTraffic(m.onChip.compute(tensors({}, {{1, 40}})), 0, 0);
    EXPECT_TRUE(m.onChip.resident(1));
    EXPECT_TRUE(m.onChip.dirty(1));
    // Node B reads it (a hit) and writes tensor 2 (40 B): still nothing to HBM.
    expectTraffic(m.onChip.compute(tensors({{1, 40}}, {{2, 40}})), 0, 0);
    EXPECT_EQ(m.onChip.residentBytes(), 80U);
    EXPECT_EQ(counter(m.stats, "hits"), 1U);
    EXPECT_EQ(counter(m.stats, "hit_bytes"), 40U);
    EXPECT_EQ(counter(m.stats, "misses"), 0U);
    EXPECT_EQ(counter(m.stats, "written_bytes"), 80U);
    // A tensor nobody on this accelerator touched comes from HBM, and then stays.
    expectTraffic(m.onChip.compute(tensors({{9, 20}}, {})), 20, 0);
    EXPECT_TRUE(m.onChip.resident(9));
    EXPECT_EQ(m.onChip.residentBytes(), 100U);
}

TEST(OnChipMemory, ATensorEvictedByALargerWorkingSetMisses)
{
    Memory m(100);
    m.onChip.compute(tensors({}, {{1, 40}}));
    // Reading 70 B of tensor 3 from HBM needs 70 B, 60 are free: tensor 1 goes, and being
    // dirty it is written back (40 B) by this node.
    expectTraffic(m.onChip.compute(tensors({{3, 70}}, {})), 70, 40);
    EXPECT_FALSE(m.onChip.resident(1));
    // Tensor 1 again: a miss, read back from HBM; tensor 3 (clean) makes room, nothing written.
    expectTraffic(m.onChip.compute(tensors({{1, 40}}, {})), 40, 0);
    EXPECT_FALSE(m.onChip.resident(3));
    EXPECT_EQ(counter(m.stats, "misses"), 2U);
    EXPECT_EQ(counter(m.stats, "miss_bytes"), 110U);
    EXPECT_EQ(counter(m.stats, "evictions"), 2U);
    EXPECT_EQ(counter(m.stats, "evicted_bytes"), 110U);
    EXPECT_EQ(counter(m.stats, "writeback_bytes"), 40U);
}

TEST(OnChipMemory, CapacityZeroStreamsEverything)
{
    Memory m(0);
    // In from HBM, out straight to HBM; the next node's read of tensor 2 misses.
    expectTraffic(m.onChip.compute(tensors({{1, 10}}, {{2, 20}})), 10, 20);
    expectTraffic(m.onChip.compute(tensors({{2, 20}}, {})), 20, 0);
    EXPECT_EQ(m.onChip.residentBytes(), 0U);
    EXPECT_EQ(counter(m.stats, "hits"), 0U);
    EXPECT_EQ(counter(m.stats, "bypass_bytes"), 50U);
}

// Three 30 B tensors fill 90 B; tensor 1 is read again, then a fourth arrives.
ResidencyTraffic reuseThenOverflow(OnChipMemory& onChip)
{
    for (std::uint64_t id : {1, 2, 3})
        onChip.compute(tensors({}, {{id, 30}}));
    onChip.compute(tensors({{1, 30}}, {}));
    return onChip.compute(tensors({}, {{4, 30}}));
}

TEST(OnChipMemory, LruEvictsTheLeastRecentlyUsed)
{
    Memory m(90);
    // Use order 1, 2, 3, 1: tensor 2 is the least recently used; it is dirty, so 30 B go back.
    expectTraffic(reuseThenOverflow(m.onChip), 0, 30);
    EXPECT_TRUE(m.onChip.resident(1));
    EXPECT_FALSE(m.onChip.resident(2));
    EXPECT_TRUE(m.onChip.resident(3));
    EXPECT_TRUE(m.onChip.resident(4));
    EXPECT_STREQ(m.onChip.policy().name(), "lru");
}

TEST(OnChipMemory, FifoEvictsTheFirstPlacedWhateverItsUse)
{
    Memory m(90, SramPolicy::Fifo);
    expectTraffic(reuseThenOverflow(m.onChip), 0, 30);
    EXPECT_FALSE(m.onChip.resident(1));
    EXPECT_TRUE(m.onChip.resident(2));
    EXPECT_STREQ(m.onChip.policy().name(), "fifo");
}

TEST(OnChipMemory, ANodesOwnTensorsAreNotEvictedForEachOther)
{
    Memory m(100);
    m.onChip.compute(tensors({}, {{7, 50}}));
    // Inputs of 60 B each: the first takes tensor 7's place (50 B free: 7 is written back,
    // 50 B), the second does not fit beside it (40 B left beside the node's own) and streams;
    // the 50 B output does not fit either and is written straight to HBM.
    expectTraffic(m.onChip.compute(tensors({{1, 60}, {2, 60}}, {{3, 50}})), 120, 50 + 50);
    EXPECT_TRUE(m.onChip.resident(1));
    EXPECT_FALSE(m.onChip.resident(2));
    EXPECT_FALSE(m.onChip.resident(3));
    EXPECT_EQ(counter(m.stats, "bypass_bytes"), 110U);
    // A tensor larger than the whole memory never stays.
    expectTraffic(m.onChip.compute(tensors({{5, 101}}, {})), 101, 0);
    EXPECT_TRUE(m.onChip.resident(1));
}

TEST(OnChipMemory, LoadsPlaceCleanTensorsAndStoresCleanThem)
{
    Memory m(100);
    // A load brings tensor 1 in clean; a compute node writes tensor 2, a store writes it out.
    expectTraffic(m.onChip.load(tensors({}, {{1, 50}})), 0, 0);
    EXPECT_TRUE(m.onChip.resident(1));
    EXPECT_FALSE(m.onChip.dirty(1));
    m.onChip.compute(tensors({{1, 50}}, {{2, 50}}));
    EXPECT_TRUE(m.onChip.dirty(2));
    m.onChip.store(tensors({{2, 50}}, {}));
    EXPECT_FALSE(m.onChip.dirty(2));
    // Both clean: making room for 100 B evicts them without a write-back.
    expectTraffic(m.onChip.compute(tensors({{3, 100}}, {})), 100, 0);
    EXPECT_EQ(counter(m.stats, "writeback_bytes"), 0U);
    // Untracked nodes are counted, nothing else.
    m.onChip.untracked(64);
    EXPECT_EQ(counter(m.stats, "untracked_nodes"), 1U);
    EXPECT_EQ(counter(m.stats, "untracked_bytes"), 64U);
    EXPECT_EQ(m.onChip.residentBytes(), 100U);
}

} // namespace
} // namespace etsim::accel
