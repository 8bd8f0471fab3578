// Every real trace in ../shared/traces that fits a bundled preset runs to the end with
// `etsim run`: a trace whose rank count is a preset's on that preset, a one-rank trace (most
// real traces are one rank of a larger job) replicated to the 8-GPU preset. New trace sets
// dropped into the folder are picked up without editing this test.

#include "tests/support/SharedTraces.h"

#include "et_driver/TraceError.h"
#include "et_driver/TraceSet.h"
#include "platforms/PlatformConfig.h"
#include "tests/support/RunCommand.h"
#include "tests/support/TempDir.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

namespace etsim::platform {
namespace {

namespace fs = std::filesystem;
using etsim::test::TempDir;

TEST(SharedTraces, EveryTraceThatFitsAPresetRuns)
{
    std::optional<fs::path> traces = test::sharedTraces();
    if (!traces)
        GTEST_SKIP() << "shared traces not found: set ETSIM_TRACES to the traces folder";
    std::map<std::uint32_t, std::string> presetOfRanks;
    for (const std::string& name : platformPresetNames())
        presetOfRanks.emplace(loadPlatform(name).ranks, name);

    TempDir dir;
    int ran = 0;
    for (const fs::directory_entry& entry : fs::directory_iterator(*traces)) {
        if (!entry.is_directory())
            continue;
        std::size_t ranks = 0;
        try {
            ranks = et::findRankFiles(entry.path()).size();
        } catch (const et::TraceError&) {
            continue; // not a set of Chakra rank files (licences, JSON-only sets)
        }
        SCOPED_TRACE(entry.path().string());
        std::string arguments;
        std::uint32_t expectRanks = 0;
        if (ranks == 1) {
            // The PyTorch-derived one-rank traces carry dirty ctrl_deps (cycles, self-loops:
            // traces/README.md), so they run on data dependencies, as their feeder does.
            arguments = "--platform hgx_h100 --replicate 8 --set driver.dependencies=data";
            expectRanks = 8;
        } else if (presetOfRanks.count(static_cast<std::uint32_t>(ranks))) {
            arguments = "--platform " + presetOfRanks[static_cast<std::uint32_t>(ranks)] +
                        " --set driver.lenient=true";
            expectRanks = static_cast<std::uint32_t>(ranks);
        } else {
            continue;
        }
        const fs::path report = dir.file(entry.path().filename().string() + ".json");
        test::CommandResult run = test::runEtsim(
            "run --quiet --mode replay --set driver.communication_mode=model " + arguments +
            " --trace " + entry.path().string() + " --report " + report.string());
        ASSERT_EQ(run.code, 0) << run.output;
        nlohmann::json json = nlohmann::json::parse(test::readFile(report));
        EXPECT_EQ(json["outcome"], "finished");
        EXPECT_EQ(json["ranks"].size(), expectRanks);
        EXPECT_GT(json["simulated_time_ns"].get<double>(), 0.0);
        EXPECT_EQ(json["trace_files"][0]["sha256"].get<std::string>().size(), 64U);
        ++ran;
    }
    // chakra-feeder-test, pytorch-linked-1.1.0-r0 (replicated), text-resnet50-dp-64r-legacy.
    EXPECT_GE(ran, 3);
}

} // namespace
} // namespace etsim::platform
