#include "kernel/Ids.h"

#include "kernel/Error.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace etsim {
namespace {

// Compile-time proof that IdVector refuses foreign indices: the detection below is false
// whenever `container[index]` or `container.at(index)` does not compile.
template <typename Container, typename Index, typename = void>
struct CanIndex : std::false_type {
};
template <typename Container, typename Index>
struct CanIndex<Container,
                Index,
                std::void_t<decltype(std::declval<Container&>()[std::declval<Index>()])>>
    : std::true_type {
};

template <typename Container, typename Index, typename = void>
struct CanAt : std::false_type {
};
template <typename Container, typename Index>
struct CanAt<Container,
             Index,
             std::void_t<decltype(std::declval<Container&>().at(std::declval<Index>()))>>
    : std::true_type {
};

using PerRank = IdVector<RankId, int>;
static_assert(CanIndex<PerRank, RankId>::value);
static_assert(CanIndex<const PerRank, RankId>::value);
static_assert(!CanIndex<PerRank, ChannelId>::value, "another id type must not index it");
static_assert(!CanIndex<PerRank, int>::value, "a plain integer must not index it");
static_assert(!CanIndex<PerRank, std::size_t>::value);
static_assert(!CanIndex<const PerRank, LinkId>::value);
static_assert(CanAt<PerRank, RankId>::value);
static_assert(!CanAt<PerRank, BankId>::value);
static_assert(!CanAt<PerRank, unsigned>::value);
// Ids do not convert to each other or to integers either.
static_assert(!std::is_convertible_v<RankId, ChannelId>);
static_assert(!std::is_convertible_v<RankId, std::uint32_t>);
static_assert(!std::is_convertible_v<int, RankId>);
static_assert(isStrongId<NodeId> && !isStrongId<int>);
static_assert(std::is_same_v<std::underlying_type_t<NodeId>, std::uint64_t>);
static_assert(toUnderlying(nextId(RankId{41})) == 42);

TEST(Ids, PrintAsKindAndNumber)
{
    EXPECT_EQ(toString(RankId{3}), "rank 3");
    EXPECT_EQ(toString(NodeId{18446744073709551615ULL}), "node 18446744073709551615");
    EXPECT_EQ(toString(ProcessGroupId{2}), "process group 2");
    std::ostringstream out;
    out << ChannelId{7} << ", " << BankId{1} << ", " << LinkId{0};
    EXPECT_EQ(out.str(), "channel 7, bank 1, link 0");
}

TEST(Ids, RangeVisitsEveryIdOnce)
{
    std::vector<std::uint32_t> seen;
    for (LinkId link : IdRange<LinkId>(LinkId{2}, LinkId{5}))
        seen.push_back(toUnderlying(link));
    EXPECT_EQ(seen, (std::vector<std::uint32_t>{2, 3, 4}));
    EXPECT_EQ((IdRange<LinkId>(LinkId{2}, LinkId{5}).size()), 3U);
    EXPECT_TRUE((IdRange<LinkId>(LinkId{5}, LinkId{2}).empty()));
}

TEST(IdVector, IndexedAccessAndIteration)
{
    IdVector<RankId, std::string> names(2, "idle");
    names[RankId{1}] = "busy";
    EXPECT_EQ(names[RankId{0}], "idle");
    EXPECT_EQ(names.at(RankId{1}), "busy");
    RankId added = names.append("new");
    EXPECT_EQ(added, RankId{2});
    EXPECT_EQ(names.emplace(3, 'x'), RankId{3});
    EXPECT_EQ(names[RankId{3}], "xxx");
    EXPECT_EQ(names.size(), 4U);
    EXPECT_TRUE(names.contains(RankId{3}));
    EXPECT_FALSE(names.contains(RankId{4}));

    std::string joined;
    for (RankId rank : names.ids())
        joined += toString(rank) + "=" + names[rank] + ";";
    EXPECT_EQ(joined, "rank 0=idle;rank 1=busy;rank 2=new;rank 3=xxx;");

    const auto& constNames = names;
    std::string values;
    for (const auto& value : constNames)
        values += value;
    EXPECT_EQ(values, "idlebusynewxxx");
}

TEST(IdVector, BoolElementsWork)
{
    IdVector<BankId, bool> open(3);
    open[BankId{2}] = true;
    EXPECT_FALSE(open[BankId{0}]);
    EXPECT_TRUE(open.at(BankId{2}));
}

TEST(IdVector, AtOutOfRangeNamesIdAndValidRange)
{
    IdVector<ChannelId, int> perChannel(4);
    try {
        perChannel.at(ChannelId{7});
        FAIL() << "expected an error";
    } catch (const Error& error) {
        EXPECT_STREQ(error.what(),
                     "IdVector::at: channel 7 is out of range (valid: channel 0 to channel 3); the "
                     "id does not belong to this container's platform or trace");
    }
    const IdVector<ChannelId, int> empty;
    try {
        empty.at(ChannelId{0});
        FAIL() << "expected an error";
    } catch (const Error& error) {
        EXPECT_STREQ(error.what(),
                     "IdVector::at: channel 0 is out of range (the container is empty); the id "
                     "does not belong to this container's platform or trace");
    }
}

TEST(IdVector, ResizeClearAndCompare)
{
    IdVector<NodeId, int> a(2, 5);
    IdVector<NodeId, int> b;
    b.resize(2, 5);
    EXPECT_EQ(a, b);
    b[NodeId{1}] = 6;
    EXPECT_NE(a, b);
    b.clear();
    EXPECT_TRUE(b.empty());
    EXPECT_TRUE(b.ids().empty());
}

} // namespace
} // namespace etsim
