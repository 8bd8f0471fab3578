// Tensor identities from Chakra's inputs/outputs tensor tuples: hand-built nodes in the PyTorch
// converter's rendering, the writer `etsim gen` uses, bad tuples, and real PyTorch nodes.

#include "et_driver/NodeTensors.h"

#include "et_driver/CanonicalTuples.h"
#include "et_driver/TraceCodec.h"
#include "kernel/Error.h"
#include "tests/et_driver/TraceTestSupport.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <random>

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

// What nodeTensors gives for a node, or the error it throws, as text: the fast scan and the
// reference reading through value trees must give the same.
std::string outcome(const std::function<std::optional<NodeTensors>()>& read)
{
    try {
        std::optional<NodeTensors> tensors = read();
        if (!tensors)
            return "none";
        std::string text;
        for (const auto* side : {&tensors->inputs, &tensors->outputs}) {
            text += "|";
            for (const TensorUse& use : *side)
                text += std::to_string(use.id) + ":" + std::to_string(use.bytes) + " ";
        }
        return text;
    } catch (const Error& error) {
        return std::string("error: ") + error.what();
    }
}

void expectSameReading(const TraceNode& node, const std::string& what)
{
    EXPECT_EQ(outcome([&] { return nodeTensors(node); }),
              outcome([&] { return nodeTensorsFromTrees(node); }))
        << what;
}

// Random renderings in the grammar's corners: tuples at every depth, too short and too long,
// quoted and bare texts, escapes, ints beyond int64, negative entries, blanks, trailing commas
// and tuples in parentheses; then byte-level mutations of them.
class LiteralMaker {
public:
    explicit LiteralMaker(unsigned seed) : random(seed) {}

    std::string value(int depth)
    {
        const int choice = pick(depth > 12 ? 6 : 10);
        switch (choice) {
        case 0:
        case 1:
        case 2:
            return tuple();
        case 3:
            return std::to_string(static_cast<int>(pick(2000)) - 10);
        case 4:
            return pickOf({"'cuda:0'",
                           "\"x\"",
                           "'Ten\\sor'",
                           "None",
                           "1.5",
                           "-",
                           "99999999999999999999",
                           "-9223372036854775808",
                           "'Tensor(float)'",
                           "Tensor",
                           "'a\\'b'"});
        case 5:
            return "[]";
        default: {
            std::string out = pick(4) == 0 ? "(" : "[";
            const char close = out == "(" ? ')' : ']';
            const int items = static_cast<int>(pick(5));
            for (int i = 0; i < items; ++i)
                out += (i ? pickOf({", ", ",", " , "}) : "") + value(depth + 1);
            if (items > 0 && pick(6) == 0)
                out += ",";
            return out + close;
        }
        }
    }
    std::string types(int count)
    {
        std::string out = "[";
        for (int i = 0; i < count; ++i)
            out += (i ? ", " : "") + pickOf({"'Tensor(float)'",
                                             "'Int'",
                                             "'GenericList[Tensor]'",
                                             "'Tensor(c10::Half)'",
                                             "[1, 2]",
                                             "7",
                                             "Tensor",
                                             "'Ten\\sor'",
                                             "'Scalar'"});
        return out + "]";
    }
    std::string mutate(std::string text)
    {
        const int edits = 1 + static_cast<int>(pick(3));
        for (int i = 0; i < edits && !text.empty(); ++i) {
            const std::size_t at = pick(static_cast<unsigned>(text.size()));
            const std::string pieces = "[](),' \"\\-0123456789Tensor";
            switch (pick(3)) {
            case 0:
                text.erase(at, 1);
                break;
            case 1:
                text.insert(at, 1, pieces[pick(static_cast<unsigned>(pieces.size()))]);
                break;
            default:
                text[at] = pieces[pick(static_cast<unsigned>(pieces.size()))];
                break;
            }
        }
        return text;
    }
    unsigned pick(unsigned bound)
    {
        return std::uniform_int_distribution<unsigned>(0, bound - 1)(random);
    }

    std::string tupleText() { return tuple(); }

private:
    std::string tuple()
    {
        auto number = [&] {
            switch (pick(60)) {
            case 0:
                return std::string("-3");
            case 1:
                return std::string("4611686018427387904");
            case 2:
                return std::string("0");
            default:
                return std::to_string(pick(100000));
            }
        };
        std::string out = "[";
        const int items = pick(5) == 0 ? 5 + static_cast<int>(pick(3)) : 6;
        for (int i = 0; i < items; ++i) {
            out += i ? ", " : "";
            out += i == 5 ? pickOf({"'cuda:0'", "cpu", "7"}) : number();
        }
        return out + "]";
    }
    std::string pickOf(std::initializer_list<const char*> options)
    {
        return *(options.begin() + pick(static_cast<unsigned>(options.size())));
    }

    std::mt19937 random;
};

TEST(NodeTensors, TheScanReadsAsTheValueTreesDo)
{
    LiteralMaker make(20261204);
    std::size_t withTensors = 0;
    std::size_t errors = 0;
    for (int round = 0; round < 4000; ++round) {
        std::string values = "[";
        const int arguments = static_cast<int>(make.pick(5));
        for (int i = 0; i < arguments; ++i)
            values += (i ? ", " : "") + (make.pick(2) ? make.tupleText() : make.value(1));
        values += "]";
        std::string types = make.pick(4) == 0 ? "" : make.types(static_cast<int>(make.pick(6)));
        if (round % 2 == 1)
            values = make.mutate(values);
        if (round % 3 == 1)
            types = make.mutate(types);
        const TraceNode node = nodeWith(values, types, make.pick(2) ? values : "", types);
        expectSameReading(node, "values " + values + ", types " + types);
        const std::string result = outcome([&] { return nodeTensors(node); });
        withTensors += result != "none" && result.rfind("error", 0) != 0 ? 1 : 0;
        errors += result.rfind("error", 0) == 0 ? 1 : 0;
    }
    // The cases cover both outcomes, not only texts that fail to parse.
    EXPECT_GT(withTensors, 1000U) << errors << " errors";
    EXPECT_GT(errors, 150U) << withTensors << " with tensors";
}

TEST(NodeTensors, DeepTuplesAndManyArgumentsReadAsTheValueTreesDo)
{
    const std::string tuple = "[7, 7, 0, 10, 4, 'cuda:0']";
    for (int depth = 0; depth <= 33; ++depth) {
        const std::string values = "[" + std::string(static_cast<std::size_t>(depth), '[') + tuple +
                                   std::string(static_cast<std::size_t>(depth), ']') + "]";
        expectSameReading(nodeWith(values, ""), "depth " + std::to_string(depth));
    }
    // A tuple nine lists below its argument is read; ten below is not.
    EXPECT_TRUE(
        nodeTensors(nodeWith("[" + std::string(9, '[') + tuple + std::string(9, ']') + "]", "")));
    EXPECT_FALSE(
        nodeTensors(nodeWith("[" + std::string(10, '[') + tuple + std::string(10, ']') + "]", "")));
    // More typed arguments than the scan keeps: the tree reading answers.
    std::string values = "[";
    std::string types = "[";
    for (int i = 0; i < 70; ++i) {
        values +=
            (i ? ", " : "") + std::string("[") + std::to_string(i) + ", 0, 0, 2, 4, 'cuda:0']";
        types += (i ? ", " : "") + std::string(i % 3 == 0 ? "'Int'" : "'Tensor(float)'");
    }
    const TraceNode many = nodeWith(values + "]", types + "]");
    expectSameReading(many, "70 arguments");
    ASSERT_TRUE(nodeTensors(many));
    EXPECT_EQ(nodeTensors(many)->inputs.size(), 46U);
}

TEST(NodeTensors, TheCanonicalRenderingIsReadInOnePass)
{
    const std::string values = "[[1, 1, 0, 4, 2, 'cuda:0'], [2, 2, 0, 0, 2, 'cuda:0'], "
                               "[3, 3, 0, 5, 4, 'cpu'], [-0, 4, 7, 3, 1, '']]";
    std::vector<TensorUse> out;
    ASSERT_TRUE(readCanonicalTuples(
        values, "['Tensor(c10::BFloat16)', 'Tensor(float)', 'int', 'Tensor']", out));
    // Tensor 2 has no bytes; argument 3 is typed as no Tensor.
    EXPECT_EQ(out, (std::vector<TensorUse>{{1, 8}, {0, 3}}));
    out.clear();
    ASSERT_TRUE(readCanonicalTuples(values, "", out)); // untyped: every argument
    EXPECT_EQ(out, (std::vector<TensorUse>{{1, 8}, {3, 20}, {0, 3}}));
    out.clear();
    EXPECT_TRUE(readCanonicalTuples("[]", "[]", out));
    EXPECT_TRUE(out.empty());
    // Everything else is the general scan's: other quotes, blanks, brackets and escapes, long
    // or malformed integers, entries it refuses, text around the list, many types.
    std::string manyTypes = "[";
    for (int i = 0; i < 65; ++i)
        manyTypes += (i ? ", " : "") + std::string("'Tensor'");
    const std::vector<std::pair<std::string, std::string>> others = {
        {"[[1, 1, 0, 4, 2, \"cuda:0\"]]", ""},
        {"[[1,1, 0, 4, 2, 'cuda:0']]", ""},
        {"[[1, 1, 0, 4, 2, 'cuda:0'] ]", ""},
        {"[(1, 1, 0, 4, 2, 'cuda:0')]", ""},
        {"[[1, 1, 0, 4, 2, 'cu\\da']]", ""},
        {"[[1, 1, 0, 4, 2, 'cuda:0'],]", ""},
        {"[[1, 1, 0, 1234567890123456789, 2, 'cuda:0']]", ""},
        {"[[1, 1, 0, 4-, 2, 'cuda:0']]", ""},
        {"[[1, 1, 0, -4, 2, 'cuda:0']]", ""},
        {"[[1, 1, 0, 100000000000000000, 1000, 'cuda:0']]", ""},
        {"[[1, 1, 0, 4, 2, 'cuda:0']] ", ""},
        {"[[1, 1, 0, 4, 2]]", ""},
        {"[[[1, 1, 0, 4, 2, 'cuda:0']]]", ""},
        {"[7]", ""},
        {"[[1, 1, 0, 4, 2, 'cuda:0']]", "['Tensor', 7]"},
        {"[[1, 1, 0, 4, 2, 'cuda:0']]", "['Ten\\sor']"},
        {"[[1, 1, 0, 4, 2, 'cuda:0']]", manyTypes + "]"},
    };
    for (const auto& [text, types] : others) {
        std::vector<TensorUse> none;
        EXPECT_FALSE(readCanonicalTuples(text, types, none)) << text << " / " << types;
    }
}

// Wherever the one-pass reading accepts a random rendering, it finds what the value trees do.
TEST(NodeTensors, TheCanonicalReadingAgreesWithTheValueTrees)
{
    LiteralMaker make(20261206);
    std::size_t accepted = 0;
    for (int round = 0; round < 4000; ++round) {
        std::string values = "[";
        const int arguments = static_cast<int>(make.pick(5));
        for (int i = 0; i < arguments; ++i)
            values += (i ? ", " : "") + (make.pick(4) ? make.tupleText() : make.value(1));
        values += "]";
        std::string types = make.pick(4) == 0 ? "" : make.types(static_cast<int>(make.pick(6)));
        if (round % 5 == 1)
            values = make.mutate(values);
        std::vector<TensorUse> out;
        if (!readCanonicalTuples(values, types, out))
            continue;
        ++accepted;
        const std::optional<NodeTensors> trees = nodeTensorsFromTrees(nodeWith(values, types));
        EXPECT_EQ(out, trees ? trees->inputs : std::vector<TensorUse>{})
            << "values " << values << ", types " << types;
    }
    EXPECT_GT(accepted, 300U);
}

// A node decoded from record bytes as the reader does, so its preserved part holds them as
// they are.
TraceNode decodedFrom(const std::string& record)
{
    pb::Node message;
    EXPECT_TRUE(message.ParseFromString(record));
    TraceNode node;
    TraceCodec::decode(message, record, node);
    return node;
}

// A length-delimited field of `body` (under 128 bytes).
std::string field(int number, const std::string& body)
{
    EXPECT_LT(body.size(), 128U);
    return std::string(1, static_cast<char>(number << 3 | 2)) +
           std::string(1, static_cast<char>(body.size())) + body;
}

TEST(NodeTensors, PreservedBytesTheScanDoesNotTakeAreReadByProtobuf)
{
    pb::IOInfo first;
    first.set_values("[[1, 1, 0, 10, 4, 'cuda:0']]");
    first.set_types("['Tensor(float)']");
    pb::IOInfo second;
    second.set_values("[[2, 2, 0, 20, 4, 'cuda:0']]");
    // inputs twice: protobuf merges the two messages, the later values winning.
    const TraceNode twice =
        decodedFrom(field(8, first.SerializeAsString()) + field(8, second.SerializeAsString()));
    expectSameReading(twice, "inputs twice");
    ASSERT_TRUE(nodeTensors(twice));
    EXPECT_EQ(nodeTensors(twice)->inputs, (std::vector<TensorUse>{{2, 80}}));
    // values twice inside one IOInfo: the later wins.
    const TraceNode values =
        decodedFrom(field(8, first.SerializeAsString() + second.SerializeAsString()));
    expectSameReading(values, "values twice");
    ASSERT_TRUE(nodeTensors(values));
    EXPECT_EQ(nodeTensors(values)->inputs, (std::vector<TensorUse>{{2, 80}}));
    // Outputs without inputs, and an empty IOInfo.
    TraceNode outputsOnly;
    pb::IOInfo out;
    out.set_values("[[4, 4, 0, 1, 2, 'cuda:0']]");
    TraceCodec::setOutputs(outputsOnly, out);
    TraceCodec::setInputs(outputsOnly, pb::IOInfo{});
    expectSameReading(outputsOnly, "outputs only");
    EXPECT_EQ(nodeTensors(outputsOnly)->outputs, (std::vector<TensorUse>{{4, 2}}));
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
