// FlatMap (kernel/FlatMap.h) against std::unordered_map under random insertions, updates and
// erasures: over addresses that share their low bits (payloads at a fixed stride, PayloadMap),
// which is where linear probing with backward-shift deletion goes wrong if the shift rule is
// off, and over integer ids including 0 and the largest one (no key value is reserved).

#include "kernel/FlatMap.h"

#include <gtest/gtest.h>

#include <random>
#include <unordered_map>
#include <vector>

namespace etsim {
namespace {

TEST(PayloadMap, MatchesAnUnorderedMapUnderRandomChurn)
{
    // 4,096 fake payloads 512 bytes apart; up to all of them in the map at once.
    std::vector<char> arena(std::size_t{4096} * 512);
    std::mt19937_64 random(7);
    PayloadMap<int> map;
    std::unordered_map<const void*, int> reference;
    for (int step = 0; step < 400000; ++step) {
        const void* key = &arena[512 * (random() % 4096)];
        switch (random() % 3) {
        case 0:
            map.set(key, step);
            reference[key] = step;
            break;
        case 1:
            EXPECT_EQ(map.erase(key), reference.erase(key) == 1);
            break;
        default: {
            const int* found = map.find(key);
            auto expected = reference.find(key);
            ASSERT_EQ(found != nullptr, expected != reference.end()) << "step " << step;
            if (found != nullptr) {
                EXPECT_EQ(*found, expected->second);
            }
        }
        }
        ASSERT_EQ(map.size(), reference.size());
    }
    std::size_t visited = 0;
    map.forEach([&](const void* key, int value) {
        ++visited;
        EXPECT_EQ(reference.at(key), value);
    });
    EXPECT_EQ(visited, reference.size());
    map.clear();
    EXPECT_TRUE(map.empty());
    EXPECT_EQ(map.find(arena.data()), nullptr);
}

TEST(FlatMap, IntegerKeysTakeAnyValue)
{
    std::mt19937_64 random(11);
    FlatMap<std::uint64_t, std::uint32_t> map;
    std::unordered_map<std::uint64_t, std::uint32_t> reference;
    const std::uint64_t edges[] = {0, 1, ~0ULL, ~0ULL - 1};
    for (std::uint32_t step = 0; step < 200000; ++step) {
        // Dense ids, a few far ones and the edges, as tensor ids come.
        const std::uint64_t key =
            step % 97 == 0 ? edges[random() % 4] : (random() % 3000) << (step % 5 == 0 ? 40 : 0);
        if (random() % 2 == 0) {
            map.set(key, step);
            reference[key] = step;
        } else {
            EXPECT_EQ(map.erase(key), reference.erase(key) == 1);
        }
        const std::uint32_t* found = map.find(key);
        auto expected = reference.find(key);
        ASSERT_EQ(found != nullptr, expected != reference.end()) << "step " << step;
        if (found != nullptr) {
            EXPECT_EQ(*found, expected->second);
        }
        ASSERT_EQ(map.size(), reference.size());
    }
    for (const auto& [key, value] : reference) {
        const std::uint32_t* found = map.find(key);
        ASSERT_NE(found, nullptr) << key;
        EXPECT_EQ(*found, value);
    }
}

TEST(PayloadMap, EveryKeyIsFoundAfterErasingItsNeighbours)
{
    // Fill, then erase every other key in insertion order: each erasure shifts later entries
    // of the run back, and every remaining key must still be found.
    std::vector<char> arena(std::size_t{1000} * 64);
    PayloadMap<int> map;
    auto key = [&](int i) { return arena.data() + std::size_t{64} * static_cast<std::size_t>(i); };
    for (int i = 0; i < 1000; ++i)
        map.set(key(i), i);
    for (int i = 0; i < 1000; i += 2)
        EXPECT_TRUE(map.erase(key(i)));
    EXPECT_FALSE(map.erase(arena.data()));
    for (int i = 0; i < 1000; ++i) {
        const int* found = map.find(key(i));
        if (i % 2 == 0) {
            EXPECT_EQ(found, nullptr) << i;
        } else {
            ASSERT_NE(found, nullptr) << i;
            EXPECT_EQ(*found, i);
        }
    }
    EXPECT_EQ(map.size(), 500U);
}

} // namespace
} // namespace etsim
