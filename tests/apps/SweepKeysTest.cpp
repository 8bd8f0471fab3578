// Every parameter of docs/sweep.md's example spec moves the simulated time of the example's
// workload, the way its values say: the example lists each key's values from the slower design
// to the faster, so the last value must give a shorter step than the first. A key that moved
// nothing (a peak the model does not use, an efficiency of a model the platform does not run)
// fails here, as does an example key without an expectation below.

#include "apps/sweep/SweepSpec.h"
#include "tests/support/RunCommand.h"
#include "tests/support/TempDir.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>

namespace etsim::sweep {
namespace {

using etsim::test::CommandResult;
using etsim::test::runEtsim;
using etsim::test::TempDir;

// The first ```yaml block of docs/sweep.md: the example spec.
std::string exampleSpec()
{
    const char* root = std::getenv("ETSIM_SOURCE_DIR");
    EXPECT_NE(root, nullptr) << "run through ctest, which sets ETSIM_SOURCE_DIR";
    const std::string doc =
        etsim::test::readFile(std::filesystem::path(root ? root : ".") / "docs" / "sweep.md");
    std::smatch block;
    EXPECT_TRUE(std::regex_search(doc, block, std::regex("```yaml\n([\\s\\S]*?)```")));
    return block[1].str();
}

// Why each example key must make the step faster with its last value.
const std::map<std::string, std::string> expectations = {
    {"accelerator.hbm.organisation.stacks", "more stacks: more HBM bandwidth"},
    {"fabric.topology.dims[0].bandwidth", "faster NVLink: shorter collectives"},
    {"accelerator.tensor.pipe_efficiency", "a better GEMM mainloop"},
    {"accelerator.tensor.peak.bf16", "twice the tensor peak: faster GEMMs"},
    {"accelerator.hbm.preset", "HBM3e of the H200: more bandwidth"},
};

double simulatedTime(const SweepSpec& spec,
                     const std::string& trace,
                     const std::string& key,
                     const std::string& value,
                     const TempDir& dir)
{
    std::string arguments = "run --platform " + spec.platform + " --trace " + trace;
    for (const std::string& set : spec.sets)
        arguments += " --set '" + set + "'";
    arguments += " --set '" + key + "=" + value + "'";
    const std::string report = dir.file("report.json").string();
    CommandResult run = runEtsim(arguments + " --report " + report);
    EXPECT_EQ(run.code, 0) << arguments << "\n" << run.output;
    std::ifstream in(report);
    return nlohmann::json::parse(in).at("simulated_time_ns").get<double>();
}

TEST(SweepKeys, EveryExampleKeyMovesTheTimeItsWay)
{
    TempDir dir;
    const SweepSpec spec = parseSweepSpec(exampleSpec(), "docs/sweep.md", dir.path());
    std::string generate;
    for (const std::string& argument : spec.generate)
        generate += " " + argument;
    CommandResult gen =
        runEtsim("gen" + generate + " --out " + dir.path().string() + " --name step");
    ASSERT_EQ(gen.code, 0) << gen.output;
    const std::string trace = (dir.path() / "step").string();

    std::size_t checked = 0;
    for (const Axis& axis : spec.axes)
        for (const Parameter& parameter : axis.parameters) {
            ASSERT_TRUE(expectations.count(parameter.key))
                << parameter.key << " is in docs/sweep.md's example but has no expectation here";
            ASSERT_GE(parameter.values.size(), 2u) << parameter.key;
            const double first =
                simulatedTime(spec, trace, parameter.key, parameter.values.front(), dir);
            const double last =
                simulatedTime(spec, trace, parameter.key, parameter.values.back(), dir);
            EXPECT_LT(last, first)
                << parameter.key << " from " << parameter.values.front() << " to "
                << parameter.values.back() << " (" << expectations.at(parameter.key) << ")";
            ++checked;
        }
    EXPECT_EQ(checked, expectations.size());
}

} // namespace
} // namespace etsim::sweep
