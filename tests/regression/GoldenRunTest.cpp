// Golden regressions: the simulated time and the per-rank breakdown of each bundled preset's job
// and of a few small end-to-end cases, compared exactly with the references in golden/.
//
// A model change that moves a figure fails here on purpose. When the move is intended, the
// references are rewritten with
//     ETSIM_UPDATE_GOLDEN=1 ctest --test-dir build -L regression
// and the commit that changes the model carries the new files and says by how much each case
// moved and why (git diff tests/regression/golden shows the old and new figures side by side).

#include "tests/support/RunCommand.h"
#include "tests/support/TempDir.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <string>
#include <vector>

namespace etsim::test {
namespace {

struct GoldenCase {
    std::string name;
    // `etsim gen ...` arguments without --out/--name (the trace goes to <tmp>/job.*.et).
    std::string generate;
    // `etsim run` arguments besides --trace and --report.
    std::string run;
};

// For gtest's messages (otherwise it prints the object's bytes).
void PrintTo(const GoldenCase& golden, std::ostream* out)
{
    *out << golden.name;
}

// A small transformer step: one layer, tp × dp ranks.
std::string transformer(unsigned dp, unsigned tp)
{
    return "transformer --layers 1 --hidden 1024 --heads 16 --ffn 4096 --seq-len 1024 --dp " +
           std::to_string(dp) + " --tp " + std::to_string(tp);
}

const std::vector<GoldenCase>& cases()
{
    static const std::vector<GoldenCase> all = {
        // `make run`'s default job on the platform it names.
        {"hgx_h100_default_job",
         "transformer --layers 4 --hidden 2048 --heads 16 --ffn 8192 --seq-len 2048 "
         "--micro-batch 2 --dp 2 --tp 4 --offload activations",
         "--platform hgx_h100"},
        // The multi-node presets, shrunk as docs/platforms.md shows.
        {"hgx_h100_4node_2nodes",
         transformer(4, 4),
         "--platform hgx_h100_4node --set ranks=16 --set \"fabric.topology.dims[1].size=2\""},
        {"dgx_a100_cluster_2nodes",
         transformer(4, 4),
         "--platform dgx_a100_cluster --set ranks=16 --set \"fabric.topology.dims[1].size=2\""},
        {"tpu_v4_torus", transformer(16, 4), "--platform tpu_v4_torus"},
        {"ng1", transformer(9, 8), "--platform ng1"},
        // Small end-to-end cases: a collective alone, and a GEMM and a collective on the detailed
        // HBM (kept small: the
        // detailed model costs about 0.1 s of CPU per 2 MB).
        {"hgx_h100_all_reduce_1mib",
         "microbench --ranks 8 --collective all_reduce --size \"1 MiB\" --iterations 2 "
         "--compute-flops 1e11",
         "--platform hgx_h100"},
        {"hgx_h100_detailed_hbm",
         "microbench --ranks 8 --collective all_reduce --size \"256 KiB\" --compute-flops 1e9",
         "--platform hgx_h100 --set accelerator.hbm.fidelity=detailed"},
    };
    return all;
}

// What is compared: the simulated time and each rank's finish and breakdown, in ns with the
// report's picosecond resolution.
nlohmann::json summary(const nlohmann::json& report)
{
    nlohmann::json out;
    out["simulated_time_ns"] = report.at("simulated_time_ns");
    out["nodes"] = report.at("nodes");
    out["ranks"] = nlohmann::json::array();
    for (const nlohmann::json& rank : report.at("ranks")) {
        nlohmann::json row;
        for (const char* key :
             {"rank", "finish_ns", "compute_ns", "memory_ns", "exposed_comm_ns", "idle_ns"})
            row[key] = rank.at(key);
        out["ranks"].push_back(row);
    }
    return out;
}

class GoldenRun : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(GoldenRun, MatchesTheReferenceExactly)
{
    const GoldenCase& golden = GetParam();
    TempDir dir;
    CommandResult gen =
        runEtsim("gen " + golden.generate + " --out " + dir.path().string() + " --name job");
    ASSERT_EQ(gen.code, 0) << gen.output;
    const std::string report = dir.file("report.json").string();
    CommandResult run = runEtsim("run " + golden.run + " --trace " + (dir.path() / "job").string() +
                                 " --report " + report);
    ASSERT_EQ(run.code, 0) << run.output;
    std::ifstream in(report);
    const nlohmann::json actual = summary(nlohmann::json::parse(in));

    const std::filesystem::path reference =
        std::filesystem::path(ETSIM_GOLDEN_DIR) / (golden.name + ".json");
    if (const char* update = std::getenv("ETSIM_UPDATE_GOLDEN");
        update && std::string(update) == "1") {
        const std::filesystem::path partial = reference.string() + ".part";
        {
            std::ofstream out(partial);
            out << actual.dump(1) << "\n";
            ASSERT_TRUE(out.good()) << "cannot write " << partial;
        }
        std::filesystem::rename(partial, reference);
        std::cout << "rewrote " << reference << "\n";
        return;
    }
    ASSERT_TRUE(std::filesystem::exists(reference))
        << reference << " is missing; create it with ETSIM_UPDATE_GOLDEN=1";
    const nlohmann::json expected = nlohmann::json::parse(readFile(reference));
    // Field by field, so a failure names what moved and by how much.
    EXPECT_EQ(actual["simulated_time_ns"], expected["simulated_time_ns"]) << golden.name;
    EXPECT_EQ(actual["nodes"], expected["nodes"]) << golden.name;
    ASSERT_EQ(actual["ranks"].size(), expected["ranks"].size()) << golden.name;
    for (std::size_t r = 0; r < actual["ranks"].size(); ++r)
        for (const auto& [key, value] : expected["ranks"][r].items())
            EXPECT_EQ(actual["ranks"][r][key], value) << golden.name << " rank " << r << " " << key;
}

INSTANTIATE_TEST_SUITE_P(Presets,
                         GoldenRun,
                         ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<GoldenCase>& param) {
                             return param.param.name;
                         });

} // namespace
} // namespace etsim::test
