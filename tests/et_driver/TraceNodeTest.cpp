#include "et_driver/TraceNode.h"

#include "et_driver/TraceCodec.h"
#include "kernel/Error.h"
#include "tests/et_driver/TraceTestSupport.h"

#include <gtest/gtest.h>

#include <iostream>

namespace etsim::et {
namespace {

namespace pb = ChakraProtoMsg;

TEST(TraceNode, StaysWellBelowAProtobufNode)
{
    // A parsed protobuf Node of a PyTorch trace costs 700-800 B (toolchain notes, 8).
    EXPECT_LE(sizeof(TraceNode), 472U);
    std::cout << "sizeof(TraceNode) = " << sizeof(TraceNode) << " B\n";
}

TEST(TraceNode, AbsentIsNotZero)
{
    TraceNode node;
    EXPECT_FALSE(node.commSize().has_value());
    EXPECT_FALSE(node.isCpuOp().has_value());
    node.setCommSize(0);
    node.setIsCpuOp(false);
    ASSERT_TRUE(node.commSize().has_value());
    EXPECT_EQ(*node.commSize(), 0);
    EXPECT_EQ(node.isCpuOp(), std::optional<bool>(false));
    node.clear(Attr::CommSize);
    EXPECT_FALSE(node.has(Attr::CommSize));
    EXPECT_TRUE(node.has(Attr::IsCpuOp));
}

TEST(TraceNode, SettersWriteCanonicalEncodingsInOrder)
{
    TraceNode node;
    node.id = 5;
    node.name = "allreduce";
    node.type = NodeType::CommColl;
    node.setIsCpuOp(false);
    node.setCommType(CollectiveType::AllGather);
    node.setCommSize(1 << 20);
    node.setTensorSize(4096);
    node.setCommSrc(1);
    node.setPgName("3");
    node.setInvolvedDim({true, false});
    node.setGemmM(64);
    pb::Node message;
    TraceCodec::encode(node, message);
    ASSERT_EQ(message.attr_size(), 8);
    EXPECT_EQ(message.attr(0).name(), "is_cpu_op");
    EXPECT_EQ(message.attr(0).value_case(), pb::AttributeProto::kBoolVal);
    EXPECT_EQ(message.attr(1).name(), "comm_type");
    EXPECT_EQ(message.attr(1).value_case(), pb::AttributeProto::kInt64Val);
    EXPECT_EQ(message.attr(1).int64_val(), 2);
    EXPECT_EQ(message.attr(2).value_case(), pb::AttributeProto::kInt64Val);
    EXPECT_EQ(message.attr(3).name(), "tensor_size");
    EXPECT_EQ(message.attr(3).value_case(), pb::AttributeProto::kUint64Val);
    EXPECT_EQ(message.attr(4).value_case(), pb::AttributeProto::kInt32Val);
    EXPECT_EQ(message.attr(5).string_val(), "3");
    ASSERT_EQ(message.attr(6).bool_list().values_size(), 2);
    EXPECT_FALSE(message.attr(6).bool_list().values(1));
    EXPECT_EQ(message.attr(7).name(), "gemm_m");
}

TEST(TraceNode, AnyIntegerEncodingDecodes)
{
    TraceNode node = test::richNode(100);
    EXPECT_EQ(node.isCpuOp(), std::optional<bool>(false));
    EXPECT_EQ(node.commSize(), std::optional<int64_t>(int64_t{1} << 40));
    EXPECT_EQ(node.commSrc(), std::optional<int32_t>(-3));
    EXPECT_EQ(node.commDst(), std::optional<int32_t>(7));
    EXPECT_EQ(node.commTag(), std::optional<int32_t>(499999999));
    EXPECT_EQ(node.numOps(), std::optional<int64_t>(int64_t{1} << 50));
    EXPECT_EQ(node.tensorSize(), std::optional<uint64_t>(4096));
    EXPECT_EQ(node.commType(), std::optional<int32_t>(7));
    EXPECT_EQ(node.commPriority(), std::optional<int32_t>(1));
    EXPECT_EQ(node.involvedDim(), std::optional<std::vector<bool>>({true, false, true}));
    EXPECT_EQ(node.pgName(), std::optional<std::string_view>("3"));
    EXPECT_EQ(node.opKind(), std::optional<std::string_view>("gemm"));
    EXPECT_EQ(node.gemmM(), std::optional<int64_t>(512));
    EXPECT_EQ(node.gemmN(), std::optional<int64_t>(1024));
    EXPECT_EQ(node.gemmK(), std::optional<int64_t>(2048));
    EXPECT_EQ(node.gemmBatch(), std::optional<int64_t>(8));
    EXPECT_EQ(node.dtype(), std::optional<std::string_view>("bf16"));
}

TEST(TraceNode, UntypedAttributesArePreservedInOrder)
{
    TraceNode node = test::richNode(100);
    std::vector<pb::AttributeProto> others = TraceCodec::otherAttributes(node);
    ASSERT_EQ(others.size(), 22U);
    EXPECT_EQ(node.otherAttributeCount(), 22U);
    EXPECT_EQ(others[0].name(), "rf_id");
    EXPECT_EQ(others[0].int64_val(), -5);
    EXPECT_EQ(others[1].name(), "op_schema");
    EXPECT_EQ(others[2].name(), "d");
    // The second comm_size (a double) cannot be the typed field: kept, typed value unchanged.
    EXPECT_EQ(others[19].name(), "comm_size");
    EXPECT_EQ(others[19].double_val(), 3.0);
    EXPECT_EQ(others[20].doc_string(), "CUDA stream");
    EXPECT_EQ(others[21].value_case(), pb::AttributeProto::VALUE_NOT_SET);
    std::optional<pb::IOInfo> inputs = TraceCodec::inputs(node);
    ASSERT_TRUE(inputs.has_value());
    EXPECT_EQ(inputs->shapes(), "[[[53120]], []]");
    std::optional<pb::IOInfo> outputs = TraceCodec::outputs(node);
    ASSERT_TRUE(outputs.has_value());
    EXPECT_EQ(outputs->values(), "");
    // Both from one parse, the same messages.
    const TraceCodec::Io io = TraceCodec::io(node);
    ASSERT_TRUE(io.inputs.has_value());
    ASSERT_TRUE(io.outputs.has_value());
    EXPECT_EQ(io.inputs->SerializeAsString(), inputs->SerializeAsString());
    EXPECT_EQ(io.outputs->SerializeAsString(), outputs->SerializeAsString());
}

TEST(TraceNode, ANodeWithoutInputsOrOutputsHasNeither)
{
    TraceNode plain;
    plain.id = 4;
    EXPECT_FALSE(TraceCodec::inputs(plain).has_value());
    EXPECT_FALSE(TraceCodec::outputs(plain).has_value());
    const TraceCodec::Io none = TraceCodec::io(plain);
    EXPECT_FALSE(none.inputs.has_value());
    EXPECT_FALSE(none.outputs.has_value());
    // Inputs alone: outputs stay absent (presence matters, spec 2.7).
    pb::IOInfo info;
    info.set_values("[[1, 1, 0, 4, 2, 'cuda:0']]");
    TraceCodec::setInputs(plain, info);
    const TraceCodec::Io one = TraceCodec::io(plain);
    ASSERT_TRUE(one.inputs.has_value());
    EXPECT_EQ(one.inputs->values(), info.values());
    EXPECT_FALSE(one.outputs.has_value());
}

TEST(TraceNode, EncodeReproducesOriginalAttributeOrderAndEncodings)
{
    TraceNode node = test::richNode(100);
    pb::Node message;
    TraceCodec::encode(node, message);
    std::string bytes = message.SerializeAsString();
    pb::Node again;
    ASSERT_TRUE(again.ParseFromString(bytes));
    EXPECT_EQ(again.attr(0).value_case(), pb::AttributeProto::kInt32Val);
    EXPECT_EQ(again.attr(2).value_case(), pb::AttributeProto::kUint64Val);
    TraceNode decoded;
    TraceCodec::decode(again, decoded);
    EXPECT_EQ(decoded, node);
    pb::Node third;
    TraceCodec::encode(decoded, third);
    EXPECT_EQ(third.SerializeAsString(), bytes);
    EXPECT_NE(bytes.find("abc"), std::string::npos) << "unknown field lost";
}

TEST(TraceNode, OutOfRangeValueStaysPreserved)
{
    pb::Node message;
    message.set_id(1);
    auto* attr = message.add_attr();
    attr->set_name("comm_src");
    attr->set_int64_val(int64_t{1} << 40);
    attr = message.add_attr();
    attr->set_name("is_cpu_op");
    attr->set_int32_val(2);
    attr = message.add_attr();
    attr->set_name("tensor_size");
    attr->set_int64_val(-1);
    std::string bytes = message.SerializeAsString();
    TraceNode node;
    TraceCodec::decode(message, node);
    EXPECT_FALSE(node.commSrc().has_value());
    EXPECT_FALSE(node.isCpuOp().has_value());
    EXPECT_FALSE(node.tensorSize().has_value());
    EXPECT_EQ(node.otherAttributeCount(), 3U);
    pb::Node back;
    TraceCodec::encode(node, back);
    EXPECT_EQ(back.SerializeAsString(), bytes);
}

TEST(TraceNode, SetterKeepsEncodingWhileValueFits)
{
    TraceNode node = test::richNode(1);
    node.setCommSrc(5);  // sint32 still fits
    node.setCommDst(-1); // fixed32 cannot hold -1: falls back to int32
    pb::Node message;
    TraceCodec::encode(node, message);
    EXPECT_EQ(message.attr(3).value_case(), pb::AttributeProto::kSint32Val);
    EXPECT_EQ(message.attr(3).sint32_val(), 5);
    EXPECT_EQ(message.attr(4).value_case(), pb::AttributeProto::kInt32Val);
    EXPECT_EQ(message.attr(4).int32_val(), -1);
}

TEST(TraceNode, UnknownNodeTypeKeptAsNumber)
{
    pb::Node message;
    message.set_id(3);
    message.set_type(static_cast<pb::NodeType>(9)); // BATCH_NODE of an unmerged proposal
    TraceNode node;
    TraceCodec::decode(message, node);
    EXPECT_EQ(static_cast<int>(node.type), 9);
    EXPECT_EQ(nodeTypeName(node.type), "NodeType(9)");
    EXPECT_EQ(nodeTypeName(NodeType::CommColl), "COMM_COLL_NODE");
    EXPECT_EQ(collectiveTypeName(7), "REDUCE_SCATTER");
    pb::Node back;
    TraceCodec::encode(node, back);
    EXPECT_EQ(static_cast<int>(back.type()), 9);
}

TEST(TraceNode, InvolvedDimLimit)
{
    TraceNode node;
    node.id = 4;
    try {
        node.setInvolvedDim(std::vector<bool>(33, true));
        FAIL() << "expected an error";
    } catch (const Error& error) {
        EXPECT_STREQ(error.what(), "node 4: involved_dim has 33 entries; at most 32 are supported");
    }
}

TEST(TraceNode, AttrNamesRoundTrip)
{
    for (std::size_t i = 0; i < attrCount; ++i) {
        auto attr = static_cast<Attr>(i);
        EXPECT_EQ(attrFromName(attrName(attr)), attr);
    }
    EXPECT_FALSE(attrFromName("rf_id").has_value());
}

} // namespace
} // namespace etsim::et
