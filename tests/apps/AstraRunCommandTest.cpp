// `etsim run` with ASTRA-sim's files (--astra-network, --astra-system, --astra-memory,
// --astra-congestion, --astra-comm-groups): the worked example through the command, the
// warnings for ignored keys, and every error of the flags.

#include "et_driver/TraceWriter.h"
#include "tests/support/RunCommand.h"
#include "tests/support/TempDir.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>

namespace etsim::apps {
namespace {

using etsim::test::CommandResult;
using etsim::test::contains;
using etsim::test::runEtsim;
using etsim::test::TempDir;

struct AstraFiles {
    std::string network;
    std::string system;
    std::string memory;
    std::string trace;
    std::string memoryTrace;
};

// The spec's Ring(4) / Ring_4chunks setup, a 4-rank 1 MiB all-reduce trace and a trace with a
// memory node, all written into `dir`.
AstraFiles writeSetup(const TempDir& dir)
{
    AstraFiles files;
    files.network = dir.write("Ring_4npus.yml",
                              "topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ 50 ]  # GB/s\n"
                              "latency: [ 500 ]  # ns\n")
                        .string();
    files.system = dir.write("Ring_4chunks.json", R"({
  "scheduling-policy": "LIFO",
  "endpoint-delay": 10,
  "active-chunks-per-dimension": 1,
  "preferred-dataset-splits": 4,
  "all-reduce-implementation": ["ring"],
  "all-gather-implementation": ["ring"],
  "reduce-scatter-implementation": ["ring"],
  "all-to-all-implementation": ["ring"],
  "collective-optimization": "localBWAware",
  "local-mem-bw": 1600,
  "boost-mode": 0,
  "some-future-key": 3
}
)")
                       .string();
    files.memory = dir.write("memory.json",
                             R"({"memory-type": "PER_NPU_MEMORY_EXPANSION",
                                 "remote-mem-latency": 100, "remote-mem-bw": 50})")
                       .string();
    for (int rank = 0; rank < 4; ++rank) {
        et::TraceWriter writer(dir.file("ar." + std::to_string(rank) + ".et"));
        et::TraceNode node;
        node.id = 1;
        node.name = "all_reduce";
        node.type = et::NodeType::CommColl;
        node.setIsCpuOp(false);
        node.setCommType(et::CollectiveType::AllReduce);
        node.setCommSize(1 << 20);
        writer.write(node);
        writer.close();

        et::TraceWriter memoryWriter(dir.file("mem." + std::to_string(rank) + ".et"));
        et::TraceNode load;
        load.id = 3;
        load.name = "load";
        load.type = et::NodeType::MemLoad;
        load.setIsCpuOp(false);
        load.setTensorSize(1000003);
        memoryWriter.write(load);
        memoryWriter.close();
    }
    files.trace = (dir.path() / "ar").string();
    files.memoryTrace = (dir.path() / "mem").string();
    return files;
}

TEST(AstraRunCommand, RunsTheWorkedExampleAndWarnsAboutIgnoredKeys)
{
    TempDir dir;
    AstraFiles files = writeSetup(dir);
    const std::string report = dir.file("report.json").string();
    CommandResult run = runEtsim("run --astra-network " + files.network + " --astra-system " +
                                 files.system + " --trace " + files.trace + " --report " + report);
    ASSERT_EQ(run.code, 0) << run.output;
    EXPECT_TRUE(contains(run.output,
                         "etsim run: warning: " + files.system +
                             ":12:3: boost-mode: accepted, not modelled by etsim"))
        << run.output;
    EXPECT_TRUE(contains(run.output, "some-future-key: unknown key, ignored")) << run.output;
    EXPECT_TRUE(contains(run.output, "simulated time: 43.000 us")) << run.output;
    EXPECT_TRUE(contains(run.output, "astra exposed")) << run.output;

    std::ifstream in(report);
    nlohmann::json json = nlohmann::json::parse(in);
    EXPECT_DOUBLE_EQ(json["simulated_time_ns"].get<double>(), 43000.0);
    EXPECT_DOUBLE_EQ(json["ranks"][2]["astra_exposed_comm_ns"].get<double>(), 43000.0);
    const auto& resolved = json["platform"]["resolved"];
    EXPECT_EQ(resolved["profile"], "astra");
    EXPECT_EQ(resolved["fabric"]["fidelity"], "astra_aware");
    EXPECT_EQ(resolved["fabric"]["collectives"]["preferred_dataset_splits"], 4);
    EXPECT_EQ(resolved["files"]["network"], files.network);

    // The congestion-unaware backend gives the same on a ring; the comm-group file "empty"
    // means none, as in ASTRA-sim.
    CommandResult unaware = runEtsim("run --quiet --astra-network " + files.network +
                                     " --astra-system " + files.system +
                                     " --astra-congestion "
                                     "unaware --astra-comm-groups empty --trace " +
                                     files.trace + " --report " + report);
    ASSERT_EQ(unaware.code, 0) << unaware.output;
    std::ifstream again(report);
    EXPECT_DOUBLE_EQ(nlohmann::json::parse(again)["simulated_time_ns"].get<double>(), 43000.0);
}

TEST(AstraRunCommand, MemoryNodesNeedTheMemoryFile)
{
    TempDir dir;
    AstraFiles files = writeSetup(dir);
    const std::string base =
        "run --quiet --astra-network " + files.network + " --astra-system " + files.system;
    CommandResult without = runEtsim(base + " --trace " + files.memoryTrace);
    EXPECT_EQ(without.code, 1) << without.output;
    EXPECT_TRUE(contains(without.output, "a MEM_LOAD_NODE needs ASTRA-sim's remote memory"))
        << without.output;
    EXPECT_TRUE(contains(without.output, "give --astra-memory FILE")) << without.output;

    const std::string report = dir.file("memory.json.report").string();
    CommandResult with = runEtsim(base + " --astra-memory " + files.memory + " --trace " +
                                  files.memoryTrace + " --report " + report);
    ASSERT_EQ(with.code, 0) << with.output;
    std::ifstream in(report);
    // 100 ns + floor(1,000,003 / 50) ns.
    EXPECT_DOUBLE_EQ(nlohmann::json::parse(in)["simulated_time_ns"].get<double>(), 20100.0);
}

TEST(AstraRunCommand, FlagErrors)
{
    TempDir dir;
    AstraFiles files = writeSetup(dir);
    const std::string trace = " --trace " + files.trace;
    auto expectError = [&](const std::string& arguments, int code, const std::string& message) {
        CommandResult result = runEtsim("run " + arguments);
        EXPECT_EQ(result.code, code) << arguments << "\n" << result.output;
        EXPECT_TRUE(contains(result.output, message)) << arguments << "\n" << result.output;
    };
    expectError("--astra-network " + files.network + trace,
                2,
                "etsim run: --astra-network needs --astra-system FILE (ASTRA-sim's system JSON");
    expectError("--astra-system " + files.system + trace,
                2,
                "etsim run: --astra-system needs --astra-network FILE (ASTRA-sim's network YAML");
    expectError("--astra-memory " + files.memory + trace,
                2,
                "etsim run: --astra-memory needs --astra-network FILE and --astra-system FILE");
    expectError("--astra-congestion unaware" + trace,
                2,
                "--astra-congestion needs --astra-network FILE and --astra-system FILE");
    const std::string both = "--astra-network " + files.network + " --astra-system " + files.system;
    expectError("--platform hgx_h100 " + both + trace,
                2,
                "--platform and ASTRA-sim's --astra-* files are alternatives; give one platform");
    expectError(both + " --mode replay" + trace, 2, "--mode applies to --platform files only");
    expectError(both + " --set ranks=4" + trace, 2, "--set applies to --platform files only");
    expectError(both + " --comm-groups " + files.memory + " --astra-comm-groups " + files.memory +
                    trace,
                2,
                "--comm-groups and --astra-comm-groups name the same file; give one");
    expectError("--astra-network " + dir.file("none.yml").string() + " --astra-system " +
                    files.system + trace,
                2,
                "--astra-network " + dir.file("none.yml").string() + ": no such file");
    expectError(both + " --astra-memory " + dir.file("none.json").string() + trace,
                2,
                "--astra-memory " + dir.file("none.json").string() + ": no such file");
    expectError(both + " --astra-congestion sometimes" + trace, 2, "--astra-congestion");
    // A file that is there but wrong is an input problem naming file, line and key.
    const std::string badSystem =
        dir.write("bad.json", R"({"all-reduce-implementation": ["ring"], "local-mem-bw": 0})")
            .string();
    expectError("--astra-network " + files.network + " --astra-system " + badSystem + trace,
                1,
                "local-mem-bw: is 0 GB/s; it must be from 1e-06 to 1e+09 GB/s");
    // The trace's ranks must match the network's NPUs.
    const std::string eight = dir.write("eight.yml",
                                        "topology: [ Ring ]\nnpus_count: [ 8 ]\n"
                                        "bandwidth: [ 50 ]\nlatency: [ 500 ]\n")
                                  .string();
    expectError("--astra-network " + eight + " --astra-system " + files.system + trace,
                1,
                "has 4 rank(s) but the platform");
}

} // namespace
} // namespace etsim::apps
