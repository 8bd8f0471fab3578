// The link usage a network peer returns on its TERMINATE answer (protocol 1.2): what the
// adapter encodes is what etsim parses, and every malformed report is refused with the line
// and the reason.

#include "cosim/peer/LinkUsage.h"

#include "cosim/wire/Frame.h"
#include "tests/support/ErrorOf.h"

#include <gtest/gtest.h>

namespace etsim::cosim {
namespace {

using test::errorOf;

TEST(LinkUsage, EncodedUsageParsesBackWithUnlistedLinksAtZero)
{
    const std::string text = encodeLinkUsage({{1, 335608832, 16777216}, {3, 42, 7}});
    EXPECT_EQ(text, "etsim-link-usage 1\nlink 1 335608832 16777216\nlink 3 42 7\n");
    EXPECT_TRUE(isLinkUsage(text));
    const std::vector<RemoteLinkUsage> usage = parseLinkUsage(text, 5);
    ASSERT_EQ(usage.size(), 5u);
    for (std::uint32_t index = 0; index < 5; ++index)
        EXPECT_EQ(usage[index].link, index);
    EXPECT_EQ(usage[0].busyPs, 0u);
    EXPECT_EQ(usage[1].busyPs, 335608832u);
    EXPECT_EQ(usage[1].bytes, 16777216u);
    EXPECT_EQ(usage[2].bytes, 0u);
    EXPECT_EQ(usage[3].busyPs, 42u);
    EXPECT_EQ(usage[3].bytes, 7u);
    EXPECT_EQ(usage[4].busyPs, 0u);
}

TEST(LinkUsage, CommentsAndBlankLinesAreSkipped)
{
    const auto usage = parseLinkUsage("# from ns-3\n\netsim-link-usage 1\nlink 0 5 6 # x\n", 1);
    EXPECT_EQ(usage[0].busyPs, 5u);
    EXPECT_EQ(usage[0].bytes, 6u);
    EXPECT_FALSE(isLinkUsage("etsim-fabric 1\n"));
    EXPECT_FALSE(isLinkUsage(""));
}

TEST(LinkUsage, MalformedReportsAreRefusedWithTheLineAndReason)
{
    auto error = [](const std::string& text) {
        return errorOf<CosimError>([&] { parseLinkUsage(text, 4); });
    };
    EXPECT_EQ(error(""),
              "link usage: empty; expected \"etsim-link-usage 1\" followed by one \"link INDEX "
              "BUSY_PS BYTES\" line per link");
    EXPECT_EQ(error("link 0 1 2\n"),
              "link usage line 1: the report must start with \"etsim-link-usage 1\"");
    EXPECT_EQ(error("etsim-link-usage 2\n"),
              "link usage line 1: format version 2 is not supported (this etsim reads version "
              "1)");
    EXPECT_EQ(error("etsim-link-usage\n"),
              "link usage line 1: expected the format version (a whole number)");
    EXPECT_EQ(error("etsim-link-usage 1\nnode 0 1 2\n"),
              "link usage line 2: unknown keyword \"node\"");
    EXPECT_EQ(error("etsim-link-usage 1\nlink 4 1 2\n"),
              "link usage line 2: link 4 does not exist (the fabric has 4 links)");
    EXPECT_EQ(error("etsim-link-usage 1\nlink 1 1 2\nlink 1 3 4\n"),
              "link usage line 3: link 1 is listed twice");
    EXPECT_EQ(error("etsim-link-usage 1\nlink x 1 2\n"),
              "link usage line 2: expected the link index (a whole number)");
    EXPECT_EQ(error("etsim-link-usage 1\nlink 0 -1 2\n"),
              "link usage line 2: expected the busy time in ps (a whole number)");
    EXPECT_EQ(error("etsim-link-usage 1\nlink 0 1\n"),
              "link usage line 2: expected the byte count (a whole number)");
    EXPECT_EQ(error("etsim-link-usage 1\nlink 0 99999999999999999999 2\n"),
              "link usage line 2: the busy time in ps 99999999999999999999 is out of range");
    EXPECT_EQ(error("etsim-link-usage 1\nlink 0 1 2 3\n"),
              "link usage line 2: unexpected \"3\" after the byte count");
}

} // namespace
} // namespace etsim::cosim
