#include "kernel/Stats.h"

#include "kernel/Error.h"
#include "kernel/ScTime.h"
#include "tests/support/ErrorOf.h"
#include "tests/support/ScTest.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace etsim {
namespace {

using test::errorOf;

TEST(Stats, GroupsNestAndPathsNameEveryLevel)
{
    StatGroup platform("platform");
    StatGroup& rank = platform.addGroup("rank0");
    StatGroup& hbm = rank.addGroup("hbm");
    StatGroup& channel = hbm.addGroup("channel3");
    Counter& reads = channel.addCounter("reads", "", "read requests served");

    EXPECT_EQ(channel.path(), "platform.rank0.hbm.channel3");
    EXPECT_EQ(platform.findStat("rank0.hbm.channel3.reads"), &reads);
    EXPECT_EQ(hbm.findStat("channel3.reads"), &reads);
    EXPECT_EQ(platform.findGroup("rank0.hbm"), &hbm);
    EXPECT_EQ(platform.findStat("rank0.hbm.channel3.writes"), nullptr);
    EXPECT_EQ(platform.findStat("rank0.dram.channel3.reads"), nullptr);
    EXPECT_EQ(platform.findGroup("rank1"), nullptr);
    ASSERT_EQ(hbm.groups().size(), 1U);
    ASSERT_EQ(channel.stats().size(), 1U);
    EXPECT_EQ(channel.stats()[0]->name(), "reads");
    EXPECT_EQ(channel.stats()[0]->description(), "read requests served");
    EXPECT_STREQ(channel.stats()[0]->kind(), "counter");
}

TEST(Stats, AdoptedGroupKeepsItsStatsAndGainsThePath)
{
    StatGroup platform("platform");
    auto net = std::make_unique<StatGroup>("net");
    Counter& packets = net->addCounter("packets", "", "packets sent");
    ++packets;
    StatGroup& adopted = platform.adoptGroup(std::move(net));
    packets += 2;

    EXPECT_EQ(adopted.path(), "platform.net");
    EXPECT_EQ(platform.findStat("net.packets"), &packets);
    EXPECT_EQ(packets.value(), 3U);
    EXPECT_EQ(errorOf([&] { platform.adoptGroup(nullptr); }),
              "group platform: adoptGroup was given no group");
}

TEST(Stats, CounterAndScalarArithmeticAndReset)
{
    StatGroup root("root");
    Counter& bytes = root.addCounter("bytes", "B", "bytes moved");
    ++bytes;
    bytes += 4095;
    EXPECT_EQ(bytes.value(), 4096U);
    bytes += 1ULL << 40;
    EXPECT_EQ(bytes.value(), (1ULL << 40) + 4096U);
    bytes.set(7);
    EXPECT_EQ(bytes.value(), 7U);
    EXPECT_EQ(bytes.unit(), "B");

    Scalar& energy = root.addScalar("energy", "J", "energy used");
    energy += 1.25;
    energy += 0.5;
    EXPECT_DOUBLE_EQ(energy.value(), 1.75);
    energy.set(-3.0);
    EXPECT_DOUBLE_EQ(energy.value(), -3.0);

    root.reset(1000);
    EXPECT_EQ(bytes.value(), 0U);
    EXPECT_DOUBLE_EQ(energy.value(), 0.0);
}

TEST(Stats, DistributionSummaryAndHistogram)
{
    StatGroup root("root");
    Distribution& latency = root.addDistribution("latency", "ns", "read latency", {3.0, 5.0, 8.0});
    EXPECT_EQ(latency.count(), 0U);
    EXPECT_DOUBLE_EQ(latency.min(), 0.0);
    EXPECT_DOUBLE_EQ(latency.max(), 0.0);
    EXPECT_DOUBLE_EQ(latency.mean(), 0.0);
    EXPECT_DOUBLE_EQ(latency.stddev(), 0.0);

    // Mean 5, population variance 4: the textbook example.
    for (double value : {2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0})
        latency.sample(value);
    EXPECT_EQ(latency.count(), 8U);
    EXPECT_DOUBLE_EQ(latency.sum(), 40.0);
    EXPECT_DOUBLE_EQ(latency.min(), 2.0);
    EXPECT_DOUBLE_EQ(latency.max(), 9.0);
    EXPECT_DOUBLE_EQ(latency.mean(), 5.0);
    EXPECT_DOUBLE_EQ(latency.stddev(), 2.0);
    // A sample equal to a bound belongs to the bucket that starts there.
    EXPECT_EQ(latency.bucketCounts(), (std::vector<std::uint64_t>{1, 3, 3, 1}));
    EXPECT_EQ(latency.bounds(), (std::vector<double>{3.0, 5.0, 8.0}));

    latency.sample(-1e6);
    EXPECT_DOUBLE_EQ(latency.min(), -1e6);
    EXPECT_EQ(latency.bucketCounts()[0], 2U);

    root.reset(0);
    EXPECT_EQ(latency.count(), 0U);
    EXPECT_DOUBLE_EQ(latency.sum(), 0.0);
    EXPECT_EQ(latency.bucketCounts(), (std::vector<std::uint64_t>{0, 0, 0, 0}));
    latency.sample(6.0);
    EXPECT_DOUBLE_EQ(latency.min(), 6.0);
    EXPECT_DOUBLE_EQ(latency.max(), 6.0);
    EXPECT_DOUBLE_EQ(latency.mean(), 6.0);
    EXPECT_DOUBLE_EQ(latency.stddev(), 0.0);
    EXPECT_EQ(latency.bucketCounts(), (std::vector<std::uint64_t>{0, 0, 1, 0}));
}

// The bucket of the last sample is tried first: runs of one value, jumps between buckets in
// both directions, the two open-ended buckets and samples on a bound must all land where a
// search from scratch puts them.
TEST(Stats, DistributionBucketsRunsAndJumpsAlike)
{
    const std::vector<double> bounds{10.0, 20.0, 40.0, 80.0};
    Distribution hinted("hinted", "ns", "latency", bounds);
    std::vector<std::uint64_t> expected(bounds.size() + 1, 0);
    // Each bound comes right after a sample of the bucket below it.
    const std::vector<double> values{15, 15,   15,   20, 90,  90, 5,    10, 40, 39.5, 20, 20,
                                     10, 9.99, 79.9, 80, 1e9, -3, 79.9, 15, 15, 40,   40};
    for (double value : values) {
        hinted.sample(value);
        const auto bucket = static_cast<std::size_t>(
            std::upper_bound(bounds.begin(), bounds.end(), value) - bounds.begin());
        ++expected[bucket];
    }
    EXPECT_EQ(hinted.bucketCounts(), expected);
    EXPECT_EQ(hinted.bucketCounts(), (std::vector<std::uint64_t>{3, 7, 4, 5, 4}));
}

TEST(Stats, DistributionStaysAccurateForLargeOffsets)
{
    // A naive sum-of-squares variance loses every digit here; Welford's update does not.
    Distribution latency("latency", "ps", "latency", {});
    for (int i = 0; i < 1000; ++i)
        latency.sample(1e12 + (i % 2 == 0 ? 1.0 : -1.0));
    EXPECT_NEAR(latency.stddev(), 1.0, 1e-6);
    EXPECT_EQ(latency.bucketCounts(), (std::vector<std::uint64_t>{1000}));
}

// Busy time added as whole picoseconds: the sum is exact, so one run of additions and the same
// additions grouped differently agree to the bit (summing seconds in doubles would not:
// 0.1 + 0.2 != 0.3).
TEST(Stats, ScalarSumsPicosecondsExactly)
{
    StatGroup root("root");
    Scalar& one = root.addScalar("one", "s", "busy");
    Scalar& grouped = root.addScalar("grouped", "s", "busy");
    for (int i = 0; i < 3000; ++i)
        one.addPicoseconds(100'000'000'001ULL); // 0.100000000001 s
    grouped.addPicoseconds(1000 * 100'000'000'001ULL);
    grouped.addPicoseconds(2000 * 100'000'000'001ULL);
    EXPECT_EQ(one.value(), grouped.value());
    EXPECT_EQ(one.value(), 300'000'000'003'000.0 * 1e-12);
    one += 1.0; // real amounts still add beside them
    EXPECT_DOUBLE_EQ(one.value(), 301.000000003);
    one.set(2.0);
    EXPECT_DOUBLE_EQ(one.value(), 2.0);
    root.reset(0);
    EXPECT_EQ(one.value(), 0.0);
    EXPECT_EQ(grouped.value(), 0.0);
}

// A distribution of quanta (ps reported in ns): n equal samples added at once leave it exactly
// as n single samples do, and its moments are exact.
TEST(Stats, DistributionOfQuantaAddsRunsExactly)
{
    StatGroup root("root");
    Distribution& single =
        root.addDistribution("single", "ns", "latency", {1.0, 700.0, 5000.0}, 1e-3);
    Distribution& runs = root.addDistribution("runs", "ns", "latency", {1.0, 700.0, 5000.0}, 1e-3);
    EXPECT_DOUBLE_EQ(single.mean(), 0.0);
    EXPECT_DOUBLE_EQ(single.min(), 0.0);
    const std::vector<std::pair<std::uint64_t, std::uint64_t>> samples{
        {741'572, 1000}, {707'155, 31}, {500, 1}, {741'572, 7}, {6'000'000, 2}};
    for (const auto& [quanta, times] : samples) {
        for (std::uint64_t i = 0; i < times; ++i)
            single.sampleQuanta(quanta);
        runs.sampleQuanta(quanta, times);
    }
    for (const Distribution* d : {&single, &runs}) {
        EXPECT_EQ(d->count(), 1041U);
        EXPECT_DOUBLE_EQ(d->min(), 0.5);
        EXPECT_DOUBLE_EQ(d->max(), 6000.0);
        EXPECT_EQ(d->bucketCounts(), (std::vector<std::uint64_t>{1, 0, 1038, 2}));
    }
    EXPECT_EQ(single.sum(), runs.sum());
    EXPECT_EQ(single.mean(), runs.mean());
    EXPECT_EQ(single.stddev(), runs.stddev());
    // The textbook example in quanta of 0.5: mean 2.5, population stddev 1.
    Distribution& book = root.addDistribution("book", "ns", "latency", {}, 0.5);
    for (std::uint64_t value : {4, 8, 8, 8, 10, 10, 14, 18})
        book.sampleQuanta(value);
    EXPECT_DOUBLE_EQ(book.sum(), 40.0);
    EXPECT_DOUBLE_EQ(book.mean(), 5.0);
    EXPECT_DOUBLE_EQ(book.stddev(), 2.0);
    // Exact where Welford's doubles would drift: 10^6 samples around 10^12 quanta.
    Distribution& far = root.addDistribution("far", "ps", "latency", {}, 1.0);
    far.sampleQuanta(1'000'000'000'001ULL, 500'000);
    far.sampleQuanta(999'999'999'999ULL, 500'000);
    EXPECT_DOUBLE_EQ(far.stddev(), 1.0);
    EXPECT_DOUBLE_EQ(far.mean(), 1e12);
    root.reset(0);
    EXPECT_EQ(runs.count(), 0U);
    EXPECT_DOUBLE_EQ(runs.sum(), 0.0);
    EXPECT_DOUBLE_EQ(runs.stddev(), 0.0);
    // A distribution takes one kind of sample.
    EXPECT_EQ(errorOf([&] { runs.sample(1.0); }),
              "distribution \"runs\": internal: a real sample on a distribution of quanta");
    Distribution& real = root.addDistribution("real", "ns", "latency", {});
    EXPECT_EQ(errorOf([&] { real.sampleQuanta(1); }),
              "distribution \"real\": internal: sampleQuanta on a distribution of real numbers");
    EXPECT_EQ(errorOf([] { Distribution("q", "", "", {}, -1.0); }),
              "distribution \"q\": the quantum must be a finite number >= 0, not -1.000000");
}

TEST(Stats, DistributionRejectsBadBoundsAndNaN)
{
    StatGroup root("platform");
    EXPECT_EQ(errorOf([&] {
                  root.addDistribution("size", "B", "sizes", {64, 64});
              }),
              "platform.size: histogram bounds must be strictly increasing, but bound 1 "
              "(64.000000) does not exceed bound 0 (64.000000)");
    EXPECT_EQ(errorOf([&] {
                  root.addDistribution(
                      "size", "B", "sizes", {1, std::numeric_limits<double>::infinity()});
              }),
              "platform.size: histogram bound 1 is not finite; give finite bounds (the outer "
              "buckets are open)");
    EXPECT_EQ(errorOf([] {
                  Distribution("d", "", "", {2, 1});
              }),
              "distribution \"d\": histogram bounds must be strictly increasing, but bound 1 "
              "(1.000000) does not exceed bound 0 (2.000000)");
    // The failed additions did not take the name.
    Distribution& size = root.addDistribution("size", "B", "sizes", {64});
    EXPECT_EQ(errorOf([&] { size.sample(std::nan("")); }),
              "distribution \"size\": sample is NaN; check the value computed");
    EXPECT_EQ(size.count(), 0U);
}

TEST(Stats, TimeWeightedAverageOverUnevenIntervals)
{
    TimeWeightedAverage occupancy("occupancy", "entries", "queue occupancy");
    EXPECT_DOUBLE_EQ(occupancy.average(0), 0.0);
    occupancy.set(100, 2.0);  // 0 held over [0, 100)
    occupancy.set(400, 5.0);  // 2 held over [100, 400): 600
    occupancy.set(1000, 1.0); // 5 held over [400, 1000): 3000
    // 1 held over [1000, 1500): 500; total 4100 over 1500 ps.
    EXPECT_DOUBLE_EQ(occupancy.average(1500), 4100.0 / 1500.0);
    EXPECT_DOUBLE_EQ(occupancy.average(1000), 3600.0 / 1000.0);
    EXPECT_DOUBLE_EQ(occupancy.value(), 1.0);

    occupancy.add(1600, 3.0); // 4 from 1600 on
    EXPECT_DOUBLE_EQ(occupancy.value(), 4.0);
    // Two changes at the same instant: the earlier one is held for no time.
    occupancy.set(1800, 100.0);
    occupancy.set(1800, 4.0);
    EXPECT_DOUBLE_EQ(occupancy.average(2000), (4100.0 + 100.0 + 4.0 * 400.0) / 2000.0);

    // Warm-up over: the held value carries into the new window, the past is forgotten.
    occupancy.reset(2000);
    EXPECT_EQ(occupancy.windowStartPs(), 2000U);
    EXPECT_DOUBLE_EQ(occupancy.average(2000), 4.0);
    occupancy.set(2500, 0.0);
    EXPECT_DOUBLE_EQ(occupancy.average(3000), 2.0);
    EXPECT_DOUBLE_EQ(occupancy.average(4500), 4.0 * 500.0 / 2500.0);
}

TEST(Stats, TimeWeightedAverageStartsLaterAndRefusesTimeGoingBack)
{
    TimeWeightedAverage busy("busy", "", "engine busy", 1.0, 1000000);
    EXPECT_DOUBLE_EQ(busy.average(1000000), 1.0);
    busy.set(1250000, 0.0);
    EXPECT_DOUBLE_EQ(busy.average(2000000), 0.25);
    EXPECT_EQ(errorOf([&] { busy.set(1200000, 1.0); }),
              "time-weighted average \"busy\": time 1200000 ps is before the last change at "
              "1250000 ps; pass the current simulated time, which never decreases");
    EXPECT_EQ(errorOf([&] { busy.average(5); }),
              "time-weighted average \"busy\": time 5 ps is before the last change at 1250000 "
              "ps; pass the current simulated time, which never decreases");
    EXPECT_EQ(errorOf([&] { busy.reset(7); }),
              "time-weighted average \"busy\": time 7 ps is before the last change at 1250000 "
              "ps; pass the current simulated time, which never decreases");
    // The refused change left the stat as it was.
    EXPECT_DOUBLE_EQ(busy.average(2000000), 0.25);
}

TEST(Stats, FormulaUsesTheWindowSinceTheLastReset)
{
    StatGroup root("link");
    Counter& bytes = root.addCounter("bytes", "B", "bytes sent");
    Formula& bandwidth =
        root.addFormula("bandwidth", "B/s", "achieved bandwidth", [&bytes](const StatWindow& w) {
            return static_cast<double>(bytes.value()) / w.seconds();
        });
    bytes += 1000000;
    EXPECT_DOUBLE_EQ(bandwidth.value(1000000000), 1e9); // 1 MB in 1 ms

    root.reset(1000000000);
    EXPECT_EQ(bandwidth.windowStartPs(), 1000000000U);
    bytes += 500;
    EXPECT_DOUBLE_EQ(bandwidth.value(2000000000), 5e5);
    EXPECT_TRUE(std::isinf(bandwidth.value(1000000000))); // empty window: 500 / 0

    EXPECT_EQ(errorOf([&] { root.addFormula("none", "", "", nullptr); }),
              "link.none: formula has no callback; pass a function that computes the value");
    EXPECT_EQ(errorOf([] { Formula("f", "", "", nullptr); }),
              "formula \"f\": no callback given; pass a function that computes the value");
}

TEST(Stats, NamesAreValidated)
{
    StatGroup root("platform");
    StatGroup& rank = root.addGroup("rank0");
    std::string rule = ": names must be non-empty and contain no dots, spaces or control "
                       "characters (nest a child group instead of \"a.b\")";
    EXPECT_EQ(errorOf([&] { rank.addCounter("hbm.reads", "", ""); }),
              "stat name \"hbm.reads\" in group platform.rank0" + rule);
    EXPECT_EQ(errorOf([&] { rank.addScalar("busy time", "s", ""); }),
              "stat name \"busy time\" in group platform.rank0" + rule);
    EXPECT_EQ(errorOf([&] { rank.addGroup(""); }), "stat name \"\" in group platform.rank0" + rule);
    EXPECT_EQ(errorOf([&] { rank.addCounter("tab\there", "", ""); }),
              "stat name \"tab\there\" in group platform.rank0" + rule);
    EXPECT_EQ(errorOf([] { StatGroup("a.b"); }),
              "stat name \"a.b\" in the root of the stats tree" + rule);
    EXPECT_TRUE(rank.stats().empty());
    EXPECT_TRUE(rank.groups().empty());
    // Anything else is allowed, UTF-8 included.
    rank.addCounter("q[0]-µops_x", "", "");
}

TEST(Stats, DuplicateNamesNameTheFullPath)
{
    StatGroup root("platform");
    StatGroup& hbm = root.addGroup("rank0").addGroup("hbm");
    hbm.addCounter("reads", "", "read requests");
    hbm.addGroup("channel0");
    hbm.addDistribution("latency", "ns", "read latency", {});
    EXPECT_EQ(errorOf([&] { hbm.addScalar("reads", "", ""); }),
              "platform.rank0.hbm.reads: cannot add a scalar, the name is already used by a "
              "counter in this group; give each stat and child group a distinct name");
    EXPECT_EQ(errorOf([&] { hbm.addCounter("channel0", "", ""); }),
              "platform.rank0.hbm.channel0: cannot add a counter, the name is already used by "
              "a child group in this group; give each stat and child group a distinct name");
    EXPECT_EQ(errorOf([&] { hbm.addGroup("latency"); }),
              "platform.rank0.hbm.latency: cannot add a group, the name is already used by a "
              "distribution in this group; give each stat and child group a distinct name");
    EXPECT_EQ(errorOf([&] { hbm.addTimeWeightedAverage("latency", "", ""); }),
              "platform.rank0.hbm.latency: cannot add a time_weighted_average, the name is "
              "already used by a distribution in this group; give each stat and child group a "
              "distinct name");
    EXPECT_EQ(hbm.stats().size(), 2U);
    EXPECT_EQ(hbm.groups().size(), 1U);
    // The same name is fine in another group.
    root.addGroup("rank1").addGroup("hbm").addCounter("reads", "", "read requests");
}

// A small tree used by both writers.
struct SampleTree {
    StatGroup root{"platform"};
    Counter& nodes = root.addCounter("nodes", "", "ET nodes finished");
    Scalar& energy = root.addScalar("energy", "J", "energy used");
    Counter& errors = root.addCounter("errors", "", "");
    StatGroup& hbm = root.addGroup("hbm");
    Counter& bytes = hbm.addCounter("bytes", "B", "bytes read");
    Distribution& latency = hbm.addDistribution("latency", "ns", "read latency", {10, 20});
    Distribution& queue = hbm.addDistribution("queue", "", "queue depth", {});
    TimeWeightedAverage& busy = hbm.addTimeWeightedAverage("busy", "", "fraction of time busy");
    Formula& bandwidth =
        hbm.addFormula("bandwidth", "B/s", "read bandwidth", [this](const StatWindow& window) {
            return static_cast<double>(bytes.value()) / window.seconds();
        });

    SampleTree()
    {
        nodes += 42;
        energy += 1.5;
        bytes += 4096;
        for (double value : {5.0, 15.0, 25.0})
            latency.sample(value);
        busy.set(0, 1.0);
        busy.set(250000, 0.0);
    }
};

constexpr std::uint64_t sampleNowPs = 1000000; // 1 us

TEST(Stats, JsonWriterNestsGroupsAndKeepsEveryField)
{
    SampleTree tree;
    std::ostringstream out;
    writeStatsJson(out, tree.root, sampleNowPs);
    ASSERT_EQ(out.str().back(), '\n');
    auto document = nlohmann::ordered_json::parse(out.str());

    ASSERT_EQ(document.size(), 1U);
    const auto& platform = document.at("platform");
    std::vector<std::string> keys;
    for (const auto& item : platform.items())
        keys.push_back(item.key());
    EXPECT_EQ(keys, (std::vector<std::string>{"nodes", "energy", "errors", "hbm"}));

    EXPECT_EQ(platform.at("nodes"),
              nlohmann::ordered_json::parse(R"({"kind":"counter","value":42,"unit":"",
                                                "description":"ET nodes finished"})"));
    EXPECT_EQ(platform.at("energy").at("kind"), "scalar");
    EXPECT_DOUBLE_EQ(platform.at("energy").at("value").get<double>(), 1.5);
    EXPECT_EQ(platform.at("energy").at("unit"), "J");
    EXPECT_EQ(platform.at("energy").at("description"), "energy used");
    EXPECT_EQ(platform.at("errors").at("value"), 0);

    const auto& hbm = platform.at("hbm");
    EXPECT_EQ(hbm.at("bytes").at("value"), 4096);
    EXPECT_EQ(hbm.at("bytes").at("unit"), "B");

    const auto& latency = hbm.at("latency");
    EXPECT_EQ(latency.at("kind"), "distribution");
    EXPECT_EQ(latency.at("unit"), "ns");
    EXPECT_EQ(latency.at("description"), "read latency");
    EXPECT_EQ(latency.at("count"), 3);
    EXPECT_DOUBLE_EQ(latency.at("sum").get<double>(), 45.0);
    EXPECT_DOUBLE_EQ(latency.at("min").get<double>(), 5.0);
    EXPECT_DOUBLE_EQ(latency.at("max").get<double>(), 25.0);
    EXPECT_DOUBLE_EQ(latency.at("mean").get<double>(), 15.0);
    EXPECT_DOUBLE_EQ(latency.at("stddev").get<double>(), std::sqrt(200.0 / 3.0));
    EXPECT_EQ(latency.at("histogram").at("bounds"), nlohmann::ordered_json::parse("[10.0,20.0]"));
    EXPECT_EQ(latency.at("histogram").at("counts"), nlohmann::ordered_json::parse("[1,1,1]"));

    // An empty distribution has no min, max, mean or spread to report.
    const auto& queue = hbm.at("queue");
    EXPECT_EQ(queue.at("count"), 0);
    EXPECT_TRUE(queue.at("min").is_null());
    EXPECT_TRUE(queue.at("max").is_null());
    EXPECT_TRUE(queue.at("mean").is_null());
    EXPECT_TRUE(queue.at("stddev").is_null());
    EXPECT_EQ(queue.at("histogram").at("counts"), nlohmann::ordered_json::parse("[0]"));

    const auto& busy = hbm.at("busy");
    EXPECT_EQ(busy.at("kind"), "time_weighted_average");
    EXPECT_DOUBLE_EQ(busy.at("value").get<double>(), 0.25);
    EXPECT_DOUBLE_EQ(busy.at("current").get<double>(), 0.0);
    EXPECT_EQ(busy.at("window_start_ps"), 0);
    EXPECT_EQ(busy.at("window_end_ps"), sampleNowPs);

    const auto& bandwidth = hbm.at("bandwidth");
    EXPECT_EQ(bandwidth.at("kind"), "formula");
    EXPECT_DOUBLE_EQ(bandwidth.at("value").get<double>(), 4.096e9);
    EXPECT_EQ(bandwidth.at("unit"), "B/s");
    EXPECT_EQ(bandwidth.at("description"), "read bandwidth");
}

TEST(Stats, JsonWriterEscapesAndWritesNonFiniteAsNull)
{
    StatGroup root("root");
    root.addScalar("ratio", "\"x\"", "line1\nline2 \\ µ");
    root.addFormula("empty", "", "", [](const StatWindow& /*window*/) {
        return std::numeric_limits<double>::infinity();
    });
    auto document = nlohmann::json::parse(statsToJson(root, 0).dump());
    EXPECT_EQ(document["root"]["ratio"]["unit"], "\"x\"");
    EXPECT_EQ(document["root"]["ratio"]["description"], "line1\nline2 \\ µ");
    EXPECT_TRUE(document["root"]["empty"]["value"].is_null());
}

TEST(Stats, TextWriterAlignsPathValueAndDescription)
{
    SampleTree tree;
    std::ostringstream out;
    writeStatsText(out, tree.root, sampleNowPs);
    EXPECT_EQ(out.str(),
              "platform.nodes                      42             ET nodes finished\n"
              "platform.energy                     1.5 J          energy used\n"
              "platform.errors                     0\n"
              "platform.hbm.bytes                  4096 B         bytes read\n"
              "platform.hbm.latency.count          3              read latency (samples)\n"
              "platform.hbm.latency.sum            45 ns          read latency (sum)\n"
              "platform.hbm.latency.min            5 ns           read latency (min)\n"
              "platform.hbm.latency.max            25 ns          read latency (max)\n"
              "platform.hbm.latency.mean           15 ns          read latency (mean)\n"
              "platform.hbm.latency.stddev         8.16497 ns     read latency (stddev)\n"
              "platform.hbm.latency.bucket[<10]    1              read latency (histogram)\n"
              "platform.hbm.latency.bucket[10,20)  1              read latency (histogram)\n"
              "platform.hbm.latency.bucket[>=20]   1              read latency (histogram)\n"
              "platform.hbm.queue.count            0              queue depth (samples)\n"
              "platform.hbm.queue.sum              0              queue depth (sum)\n"
              "platform.hbm.queue.min              -              queue depth (min)\n"
              "platform.hbm.queue.max              -              queue depth (max)\n"
              "platform.hbm.queue.mean             -              queue depth (mean)\n"
              "platform.hbm.queue.stddev           -              queue depth (stddev)\n"
              "platform.hbm.queue.bucket[all]      0              queue depth (histogram)\n"
              "platform.hbm.busy                   0.25           fraction of time busy\n"
              "platform.hbm.bandwidth              4.096e+09 B/s  read bandwidth\n");
}

TEST(Stats, TextWriterCountsCodePointsForAlignment)
{
    StatGroup root("r");
    root.addScalar("a", "µs", "first").set(2);
    root.addScalar("b", "ns", "second").set(3);
    std::ostringstream out;
    writeStatsText(out, root, 0);
    EXPECT_EQ(out.str(),
              "r.a  2 µs  first\n"
              "r.b  3 ns  second\n");
}

using StatsWithKernel = test::ScTest;

TEST_F(StatsWithKernel, PicosecondsFromScTimeAtDefaultResolution)
{
    EXPECT_EQ(toPicoseconds(sc_core::sc_time(3, sc_core::SC_NS)), 3000U);
    EXPECT_EQ(toPicoseconds(sc_core::sc_time(7, sc_core::SC_PS)), 7U);
    EXPECT_EQ(toPicoseconds(sc_core::sc_time(3600, sc_core::SC_SEC)), 3600000000000000ULL);
}

TEST_F(StatsWithKernel, PicosecondsFromScTimeAtFemtosecondResolution)
{
    sc_core::sc_set_time_resolution(1, sc_core::SC_FS);
    EXPECT_EQ(toPicoseconds(sc_core::sc_time(3, sc_core::SC_NS)), 3000U);
    EXPECT_EQ(toPicoseconds(sc_core::sc_time(2500, sc_core::SC_FS)), 2U); // truncated
}

TEST_F(StatsWithKernel, PicosecondsFromScTimeAtNanosecondResolution)
{
    sc_core::sc_set_time_resolution(1, sc_core::SC_NS);
    EXPECT_EQ(toPicoseconds(sc_core::sc_time(5, sc_core::SC_US)), 5000000U);
}

} // namespace
} // namespace etsim
