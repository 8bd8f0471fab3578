// `etsim config keys`: the keys of each component, from the tables the parser uses.

#include "tests/support/RunCommand.h"

#include <gtest/gtest.h>

namespace {

using etsim::test::CommandResult;
using etsim::test::runEtsim;

TEST(ConfigKeysCommand, ListsOneComponentWithTypeDefaultAndHelp)
{
    CommandResult result = runEtsim("config keys accel");
    ASSERT_EQ(result.code, 0) << result.output;
    EXPECT_NE(result.output.find("# accel (docs/accel.md)"), std::string::npos) << result.output;
    EXPECT_NE(result.output.find("accelerator.dma.chunk  (size ≥ 1 B; default 2 MiB)\n"
                                 "    DMA transaction and staging-buffer size\n"),
              std::string::npos)
        << result.output;
    EXPECT_EQ(result.output.find("fabric."), std::string::npos);
}

TEST(ConfigKeysCommand, MarkdownIsTheDocsTable)
{
    CommandResult result = runEtsim("config keys fabric.dim --markdown");
    ASSERT_EQ(result.code, 0) << result.output;
    EXPECT_EQ(result.output.rfind("| key | type / unit | default | meaning |\n", 0), 0U)
        << result.output;
    EXPECT_NE(result.output.find("| `fabric.topology.dims[i].size` | integer ≥ 2 | required |"),
              std::string::npos)
        << result.output;
}

TEST(ConfigKeysCommand, AllComponentsWithoutAName)
{
    CommandResult result = runEtsim("config keys");
    ASSERT_EQ(result.code, 0) << result.output;
    for (const char* heading : {"# platform (",
                                "# accel (",
                                "# hbm (",
                                "# fabric (",
                                "# fabric.dim (",
                                "# fabric.fat_tree ("})
        EXPECT_NE(result.output.find(heading), std::string::npos) << heading;
}

TEST(ConfigKeysCommand, UnknownComponentCannotStart)
{
    CommandResult result = runEtsim("config keys gpu");
    EXPECT_EQ(result.code, 2);
    EXPECT_NE(result.output.find("unknown component \"gpu\"; one of platform, accel, hbm, "
                                 "fabric, fabric.dim, fabric.fat_tree"),
              std::string::npos)
        << result.output;
}

} // namespace
