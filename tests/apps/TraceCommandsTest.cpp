// `etsim trace ...` as a user runs it: the built binary, its exit code and key output lines.
// Exit codes (apps/ExitCode.h): 0 success, 1 problems in the input (findings, a trace that
// cannot be read to the end), 2 cannot start (usage, missing file, unknown extension).

#include "et_driver/TraceReader.h"
#include "et_driver/TraceWriter.h"
#include "tests/support/RunCommand.h"
#include "tests/support/SharedTraces.h"
#include "tests/support/TempDir.h"
#include "tests/support/TraceNodes.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <array>
#include <cstdio>
#include <sys/wait.h>

namespace etsim::et {
namespace {

using test::contains;
using test::runEtsim;
namespace fs = std::filesystem;

using Result = test::CommandResult;

std::string quoted(const fs::path& path)
{
    return "'" + path.string() + "'";
}

// Long enough that a critical path's duration differs from its node count.
constexpr uint64_t nodeMicros = 3;

TraceNode comp(uint64_t id, std::vector<uint64_t> data = {}, std::vector<uint64_t> ctrl = {})
{
    return etsim::test::compNode(id, std::move(data), std::move(ctrl), nodeMicros);
}

TraceNode allReduce(uint64_t id, int64_t bytes, std::vector<uint64_t> data)
{
    TraceNode node = comp(id, std::move(data));
    node.type = NodeType::CommColl;
    node.setCommType(CollectiveType::AllReduce);
    node.setCommSize(bytes);
    return node;
}

fs::path write(const fs::path& file, const std::vector<TraceNode>& nodes)
{
    TraceWriter writer(file);
    for (const TraceNode& node : nodes)
        writer.write(node);
    writer.close();
    return file;
}

class TraceCommands : public ::testing::Test {
protected:
    void SetUp() override
    {
        for (uint32_t rank = 0; rank < 2; ++rank)
            write(dir.file("job." + std::to_string(rank) + ".et"),
                  {comp(1), allReduce(2, 1024, {1}), comp(3, {2}, {1})});
        corrupt = dir.write("corrupt.0.et", std::string("\x05\x0a\x01", 3));
    }

    test::TempDir dir;
    fs::path corrupt;
};

// ---- usage ----------------------------------------------------------------------------------

TEST_F(TraceCommands, BadUsageExitsTwo)
{
    EXPECT_EQ(runEtsim("trace").code, 2);
    EXPECT_EQ(runEtsim("trace validate").code, 2);
    EXPECT_EQ(runEtsim("trace info --no-such-option x").code, 2);
    Result help = runEtsim("trace validate --help");
    EXPECT_EQ(help.code, 0);
    EXPECT_TRUE(contains(help.output, "--strict")) << help.output;
}

// ---- info -----------------------------------------------------------------------------------

TEST_F(TraceCommands, InfoPrintsTheSummary)
{
    Result r = runEtsim("trace info " + quoted(dir.file("job")));
    EXPECT_EQ(r.code, 0) << r.output;
    EXPECT_TRUE(contains(r.output, "ranks: 2\n")) << r.output;
    EXPECT_TRUE(contains(r.output, "nodes: 6\n")) << r.output;
    EXPECT_TRUE(contains(r.output, "  ALL_REDUCE: 2 collectives, 2048 B in total\n")) << r.output;
    EXPECT_TRUE(contains(r.output, "    1024 B x 2\n")) << r.output;
    EXPECT_TRUE(
        contains(r.output, "  rank 1: 3 nodes (data edges); critical path 9 us over 3 nodes"))
        << r.output;
}

TEST_F(TraceCommands, InfoJson)
{
    // A folder holding the files of one trace.
    fs::create_directories(dir.file("folder"));
    for (const char* rank : {"0", "1"})
        fs::copy_file(dir.file(std::string("job.") + rank + ".et"),
                      dir.file(std::string("folder/job.") + rank + ".et"));
    Result r = runEtsim("trace info --json " + quoted(dir.file("folder")));
    ASSERT_EQ(r.code, 0) << r.output;
    nlohmann::json out = nlohmann::json::parse(r.output);
    EXPECT_EQ(out["ranks"], 2);
    EXPECT_EQ(out["nodes"], 6);
    EXPECT_EQ(out["nodesByType"]["COMP_NODE"], 4);
    EXPECT_EQ(out["collectives"][0]["type"], "ALL_REDUCE");
    EXPECT_EQ(out["collectives"][0]["sizes"][0]["bytes"], 1024);
    EXPECT_EQ(out["totals"]["commBytes"], 2048);
    EXPECT_EQ(out["rankDetails"][1]["longestChainNodes"], 3);
    EXPECT_EQ(out["rankDetails"][1]["criticalPath"]["durationMicros"], 9);
}

TEST_F(TraceCommands, InfoMissingFileExitsTwoCorruptFileExitsOne)
{
    Result missing = runEtsim("trace info " + quoted(dir.file("none.0.et")));
    EXPECT_EQ(missing.code, 2);
    EXPECT_EQ(missing.output,
              "etsim trace info: no such file: " + dir.file("none.0.et").string() + "\n");
    Result noPrefix = runEtsim("trace info " + quoted(dir.file("nothing")));
    EXPECT_EQ(noPrefix.code, 2);
    Result bad = runEtsim("trace info " + quoted(corrupt));
    EXPECT_EQ(bad.code, 1);
    EXPECT_TRUE(contains(bad.output, "etsim trace info: " + corrupt.string())) << bad.output;
}

// ---- validate -------------------------------------------------------------------------------

TEST_F(TraceCommands, ValidateCleanTraceExitsZero)
{
    Result r = runEtsim("trace validate " + quoted(dir.file("job")));
    EXPECT_EQ(r.code, 0) << r.output;
    EXPECT_TRUE(contains(r.output, ": 0 errors, 0 warnings in 2 ranks (6 nodes)\nresult: OK\n"))
        << r.output;
}

TEST_F(TraceCommands, ValidateErrorsExitOneAndLenientTurnsDanglingDataIntoWarnings)
{
    fs::path file = write(dir.file("dangling.0.et"), {comp(1), comp(2, {1, 99})});
    Result r = runEtsim("trace validate " + quoted(file));
    EXPECT_EQ(r.code, 1);
    EXPECT_TRUE(contains(r.output,
                         "error: " + file.string() +
                             ": rank 0: node 2 \"n2\": data dependency on node 99, which is not "
                             "in the file: the node can never start; fix: "))
        << r.output;
    EXPECT_TRUE(contains(r.output, "result: FAILED\n")) << r.output;

    Result lenient = runEtsim("trace validate --lenient " + quoted(file));
    EXPECT_EQ(lenient.code, 0) << lenient.output;
    EXPECT_TRUE(contains(lenient.output, "warning: " + file.string())) << lenient.output;
}

TEST_F(TraceCommands, ValidateWarningsExitOneOnlyWithStrict)
{
    std::vector<TraceNode> nodes;
    for (uint64_t id = 1; id <= 25; ++id)
        nodes.push_back(comp(id, {}, {1000 + id}));
    fs::path file = write(dir.file("ctrl.0.et"), nodes);
    Result r = runEtsim("trace validate " + quoted(file));
    EXPECT_EQ(r.code, 0) << r.output;
    EXPECT_TRUE(contains(r.output, "... and 5 more dangling-ctrl-dep findings (25 in all)\n"))
        << r.output;
    Result strict = runEtsim("trace validate --strict " + quoted(file));
    EXPECT_EQ(strict.code, 1);
    EXPECT_TRUE(contains(strict.output, "result: FAILED (--strict: warnings)\n")) << strict.output;
    Result dataOnly = runEtsim("trace validate --strict --data-only " + quoted(file));
    EXPECT_EQ(dataOnly.code, 0) << dataOnly.output;
}

TEST_F(TraceCommands, ValidateJson)
{
    fs::path file = write(dir.file("cycle.0.et"), {comp(1, {2}), comp(2, {1})});
    Result r = runEtsim("trace validate --json " + quoted(file));
    EXPECT_EQ(r.code, 1);
    nlohmann::json out = nlohmann::json::parse(r.output);
    EXPECT_EQ(out["ok"], false);
    EXPECT_EQ(out["errors"], 1);
    EXPECT_EQ(out["counts"]["data-cycle"], 1);
    ASSERT_EQ(out["findings"].size(), 1U);
    EXPECT_EQ(out["findings"][0]["kind"], "data-cycle");
    EXPECT_EQ(out["findings"][0]["severity"], "error");
    EXPECT_EQ(out["findings"][0]["rank"], 0);
    EXPECT_EQ(out["findings"][0]["nodeId"], 1);
    EXPECT_EQ(out["findings"][0]["problem"],
              "data dependency cycle of 2 nodes (each waits for the next): 1 \"n1\" -> 2 \"n2\" "
              "-> 1");
}

TEST_F(TraceCommands, ValidateCommGroupsFile)
{
    TraceNode grouped = allReduce(1, 8, {});
    grouped.setPgName("4");
    fs::path file = write(dir.file("pg.0.et"), {grouped});
    EXPECT_EQ(runEtsim("trace validate " + quoted(file)).code, 1);
    fs::path groups = dir.write("groups.json", "{\"4\": [0, 1]}");
    Result r = runEtsim("trace validate --comm-groups " + quoted(groups) + " " + quoted(file));
    EXPECT_EQ(r.code, 0) << r.output;
    fs::path badGroups = dir.write("bad.json", "{\"0\": [0]}");
    Result bad = runEtsim("trace validate --comm-groups " + quoted(badGroups) + " " + quoted(file));
    EXPECT_EQ(bad.code, 2);
    EXPECT_TRUE(contains(bad.output, "key \"0\" is not a group id >= 1")) << bad.output;
}

TEST_F(TraceCommands, ValidateMissingExitsTwoCorruptExitsOne)
{
    Result missing = runEtsim("trace validate " + quoted(dir.file("none.et")));
    EXPECT_EQ(missing.code, 2);
    EXPECT_TRUE(contains(missing.output, "etsim trace validate: no such file: ")) << missing.output;
    Result bad = runEtsim("trace validate " + quoted(corrupt));
    EXPECT_EQ(bad.code, 1);
    EXPECT_TRUE(contains(bad.output, "error: " + corrupt.string() + ": rank 0: ")) << bad.output;
}

// ---- convert --------------------------------------------------------------------------------

TEST_F(TraceCommands, ConvertEtToGzipAndBack)
{
    fs::path gz = dir.file("copy.0.et.gz");
    Result r = runEtsim("trace convert " + quoted(dir.file("job.0.et")) + " " + quoted(gz));
    EXPECT_EQ(r.code, 0) << r.output;
    EXPECT_TRUE(contains(r.output, "wrote 3 nodes to " + gz.string())) << r.output;
    std::string bytes = test::readFile(gz);
    ASSERT_GE(bytes.size(), 2U);
    EXPECT_EQ(static_cast<unsigned char>(bytes[0]), 0x1F);
    EXPECT_EQ(static_cast<unsigned char>(bytes[1]), 0x8B);

    fs::path back = dir.file("back.0.et");
    EXPECT_EQ(runEtsim("trace convert " + quoted(gz) + " " + quoted(back)).code, 0);
    EXPECT_EQ(test::readFile(back), test::readFile(dir.file("job.0.et")));
}

TEST_F(TraceCommands, ConvertEtToJsonAndBackIsLossless)
{
    fs::path json = dir.file("copy.0.json");
    Result r = runEtsim("trace convert " + quoted(dir.file("job.0.et")) + " " + quoted(json));
    EXPECT_EQ(r.code, 0) << r.output;
    EXPECT_TRUE(contains(r.output, "wrote 3 nodes to " + json.string())) << r.output;
    EXPECT_TRUE(contains(test::readFile(json), "\"nodes\"")) << test::readFile(json);

    fs::path gz = dir.file("copy.0.json.gz");
    EXPECT_EQ(runEtsim("trace convert " + quoted(json) + " " + quoted(gz)).code, 0);
    fs::path back = dir.file("back.0.et");
    EXPECT_EQ(runEtsim("trace convert " + quoted(gz) + " " + quoted(back)).code, 0);
    EXPECT_EQ(test::readFile(back), test::readFile(dir.file("job.0.et")));
}

TEST_F(TraceCommands, ConvertToDot)
{
    fs::path file = write(dir.file("g.0.et"), {comp(1), comp(2, {1}, {3}), comp(3)});
    fs::path dot = dir.file("g.dot");
    Result r = runEtsim("trace convert " + quoted(file) + " " + quoted(dot));
    EXPECT_EQ(r.code, 0) << r.output;
    std::string text = test::readFile(dot);
    EXPECT_TRUE(contains(text, "digraph trace {\n")) << text;
    EXPECT_TRUE(contains(text, "  n2 [label=\"2\\nn2\\nCOMP_NODE\"];\n")) << text;
    EXPECT_TRUE(contains(text, "  n1 -> n2;\n")) << text;
    EXPECT_TRUE(contains(text, "  n3 -> n2 [style=dashed];\n")) << text;
    EXPECT_EQ(text.substr(text.size() - 2), "}\n");
}

TEST_F(TraceCommands, ConvertToDotRefusesHugeTracesWithoutForce)
{
    fs::path file = dir.file("huge.0.et");
    {
        TraceWriter writer(file);
        TraceNode node = comp(0);
        for (uint64_t id = 0; id <= 100000; ++id) {
            node.id = id;
            writer.write(node);
        }
        writer.close();
    }
    fs::path dot = dir.file("huge.dot");
    Result r = runEtsim("trace convert " + quoted(file) + " " + quoted(dot));
    EXPECT_EQ(r.code, 2);
    EXPECT_TRUE(contains(r.output,
                         "has more than 100000 nodes: Graphviz layouts of more than 100000 nodes "
                         "take hours; pass --force to write it anyway"))
        << r.output;
    EXPECT_FALSE(fs::exists(dot));
    Result forced = runEtsim("trace convert --force " + quoted(file) + " " + quoted(dot));
    EXPECT_EQ(forced.code, 0) << forced.output;
    EXPECT_TRUE(contains(forced.output, "wrote 100001 nodes")) << forced.output;
}

TEST_F(TraceCommands, ConvertUnknownExtensionMissingAndCorruptInputs)
{
    Result ext = runEtsim("trace convert " + quoted(dir.file("job.0.et")) + " " +
                          quoted(dir.file("out.txt")));
    EXPECT_EQ(ext.code, 2);
    EXPECT_TRUE(
        contains(ext.output,
                 "cannot write " + dir.file("out.txt").string() +
                     ": unknown output extension (known: .et, .et.gz, .dot, .json, .json.gz)"))
        << ext.output;
    Result in =
        runEtsim("trace convert " + quoted(dir.file("x.dot")) + " " + quoted(dir.file("y.et")));
    EXPECT_EQ(in.code, 2);
    EXPECT_TRUE(
        contains(in.output, "unknown input extension (known: .et, .et.gz, .json, .json.gz)"))
        << in.output;

    Result missing =
        runEtsim("trace convert " + quoted(dir.file("none.0.et")) + " " + quoted(dir.file("o.et")));
    EXPECT_EQ(missing.code, 2);
    Result bad = runEtsim("trace convert " + quoted(corrupt) + " " + quoted(dir.file("o.et")));
    EXPECT_EQ(bad.code, 1);
    EXPECT_FALSE(fs::exists(dir.file("o.et")));
}

TEST_F(TraceCommands, ConvertAddsTheMetadataRecordToALegacyTrace)
{
    // A legacy file: record 0 is a Node.
    ChakraProtoMsg::Node message;
    message.set_id(7);
    message.set_name("legacy");
    message.set_type(ChakraProtoMsg::COMP_NODE);
    std::string body = message.SerializeAsString();
    fs::path legacy =
        dir.write("legacy.0.et", std::string(1, static_cast<char>(body.size())) + body);
    fs::path fixed = dir.file("fixed.0.et");
    ASSERT_EQ(runEtsim("trace convert " + quoted(legacy) + " " + quoted(fixed)).code, 0);
    TraceReader reader(fixed);
    EXPECT_TRUE(reader.metadata().present);
    EXPECT_EQ(reader.metadata().version(), "0.0.4");
    TraceNode node;
    ASSERT_TRUE(reader.next(node));
    EXPECT_EQ(node.id, 7U);
    EXPECT_EQ(runEtsim("trace validate --strict " + quoted(fixed)).code, 0);
}

TEST(TraceCommandsOnRealTraces, ValidateAndInfo)
{
    const std::optional<fs::path> traces = test::sharedTraces();
    if (!traces)
        GTEST_SKIP() << "shared traces not found: set ETSIM_TRACES to the traces folder";
    const fs::path& dir = *traces;
    Result feeder =
        runEtsim("trace validate " + quoted(dir / "chakra-feeder-test" / "chakra.0.et"));
    EXPECT_EQ(feeder.code, 1);
    EXPECT_TRUE(
        contains(feeder.output, "... and 1257 more dangling-ctrl-dep findings (1277 in all)"))
        << feeder.output.substr(0, 2000);
    EXPECT_TRUE(contains(feeder.output, "... and 363 more ctrl-self-loop findings (383 in all)"));
    Result resnet = runEtsim("trace info " +
                             quoted(dir / "text-resnet50-dp-64r-legacy" / "resnet50_DataParallel"));
    EXPECT_EQ(resnet.code, 0);
    EXPECT_TRUE(contains(resnet.output, "  ALL_REDUCE: 3456 collectives, 6528745472 B in total\n"))
        << resnet.output;
}

} // namespace
} // namespace etsim::et
