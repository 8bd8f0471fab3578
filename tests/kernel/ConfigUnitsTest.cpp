// Quantities with units read through the config layer: values and located unit errors.
#include "kernel/Config.h"
#include "kernel/Error.h"
#include "kernel/Units.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace etsim {
namespace {

struct LinkSchema {
    Bandwidth bandwidth;
    Time latency;
    Size packet;
    Frequency clock;
    FlopRate peak;
};

LinkSchema parseLink(ConfigMap& map)
{
    LinkSchema link;
    link.bandwidth = map.required<Bandwidth>("bandwidth");
    link.latency = map.required<Time>("latency");
    link.packet = map.required<Size>("packet");
    link.clock = map.required<Frequency>("clock");
    link.peak = map.required<FlopRate>("peak");
    return link;
}

std::string errorOf(const std::string& yaml)
{
    try {
        loadConfigString(yaml, "link.yaml").map([](ConfigMap& top) {
            return top.sequence("links", parseLink);
        });
    } catch (const ConfigError& error) {
        return error.what();
    }
    return "no error";
}

TEST(ConfigUnits, QuantitiesParseWithTheirUnits)
{
    auto links = loadConfigString("links:\n"
                                  "  - {bandwidth: 900 GB/s, latency: 700 ns, packet: 4 KiB,"
                                  " clock: 1.98 GHz, peak: 989 TFLOP/s}\n",
                                  "link.yaml")
                     .map([](ConfigMap& top) { return top.sequence("links", parseLink); });
    ASSERT_EQ(links.size(), 1u);
    EXPECT_EQ(links[0].bandwidth.bytesPerSecond(), 900e9);
    EXPECT_EQ(links[0].latency.ps(), 700'000u);
    EXPECT_EQ(links[0].packet.bytes(), 4096u);
    EXPECT_EQ(links[0].clock.hz(), 1.98e9);
    EXPECT_EQ(links[0].peak.flopsPerSecond(), 989e12);
}

TEST(ConfigUnits, UnitErrorsCarryFileLineColumnAndKeyPath)
{
    const std::string head = "links:\n  - {bandwidth: 1 GB/s, latency: 1 ns, packet: 1 B,"
                             " clock: 1 GHz, peak: 1 TFLOP/s}\n";
    EXPECT_EQ(errorOf(head + "  - {bandwidth: 900 GBs, latency: 1 ns, packet: 1 B,"
                             " clock: 1 GHz, peak: 1 TFLOP/s}\n"),
              "link.yaml:3:17: links[1].bandwidth: \"900 GBs\": unknown unit \"GBs\" (did you "
              "mean \"GB/s\"?)");
    EXPECT_EQ(errorOf("links:\n  - bandwidth: 1 GB/s\n    latency: 3 GHz\n"),
              "link.yaml:3:14: links[0].latency: \"3 GHz\" is a frequency, a time was expected");
    EXPECT_EQ(errorOf("links:\n  - bandwidth: 1 GB/s\n    latency: {a: 1}\n"),
              "link.yaml:3:14: links[0].latency: expected time, got a map");
}

} // namespace
} // namespace etsim

namespace etsim {
namespace {

TEST(ConfigAcceptUnread, ReturnsEveryUnreadKeyWithItsLocation)
{
    std::vector<ConfigLocation> unread;
    int value = loadConfigString("a: 1\nboost-mode: 0\nnested: {x: 2}\n", "sys.json")
                    .map([&](ConfigMap& map) {
                        int a = map.required<int>("a");
                        unread = map.acceptUnread();
                        return a;
                    });
    EXPECT_EQ(value, 1);
    ASSERT_EQ(unread.size(), 2u);
    EXPECT_EQ(unread[0].keyPath, "boost-mode");
    EXPECT_EQ(unread[0].line, 2);
    EXPECT_EQ(unread[0].column, 1);
    EXPECT_EQ(unread[1].keyPath, "nested");
    EXPECT_EQ(unread[1].line, 3);
}

} // namespace
} // namespace etsim
