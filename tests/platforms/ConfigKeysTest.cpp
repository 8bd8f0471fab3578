// The key tables of docs/ are the components' parameter tables, and the resolved platform
// echo holds every key. ETSIM_UPDATE_DOCS=1 rewrites the docs' tables from the code.

#include "platforms/ConfigKeys.h"

#include "kernel/InputFile.h"
#include "platforms/PlatformConfig.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

namespace etsim::platform {
namespace {

std::filesystem::path sourceDir()
{
    const char* root = std::getenv("ETSIM_SOURCE_DIR");
    return root != nullptr ? std::filesystem::path(root) : std::filesystem::path();
}

TEST(ConfigKeys, DocsTablesAreTheParameterTables)
{
    const std::filesystem::path root = sourceDir();
    if (root.empty())
        GTEST_SKIP() << "ETSIM_SOURCE_DIR is not set (CTest sets it)";
    const std::vector<ComponentKeys> tables = configKeyTables();
    std::set<std::string> pages;
    for (const ComponentKeys& table : tables)
        pages.insert(table.doc);
    const bool update = std::getenv("ETSIM_UPDATE_DOCS") != nullptr;
    for (const std::string& page : pages) {
        const std::string text = readTextFile(root / page, "a docs page");
        for (const ComponentKeys& table : tables) {
            if (table.doc == page) {
                EXPECT_NE(text.find(keyTableBegin(table.component)), std::string::npos)
                    << page << " has no table of " << table.component;
            }
        }
        const std::string fresh = refreshKeyTables(text, tables);
        if (update && fresh != text) {
            std::ofstream(root / page) << fresh;
            continue;
        }
        EXPECT_EQ(fresh, text) << page << " differs from the parameter tables: run "
                               << "ETSIM_UPDATE_DOCS=1 ctest -R ConfigKeys";
    }
}

TEST(ConfigKeys, EveryComponentListsItsKeysOnce)
{
    for (const ComponentKeys& table : configKeyTables()) {
        std::multiset<std::string> keys;
        for (const ParamInfo& key : table.keys) {
            EXPECT_FALSE(key.type.empty()) << key.key;
            EXPECT_FALSE(key.help.empty()) << key.key;
            EXPECT_FALSE(key.defaultText.empty()) << key.key;
            keys.insert(key.key);
        }
        for (const std::string& key : keys)
            // tensor.clock is listed once per tensor model that has it.
            EXPECT_EQ(keys.count(key), key == "accelerator.tensor.clock" ? 2U : 1U) << key;
    }
    EXPECT_EQ(configKeys("hbm").keys.front().key, "accelerator.hbm.preset");
    EXPECT_THROW(configKeys("gpu"), Error);
}

TEST(ConfigKeys, ResolvedPlatformHoldsEveryFabricKey)
{
    // The file sets none of the collective keys: the echo still has their values.
    PlatformConfig config = loadPlatformString("ranks: 4\n"
                                               "accelerator: {preset: h100_sxm}\n"
                                               "fabric:\n"
                                               "  topology:\n"
                                               "    kind: multi_dim\n"
                                               "    dims: [{kind: ring, size: 4, bandwidth: "
                                               "100 GB/s, latency: 500 ns}]\n",
                                               "p.yaml");
    const nlohmann::ordered_json& fabric = config.resolved["fabric"];
    EXPECT_EQ(fabric["fidelity"], "flow");
    EXPECT_EQ(fabric["collectives"]["chunks"], "1");
    EXPECT_EQ(fabric["collectives"]["algorithms"]["all_reduce"][0], "ring");
    EXPECT_EQ(fabric["nic"]["message_delay"], "0 ps");
    EXPECT_EQ(fabric["topology"]["dims"][0]["efficiency"], "1");
    EXPECT_EQ(config.resolved["name"], "");
    EXPECT_EQ(config.resolved["driver"]["limits"]["host"], "1");
    // And it loads back to the same platform.
    PlatformConfig again = loadPlatformString(config.resolved.dump(), "resolved.json");
    EXPECT_EQ(again.resolved, config.resolved);
}

} // namespace
} // namespace etsim::platform
