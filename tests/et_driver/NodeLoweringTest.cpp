#include "et_driver/NodeLowering.h"

#include "et_driver/NodeTensors.h"
#include "et_driver/TraceCodec.h"
#include "kernel/Error.h"
#include "tests/et_driver/DriverTestSupport.h"

#include <gtest/gtest.h>

namespace etsim::et::test {
namespace {

namespace pb = ChakraProtoMsg;

void expectError(NodeLowering& lowering, const TraceNode& bad, const std::string& text)
{
    try {
        lowering.lower(bad);
        ADD_FAILURE() << "no error for: " << text;
    } catch (const Error& error) {
        EXPECT_NE(std::string(error.what()).find(text), std::string::npos) << error.what();
    }
}

TEST(NodeLowering, ComputeCarriesFlopsBytesAndGemm)
{
    LoweringContext context(2);
    NodeLowering lowering(RankId{1}, {}, context);
    TraceNode gemm = comp(7, std::int64_t{2} * 64 * 32 * 16);
    gemm.setTensorSize(4096);
    gemm.setOpKind("gemm");
    gemm.setGemmM(64);
    gemm.setGemmN(32);
    gemm.setGemmK(16);
    gemm.setDtype("bf16");
    LoweredNode out = lowering.lower(gemm);
    EXPECT_EQ(out.engine, Engine::Compute);
    EXPECT_FALSE(out.local);
    EXPECT_EQ(out.info.rank, RankId{1});
    EXPECT_EQ(out.info.node, NodeId{7});
    EXPECT_EQ(out.info.kind, NodeKind::Compute);
    EXPECT_EQ(out.info.flops, 65536U);
    EXPECT_EQ(out.info.bytes, 4096U);
    EXPECT_EQ(out.info.op, OperatorKind::Gemm);
    EXPECT_EQ(out.info.dataType, etsim::DataType::Bf16);
    ASSERT_TRUE(out.info.gemm.has_value());
    EXPECT_EQ(*out.info.gemm, (etsim::GemmShape{64, 32, 16, 1}));
    EXPECT_EQ(out.info.durationPs, 0U);
}

// Tensor lists worked out ahead (TraceReadAhead) are taken as they are, without a second scan
// of the node's bytes: Read gives the lists, None gives no tensors.
TEST(NodeLowering, TakesTheTensorListsReadAhead)
{
    LoweringContext context(1);
    NodeLowering lowering(RankId{0}, {}, context);
    TraceNode add = comp(3, 100);
    setNodeTensors(add, {{11, 4096}}, {{12, 4096}}, 2, "Tensor(c10::BFloat16)");
    add.tensorsAhead = TraceNode::TensorsAhead::Read;
    add.tensorsRead.inputs = {{21, 64}};
    add.tensorsRead.outputs = {{22, 128}, {23, 8}};
    LoweredNode out = lowering.lower(add);
    ASSERT_NE(out.info.tensors, nullptr);
    EXPECT_EQ(out.info.tensors->inputs, add.tensorsRead.inputs);
    EXPECT_EQ(out.info.tensors->outputs, add.tensorsRead.outputs);
    add.tensorsAhead = TraceNode::TensorsAhead::None;
    EXPECT_EQ(lowering.lower(add).info.tensors, nullptr);
    add.tensorsAhead = TraceNode::TensorsAhead::Unknown; // scanned here, as without a read-ahead
    out = lowering.lower(add);
    ASSERT_NE(out.info.tensors, nullptr);
    EXPECT_EQ(out.info.tensors->inputs, (std::vector<TensorUse>{{11, 4096}}));
}

TEST(NodeLowering, TensorTuplesReachTheModelShared)
{
    LoweringContext context(1);
    NodeLowering lowering(RankId{0}, {}, context);
    TraceNode add = comp(3, 100);
    setNodeTensors(add, {{11, 4096}}, {{12, 4096}}, 2, "Tensor(c10::BFloat16)");
    LoweredNode out = lowering.lower(add);
    ASSERT_NE(out.info.tensors, nullptr);
    EXPECT_EQ(out.info.tensors->inputs, (std::vector<TensorUse>{{11, 4096}}));
    EXPECT_EQ(out.info.tensors->outputs, (std::vector<TensorUse>{{12, 4096}}));
    // A load naming its tensor carries it too; a node naming none carries nothing.
    TraceNode load = node(4, NodeType::MemLoad);
    load.setTensorSize(4096);
    setNodeTensors(load, {}, {{11, 4096}}, 2, "Tensor(c10::BFloat16)");
    EXPECT_NE(lowering.lower(load).info.tensors, nullptr);
    EXPECT_EQ(lowering.lower(comp(5, 100)).info.tensors, nullptr);
    // A bad tuple names the rank and the node.
    TraceNode bad = comp(6, 100);
    setNodeTensors(bad, {{1, 4096}}, {}, 2, "Tensor(c10::BFloat16)");
    pb::IOInfo inputs = *TraceCodec::inputs(bad);
    inputs.set_values("[[1, 1, 0, -2, 2, 'cuda:0']]");
    TraceCodec::setInputs(bad, inputs);
    expectError(lowering, bad, "rank 0, node 6");
}

TEST(NodeLowering, PointToPointAndEagerRule)
{
    LoweringContext context(4);
    LoweringOptions options;
    options.eagerThresholdBytes = 100;
    NodeLowering lowering(RankId{0}, options, context);
    LoweredNode small = lowering.lower(send(1, 3, 42, 100));
    EXPECT_EQ(small.info.kind, NodeKind::Send);
    EXPECT_EQ(small.info.peer, RankId{3});
    EXPECT_EQ(small.info.tag, 42U);
    EXPECT_EQ(small.info.bytes, 100U);
    EXPECT_EQ(std::get<std::int64_t>(*small.info.findAttribute(eagerAttribute)), 1);
    LoweredNode large = lowering.lower(send(2, 3, 42, 101));
    EXPECT_EQ(std::get<std::int64_t>(*large.info.findAttribute(eagerAttribute)), 0);
    LoweredNode in = lowering.lower(recv(3, 2, 5, 8));
    EXPECT_EQ(in.info.kind, NodeKind::Recv);
    EXPECT_EQ(in.info.peer, RankId{2});
    EXPECT_EQ(in.info.findAttribute(eagerAttribute), nullptr);

    options.profile = SchedulingProfile::Astra;
    NodeLowering astra(RankId{0}, options, context);
    LoweredNode astraLarge = astra.lower(send(2, 3, 42, 1 << 20));
    EXPECT_EQ(std::get<std::int64_t>(*astraLarge.info.findAttribute(eagerAttribute)), 1);
}

TEST(NodeLowering, GroupsAreSharedAndSequencesCountPerGroup)
{
    LoweringContext context(4);
    context.addGroups({{1, {0, 1}}, {2, {2, 3}}});
    NodeLowering rank0(RankId{0}, {}, context);
    NodeLowering rank1(RankId{1}, {}, context);
    TraceNode node = coll(1, CollectiveType::AllGather, 64, {}, "1");
    node.setInvolvedDim({true, false, true});
    LoweredNode a = rank0.lower(node);
    LoweredNode b = rank1.lower(node);
    EXPECT_EQ(a.info.group, ProcessGroupId{1});
    ASSERT_NE(a.info.groupRanks, nullptr);
    EXPECT_EQ(a.info.groupRanks.get(), b.info.groupRanks.get()); // one vector per group
    EXPECT_EQ(*a.info.groupRanks, (std::vector<RankId>{RankId{0}, RankId{1}}));
    EXPECT_EQ(a.info.involvedDims, 0b101U);
    EXPECT_EQ(a.info.collective, etsim::CollectiveType::AllGather);
    LoweredNode all = rank0.lower(coll(2, CollectiveType::AllReduce, 64));
    EXPECT_FALSE(all.info.group.has_value());
    EXPECT_EQ(all.info.groupRanks, nullptr);
    EXPECT_EQ(rank0.nextSequence(ProcessGroupId{1}), 0U);
    EXPECT_EQ(rank0.nextSequence(ProcessGroupId{1}), 1U);
    EXPECT_EQ(rank0.nextSequence(std::nullopt), 0U);
    EXPECT_EQ(rank0.nextSequence(ProcessGroupId{2}), 0U);
    EXPECT_EQ(rank1.nextSequence(ProcessGroupId{1}), 0U);
}

TEST(NodeLowering, GroupBeyondTheJobCompletesLocally)
{
    LoweringContext context(2);
    context.addGroup({5, {0, 1, 2, 3}});
    NodeLowering lowering(RankId{0}, {}, context);
    TraceNode node = coll(1, CollectiveType::AllReduce, 64, {}, "5");
    node.durationMicros = 3;
    LoweredNode out = lowering.lower(node);
    EXPECT_TRUE(out.local);
    EXPECT_EQ(out.localPs, 3000000U);
    EXPECT_EQ(lowering.fallbacks().localCollectives, 1U);
}

// Lowering into a node that held another one (the driver's reuse of spent nodes) gives what
// lowering into a fresh node gives, whatever was there: a send's eager attribute, tensors, a
// group, a GEMM, a name long enough to live on the heap.
TEST(NodeLowering, LoweringIntoASpentNodeLeavesNothingOfIt)
{
    LoweringContext context(4);
    context.addGroups({{1, {0, 1}}});
    NodeLowering lowering(RankId{0}, {}, context);
    TraceNode gemm = comp(7, std::int64_t{2} * 64 * 32 * 16);
    gemm.name = "a compute node whose name does not fit in a short string";
    gemm.setOpKind("gemm");
    gemm.setGemmM(64);
    gemm.setGemmN(32);
    gemm.setGemmK(16);
    setNodeTensors(gemm, {{11, 4096}}, {{12, 4096}}, 2, "Tensor(c10::BFloat16)");
    TraceNode group = coll(8, CollectiveType::AllGather, 64, {}, "1");
    group.setInvolvedDim({true, false, true});
    TraceNode host = comp(9, 10);
    host.setIsCpuOp(true);
    host.durationMicros = 2;
    const std::vector<TraceNode> nodes = {send(1, 3, 42, 100),
                                          gemm,
                                          recv(2, 1, 5, 8),
                                          group,
                                          send(3, 2, 7, 1 << 20),
                                          host,
                                          node(4, NodeType::Metadata),
                                          gemm,
                                          send(5, 1, 1, 1)};
    LoweredNode reused;
    EtNodeInfo carried; // the driver's form: into a transaction's info, the placement apart
    for (const TraceNode& each : nodes) {
        lowering.lower(each, reused);
        const LoweredNode fresh = lowering.lower(each);
        EXPECT_EQ(reused.info, fresh.info) << each.id;
        EXPECT_EQ(reused.engine, fresh.engine) << each.id;
        EXPECT_EQ(reused.local, fresh.local) << each.id;
        EXPECT_EQ(reused.localPs, fresh.localPs) << each.id;
        const NodePlacement placement = lowering.lower(each, carried);
        EXPECT_EQ(carried, fresh.info) << each.id;
        EXPECT_EQ(placement.engine, fresh.engine) << each.id;
        EXPECT_EQ(placement.local, fresh.local) << each.id;
        EXPECT_EQ(placement.localPs, fresh.localPs) << each.id;
    }
}

// The driver hands spent nodes back with their tensor lists: lowered into again, a node reuses
// them (no allocation), unless something still holds them, which then keeps what it saw.
TEST(NodeLowering, SpentTensorListsAreReusedOnlyWhenNothingElseHoldsThem)
{
    LoweringContext context(1);
    NodeLowering lowering(RankId{0}, {}, context);
    TraceNode first = comp(3, 100);
    setNodeTensors(first, {{11, 4096}}, {{12, 4096}}, 2, "Tensor(c10::BFloat16)");
    TraceNode second = comp(4, 100);
    setNodeTensors(second, {{13, 64}, {14, 64}}, {{15, 64}}, 2, "Tensor(c10::BFloat16)");
    LoweredNode out;
    lowering.lower(first, out);
    const NodeTensors* lists = out.info.tensors.get();
    lowering.lower(second, out);
    EXPECT_EQ(out.info.tensors.get(), lists);
    EXPECT_EQ(out.info.tensors->inputs, (std::vector<TensorUse>{{13, 64}, {14, 64}}));
    EXPECT_EQ(out.info.tensors->outputs, (std::vector<TensorUse>{{15, 64}}));
    std::shared_ptr<const NodeTensors> held = out.info.tensors;
    lowering.lower(first, out);
    EXPECT_NE(out.info.tensors.get(), held.get());
    EXPECT_EQ(held->inputs, (std::vector<TensorUse>{{13, 64}, {14, 64}}));
    EXPECT_EQ(out.info.tensors->inputs, (std::vector<TensorUse>{{11, 4096}}));
    // A node naming no tensor keeps none, and leaves the lists for the next one.
    const NodeTensors* spare = out.info.tensors.get();
    lowering.lower(comp(5, 100), out);
    EXPECT_EQ(out.info.tensors, nullptr);
    lowering.lower(second, out);
    EXPECT_EQ(out.info.tensors.get(), spare);
}

TEST(NodeLowering, BadNodesThrowNamingTheNode)
{
    LoweringContext context(2);
    context.addGroup({1, {0, 1}});
    NodeLowering lowering(RankId{0}, {}, context);

    TraceNode noDst = node(1, NodeType::CommSend);
    noDst.setCommSize(4);
    expectError(lowering,
                noDst,
                "rank 0, node 1 (\"n1\"): COMM_SEND_NODE has no comm_dst; give the peer rank");
    expectError(lowering, send(2, 2, 0, 4), "comm_dst 2 is not a rank of this 2-rank job");
    TraceNode wrongSrc = send(3, 1, 0, 4);
    wrongSrc.setCommSrc(1);
    expectError(lowering, wrongSrc, "comm_src 1 is not the node's own rank");
    TraceNode noSize = node(4, NodeType::CommRecv);
    noSize.setCommSrc(1);
    expectError(lowering, noSize, "COMM_RECV_NODE has no comm_size");
    TraceNode noType = node(5, NodeType::CommColl);
    noType.setCommSize(4);
    expectError(lowering, noType, "COMM_COLL_NODE has no comm_type");
    TraceNode badType = coll(6, CollectiveType::AllReduce, 4);
    badType.setCommType(99);
    expectError(lowering, badType, "comm_type CollectiveCommType(99) is not a collective");
    expectError(lowering,
                coll(7, CollectiveType::AllReduce, 4, {}, "9"),
                "pg_name \"9\" names no known process group");
    expectError(lowering,
                coll(8, CollectiveType::AllReduce, 4, {}, "abc"),
                "pg_name \"abc\" is not a process-group id");
    expectError(lowering, node(9, NodeType::MemLoad), "MEM_LOAD_NODE has no tensor_size");
    expectError(lowering, node(10, static_cast<NodeType>(12)), "unknown node type NodeType(12)");
    TraceNode negative = coll(11, CollectiveType::AllReduce, -1);
    expectError(
        lowering, negative, "comm_size is -1 B; comm_size is a byte count and must be >= 0");
}

TEST(NodeLowering, ContextAndOptionErrors)
{
    EXPECT_THROW(LoweringContext(0), Error);
    LoweringContext context(2);
    try {
        NodeLowering lowering(RankId{2}, {}, context);
        FAIL();
    } catch (const Error& error) {
        EXPECT_STREQ(error.what(), "node lowering: rank 2 is outside the job's 2 ranks");
    }
    try {
        context.addGroup({-1, {}});
        FAIL();
    } catch (const Error& error) {
        EXPECT_NE(std::string(error.what()).find("group ids must be >= 0"), std::string::npos);
    }
    try {
        context.addGroup({3, {0, -2}});
        FAIL();
    } catch (const Error& error) {
        EXPECT_NE(std::string(error.what()).find("rank -2 is not a valid rank number"),
                  std::string::npos);
    }
    EXPECT_EQ(parseExecutionMode("replay"), ExecutionMode::Replay);
    EXPECT_EQ(parseExecutionMode("model"), ExecutionMode::Model);
    EXPECT_FALSE(parseExecutionMode("fast").has_value());
    EXPECT_EQ(parseSchedulingProfile("astra"), SchedulingProfile::Astra);
    EXPECT_FALSE(parseSchedulingProfile("ns3").has_value());
    EXPECT_STREQ(engineName(Engine::Communication), "communication");
}

TEST(NodeLowering, MetadataAndInvalidAreInstant)
{
    LoweringContext context(1);
    NodeLowering lowering(RankId{0}, {}, context);
    EXPECT_EQ(lowering.lower(node(1, NodeType::Metadata)).engine, Engine::Instant);
    EXPECT_EQ(lowering.lower(node(2, NodeType::Invalid)).engine, Engine::Instant);
}

} // namespace
} // namespace etsim::et::test
