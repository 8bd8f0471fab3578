// Operator conventions: etsim attributes, PyTorch schema + input shapes on hand-built nodes
// for every operator and dtype, and on real nodes of the shared PyTorch-derived traces.

#include "et_driver/OperatorInfo.h"

#include "et_driver/TraceCodec.h"
#include "et_driver/TraceReader.h"
#include "kernel/Error.h"
#include "tests/et_driver/TraceTestSupport.h"

#include <gtest/gtest.h>

#include <map>

namespace etsim::et {
namespace {

namespace fs = std::filesystem;
namespace pb = ChakraProtoMsg;

TraceNode pytorchNode(const std::string& schema,
                      const std::string& shapes,
                      const std::string& types,
                      const std::string& values = "",
                      const std::string& outputShapes = "")
{
    TraceNode node;
    node.id = 1;
    node.name = schema.substr(0, schema.find('('));
    node.type = NodeType::Comp;
    pb::AttributeProto attr;
    attr.set_name("op_schema");
    attr.set_string_val(schema);
    TraceCodec::addAttribute(node, attr);
    pb::IOInfo inputs;
    inputs.set_shapes(shapes);
    inputs.set_types(types);
    inputs.set_values(values);
    TraceCodec::setInputs(node, inputs);
    if (!outputShapes.empty()) {
        pb::IOInfo outputs;
        outputs.set_shapes(outputShapes);
        TraceCodec::setOutputs(node, outputs);
    }
    return node;
}

void expectGemm(const OperatorInfo& info, OpKind kind, std::vector<GemmShape> gemms, double flops)
{
    EXPECT_EQ(info.kind, kind) << info.note;
    ASSERT_EQ(info.gemms.size(), gemms.size()) << info.note;
    for (std::size_t i = 0; i < gemms.size(); ++i) {
        EXPECT_EQ(info.gemms[i].m, gemms[i].m) << "gemm " << i;
        EXPECT_EQ(info.gemms[i].n, gemms[i].n) << "gemm " << i;
        EXPECT_EQ(info.gemms[i].k, gemms[i].k) << "gemm " << i;
        EXPECT_EQ(info.gemms[i].batch, gemms[i].batch) << "gemm " << i;
    }
    EXPECT_DOUBLE_EQ(info.flops(), flops);
}

const char* fp32x2 = "['Tensor(float)', 'Tensor(float)']";

TEST(OperatorInfo, NamesAndBytes)
{
    for (auto [kind, name] :
         std::vector<std::pair<OpKind, const char*>>{{OpKind::Gemm, "gemm"},
                                                     {OpKind::Bmm, "bmm"},
                                                     {OpKind::Conv2d, "conv2d"},
                                                     {OpKind::Attention, "attention"},
                                                     {OpKind::Elementwise, "elementwise"},
                                                     {OpKind::Reduce, "reduce"}}) {
        EXPECT_EQ(opKindName(kind), name);
        EXPECT_EQ(opKindFromName(name), std::optional<OpKind>(kind));
    }
    EXPECT_EQ(opKindFromName("matmul"), std::nullopt);
    std::map<std::string, std::pair<DataType, int>> types = {{"fp64", {DataType::Fp64, 8}},
                                                             {"fp32", {DataType::Fp32, 4}},
                                                             {"tf32", {DataType::Tf32, 4}},
                                                             {"bf16", {DataType::Bf16, 2}},
                                                             {"fp16", {DataType::Fp16, 2}},
                                                             {"fp8", {DataType::Fp8, 1}},
                                                             {"int8", {DataType::Int8, 1}}};
    for (const auto& [name, expected] : types) {
        EXPECT_EQ(dataTypeFromName(name), std::optional<DataType>(expected.first));
        EXPECT_EQ(dataTypeName(expected.first), name);
        EXPECT_EQ(bytesPerElement(expected.first), expected.second) << name;
    }
    EXPECT_EQ(bytesPerElement(DataType::Unknown), 0);
    EXPECT_EQ(dataTypeFromPyTorch("Tensor(float)"), DataType::Fp32);
    EXPECT_EQ(dataTypeFromPyTorch("Tensor(double)"), DataType::Fp64);
    EXPECT_EQ(dataTypeFromPyTorch("Tensor(c10::BFloat16)"), DataType::Bf16);
    EXPECT_EQ(dataTypeFromPyTorch("Tensor(c10::Half)"), DataType::Fp16);
    EXPECT_EQ(dataTypeFromPyTorch("Tensor(c10::Float8_e4m3fn)"), DataType::Fp8);
    EXPECT_EQ(dataTypeFromPyTorch("Tensor(signed char)"), DataType::Int8);
    EXPECT_EQ(dataTypeFromPyTorch("GenericList[Tensor(c10::Half)]"), DataType::Fp16);
    EXPECT_EQ(dataTypeFromPyTorch("Tensor(long int)"), DataType::Unknown);
    EXPECT_EQ(dataTypeFromPyTorch("Int"), DataType::Unknown);
}

TEST(OperatorInfo, FromEtsimAttributesForEveryKindAndDtype)
{
    for (const char* dtype : {"fp32", "tf32", "bf16", "fp16", "fp8"}) {
        TraceNode node;
        node.setOpKind("bmm");
        node.setGemmM(128);
        node.setGemmN(256);
        node.setGemmK(64);
        node.setGemmBatch(12);
        node.setDtype(dtype);
        OperatorInfo info = operatorInfo(node);
        EXPECT_EQ(info.source, OperatorInfo::Source::Attributes);
        EXPECT_EQ(dataTypeName(info.dtype), dtype);
        expectGemm(info, OpKind::Bmm, {{128, 256, 64, 12}}, 2.0 * 128 * 256 * 64 * 12);
    }
    TraceNode gemm;
    gemm.setOpKind("gemm");
    gemm.setGemmM(4);
    gemm.setGemmN(5);
    gemm.setGemmK(6);
    expectGemm(operatorInfo(gemm), OpKind::Gemm, {{4, 5, 6, 1}}, 240);
    EXPECT_EQ(operatorInfo(gemm).dtype, DataType::Unknown);

    TraceNode attention;
    attention.setOpKind("attention");
    attention.setGemmM(1024); // query length
    attention.setGemmN(2048); // key length
    attention.setGemmK(64);   // head dim
    attention.setGemmBatch(32);
    expectGemm(operatorInfo(attention),
               OpKind::Attention,
               {{1024, 2048, 64, 32}, {1024, 64, 2048, 32}},
               4.0 * 1024 * 2048 * 64 * 32);

    TraceNode elementwise;
    elementwise.setOpKind("elementwise");
    elementwise.setDtype("fp16");
    OperatorInfo info = operatorInfo(elementwise);
    EXPECT_EQ(info.kind, OpKind::Elementwise);
    EXPECT_TRUE(info.gemms.empty());
    EXPECT_EQ(info.flops(), 0.0);

    TraceNode missing;
    missing.setOpKind("conv2d");
    missing.setGemmM(4);
    info = operatorInfo(missing);
    EXPECT_EQ(info.kind, OpKind::Unknown);
    EXPECT_NE(info.note.find("needs gemm_m, gemm_n, gemm_k > 0"), std::string::npos);

    TraceNode strange;
    strange.setOpKind("fft");
    info = operatorInfo(strange);
    EXPECT_EQ(info.kind, OpKind::Unknown);
    EXPECT_EQ(info.op, "fft");
    EXPECT_NE(info.note.find("op_kind \"fft\" is not one of"), std::string::npos);

    TraceNode nothing;
    nothing.name = "volta_sgemm_128x64_nn";
    info = operatorInfo(nothing);
    EXPECT_EQ(info.kind, OpKind::Unknown);
    EXPECT_EQ(info.source, OperatorInfo::Source::None);
}

TEST(OperatorInfo, ApplyWritesAttributesThatReadBack)
{
    OperatorInfo conv;
    conv.kind = OpKind::Conv2d;
    conv.dtype = DataType::Bf16;
    conv.gemms = {{401408, 64, 147, 1}};
    TraceNode node;
    node.name = "conv";
    applyOperatorInfo(node, conv);
    EXPECT_EQ(node.opKind(), std::optional<std::string_view>("conv2d"));
    EXPECT_EQ(node.dtype(), std::optional<std::string_view>("bf16"));
    EXPECT_EQ(node.gemmK(), std::optional<int64_t>(147));
    EXPECT_EQ(node.numOps(), std::optional<int64_t>(7552892928));
    OperatorInfo back = operatorInfo(node);
    expectGemm(back, OpKind::Conv2d, conv.gemms, conv.flops());
    EXPECT_EQ(back.dtype, DataType::Bf16);

    OperatorInfo attention;
    attention.kind = OpKind::Attention;
    attention.gemms = {{128, 256, 64, 8}, {128, 64, 256, 8}};
    TraceNode a;
    applyOperatorInfo(a, attention);
    expectGemm(operatorInfo(a), OpKind::Attention, attention.gemms, attention.flops());
    EXPECT_FALSE(a.has(Attr::Dtype));

    EXPECT_THROW(applyOperatorInfo(a, OperatorInfo{}), Error);
}

TEST(OperatorInfo, PyTorchMatrixProducts)
{
    expectGemm(operatorInfo(pytorchNode("aten::mm(Tensor self, Tensor mat2) -> Tensor",
                                        "[[32, 1000], [1000, 2048]]",
                                        fp32x2)),
               OpKind::Gemm,
               {{32, 2048, 1000, 1}},
               131072000);
    OperatorInfo addmm = operatorInfo(pytorchNode(
        "aten::addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) "
        "-> Tensor",
        "[[1000], [32, 2048], [2048, 1000], [], []]",
        "['Tensor(c10::Half)', 'Tensor(c10::Half)', 'Tensor(c10::Half)', 'Int', 'Int']"));
    expectGemm(addmm, OpKind::Gemm, {{32, 1000, 2048, 1}}, 2.0 * 32 * 1000 * 2048);
    EXPECT_EQ(addmm.dtype, DataType::Fp16);
    EXPECT_EQ(addmm.op, "aten::addmm");
    expectGemm(operatorInfo(pytorchNode("aten::bmm(Tensor self, Tensor mat2) -> Tensor",
                                        "[[12, 128, 64], [12, 64, 256]]",
                                        "['Tensor(c10::BFloat16)', 'Tensor(c10::BFloat16)']")),
               OpKind::Bmm,
               {{128, 256, 64, 12}},
               2.0 * 128 * 256 * 64 * 12);
    expectGemm(operatorInfo(pytorchNode(
                   "aten::linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor",
                   "[[8, 16, 512], [1024, 512], [1024]]",
                   "['Tensor(float)', 'Tensor(float)', 'Tensor(float)']")),
               OpKind::Gemm,
               {{128, 1024, 512, 1}},
               2.0 * 128 * 1024 * 512);
    // matmul: batched x matrix folds the batch into M; batched x batched broadcasts.
    const char* matmul = "aten::matmul(Tensor self, Tensor other) -> Tensor";
    expectGemm(operatorInfo(pytorchNode(matmul, "[[2048, 1, 768], [768, 50304]]", fp32x2)),
               OpKind::Gemm,
               {{2048, 50304, 768, 1}},
               2.0 * 2048 * 50304 * 768);
    expectGemm(operatorInfo(pytorchNode(matmul, "[[4, 1, 8, 16], [3, 16, 5]]", fp32x2)),
               OpKind::Bmm,
               {{8, 5, 16, 12}},
               2.0 * 8 * 5 * 16 * 12);
    expectGemm(operatorInfo(pytorchNode(matmul, "[[7], [7, 3]]", fp32x2)),
               OpKind::Gemm,
               {{1, 3, 7, 1}},
               42);
    expectGemm(
        operatorInfo(pytorchNode(matmul, "[[7], [7]]", fp32x2)), OpKind::Gemm, {{1, 1, 7, 1}}, 14);
    // Shapes that do not multiply are Unknown, with the reason.
    OperatorInfo bad = operatorInfo(pytorchNode(matmul, "[[4, 5], [6, 7]]", fp32x2));
    EXPECT_EQ(bad.kind, OpKind::Unknown);
    EXPECT_EQ(bad.note, "inner dimensions differ: 5 vs 6");
    bad = operatorInfo(pytorchNode(
        "aten::mm(Tensor self, Tensor mat2) -> Tensor", "[[2, 3, 4], [2, 4, 5]]", fp32x2));
    EXPECT_EQ(bad.kind, OpKind::Unknown);
    EXPECT_EQ(bad.note, "aten::mm: operands of the wrong rank");
    bad = operatorInfo(pytorchNode("aten::mm(Tensor self, Tensor mat2) -> Tensor", "garbage", ""));
    EXPECT_EQ(bad.note, "aten::mm: input shapes missing or not positive");
}

TEST(OperatorInfo, PyTorchConvolutionAsImplicitGemm)
{
    const char* conv2d = "aten::conv2d(Tensor input, Tensor weight, Tensor? bias=None, int[2] "
                         "stride=1, SymInt[2] padding=[0, 0], int[2] dilation=1, int groups=1) -> "
                         "Tensor";
    const char* types = "['Tensor(float)', 'Tensor(float)', 'None', 'GenericList[Int,Int]', "
                        "'GenericList[Int,Int]', 'GenericList[Int,Int]', 'Int']";
    // Output size from stride 2, padding 3 (ResNet stem): 224 -> 112.
    OperatorInfo stem = operatorInfo(
        pytorchNode(conv2d,
                    "[[32, 3, 224, 224], [64, 3, 7, 7], [], [[], []], [[], []], [[], []], []]",
                    types,
                    "[[1, 2, 0, 4816896, 4, 'cuda:0'], [3, 4, 0, 9408, 4, 'cuda:0'], '<None>', "
                    "[2, 2], [3, 3], [1, 1], 1]"));
    expectGemm(stem, OpKind::Conv2d, {{32 * 112 * 112, 64, 147, 1}}, 7552892928.0);
    EXPECT_EQ(stem.dtype, DataType::Fp32);
    // Defaults from the schema (stride 1, padding 0), grouped: K = Cin * kh * kw / groups.
    OperatorInfo grouped = operatorInfo(pytorchNode(
        conv2d, "[[2, 64, 10, 10], [128, 16, 3, 3]]", types, "[[], [], '<None>', 1, 0, 1, 4]"));
    expectGemm(grouped, OpKind::Conv2d, {{2 * 8 * 8, 128, 144, 1}}, 2.0 * 128 * 128 * 144);
    EXPECT_NE(grouped.note.find("4 groups"), std::string::npos);
    // aten::convolution: output shape given, so it is used as is.
    const char* convolution =
        "aten::convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] "
        "padding, SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups) -> "
        "Tensor";
    expectGemm(
        operatorInfo(pytorchNode(convolution,
                                 "[[8, 256, 14, 14], [256, 256, 3, 3]]",
                                 "['Tensor(c10::Half)', 'Tensor(c10::Half)']",
                                 "[[], [], '<None>', [1, 1], [1, 1], [1, 1], False, [0, 0], 1]",
                                 "[[8, 256, 14, 14]]")),
        OpKind::Conv2d,
        {{8 * 14 * 14, 256, 2304, 1}},
        2.0 * 1568 * 256 * 2304);
    OperatorInfo transposed =
        operatorInfo(pytorchNode(convolution,
                                 "[[8, 256, 14, 14], [256, 256, 3, 3]]",
                                 fp32x2,
                                 "[[], [], '<None>', [1, 1], [1, 1], [1, 1], True, [0, 0], 1]"));
    EXPECT_EQ(transposed.kind, OpKind::Unknown);
    EXPECT_NE(transposed.note.find("transposed"), std::string::npos);
    OperatorInfo conv1d = operatorInfo(pytorchNode(conv2d, "[[2, 3, 10], [4, 3, 3]]", fp32x2));
    EXPECT_EQ(conv1d.kind, OpKind::Unknown);
}

TEST(OperatorInfo, PyTorchAttentionIsTwoGemms)
{
    const char* types = "['Tensor(c10::BFloat16)', 'Tensor(c10::BFloat16)', "
                        "'Tensor(c10::BFloat16)']";
    for (const char* schema :
         {"aten::scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? "
          "attn_mask=None, float dropout_p=0., bool is_causal=False, *, float? scale=None) -> "
          "Tensor",
          "aten::_scaled_dot_product_flash_attention(Tensor query, Tensor key, Tensor value, "
          "float dropout_p=0., bool is_causal=False, bool return_debug_mask=False, *, float? "
          "scale=None) -> (Tensor, Tensor, ...)",
          "aten::_scaled_dot_product_efficient_attention(Tensor query, Tensor key, Tensor value, "
          "Tensor? attn_bias, bool compute_log_sumexp, ...) -> (Tensor, Tensor, Tensor, Tensor)"}) {
        OperatorInfo info = operatorInfo(pytorchNode(
            schema, "[[4, 16, 1024, 64], [4, 16, 2048, 64], [4, 16, 2048, 128]]", types));
        expectGemm(info,
                   OpKind::Attention,
                   {{1024, 2048, 64, 64}, {1024, 128, 2048, 64}},
                   2.0 * 64 * 1024 * 2048 * (64 + 128));
        EXPECT_EQ(info.dtype, DataType::Bf16);
    }
    // _flash_attention_forward takes (batch, length, heads, dim).
    expectGemm(operatorInfo(pytorchNode("aten::_flash_attention_forward(Tensor query, Tensor key, "
                                        "Tensor value, ...) -> (Tensor, ...)",
                                        "[[2, 512, 8, 64], [2, 512, 8, 64], [2, 512, 8, 64]]",
                                        types)),
               OpKind::Attention,
               {{512, 512, 64, 16}, {512, 64, 512, 16}},
               4.0 * 16 * 512 * 512 * 64);
    OperatorInfo other =
        operatorInfo(pytorchNode("aten::relu(Tensor self) -> Tensor", "[[4]]", ""));
    EXPECT_EQ(other.kind, OpKind::Unknown);
    EXPECT_EQ(other.note, "operator aten::relu is not modelled; roofline applies");
}

// Reads all nodes of a real trace into a map by id.
TEST(OperatorInfo, RealFeederTraceNodes)
{
    std::optional<fs::path> dir = test::sharedTraces();
    if (!dir)
        GTEST_SKIP() << "shared traces not found: set ETSIM_TRACES to the traces folder";
    std::map<uint64_t, TraceNode> nodes =
        test::nodesById(*dir / "chakra-feeder-test" / "chakra.0.et");
    // aten::mm(0): [32, 1000] x [1000, 2048] (the classifier's weight gradient), fp32.
    OperatorInfo mm = operatorInfo(nodes.at(3215));
    EXPECT_EQ(mm.op, "aten::mm");
    EXPECT_EQ(mm.source, OperatorInfo::Source::PyTorch);
    EXPECT_EQ(mm.dtype, DataType::Fp32);
    expectGemm(mm, OpKind::Gemm, {{32, 2048, 1000, 1}}, 131072000);
    // aten::linear(0): input [32, 2048], weight [1000, 2048].
    expectGemm(operatorInfo(nodes.at(3166)), OpKind::Gemm, {{32, 1000, 2048, 1}}, 131072000);
    // ResNet stem aten::conv2d(0): [32, 3, 224, 224] * [64, 3, 7, 7], stride 2, padding 3.
    expectGemm(operatorInfo(nodes.at(1634)), OpKind::Conv2d, {{401408, 64, 147, 1}}, 7552892928.0);
    // aten::mm(0) of the weight gradient: [1000, 32] x [32, 2048].
    expectGemm(operatorInfo(nodes.at(3220)), OpKind::Gemm, {{1000, 2048, 32, 1}}, 131072000);
    // Count over the whole trace: the 173 aten::conv2d host ops (names conv2d(0)..(4)), and
    // 3 aten::linear + 4 aten::mm.
    std::map<OpKind, int> kinds;
    for (const auto& [id, node] : nodes)
        ++kinds[operatorInfo(node).kind];
    EXPECT_EQ(kinds[OpKind::Conv2d], 173);
    EXPECT_EQ(kinds[OpKind::Gemm], 7);
    EXPECT_EQ(kinds[OpKind::Attention], 0);
}

TEST(OperatorInfo, RealLinkedTraceNodes)
{
    std::optional<fs::path> dir = test::sharedTraces();
    if (!dir)
        GTEST_SKIP() << "shared traces not found: set ETSIM_TRACES to the traces folder";
    std::map<uint64_t, TraceNode> nodes =
        test::nodesById(*dir / "pytorch-linked-1.1.0-r0" / "chakra.0.et.gz");
    // aten::matmul: [2048, 1, 768] x [768, 50304] in bf16 (GPT-2 sized vocabulary projection).
    OperatorInfo matmul = operatorInfo(nodes.at(1585));
    EXPECT_EQ(matmul.op, "aten::matmul");
    EXPECT_EQ(matmul.dtype, DataType::Bf16);
    expectGemm(matmul, OpKind::Gemm, {{2048, 50304, 768, 1}}, 158242701312.0);
    expectGemm(operatorInfo(nodes.at(1588)), OpKind::Gemm, {{2048, 50304, 768, 1}}, 158242701312.0);
}

} // namespace
} // namespace etsim::et
