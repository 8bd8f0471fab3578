// One test per validator check, on traces written by our writer, with the exact finding text;
// then the real traces of shared/traces against the counts of their README.

#include "et_driver/TraceValidator.h"

#include "et_driver/TraceCodec.h"
#include "et_driver/TraceGraph.h"
#include "et_driver/TraceWriter.h"
#include "tests/et_driver/TraceTestSupport.h"
#include "tests/support/TempDir.h"
#include "tests/support/TraceNodes.h"

#include <gtest/gtest.h>

namespace etsim::et {
namespace {

namespace fs = std::filesystem;
namespace pb = ChakraProtoMsg;

using etsim::test::collNode;
using etsim::test::compNode;
using etsim::test::recvNode;
using etsim::test::sendNode;

void addAttr(TraceNode& node, const std::function<void(pb::AttributeProto&)>& fill)
{
    pb::AttributeProto attr;
    fill(attr);
    TraceCodec::addAttribute(node, attr);
}

class Validator : public ::testing::Test {
protected:
    fs::path write(const std::string& name, const std::vector<TraceNode>& nodes)
    {
        fs::path file = dir.file(name);
        TraceWriter writer(file);
        for (const TraceNode& node : nodes)
            writer.write(node);
        writer.close();
        return file;
    }

    ValidationReport check(const std::vector<TraceNode>& nodes, ValidatorOptions options = {})
    {
        return TraceValidator(std::move(options)).validate(write("t.0.et", nodes));
    }

    // The single kept finding of a kind; fails the test when there is not exactly one.
    static Finding only(const ValidationReport& report, FindingKind kind)
    {
        std::vector<Finding> found;
        for (const Finding& f : report.findings)
            if (f.kind == kind)
                found.push_back(f);
        EXPECT_EQ(found.size(), 1U) << "findings of kind " << findingKindName(kind);
        EXPECT_EQ(report.count(kind), found.size());
        return found.empty() ? Finding{} : found.front();
    }

    etsim::test::TempDir dir;
};

TEST_F(Validator, CleanTraceHasNoFindings)
{
    TraceNode load = compNode(5, {4});
    load.type = NodeType::MemLoad;
    load.setTensorSize(4096);
    ValidationReport report = check({compNode(1),
                                     collNode(2, CollectiveType::AllReduce, 1024, {1}),
                                     sendNode(3, 1, 7),
                                     recvNode(4, 1, 8),
                                     load,
                                     compNode(6, {5, 2}, {1})});
    EXPECT_TRUE(report.ok());
    EXPECT_EQ(report.errors, 0U);
    EXPECT_EQ(report.warnings, 0U);
    EXPECT_TRUE(report.findings.empty());
    EXPECT_EQ(report.nodes, 6U);
    EXPECT_EQ(report.ranks, 1U);
}

TEST_F(Validator, DuplicateId)
{
    TraceNode again = compNode(1);
    again.name = "again";
    ValidationReport report = check({compNode(1), compNode(2, {1}), again});
    Finding f = only(report, FindingKind::DuplicateId);
    EXPECT_EQ(f.severity, Severity::Error);
    EXPECT_EQ(f.nodeId, std::optional<uint64_t>(1));
    EXPECT_EQ(f.nodeName, "again");
    EXPECT_EQ(f.rank, std::optional<uint32_t>(0));
    EXPECT_EQ(f.problem, "record 2 reuses the id of record 0 \"n1\"");
    EXPECT_EQ(f.text(),
              "error: " + dir.file("t.0.et").string() +
                  ": rank 0: node 1 \"again\": record 2 reuses the id of record 0 \"n1\"; fix: "
                  "give every node of a file its own id (spec 1.4); dependencies on this id "
                  "resolve to the first record");
}

TEST_F(Validator, DanglingDataDependencyIsAnErrorOrAWarningWhenLenient)
{
    std::vector<TraceNode> nodes{compNode(1), compNode(2, {1, 99})};
    Finding f = only(check(nodes), FindingKind::DanglingDataDep);
    EXPECT_EQ(f.severity, Severity::Error);
    EXPECT_EQ(f.nodeId, std::optional<uint64_t>(2));
    EXPECT_EQ(f.nodeName, "n2");
    EXPECT_EQ(f.problem,
              "data dependency on node 99, which is not in the file: the node can never start");
    EXPECT_EQ(f.fix, "add node 99 or remove the dependency (--lenient reports it as a warning)");

    ValidatorOptions lenient;
    lenient.lenient = true;
    ValidationReport report = check(nodes, lenient);
    EXPECT_EQ(only(report, FindingKind::DanglingDataDep).severity, Severity::Warning);
    EXPECT_TRUE(report.ok());
    EXPECT_EQ(report.warnings, 1U);
}

TEST_F(Validator, DanglingControlDependencyIsAWarningAndIgnoredWithDataOnly)
{
    std::vector<TraceNode> nodes{compNode(1), compNode(2, {1}, {3})};
    ValidationReport report = check(nodes);
    Finding f = only(report, FindingKind::DanglingCtrlDep);
    EXPECT_EQ(f.severity, Severity::Warning);
    EXPECT_EQ(f.problem, "control dependency on node 3, which is not in the file");
    EXPECT_TRUE(report.ok());

    ValidatorOptions dataOnly;
    dataOnly.dataOnly = true;
    EXPECT_TRUE(check(nodes, dataOnly).findings.empty());
}

TEST_F(Validator, SelfLoops)
{
    ValidationReport report = check({compNode(1), compNode(2, {1, 2}), compNode(3, {}, {3})});
    Finding data = only(report, FindingKind::DataSelfLoop);
    EXPECT_EQ(data.severity, Severity::Error);
    EXPECT_EQ(data.nodeId, std::optional<uint64_t>(2));
    EXPECT_EQ(data.problem, "the node lists itself in data_deps: it can never start");
    Finding ctrl = only(report, FindingKind::CtrlSelfLoop);
    EXPECT_EQ(ctrl.severity, Severity::Warning);
    EXPECT_EQ(ctrl.nodeId, std::optional<uint64_t>(3));
    EXPECT_EQ(ctrl.problem, "the node lists itself in ctrl_deps");
    // A self loop is not also a cycle.
    EXPECT_EQ(report.count(FindingKind::DataCycle), 0U);
    EXPECT_EQ(report.count(FindingKind::CtrlCycle), 0U);
}

TEST_F(Validator, DataCycleNamesItsNodesInOrder)
{
    // 1 waits for 3, 3 for 2, 2 for 1; 4 only waits behind the cycle.
    ValidationReport report =
        check({compNode(1, {3}), compNode(2, {1}), compNode(3, {2}), compNode(4, {3})});
    Finding f = only(report, FindingKind::DataCycle);
    EXPECT_EQ(f.severity, Severity::Error);
    EXPECT_EQ(f.nodeId, std::optional<uint64_t>(1));
    EXPECT_EQ(f.problem,
              "data dependency cycle of 3 nodes (each waits for the next): 1 \"n1\" -> 3 \"n3\" "
              "-> 2 \"n2\" -> 1");
    EXPECT_EQ(f.fix, "break the cycle by removing one of its data dependencies");
}

TEST_F(Validator, LongCycleIsShortenedInTheMessage)
{
    std::vector<TraceNode> nodes;
    for (uint64_t id = 1; id <= 20; ++id)
        nodes.push_back(compNode(id, {id == 1 ? 20 : id - 1}));
    Finding f = only(check(nodes), FindingKind::DataCycle);
    EXPECT_EQ(f.problem,
              "data dependency cycle of 20 nodes (each waits for the next): 1 \"n1\" -> 20 "
              "\"n20\" -> 19 \"n19\" -> 18 \"n18\" -> 17 \"n17\" -> 16 \"n16\" -> 15 \"n15\" -> "
              "14 \"n14\" -> 13 \"n13\" -> 12 \"n12\" -> 11 \"n11\" -> 10 \"n10\" -> ... (8 "
              "more) -> 1");
}

TEST_F(Validator, ControlCycleNeedsTheControlEdge)
{
    // 2 waits for 1 by data, 1 for 2 by control: a cycle only when ctrl edges count.
    std::vector<TraceNode> nodes{compNode(1, {}, {2}), compNode(2, {1})};
    ValidationReport report = check(nodes);
    EXPECT_EQ(report.count(FindingKind::DataCycle), 0U);
    Finding f = only(report, FindingKind::CtrlCycle);
    EXPECT_EQ(f.severity, Severity::Error); // a run with control edges deadlocks on it
    EXPECT_EQ(f.problem,
              "control dependency cycle of 2 nodes (each waits for the next): 1 \"n1\" -> 2 "
              "\"n2\" -> 1");
    ValidatorOptions dataOnly;
    dataOnly.dataOnly = true;
    EXPECT_TRUE(check(nodes, dataOnly).findings.empty());
}

TEST_F(Validator, UnknownNodeType)
{
    TraceNode odd = compNode(1);
    odd.type = static_cast<NodeType>(12);
    Finding f = only(check({odd}), FindingKind::UnknownNodeType);
    EXPECT_EQ(f.severity, Severity::Error);
    EXPECT_EQ(f.problem, "type 12 is not a Chakra node type");
    EXPECT_EQ(f.fix,
              "use one of INVALID_NODE (0) .. COMM_COLL_NODE (7) (spec 2.5); ASTRA-sim exits on "
              "unknown types");
}

TEST_F(Validator, MissingAttributes)
{
    TraceNode collective = collNode(1, CollectiveType::AllGather, 8);
    collective.clear(Attr::CommSize);
    TraceNode store = compNode(2);
    store.type = NodeType::MemStore;
    ValidationReport report = check({collective, store});
    EXPECT_EQ(report.count(FindingKind::MissingAttribute), 2U);
    ASSERT_EQ(report.findings.size(), 2U);
    EXPECT_EQ(report.findings[0].problem, "COMM_COLL_NODE without comm_size");
    EXPECT_EQ(report.findings[0].fix,
              "add a comm_size attribute (int64_val); it is required for this node type (spec "
              "4.3)");
    EXPECT_EQ(report.findings[1].problem, "MEM_STORE_NODE without tensor_size");
    EXPECT_EQ(report.findings[1].fix,
              "add a tensor_size attribute (uint64_val); it is required for this node type "
              "(spec 4.3)");
}

TEST_F(Validator, WrongAttributeTypes)
{
    TraceNode floatSize = collNode(1, CollectiveType::AllReduce, 8);
    floatSize.clear(Attr::CommSize);
    addAttr(floatSize, [](pb::AttributeProto& a) {
        a.set_name("comm_size");
        a.set_double_val(3.0);
    });
    TraceNode intGroup = collNode(2, CollectiveType::AllReduce, 8);
    addAttr(intGroup, [](pb::AttributeProto& a) {
        a.set_name("pg_name");
        a.set_int64_val(3);
    });
    TraceNode bigTag = sendNode(3, 1, 0);
    bigTag.clear(Attr::CommTag);
    addAttr(bigTag, [](pb::AttributeProto& a) {
        a.set_name("comm_tag");
        a.set_uint64_val(uint64_t{1} << 40);
    });
    ValidationReport report = check({floatSize, intGroup, bigTag});
    ASSERT_EQ(report.count(FindingKind::WrongAttributeType), 3U);
    // Present with the wrong type is not also reported missing.
    EXPECT_EQ(report.count(FindingKind::MissingAttribute), 0U);
    EXPECT_EQ(report.count(FindingKind::MissingPeerOrTag), 0U);
    ASSERT_EQ(report.findings.size(), 3U);
    EXPECT_EQ(report.findings[0].problem,
              "attribute comm_size is double_val; readers expect an integer or bool value");
    EXPECT_EQ(report.findings[0].fix, "write it as int64_val (spec 4.1)");
    EXPECT_EQ(report.findings[1].problem,
              "attribute pg_name is int64_val; readers expect string_val");
    EXPECT_EQ(report.findings[2].problem,
              "attribute comm_tag (uint64_val) holds a value outside the int32 range");
    EXPECT_EQ(report.findings[2].fix, "write a value in the int32 range as int32_val");
}

TEST_F(Validator, DuplicateAttribute)
{
    TraceNode node = collNode(1, CollectiveType::AllReduce, 8);
    addAttr(node, [](pb::AttributeProto& a) {
        a.set_name("comm_size");
        a.set_int64_val(16);
    });
    Finding f = only(check({node}), FindingKind::DuplicateAttribute);
    EXPECT_EQ(f.severity, Severity::Warning);
    EXPECT_EQ(f.problem,
              "attribute comm_size appears more than once; feeder v3 uses the first, the legacy "
              "feeder the last");
}

TEST_F(Validator, UnknownCollectiveType)
{
    TraceNode node = collNode(1, CollectiveType::AllReduce, 8);
    node.setCommType(42);
    Finding f = only(check({node}), FindingKind::UnknownCollective);
    EXPECT_EQ(f.problem, "comm_type 42 is not a CollectiveCommType");
}

TEST_F(Validator, NegativeAndZeroSizes)
{
    TraceNode ops = compNode(3);
    ops.setNumOps(-1);
    ValidationReport report = check({collNode(1, CollectiveType::AllReduce, -5),
                                     collNode(2, CollectiveType::AllReduce, 0),
                                     ops,
                                     collNode(4, CollectiveType::Barrier, 0)});
    ASSERT_EQ(report.count(FindingKind::NegativeSize), 2U);
    Finding zero = only(report, FindingKind::ZeroSize);
    EXPECT_EQ(zero.severity, Severity::Warning);
    EXPECT_EQ(zero.nodeId, std::optional<uint64_t>(2));
    EXPECT_EQ(zero.problem, "comm_size is 0 B: the communication moves nothing");
    std::vector<std::string> negative;
    for (const Finding& f : report.findings)
        if (f.kind == FindingKind::NegativeSize)
            negative.push_back(f.problem);
    EXPECT_EQ(negative, (std::vector<std::string>{"comm_size is -5 B", "num_ops is -1"}));
}

TEST_F(Validator, SendAndRecvWithoutPeerOrTag)
{
    TraceNode noDst = sendNode(1, 1, 5);
    noDst.clear(Attr::CommDst);
    TraceNode noTag = recvNode(2, 1, 5);
    noTag.clear(Attr::CommTag);
    ValidationReport report = check({noDst, noTag});
    ASSERT_EQ(report.count(FindingKind::MissingPeerOrTag), 2U);
    EXPECT_EQ(report.findings[0].problem, "COMM_SEND_NODE without comm_dst");
    EXPECT_EQ(report.findings[0].fix,
              "add a comm_dst attribute (int32_val); it is required for this node type (spec "
              "4.3)");
    EXPECT_EQ(report.findings[1].problem, "COMM_RECV_NODE without comm_tag");
}

TEST_F(Validator, CommunicationOnTheCpu)
{
    TraceNode node = collNode(1, CollectiveType::AllReduce, 8);
    node.setIsCpuOp(true);
    Finding f = only(check({node}), FindingKind::CommOnCpu);
    EXPECT_EQ(f.problem,
              "COMM_COLL_NODE with is_cpu_op true: ASTRA-sim throws \"Comm node should not be on "
              "CPU\"");
}

TraceNode groupMetadata(uint64_t id, const std::string& values)
{
    TraceNode node = compNode(id);
    node.type = NodeType::Metadata;
    node.name = "## process_group:init ##";
    pb::IOInfo inputs;
    inputs.set_values(values);
    TraceCodec::setInputs(node, inputs);
    return node;
}

TEST_F(Validator, ProcessGroupsWithoutAnyGroupData)
{
    TraceNode node = collNode(1, CollectiveType::AllReduce, 8);
    node.setPgName("3");
    TraceNode fine = collNode(2, CollectiveType::AllReduce, 8, {1});
    fine.setPgName("0");
    ValidationReport report = check({node, fine});
    Finding f = only(report, FindingKind::UnknownProcessGroup);
    EXPECT_EQ(f.severity, Severity::Error);
    EXPECT_EQ(f.nodeId, std::optional<uint64_t>(1));
    EXPECT_EQ(f.problem,
              "pg_name \"3\" names communicator group 3, but no group is defined: the file has "
              "no process-group METADATA_NODE and no communicator-group file was given; "
              "ASTRA-sim exits on this node");
    EXPECT_EQ(f.fix,
              "define the group (a process-group METADATA_NODE, spec 6, or --comm-groups FILE), "
              "or set pg_name to \"\" for all ranks");
}

TEST_F(Validator, ProcessGroupsFromMetadataAndFromTheGroupFile)
{
    TraceNode meta = groupMetadata(
        1, "['[{\"pg_name\": \"3\", \"pg_desc\": \"x\", \"ranks\": [], \"group_size\": 8}]']");
    TraceNode known = collNode(2, CollectiveType::AllReduce, 8, {1});
    known.setPgName("3");
    TraceNode unknown = collNode(3, CollectiveType::AllReduce, 8, {2});
    unknown.setPgName("5");
    TraceNode bad = collNode(4, CollectiveType::AllReduce, 8, {3});
    bad.setPgName("abc");
    ValidationReport report = check({meta, known, unknown, bad});
    ASSERT_EQ(report.count(FindingKind::UnknownProcessGroup), 2U);
    EXPECT_EQ(report.findings[0].nodeId, std::optional<uint64_t>(3));
    EXPECT_EQ(report.findings[0].problem,
              "pg_name \"5\" names communicator group 5, which neither a METADATA_NODE of this "
              "file nor the communicator-group file defines; ASTRA-sim exits on this node");
    EXPECT_EQ(report.findings[1].problem, "pg_name \"abc\" is not a decimal communicator-group id");

    ValidatorOptions withFile;
    withFile.commGroups = {{5, {0, 1}}};
    EXPECT_EQ(check({meta, known, unknown}, withFile).count(FindingKind::UnknownProcessGroup), 0U);
}

TEST_F(Validator, BadProcessGroupList)
{
    Finding f = only(check({groupMetadata(1, "not a list")}), FindingKind::BadProcessGroupList);
    EXPECT_EQ(f.severity, Severity::Warning);
    EXPECT_EQ(f.problem,
              "process-group list: inputs.values must look like ['[{...}]'] (a Python list "
              "holding one JSON string), got \"not a list\"");
}

TEST_F(Validator, MissingMetadataRecord)
{
    pb::Node message;
    TraceCodec::encode(compNode(1), message);
    std::string body = message.SerializeAsString();
    fs::path file = dir.write("legacy.0.et", test::varint(body.size()) + body);
    ValidationReport report = TraceValidator().validate(file);
    Finding f = only(report, FindingKind::MissingMetadata);
    EXPECT_EQ(f.severity, Severity::Warning);
    EXPECT_FALSE(f.nodeId.has_value());
    EXPECT_EQ(f.problem,
              "record 0 is a Node, not the GlobalMetadata record (a legacy trace, spec 3.2); "
              "ASTRA-sim's feeder rejects such files");
    EXPECT_EQ(report.nodes, 1U);
}

TEST_F(Validator, TruncatedFileIsAnUnreadableTraceFinding)
{
    fs::path good = write("good.0.et", {compNode(1), compNode(2, {1})});
    std::string bytes = etsim::test::readFile(good);
    fs::path cut = dir.write("cut.0.et", bytes.substr(0, bytes.size() - 3));
    ValidationReport report = TraceValidator().validate(cut);
    Finding f = only(report, FindingKind::UnreadableTrace);
    EXPECT_EQ(f.severity, Severity::Error);
    EXPECT_NE(f.problem.find("the file is truncated"), std::string::npos) << f.problem;
    EXPECT_EQ(f.fix, "regenerate or re-copy the file");
}

TEST_F(Validator, FindingsAreCappedPerKindButCountedExactly)
{
    std::vector<TraceNode> nodes;
    for (uint64_t id = 1; id <= 30; ++id)
        nodes.push_back(compNode(id, {1000 + id}));
    ValidatorOptions options;
    options.maxPerKind = 20;
    ValidationReport report = check(nodes, options);
    EXPECT_EQ(report.count(FindingKind::DanglingDataDep), 30U);
    EXPECT_EQ(report.omitted(FindingKind::DanglingDataDep), 10U);
    EXPECT_EQ(report.findings.size(), 20U);
    EXPECT_EQ(report.errors, 30U);
    EXPECT_EQ(report.findings.back().nodeId, std::optional<uint64_t>(20));
}

TEST_F(Validator, CollectiveSequencesAcrossRanks)
{
    auto rank = [&](uint32_t r, const std::vector<TraceNode>& nodes) {
        write("job." + std::to_string(r) + ".et", nodes);
    };
    // Rank 0 and 3 agree; rank 1 differs in the size of #2; rank 2 lacks the last one. The
    // comparison is in node-id order, whatever the file order.
    rank(0,
         {collNode(10, CollectiveType::AllReduce, 64),
          collNode(11, CollectiveType::AllGather, 128),
          collNode(12, CollectiveType::AllReduce, 256)});
    rank(1,
         {collNode(20, CollectiveType::AllReduce, 64),
          collNode(21, CollectiveType::AllGather, 4096),
          collNode(22, CollectiveType::AllReduce, 256)});
    rank(2,
         {collNode(30, CollectiveType::AllReduce, 64),
          collNode(31, CollectiveType::AllGather, 128)});
    rank(3,
         {collNode(42, CollectiveType::AllReduce, 256),
          collNode(40, CollectiveType::AllReduce, 64),
          collNode(41, CollectiveType::AllGather, 128)});
    ValidationReport report = TraceValidator().validate(dir.file("job"));
    EXPECT_EQ(report.ranks, 4U);
    EXPECT_EQ(report.nodes, 11U);
    ASSERT_EQ(report.count(FindingKind::CollectiveMismatch), 2U);
    const Finding& size = report.findings[0];
    EXPECT_EQ(size.severity, Severity::Warning);
    EXPECT_EQ(size.rank, std::optional<uint32_t>(1));
    EXPECT_EQ(size.file, dir.file("job.1.et").string());
    EXPECT_EQ(size.nodeId, std::optional<uint64_t>(21));
    EXPECT_EQ(size.problem,
              "collective #2 in the default group (all ranks) is ALL_GATHER of 4096 B, but rank "
              "0's #2 is ALL_GATHER of 128 B (node 11 \"n11\")");
    const Finding& missing = report.findings[1];
    EXPECT_EQ(missing.rank, std::optional<uint32_t>(2));
    EXPECT_FALSE(missing.nodeId.has_value());
    EXPECT_EQ(missing.problem,
              "issues 2 collectives in the default group (all ranks), rank 0 issues 3; the first "
              "missing one is rank 0's #3, ALL_REDUCE of 256 B (node 12 \"n12\")");
    EXPECT_TRUE(report.ok());
}

TEST_F(Validator, GroupSequencesAreComparedAmongMembersOnly)
{
    // Group 1 = ranks 0 and 1 (from the group file); rank 2 is not a member.
    auto grouped = [](uint64_t id, int64_t bytes) {
        TraceNode node = collNode(id, CollectiveType::AllReduce, bytes);
        node.setPgName("1");
        return node;
    };
    write("g.0.et", {grouped(1, 8)});
    write("g.1.et", {grouped(1, 16)});
    write("g.2.et", {compNode(1)});
    ValidatorOptions options;
    options.commGroups = {{1, {0, 1}}};
    ValidationReport report = TraceValidator(options).validate(dir.path());
    Finding f = only(report, FindingKind::CollectiveMismatch);
    EXPECT_EQ(f.rank, std::optional<uint32_t>(1));
    EXPECT_EQ(f.problem,
              "collective #1 in group 1 is ALL_REDUCE of 16 B, but rank 0's #1 is ALL_REDUCE of "
              "8 B (node 1 \"n1\")");
}

TEST(TraceGraphTest, MillionNodeChainWithACycleAtTheEndNeedsNoRecursion)
{
    // Node i depends on i-1; node 0 depends on the last one: one cycle through every node.
    constexpr uint64_t n = 1000000;
    TraceGraph graph;
    for (uint64_t id = 0; id < n; ++id)
        graph.addNode(id, {id == 0 ? n - 1 : id - 1}, {}, true);
    graph.resolve();
    EXPECT_TRUE(graph.topologicalOrder({true, false}).empty());
    std::vector<TraceGraph::Component> components = graph.cyclicComponents({true, false});
    ASSERT_EQ(components.size(), 1U);
    ASSERT_EQ(components[0].size(), n);
    std::vector<uint32_t> cycle = graph.cycleThrough(components[0], 0, n - 1, {true, false});
    ASSERT_EQ(cycle.size(), n);
    EXPECT_EQ(cycle[1], n - 1);
    EXPECT_EQ(cycle.back(), 1U);
}

// ---- real traces ----------------------------------------------------------------------------

#define ETSIM_REQUIRE_TRACES(dir)                                                                  \
    std::optional<std::filesystem::path> dir = test::sharedTraces();                               \
    if (!dir)                                                                                      \
        GTEST_SKIP() << "shared traces not found: set ETSIM_TRACES to the traces folder";

TEST(ValidatorOnRealTraces, FeederTestTrace)
{
    ETSIM_REQUIRE_TRACES(dir);
    fs::path file = *dir / "chakra-feeder-test" / "chakra.0.et";
    ValidationReport report = TraceValidator().validate(file);
    EXPECT_EQ(report.nodes, 3664U);
    // README: 1,277 dangling ctrl refs, 383 self loops, cycles among ctrl edges; data clean.
    EXPECT_EQ(report.count(FindingKind::DanglingCtrlDep), 1277U);
    EXPECT_EQ(report.count(FindingKind::CtrlSelfLoop), 383U);
    EXPECT_EQ(report.count(FindingKind::CtrlCycle), 417U);
    EXPECT_EQ(report.count(FindingKind::DanglingDataDep), 0U);
    EXPECT_EQ(report.count(FindingKind::DataSelfLoop), 0U);
    EXPECT_EQ(report.count(FindingKind::DataCycle), 0U);
    EXPECT_EQ(report.count(FindingKind::DuplicateId), 0U);
    // README: 14 host c10d::* nodes typed COMM_COLL_NODE, is_cpu_op true, no comm_type.
    EXPECT_EQ(report.count(FindingKind::CommOnCpu), 14U);
    EXPECT_EQ(report.count(FindingKind::MissingAttribute), 28U);
    // The 417 control cycles are errors: a data+ctrl run deadlocks on them.
    EXPECT_EQ(report.errors, 42U + 417U);
    EXPECT_EQ(report.warnings, 1277U + 383U);
    EXPECT_EQ(report.omitted(FindingKind::DanglingCtrlDep), 1257U);

    ValidatorOptions dataOnly;
    dataOnly.dataOnly = true;
    ValidationReport data = TraceValidator(dataOnly).validate(file);
    EXPECT_EQ(data.warnings, 0U);
    EXPECT_EQ(data.errors, 42U);
}

TEST(ValidatorOnRealTraces, LinkedPytorchTraceHasThreeDanglingCtrlRefsOnly)
{
    ETSIM_REQUIRE_TRACES(dir);
    ValidationReport report =
        TraceValidator().validate(*dir / "pytorch-linked-1.1.0-r0" / "chakra.0.et.gz");
    EXPECT_EQ(report.nodes, 11347U);
    EXPECT_EQ(report.errors, 0U);
    EXPECT_EQ(report.warnings, 3U);
    EXPECT_EQ(report.count(FindingKind::DanglingCtrlDep), 3U);
    ASSERT_FALSE(report.findings.empty());
    EXPECT_EQ(report.findings[0].problem, "control dependency on node 0, which is not in the file");
}

TEST(ValidatorOnRealTraces, Resnet50SixtyFourRanksHaveIdenticalCollectiveSequences)
{
    ETSIM_REQUIRE_TRACES(dir);
    ValidationReport report =
        TraceValidator().validate(*dir / "text-resnet50-dp-64r-legacy" / "resnet50_DataParallel");
    EXPECT_EQ(report.ranks, 64U);
    EXPECT_EQ(report.nodes, 64U * 215U);
    EXPECT_EQ(report.count(FindingKind::CollectiveMismatch), 0U);
    // No GlobalMetadata record in any rank; otherwise clean, ctrl edges included.
    EXPECT_EQ(report.count(FindingKind::MissingMetadata), 64U);
    EXPECT_EQ(report.errors, 0U);
    EXPECT_EQ(report.warnings, 64U);
}

} // namespace
} // namespace etsim::et
