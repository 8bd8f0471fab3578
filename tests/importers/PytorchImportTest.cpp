// The importer on the real PyTorch traces of shared/traces (README there, field by field):
// DLRM 8 ranks with Kineto (schema 1.0.1), ResNet rank 1 host only (1.1.0) and the 1.0.2
// all-gather job. Expected values are computed here from the input files themselves.

#include "importers/pytorch/PytorchImport.h"

#include "et_driver/ProcessGroups.h"
#include "et_driver/TraceCodec.h"
#include "et_driver/TraceReader.h"
#include "et_driver/TraceValidator.h"
#include "importers/pytorch/JsonFile.h"
#include "tests/support/FileList.h"
#include "tests/support/RunCommand.h"
#include "tests/support/SharedTraces.h"
#include "tests/support/TempDir.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

namespace etsim::importers::pytorch {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test::filesStartingWith;
using test::TempDir;

std::vector<et::TraceNode> readAll(const fs::path& file)
{
    et::TraceReader reader(file);
    std::vector<et::TraceNode> nodes;
    et::TraceNode node;
    while (reader.next(node))
        nodes.push_back(node);
    return nodes;
}

std::optional<int64_t> intAttr(const et::TraceNode& node, const std::string& name)
{
    for (const ChakraProtoMsg::AttributeProto& a : et::TraceCodec::otherAttributes(node))
        if (a.name() == name)
            return a.int64_val();
    return std::nullopt;
}

std::vector<et::TraceNode> commNodes(const std::vector<et::TraceNode>& nodes)
{
    std::vector<et::TraceNode> out;
    for (const et::TraceNode& n : nodes)
        if (n.type == et::NodeType::CommColl)
            out.push_back(n);
    return out;
}

// Bytes of the tensors in argument 0 of a record_param_comms node (one tensor or a list).
int64_t tensorBytes(const json& value)
{
    if (!value.is_array())
        return 0;
    if (value.size() == 6 && value[5].is_string())
        return value[3].get<int64_t>() * value[4].get<int64_t>();
    int64_t sum = 0;
    for (const json& v : value)
        sum += tensorBytes(v);
    return sum;
}

struct ExpectedComm {
    int64_t seq;
    std::string name;
    int64_t bytes;
};

// record_param_comms nodes other than `wait`, in id order, of a 1.0.1 host trace.
std::vector<ExpectedComm> dlrmComms(const fs::path& file)
{
    json trace = readJsonFile(file);
    std::vector<std::pair<int64_t, ExpectedComm>> found;
    for (const json& n : trace["nodes"]) {
        if (n["name"] != "record_param_comms" || n["inputs"][0].is_number())
            continue;
        found.push_back({n["id"].get<int64_t>(),
                         {n["inputs"][1].get<int64_t>(),
                          n["inputs"][4].get<std::string>(),
                          tensorBytes(n["inputs"][0])}});
    }
    std::sort(found.begin(), found.end(), [](auto& a, auto& b) { return a.first < b.first; });
    std::vector<ExpectedComm> out;
    for (auto& [id, c] : found)
        out.push_back(c);
    return out;
}

// A file of the shared traces, or empty when they are not here (the test then skips).
fs::path sharedFile(const std::string& relative)
{
    std::optional<fs::path> shared = test::sharedTraces();
    if (!shared || !fs::exists(*shared / relative))
        return {};
    return *shared / relative;
}

// Imports one host trace alone to temp/name.
ImportResult importOne(const fs::path& file, const TempDir& temp, const std::string& name)
{
    ImportRequest request;
    request.hostFiles = {file};
    request.prefix = temp.file(name);
    return importPytorch(request);
}

#define SKIP_WITHOUT(file)                                                                         \
    if ((file).empty())                                                                            \
    GTEST_SKIP() << "shared traces not found: set ETSIM_TRACES to the traces folder"

TEST(PytorchImport, DlrmEightRanksWithKineto)
{
    fs::path dir = sharedFile("pytorch-dlrm-8r-et1.0.1-kineto");
    SKIP_WITHOUT(dir);
    TempDir temp;
    ImportRequest request;
    request.hostFiles = filesStartingWith(dir, "dlrm_eg_");
    request.kinetoFiles = filesStartingWith(dir, "worker");
    ASSERT_EQ(request.hostFiles.size(), 8U);
    request.prefix = temp.file("dlrm");
    ImportResult result = importPytorch(request);
    ASSERT_EQ(result.ranks.size(), 8U);
    EXPECT_EQ(result.worldSize, 8);

    // Strict validation of the whole set (cross-rank collective comparison included).
    et::ValidationReport report = et::TraceValidator().validate(request.prefix);
    EXPECT_EQ(report.ranks, 8U);
    EXPECT_EQ(report.errors, 0U);
    EXPECT_EQ(report.warnings, 0U);
    for (const et::Finding& f : report.findings)
        ADD_FAILURE() << f.text();

    // The same 8 collectives on every rank, sizes from the host trace's tensors; all-to-allv
    // sizes differ per rank, so comm_size is the largest and comm_size_local the rank's own.
    std::vector<std::vector<ExpectedComm>> expected;
    for (const fs::path& host : request.hostFiles)
        expected.push_back(dlrmComms(host));
    const std::vector<std::string> names = {"all_to_allv",
                                            "all_to_all",
                                            "all_to_allv",
                                            "all_to_allv",
                                            "allreduce",
                                            "all_to_allv",
                                            "allreduce",
                                            "allreduce"};
    for (uint32_t r = 0; r < 8; ++r) {
        const RankSummary& s = result.ranks[r];
        EXPECT_EQ(s.rank, r);
        EXPECT_EQ(s.hostOps, 1672U);
        EXPECT_EQ(s.matchedOps, 1672U) << "rank " << r;
        EXPECT_EQ(s.ncclKernels, 8U);
        EXPECT_EQ(s.ncclKernelsAttached, 8U);
        EXPECT_EQ(s.ncclKernelsWithoutCollective, 0U);
        EXPECT_EQ(s.collectivesWithoutKernel, 0U);
        EXPECT_EQ(s.waitRecords, 5U);
        EXPECT_EQ(s.nodesByType.at("COMP_NODE (CPU)"), 1672U);
        ASSERT_EQ(expected[r].size(), 8U);
        std::vector<et::TraceNode> comms =
            commNodes(readAll(temp.file("dlrm." + std::to_string(r) + ".et")));
        ASSERT_EQ(comms.size(), 8U) << "rank " << r;
        for (std::size_t k = 0; k < 8; ++k) {
            const ExpectedComm& e = expected[r][k];
            EXPECT_EQ(e.seq, 147 + static_cast<int64_t>(k));
            EXPECT_EQ(e.name, names[k]);
            EXPECT_EQ(intAttr(comms[k], "comm_seq"), e.seq);
            bool allToAll = e.name != "allreduce";
            EXPECT_EQ(comms[k].commType(),
                      static_cast<int32_t>(allToAll ? et::CollectiveType::AllToAll
                                                    : et::CollectiveType::AllReduce));
            EXPECT_EQ(comms[k].pgName(), std::optional<std::string_view>("0"));
            EXPECT_EQ(intAttr(comms[k], "pg_size"), 8);
            int64_t largest = 0;
            for (uint32_t q = 0; q < 8; ++q)
                largest = std::max(largest, expected[q][k].bytes);
            EXPECT_EQ(comms[k].commSize(), allToAll ? largest : e.bytes)
                << "rank " << r << " #" << k;
            if (largest != e.bytes) {
                EXPECT_EQ(intAttr(comms[k], "comm_size_local"), e.bytes);
            }
            // The node is the NCCL kernel: measured, on the NCCL stream.
            EXPECT_EQ(comms[k].name.rfind("ncclKernel_", 0), 0U) << comms[k].name;
            EXPECT_GT(comms[k].durationMicros, 0U);
            EXPECT_EQ(comms[k].isCpuOp(), std::optional<bool>(false));
        }
    }
    // rank 0, seq 150: in_splits [96, 224, 288, 1664, 592, 96, 192, 240] ints = 3392 x 4 B.
    EXPECT_EQ(expected[0][3].bytes, 3392 * 4);

    // Replay on an 8-GPU platform: finishes, and the iteration takes as long as the longest
    // rank's ProfilerStep span (docs/pytorch-import.md, "Replay accuracy").
    int64_t stepNs = 0;
    for (const RankSummary& s : result.ranks)
        stepNs = std::max(stepNs, s.stepSpanNs);
    int64_t kinetoNs = 0;
    for (const fs::path& k : request.kinetoFiles) {
        json kineto = readJsonFile(k);
        for (const json& e : kineto["traceEvents"])
            if (e.contains("name") && e["name"].get<std::string>().rfind("ProfilerStep#", 0) == 0)
                kinetoNs = std::max<int64_t>(kinetoNs, e["dur"].get<int64_t>() * 1000);
    }
    EXPECT_EQ(stepNs, kinetoNs);
    EXPECT_EQ(kinetoNs, 19901000);
    fs::path reportFile = temp.file("report.json");
    test::CommandResult run =
        test::runEtsim("run --platform hgx_h100 --mode replay --quiet --trace " +
                       request.prefix.string() + " --report " + reportFile.string());
    ASSERT_EQ(run.code, 0) << run.output;
    json runReport = json::parse(test::readFile(reportFile));
    EXPECT_EQ(runReport["outcome"], "finished");
    double simulated = runReport["simulated_time_ns"].get<double>();
    EXPECT_NEAR(simulated, static_cast<double>(kinetoNs), 0.10 * static_cast<double>(kinetoNs))
        << "simulated " << simulated << " ns, ProfilerStep " << kinetoNs << " ns";
}

TEST(PytorchImport, DlrmGpuOnlyStaysValid)
{
    fs::path dir = sharedFile("pytorch-dlrm-8r-et1.0.1-kineto");
    SKIP_WITHOUT(dir);
    TempDir temp;
    ImportRequest request;
    request.hostFiles = {dir / "dlrm_eg_1.json.gz"};
    request.kinetoFiles = filesStartingWith(dir, "worker1_");
    request.prefix = temp.file("gpu");
    request.options.hostOps = false;
    ImportResult result = importPytorch(request);
    ASSERT_EQ(result.ranks.size(), 1U);
    const RankSummary& s = result.ranks[0];
    EXPECT_EQ(s.rank, 1U);
    EXPECT_EQ(s.hostNodesDropped, 1672U);
    EXPECT_EQ(s.nodesByType.count("COMP_NODE (CPU)"), 0U);
    // Rank 1 has 64 GPU ops whose launch is not in its Kineto trace (README): kept.
    EXPECT_EQ(s.kernelsWithoutHostOp, 64U);
    EXPECT_EQ(s.nodes, s.gpuEvents + 1); // + the process-group METADATA_NODE
    et::ValidationReport report = et::TraceValidator().validate(temp.file("gpu.0.et"));
    EXPECT_EQ(report.errors + report.warnings, 0U);
}

TEST(PytorchImport, ResnetHostOnlyCarriesGroupsAndRunsReplicated)
{
    fs::path file = sharedFile("pytorch-resnet-2gpu-et1.1.0-r1/resnet_2gpu_et.json.gz");
    SKIP_WITHOUT(file);
    TempDir temp;
    ImportResult result = importOne(file, temp, "resnet");
    fs::path prefix = temp.file("resnet");
    ASSERT_EQ(result.ranks.size(), 1U);
    const RankSummary& s = result.ranks[0];
    EXPECT_EQ(s.rank, 1U); // record_param_comms: rank 1 of 2
    EXPECT_EQ(s.hostOps + s.rootNodes, 14392U);
    EXPECT_EQ(s.waitRecords, 6U);
    EXPECT_EQ((s.collectives.at({"ALL_REDUCE", "0"})), 15U);
    EXPECT_EQ((s.collectives.at({"BROADCAST", "0"})), 6U);

    // Sizes from in_msg_nelems x dtype of the host trace's record_param_comms attributes.
    std::vector<int64_t> expected;
    json trace = readJsonFile(file);
    std::vector<std::pair<int64_t, int64_t>> records;
    for (const json& n : trace["nodes"]) {
        if (n["name"] != "record_param_comms")
            continue;
        std::map<std::string, json> attrs;
        for (const json& a : n["attrs"])
            attrs[a["name"].get<std::string>()] = a["value"];
        if (attrs["collective_name"] == "wait")
            continue;
        int64_t itemsize = attrs["dtype"] == "Float" ? 4 : attrs["dtype"] == "Long" ? 8 : 0;
        ASSERT_GT(itemsize, 0) << attrs["dtype"];
        records.push_back(
            {n["id"].get<int64_t>(), attrs["in_msg_nelems"].get<int64_t>() * itemsize});
    }
    std::sort(records.begin(), records.end());
    std::vector<et::TraceNode> nodes = readAll(temp.file("resnet.0.et"));
    std::vector<et::TraceNode> comms = commNodes(nodes);
    ASSERT_EQ(comms.size(), records.size());
    for (std::size_t k = 0; k < comms.size(); ++k) {
        EXPECT_EQ(comms[k].commSize(), records[k].second) << k;
        EXPECT_EQ(comms[k].pgName(), std::optional<std::string_view>("0"));
        EXPECT_EQ(intAttr(comms[k], "pg_size"), 2);
        EXPECT_EQ(intAttr(comms[k], "host_op"), records[k].first);
        if (comms[k].commType() == static_cast<int32_t>(et::CollectiveType::Broadcast)) {
            EXPECT_EQ(intAttr(comms[k], "comm_root"), 0);
        }
    }
    // The process group comes through as the converter writes it (spec 6).
    bool metadata = false;
    for (const et::TraceNode& n : nodes)
        if (n.type == et::NodeType::Metadata) {
            std::vector<et::ProcessGroup> groups =
                et::parsePytorchProcessGroups(et::TraceCodec::inputs(n)->values());
            ASSERT_EQ(groups.size(), 1U);
            EXPECT_EQ(groups[0].id, 0);
            EXPECT_TRUE(groups[0].ranks.empty());
            metadata = true;
        }
    EXPECT_TRUE(metadata);
    // Without Kineto the GEMM-like operators carry their shapes for the accelerator models.
    EXPECT_GT(s.gpuNodesFromShapes, 100U);
    uint64_t shaped = 0;
    for (const et::TraceNode& n : nodes)
        shaped += n.opKind().has_value() && n.numOps().value_or(0) > 0 ? 1 : 0;
    EXPECT_EQ(shaped, s.gpuNodesFromShapes);

    et::ValidationReport report = et::TraceValidator().validate(prefix);
    EXPECT_EQ(report.errors + report.warnings, 0U);
    test::CommandResult run =
        test::runEtsim("run --platform hgx_h100 --set ranks=2 --set ranks_per_node=2 --set "
                       "\"fabric.topology.dims[0].size=2\" --replicate 2 --quiet --trace " +
                       prefix.string() + " --report " + temp.file("r.json").string());
    ASSERT_EQ(run.code, 0) << run.output;
    json runReport = json::parse(test::readFile(temp.file("r.json")));
    EXPECT_EQ(runReport["outcome"], "finished");
    EXPECT_GT(runReport["simulated_time_ns"].get<double>(), 0.0);
}

TEST(PytorchImport, HostEt102AllGathersCarryGroupSizeAndSizes)
{
    fs::path file = sharedFile("pytorch-host-et-1.0.2/1.0.2-chakra.0.0.4.json");
    SKIP_WITHOUT(file);
    TempDir temp;
    ImportResult result = importOne(file, temp, "ag");
    fs::path prefix = temp.file("ag");
    std::vector<std::pair<int64_t, std::pair<int64_t, int64_t>>> records; // id, bytes, size
    json trace = readJsonFile(file);
    for (const json& n : trace["nodes"])
        if (n["name"] == "record_param_comms" && n["inputs"]["values"][0].is_array())
            records.push_back(
                {n["id"].get<int64_t>(),
                 {tensorBytes(n["inputs"]["values"][0]), n["inputs"]["values"][7].get<int64_t>()}});
    std::sort(records.begin(), records.end());
    ASSERT_EQ(records.size(), 10U);
    std::vector<et::TraceNode> comms = commNodes(readAll(temp.file("ag.0.et")));
    ASSERT_EQ(comms.size(), 10U);
    for (std::size_t k = 0; k < comms.size(); ++k) {
        EXPECT_EQ(comms[k].commType(), static_cast<int32_t>(et::CollectiveType::AllGather));
        EXPECT_EQ(comms[k].commSize(), records[k].second.first);
        EXPECT_EQ(intAttr(comms[k], "pg_size"), records[k].second.second);
        EXPECT_EQ(intAttr(comms[k], "pg_size"), 2);
    }
    EXPECT_EQ(result.ranks[0].waitRecords, 10U);
    et::ValidationReport report = et::TraceValidator().validate(prefix);
    EXPECT_EQ(report.errors + report.warnings, 0U);
}

TEST(PytorchImport, ChakraTraceIsRefusedWithTheReason)
{
    fs::path file = sharedFile("pytorch-linked-1.1.0-r0/chakra.0.et.gz");
    SKIP_WITHOUT(file);
    TempDir temp;
    test::CommandResult run = test::runEtsim("trace import pytorch --host " + file.string() +
                                             " -o " + temp.file("x").string());
    EXPECT_EQ(run.code, 1);
    EXPECT_TRUE(test::contains(run.output, "(a Chakra protobuf trace? Those need no import"))
        << run.output;
    EXPECT_FALSE(fs::exists(temp.file("x.0.et")));
}

} // namespace
} // namespace etsim::importers::pytorch
