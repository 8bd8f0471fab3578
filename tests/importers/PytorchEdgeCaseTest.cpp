// The importer on traces written here: bad inputs (unknown schema, truncated JSON, a rank
// missing from the Kineto set, ranks whose collectives disagree) and small traces that pin one
// mapping rule each (kernel to host op through the launch's correlation, point-to-point peers).

#include "et_driver/TraceCodec.h"
#include "et_driver/TraceReader.h"
#include "et_driver/TraceValidator.h"
#include "importers/pytorch/JsonFile.h"
#include "importers/pytorch/PytorchImport.h"
#include "tests/support/ErrorOf.h"
#include "tests/support/TempDir.h"

#include <gtest/gtest.h>

namespace etsim::importers::pytorch {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test::errorOf;
using test::TempDir;

bool contains(const std::string& text, const std::string& part)
{
    return text.find(part) != std::string::npos;
}

// A host-trace node in the 1.0.2+ layout.
json node(int64_t id,
          const std::string& name,
          int64_t parent,
          json values = json::array(),
          json types = json::array(),
          json attrs = json::array(),
          int64_t tid = 1)
{
    json shapes = json::array();
    for (std::size_t i = 0; i < values.size(); ++i)
        shapes.push_back(json::array());
    attrs.push_back({{"name", "tid"}, {"type", "uint64"}, {"value", tid}});
    attrs.push_back({{"name", "rf_id"}, {"type", "uint64"}, {"value", id}});
    return {{"id", id},
            {"name", name},
            {"ctrl_deps", parent},
            {"inputs", {{"values", values}, {"shapes", shapes}, {"types", types}}},
            {"outputs",
             {{"values", json::array()}, {"shapes", json::array()}, {"types", json::array()}}},
            {"attrs", attrs}};
}

json tensor(int64_t id, int64_t numel)
{
    return json::array({id, id + 1000, 0, numel, 4, "cuda:0"});
}

// record_param_comms of an all-reduce with sequence number `seq` (1.0.2 layout).
json allReduce(int64_t id, int64_t parent, int64_t seq, int64_t rank, int64_t numel)
{
    return node(id,
                "record_param_comms",
                parent,
                json::array({json::array({tensor(id, numel)}),
                             seq,
                             7,
                             rank,
                             "allreduce",
                             json::array(),
                             json::array(),
                             2}),
                json::array({"GenericList[Tensor(float)]",
                             "Int",
                             "Int",
                             "Int",
                             "String",
                             "GenericList[]",
                             "GenericList[]",
                             "Int"}));
}

json hostTrace(const std::string& schema, int64_t pid, json ops)
{
    json nodes = json::array();
    nodes.push_back(node(1, "[pytorch|profiler|execution_trace|process]", 0));
    nodes.push_back(node(2, "[pytorch|profiler|execution_trace|thread]", 1));
    for (json& op : ops)
        nodes.push_back(std::move(op));
    return {{"schema", schema},
            {"pid", pid},
            {"time", "2026-12-01 12:00:00"},
            {"start_ts", 0},
            {"nodes", nodes},
            {"finish_ts", 1}};
}

json twoRankJob(int64_t rank, int64_t secondSeq)
{
    return hostTrace("1.0.2-chakra.0.0.4",
                     100 + rank,
                     json::array({node(3, "c10d::allreduce_", 2),
                                  allReduce(4, 3, 5, rank, 16),
                                  node(5, "c10d::allreduce_", 2),
                                  allReduce(6, 5, secondSeq, rank, 16)}));
}

fs::path write(const TempDir& temp, const std::string& name, const json& document)
{
    return temp.write(name, document.dump());
}

ImportRequest
request(const TempDir& temp, std::vector<fs::path> host, std::vector<fs::path> kineto = {})
{
    ImportRequest r;
    r.hostFiles = std::move(host);
    r.kinetoFiles = std::move(kineto);
    r.prefix = temp.file("out");
    return r;
}

TEST(PytorchEdgeCases, UnknownSchemaIsRefusedWithTheKnownOnes)
{
    TempDir temp;
    fs::path file = write(temp, "h.json", hostTrace("1.2.0-chakra.0.0.4", 1, json::array()));
    std::string error = errorOf([&] { importPytorch(request(temp, {file})); });
    EXPECT_TRUE(contains(error,
                         file.string() + ": \"schema\": \"1.2.0-chakra.0.0.4\" is not a "
                                         "host-trace schema this importer knows (known: "
                                         "1.0.1, 1.0.2, 1.0.3, 1.1.0, 1.1.1)"))
        << error;
    EXPECT_FALSE(fs::exists(temp.file("out.0.et")));
}

// nlohmann's parser reports a number beyond double's range as out_of_range, not as a
// parse_error; found by the pytorch_import fuzzer (it escaped as an uncaught exception).
TEST(PytorchEdgeCases, NumberBeyondDoubleRangeIsAnErrorNamingTheFile)
{
    TempDir temp;
    // A Kineto file is read whole by readJsonFile.
    fs::path file = temp.write("worker0.json", "{\"distributedInfo\": 9e999999}");
    std::string error = errorOf([&] { readJsonFile(file); });
    EXPECT_TRUE(contains(error, file.string() + ": not valid JSON (")) << error;
    EXPECT_TRUE(contains(error, "number overflow")) << error;
}

TEST(PytorchEdgeCases, TruncatedJsonNamesFileAndLine)
{
    TempDir temp;
    std::string text = twoRankJob(0, 6).dump(1);
    fs::path file = temp.write("cut.json", text.substr(0, text.size() / 2));
    std::string error = errorOf([&] { importPytorch(request(temp, {file})); });
    EXPECT_TRUE(contains(error, file.string() + ": line ")) << error;
    EXPECT_TRUE(contains(error, "the file ends early: it is truncated")) << error;
    EXPECT_FALSE(fs::exists(temp.file("out.0.et")));
}

TEST(PytorchEdgeCases, RankMissingFromTheKinetoSet)
{
    TempDir temp;
    fs::path h0 = write(temp, "h0.json", twoRankJob(0, 6));
    fs::path h1 = write(temp, "h1.json", twoRankJob(1, 6));
    json kineto = {{"distributedInfo", {{"rank", 0}, {"world_size", 2}}},
                   {"traceEvents",
                    json::array({{{"ph", "X"},
                                  {"cat", "cpu_op"},
                                  {"name", "c10d::allreduce_"},
                                  {"pid", 100},
                                  {"tid", 100},
                                  {"ts", 10},
                                  {"dur", 5}}})}};
    fs::path k0 = write(temp, "k0.json", kineto);
    std::string error = errorOf([&] { importPytorch(request(temp, {h0, h1}, {k0})); });
    EXPECT_TRUE(contains(error,
                         h1.string() + ": no Kineto trace has this host trace's pid 101 "
                                       "(the Kineto traces given have pids 100)"))
        << error;
}

TEST(PytorchEdgeCases, DisagreeingSequenceNumbersAcrossRanks)
{
    TempDir temp;
    fs::path h0 = write(temp, "h0.json", twoRankJob(0, 6));
    fs::path h1 = write(temp, "h1.json", twoRankJob(1, 7));
    std::string error = errorOf([&] { importPytorch(request(temp, {h0, h1})); });
    EXPECT_TRUE(contains(error,
                         "collectives of process group \"0\" disagree at position 1: " +
                             h0.string() + " (rank 0) has ALL_REDUCE (seq 6, 64 B), " +
                             h1.string() + " (rank 1) has ALL_REDUCE (seq 7, 64 B)"))
        << error;
    EXPECT_FALSE(fs::exists(temp.file("out.0.et")));

    // Agreeing ranks import and validate strictly, collectives matched by sequence number.
    fs::path agree = write(temp, "h1.json", twoRankJob(1, 6));
    ImportResult result = importPytorch(request(temp, {h0, agree}));
    EXPECT_EQ(result.ranks.size(), 2U);
    et::ValidationReport report = et::TraceValidator().validate(temp.file("out"));
    EXPECT_EQ(report.errors + report.warnings, 0U);
}

// External id would pick the outer op here; the launch's correlation and the innermost op
// enclosing the launch call on its thread pick the inner one.
TEST(PytorchEdgeCases, KernelLinksToInnermostOpOfItsLaunch)
{
    TempDir temp;
    json ops = json::array({node(3, "aten::linear", 2), node(4, "aten::addmm", 3)});
    fs::path host = write(temp, "h.json", hostTrace("1.1.0-chakra.0.0.4", 42, ops));
    auto x = [](const std::string& cat,
                const std::string& name,
                int64_t tid,
                double ts,
                double dur,
                json args) {
        return json{{"ph", "X"},
                    {"cat", cat},
                    {"name", name},
                    {"pid", cat == "kernel" ? 0 : 42},
                    {"tid", tid},
                    {"ts", ts},
                    {"dur", dur},
                    {"args", args}};
    };
    json events =
        json::array({x("user_annotation", "ProfilerStep#1", 42, 0, 100, {{"External id", 1}}),
                     x("cpu_op", "aten::linear", 42, 10, 50, {{"External id", 5}}),
                     x("cpu_op", "aten::addmm", 42, 20, 30, {{"External id", 6}}),
                     x("cuda_runtime",
                       "cudaLaunchKernel",
                       42,
                       25,
                       5,
                       {{"External id", 5}, {"correlation", 77}}),
                     x("kernel",
                       "gemm_kernel",
                       7,
                       40,
                       20,
                       {{"External id", 5}, {"correlation", 77}, {"stream", 7}})});
    fs::path kineto =
        write(temp,
              "k.json",
              {{"distributedInfo", {{"rank", 0}, {"world_size", 1}}}, {"traceEvents", events}});
    ImportResult result = importPytorch(request(temp, {host}, {kineto}));
    const RankSummary& s = result.ranks[0];
    EXPECT_EQ(s.matchedOps, 2U);
    EXPECT_EQ(s.matchedBy, "per-thread order");
    EXPECT_EQ(s.hostOpsWithKernel, 1U);
    et::TraceReader reader(temp.file("out.0.et"));
    et::TraceNode n;
    std::map<std::string, et::TraceNode> byName;
    while (reader.next(n))
        byName[n.name] = n;
    ASSERT_EQ(byName.count("gemm_kernel"), 1U);
    const et::TraceNode& kernel = byName["gemm_kernel"];
    EXPECT_EQ(kernel.dataDeps, std::vector<uint64_t>({4})); // aten::addmm, not aten::linear
    EXPECT_EQ(kernel.durationMicros, 20U);
    EXPECT_EQ(kernel.isCpuOp(), std::optional<bool>(false));
    // Self times: linear 50 - 30 (addmm) = 20 us, addmm 30 us; host ops keep their schema.
    EXPECT_EQ(byName["aten::linear"].durationMicros, 20U);
    EXPECT_EQ(byName["aten::addmm"].durationMicros, 30U);
    EXPECT_EQ(byName["aten::addmm"].dataDeps, std::vector<uint64_t>({3}));
}

TEST(PytorchEdgeCases, SendAndRecvCarryPeerAndTag)
{
    TempDir temp;
    auto p2p = [](int64_t id, const std::string& name, int64_t peer) {
        return node(id,
                    "record_param_comms",
                    id - 1,
                    json::array({json::array({tensor(id, 8)}),
                                 id,
                                 json::array({"0", "default_pg"}),
                                 peer,
                                 name,
                                 json::array(),
                                 json::array(),
                                 0,
                                 1,
                                 2}),
                    json::array({"GenericList[Tensor(float)]",
                                 "Int",
                                 "Tuple[String,String]",
                                 "Int",
                                 "String",
                                 "GenericList[]",
                                 "GenericList[]",
                                 "Int",
                                 "Int",
                                 "Int"}));
    };
    json attrsSend = json::array(
        {{{"name", "op_schema"},
          {"type", "string"},
          {"value",
           "c10d::send(Tensor[] tensors, __torch__.torch.classes.c10d.ProcessGroup process_group, "
           "int dstRank, int tag) -> __torch__.torch.classes.c10d.Work"}}});
    json ops =
        json::array({node(3,
                          "c10d::send",
                          2,
                          json::array({json::array({tensor(4, 8)}), "<Object>", 1, 9}),
                          json::array({"GenericList[Tensor(float)]", "Object", "Int", "Int"}),
                          attrsSend),
                     p2p(4, "send", 1)});
    fs::path host = write(temp, "h.json", hostTrace("1.1.1", 5, ops));
    importPytorch(request(temp, {host}));
    et::TraceReader reader(temp.file("out.0.et"));
    et::TraceNode n;
    bool found = false;
    while (reader.next(n))
        if (n.type == et::NodeType::CommSend) {
            found = true;
            EXPECT_EQ(n.commDst(), 1);
            EXPECT_EQ(n.commTag(), 9);
            EXPECT_EQ(n.commSize(), 32);
        }
    EXPECT_TRUE(found);
}

} // namespace
} // namespace etsim::importers::pytorch

namespace etsim::importers::pytorch {
namespace {

// Fuzzer seeds and inputs that once failed: each reads cleanly or ends in one etsim::Error.
TEST(PytorchCorpus, EveryInputEndsCleanlyOrWithError)
{
    std::size_t files = 0;
    for (const auto& entry : fs::directory_iterator(ETSIM_IMPORT_CORPUS_DIR)) {
        if (entry.path().filename() == "README.md")
            continue;
        std::string text = test::readFile(entry.path());
        try {
            HostTrace host = parseHostTrace(text, entry.path().string());
            RankGraph graph(std::move(host), nullptr, 0, 2, ImportOptions{});
            graph.emit([](const ChakraProtoMsg::Node&) {});
        } catch (const Error&) {
        }
        try {
            parseKinetoTrace(parseJsonText(text, entry.path().string()), entry.path().string());
        } catch (const Error&) {
        }
        ++files;
    }
    EXPECT_GE(files, 3U);
}

} // namespace
} // namespace etsim::importers::pytorch
