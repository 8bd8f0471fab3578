// Tensor identities from Chakra's inputs/outputs tensor tuples: hand-built nodes in the PyTorch
// converter's rendering, the writer `etsim gen` uses, bad tuples, and real PyTorch nodes.

#include "et_driver/NodeTensors.h"

#include "et_driver/TraceCodec.h"
#include "kernel/Error.h"
#include "tests/et_driver/TraceTestSupport.h"

#include <gtest/gtest.h>

#include <map>

namespace etsim::et {
namespace {

namespace pb = ChakraProtoMsg;

TraceNode nodeWith(const std::string& inputValues,
                   const std::string& inputTypes,
                   const std::string& outputValues = "",
                   const std::string& outputTypes = "")
{
    TraceNode node;
    node.id = 5;
    node.name = "aten::add";
    node.type = NodeType::Comp;
    pb::IOInfo inputs;
    inputs.set_values(inputValues);
    inputs.set_types(inputTypes);
    TraceCodec::setInputs(node, inputs);
    if (!outputValues.empty()) {
        pb::IOInfo outputs;
        outputs.set_values(outputValues);
        outputs.set_types(outputTypes);
        TraceCodec::setOutputs(node, outputs);
    }
    return node;
}

TEST(NodeTensors, PyTorchTuplesGiveIdAndBytes)
{
    // aten::add(Tensor self, Tensor other, Scalar alpha): two fp32 tensors of 53,120 and 1,024
    // elements and a scalar; the output is a third tensor. Bytes = num_elem · elem_bytes.
    TraceNode node = nodeWith("[[430, 431, 0, 53120, 4, 'cuda:0'], [432, 433, 0, 1024, 4, "
                              "'cuda:0'], 1]",
                              "['Tensor(float)', 'Tensor(float)', 'Int']",
                              "[[434, 435, 0, 53120, 4, 'cuda:0']]",
                              "['Tensor(float)']");
    std::optional<NodeTensors> tensors = nodeTensors(node);
    ASSERT_TRUE(tensors);
    EXPECT_EQ(tensors->inputs, (std::vector<TensorUse>{{430, 212'480}, {432, 4'096}}));
    EXPECT_EQ(tensors->outputs, (std::vector<TensorUse>{{434, 212'480}}));
}

TEST(NodeTensors, ListsOfTensorsAndUntypedArguments)
{
    // A GenericList[Tensor] argument (spec 2.3's example) nests its tuples one level deeper.
    TraceNode listed = nodeWith("[[[430, 431, 0, 53120, 4, 'cuda:0'], [7, 7, 0, 2, 2, 'cuda:0']], "
                                "'<Object>', 0, 0, -1]",
                                "['GenericList[Tensor(float)]', 'Object', 'Int', 'Int', 'Int']");
    std::optional<NodeTensors> tensors = nodeTensors(listed);
    ASSERT_TRUE(tensors);
    EXPECT_EQ(tensors->inputs, (std::vector<TensorUse>{{430, 212'480}, {7, 4}}));
    EXPECT_TRUE(tensors->outputs.empty());
    // An argument typed as no tensor is not read as one, even with the tuple's form.
    EXPECT_FALSE(nodeTensors(nodeWith("[[1, 2, 3, 4, 5, 'x']]", "['GenericList[Int]']")));
    // Without types, the form decides.
    std::optional<NodeTensors> untyped = nodeTensors(nodeWith("[[9, 9, 0, 10, 2, 'cuda:0']]", ""));
    ASSERT_TRUE(untyped);
    EXPECT_EQ(untyped->inputs, (std::vector<TensorUse>{{9, 20}}));
}

TEST(NodeTensors, NoTensorsEmptyTensorsAndTextThatDoesNotParse)
{
    TraceNode bare;
    bare.type = NodeType::Comp;
    EXPECT_FALSE(nodeTensors(bare));
    // A tensor of no elements (a meta tensor) moves nothing and is left out.
    EXPECT_FALSE(nodeTensors(nodeWith("[[3, 3, 0, 0, 4, 'cuda:0']]", "['Tensor(float)']")));
    EXPECT_FALSE(nodeTensors(nodeWith("[[3, 3, 0, 8, 4, 'cuda:0'", "['Tensor(float)']")));
}

TEST(NodeTensors, BadTuplesNameTheNodeAndTheFix)
{
    try {
        nodeTensors(nodeWith("[[3, 3, 0, 4611686018427387904, 8, 'cuda:0']]", "['Tensor(float)']"));
        FAIL() << "no error";
    } catch (const Error& error) {
        const std::string text = error.what();
        EXPECT_NE(text.find("node 5 (\"aten::add\")"), std::string::npos) << text;
        EXPECT_NE(text.find("more than 2^64 bytes; fix num_elem or elem_bytes"), std::string::npos)
            << text;
    }
    EXPECT_THROW(nodeTensors(nodeWith("[[3, 3, 0, -8, 4, 'cuda:0']]", "['Tensor(float)']")), Error);
}

TEST(NodeTensors, WhatGenWritesReadsBack)
{
    TraceNode node;
    node.type = NodeType::Comp;
    setNodeTensors(node, {{1, 4'096}, {2, 8'192}}, {{3, 2'048}}, 2, "Tensor(c10::BFloat16)");
    std::optional<pb::IOInfo> inputs = TraceCodec::inputs(node);
    ASSERT_TRUE(inputs);
    EXPECT_EQ(inputs->values(), "[[1, 1, 0, 2048, 2, 'cuda:0'], [2, 2, 0, 4096, 2, 'cuda:0']]");
    EXPECT_EQ(inputs->shapes(), "[[2048], [4096]]");
    EXPECT_EQ(inputs->types(), "['Tensor(c10::BFloat16)', 'Tensor(c10::BFloat16)']");
    std::optional<NodeTensors> tensors = nodeTensors(node);
    ASSERT_TRUE(tensors);
    EXPECT_EQ(tensors->inputs, (std::vector<TensorUse>{{1, 4'096}, {2, 8'192}}));
    EXPECT_EQ(tensors->outputs, (std::vector<TensorUse>{{3, 2'048}}));
    EXPECT_THROW(setNodeTensors(node, {}, {}, 0, "Tensor(float)"), Error);
}

TEST(NodeTensors, RealPyTorchNodes)
{
    std::optional<std::filesystem::path> dir = test::sharedTraces();
    if (!dir)
        GTEST_SKIP() << "shared traces not found: set ETSIM_TRACES to the traces folder";
    std::map<uint64_t, TraceNode> nodes =
        test::nodesById(*dir / "chakra-feeder-test" / "chakra.0.et");
    // aten::mm(0): [32, 1000] x [1000, 2048] in fp32 (OperatorInfoTest): two input tensors of
    // 128,000 and 8,192,000 B and one output of 262,144 B.
    std::optional<NodeTensors> mm = nodeTensors(nodes.at(3215));
    ASSERT_TRUE(mm);
    ASSERT_EQ(mm->inputs.size(), 2U);
    EXPECT_EQ(mm->inputs[0].bytes, 128'000U);
    EXPECT_EQ(mm->inputs[1].bytes, 8'192'000U);
    ASSERT_EQ(mm->outputs.size(), 1U);
    EXPECT_EQ(mm->outputs[0].bytes, 262'144U);
    // Most compute nodes of the trace name their tensors.
    std::size_t named = 0;
    std::size_t compute = 0;
    for (const auto& [id, node] : nodes) {
        if (node.type != NodeType::Comp)
            continue;
        ++compute;
        named += nodeTensors(node) ? 1 : 0;
    }
    EXPECT_GT(named, compute / 2) << named << " of " << compute;
}

} // namespace
} // namespace etsim::et
