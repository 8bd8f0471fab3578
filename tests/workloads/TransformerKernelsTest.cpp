// The kernels of one transformer layer beyond its GEMMs, checked by hand on a small dense
// model: the residual adds and their gradient sums, dropout, the unfused attention kernels
// (scores through HBM) and the fused attention backward. Each layer's node list is compared
// in full, so a kernel that goes missing fails.

#include "et_driver/NodeTensors.h"
#include "tests/workloads/WorkloadTestSupport.h"
#include "workloads/Transformer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace etsim::workloads {
namespace {

using test::find;
using test::generateAll;
using test::MemorySink;
using test::smallDense;
using test::tensorsOf;

// test::smallDense: hidden 256, 4 heads of 64, FFN 1024, 64-token sequences, one rank, bf16.
// Per micro-batch: 64 x 256 = 16,384 stream elements (32,768 B) and 4 x 64 x 64 = 16,384
// scores (32,768 B).
constexpr uint64_t streamBytes = 32768;
constexpr uint64_t scoreBytes = 32768;
constexpr int64_t streamElements = 16384;
constexpr int64_t scores = 16384;
// One product of the forward attention: 2 x 64 x 64 x 64 x 4 heads.
constexpr int64_t attentionProduct = 2097152;

// Names of rank 0's nodes that start with `prefix`, in trace order, without the prefix.
std::vector<std::string> kernels(const MemorySink& sink, const std::string& prefix)
{
    std::vector<std::string> names;
    for (const et::TraceNode& node : sink.ranks.at(0))
        if (node.name.rfind(prefix, 0) == 0)
            names.push_back(node.name.substr(prefix.size()));
    return names;
}

TEST(TransformerKernels, FusedLayerWritesEveryKernel)
{
    MemorySink sink = generateAll(Transformer(smallDense()));
    EXPECT_EQ(kernels(sink, "fwd.mb0.layer0."),
              (std::vector<std::string>{"norm1",
                                        "qkv",
                                        "attention",
                                        "attn_out",
                                        "attn_residual",
                                        "norm2",
                                        "mlp_up",
                                        "activation",
                                        "mlp_down",
                                        "mlp_residual"}));
    EXPECT_EQ(kernels(sink, "bwd.mb0.layer0."),
              (std::vector<std::string>{"mlp_down.dgrad",
                                        "mlp_down.wgrad",
                                        "activation.bwd",
                                        "mlp_up.dgrad",
                                        "mlp_up.wgrad",
                                        "norm2.bwd",
                                        "mlp_residual.bwd",
                                        "attn_out.dgrad",
                                        "attn_out.wgrad",
                                        "attention.bwd",
                                        "qkv.dgrad",
                                        "qkv.wgrad",
                                        "norm1.bwd",
                                        "attn_residual.bwd"}));
}

TEST(TransformerKernels, UnfusedLayerWithDropoutWritesEveryKernel)
{
    TransformerSpec spec = smallDense();
    spec.attention = AttentionKernel::Unfused;
    spec.dropout = 0.1;
    MemorySink sink = generateAll(Transformer(spec));
    EXPECT_EQ(kernels(sink, "fwd.mb0.layer0."),
              (std::vector<std::string>{"norm1",
                                        "qkv",
                                        "attention.scores",
                                        "attention.softmax",
                                        "attention.dropout",
                                        "attention.context",
                                        "attn_out",
                                        "attn_residual",
                                        "norm2",
                                        "mlp_up",
                                        "activation",
                                        "mlp_down",
                                        "mlp_residual"}));
    EXPECT_EQ(kernels(sink, "bwd.mb0.layer0."),
              (std::vector<std::string>{"mlp_dropout.bwd",
                                        "mlp_down.dgrad",
                                        "mlp_down.wgrad",
                                        "activation.bwd",
                                        "mlp_up.dgrad",
                                        "mlp_up.wgrad",
                                        "norm2.bwd",
                                        "mlp_residual.bwd",
                                        "attn_dropout.bwd",
                                        "attn_out.dgrad",
                                        "attn_out.wgrad",
                                        "attention.bwd.dv",
                                        "attention.bwd.dp",
                                        "attention.dropout.bwd",
                                        "attention.softmax.bwd",
                                        "attention.bwd.dq",
                                        "attention.bwd.dk",
                                        "qkv.dgrad",
                                        "qkv.wgrad",
                                        "norm1.bwd",
                                        "attn_residual.bwd"}));
    // Megatron-LM's embedding dropout on the first stage, forward and backward.
    find(sink, 0, "fwd.mb0.embedding_dropout");
    find(sink, 0, "bwd.mb0.embedding_dropout.bwd");
}

TEST(TransformerKernels, ResidualAddsReadTheBlockOutputAndTheStream)
{
    MemorySink sink = generateAll(Transformer(smallDense()));
    const std::string layer = "fwd.mb0.layer0.";
    et::TraceNode add = find(sink, 0, layer + "attn_residual");
    // One add per element; reads two stream tensors, writes one.
    EXPECT_EQ(add.opKind(), "elementwise");
    EXPECT_EQ(add.numOps(), streamElements);
    EXPECT_EQ(add.tensorSize(), 3 * streamBytes);
    NodeTensors tensors = tensorsOf(add);
    ASSERT_EQ(tensors.inputs.size(), 2U);
    EXPECT_EQ(tensors.inputs[0], tensorsOf(find(sink, 0, layer + "attn_out")).outputs[0]);
    // The residual stream is the layer's input, the tensor norm1 read.
    EXPECT_EQ(tensors.inputs[1], tensorsOf(find(sink, 0, layer + "norm1")).inputs[0]);
    // The MLP's add reads the stream the attention's add wrote.
    NodeTensors mlp = tensorsOf(find(sink, 0, layer + "mlp_residual"));
    EXPECT_EQ(mlp.inputs[1], tensors.outputs[0]);
    EXPECT_EQ(mlp.inputs[0], tensorsOf(find(sink, 0, layer + "mlp_down")).outputs[0]);

    // Backward: the norm's input gradient plus the gradient that went around the block.
    const std::string back = "bwd.mb0.layer0.";
    et::TraceNode sum = find(sink, 0, back + "mlp_residual.bwd");
    EXPECT_EQ(sum.numOps(), streamElements);
    EXPECT_EQ(sum.tensorSize(), 3 * streamBytes);
    NodeTensors sumTensors = tensorsOf(sum);
    EXPECT_EQ(sumTensors.inputs[0], tensorsOf(find(sink, 0, back + "norm2.bwd")).outputs[0]);
    EXPECT_EQ(sumTensors.inputs[1], tensorsOf(find(sink, 0, back + "mlp_down.dgrad")).inputs[0]);
}

TEST(TransformerKernels, BackwardElementwiseKernelsReadTheirSavedInput)
{
    MemorySink sink = generateAll(Transformer(smallDense()));
    // Norm backward: the gradient and the saved input in, the input's gradient out.
    et::TraceNode norm = find(sink, 0, "bwd.mb0.layer0.norm1.bwd");
    EXPECT_EQ(norm.numOps(), 8 * streamElements);
    EXPECT_EQ(norm.tensorSize(), 3 * streamBytes);
    EXPECT_EQ(tensorsOf(norm).inputs.size(), 2U);
    // GeLU backward over 64 x 1024 elements (131,072 B each): gradient and saved input.
    et::TraceNode gelu = find(sink, 0, "bwd.mb0.layer0.activation.bwd");
    EXPECT_EQ(gelu.tensorSize(), 3U * 131072);
    // A forward element-wise kernel moves what it reads and what it writes.
    EXPECT_EQ(find(sink, 0, "fwd.mb0.layer0.norm2").tensorSize(), 2 * streamBytes);
}

TEST(TransformerKernels, GatedActivationWritesHalfWhatItReads)
{
    TransformerSpec spec = smallDense();
    spec.model.gatedMlp = true;
    MemorySink sink = generateAll(Transformer(spec));
    // SwiGLU over 64 tokens: reads gate and up (2 x 1024), writes 1024, as mlp_down reads.
    et::TraceNode act = find(sink, 0, "fwd.mb0.layer0.activation");
    EXPECT_EQ(act.tensorSize(), (2U * 64 * 1024 + 64 * 1024) * 2);
    EXPECT_EQ(tensorsOf(act).outputs[0],
              tensorsOf(find(sink, 0, "fwd.mb0.layer0.mlp_down")).inputs[0]);
    // Backward: reads dY (1024) and the saved gate and up (2 x 1024), writes their gradient.
    EXPECT_EQ(find(sink, 0, "bwd.mb0.layer0.activation.bwd").tensorSize(),
              (64U * 1024 + 2 * 2 * 64 * 1024) * 2);
}

TEST(TransformerKernels, UnfusedAttentionForwardByHand)
{
    TransformerSpec spec = smallDense();
    spec.attention = AttentionKernel::Unfused;
    spec.dropout = 0.1;
    MemorySink sink = generateAll(Transformer(spec));
    const std::string layer = "fwd.mb0.layer0.";
    // Q K^T: 4 heads of 64 x 64 x 64; reads Q and K (2 x 4 x 64 x 64), writes the scores.
    et::TraceNode qk = find(sink, 0, layer + "attention.scores");
    EXPECT_EQ(qk.opKind(), "bmm");
    EXPECT_EQ(qk.gemmBatch(), 4);
    EXPECT_EQ(qk.numOps(), attentionProduct);
    EXPECT_EQ(qk.tensorSize(), 2 * 4 * 64 * 64 * 2 + scoreBytes);
    // It reads Q and K as the QKV projection wrote them: 64 x 768 x 2 B.
    NodeTensors qkTensors = tensorsOf(qk);
    EXPECT_EQ(qkTensors.inputs[0], tensorsOf(find(sink, 0, layer + "qkv")).outputs[0]);
    EXPECT_EQ(qkTensors.inputs[0].bytes, 98304U);
    EXPECT_EQ(qkTensors.outputs[0].bytes, scoreBytes);

    // Scale, mask and softmax: 6 operations per score, reads and writes the scores.
    et::TraceNode softmax = find(sink, 0, layer + "attention.softmax");
    EXPECT_EQ(softmax.numOps(), 6 * scores);
    EXPECT_EQ(softmax.tensorSize(), 2 * scoreBytes);
    EXPECT_EQ(tensorsOf(softmax).inputs[0], qkTensors.outputs[0]);

    // Dropout: 3 operations per score; writes the kept values and a one-byte mask.
    et::TraceNode drop = find(sink, 0, layer + "attention.dropout");
    EXPECT_EQ(drop.numOps(), 3 * scores);
    EXPECT_EQ(drop.tensorSize(), 2 * scoreBytes + scores);
    NodeTensors dropTensors = tensorsOf(drop);
    ASSERT_EQ(dropTensors.outputs.size(), 2U);
    EXPECT_EQ(dropTensors.outputs[1].bytes, static_cast<uint64_t>(scores));

    // P V: reads the dropped probabilities and V (4 x 64 x 64), writes the context.
    et::TraceNode pv = find(sink, 0, layer + "attention.context");
    EXPECT_EQ(pv.numOps(), attentionProduct);
    EXPECT_EQ(pv.tensorSize(), scoreBytes + 2 * 4 * 64 * 64 * 2);
    NodeTensors pvTensors = tensorsOf(pv);
    EXPECT_EQ(pvTensors.inputs[0], dropTensors.outputs[0]);
    EXPECT_EQ(pvTensors.inputs[1].bytes, 4U * 64 * 64 * 2);

    // The bias-dropout-add: bias, draw, compare, scale and add per element; writes a mask.
    et::TraceNode add = find(sink, 0, layer + "attn_residual");
    EXPECT_EQ(add.numOps(), 5 * streamElements);
    EXPECT_EQ(add.tensorSize(), 3 * streamBytes + streamElements);

    // The closed form counts the four products of the unfused backward.
    EXPECT_EQ(attentionFlopFactor(spec), 12.0);
}

TEST(TransformerKernels, UnfusedAttentionBackwardByHand)
{
    TransformerSpec spec = smallDense();
    spec.attention = AttentionKernel::Unfused;
    spec.dropout = 0.1;
    MemorySink sink = generateAll(Transformer(spec));
    const std::string layer = "bwd.mb0.layer0.";
    for (const char* product : {"dv", "dp", "dq", "dk"})
        EXPECT_EQ(find(sink, 0, layer + "attention.bwd." + product).numOps(), attentionProduct)
            << product;
    NodeTensors dv = tensorsOf(find(sink, 0, layer + "attention.bwd.dv"));
    NodeTensors dp = tensorsOf(find(sink, 0, layer + "attention.bwd.dp"));
    // dV reads the saved probabilities and the context's gradient, dP the same gradient.
    EXPECT_EQ(dv.inputs[0].bytes, scoreBytes);
    EXPECT_EQ(dv.inputs[1], tensorsOf(find(sink, 0, layer + "attn_out.dgrad")).outputs[0]);
    EXPECT_EQ(dp.inputs[0], dv.inputs[1]);
    EXPECT_EQ(dp.outputs[0].bytes, scoreBytes);

    // Dropout backward: mask and scale per score; reads dP and the mask, writes dP.
    et::TraceNode drop = find(sink, 0, layer + "attention.dropout.bwd");
    EXPECT_EQ(drop.numOps(), 2 * scores);
    EXPECT_EQ(drop.tensorSize(), 2 * scoreBytes + scores);
    EXPECT_EQ(tensorsOf(drop).inputs[0], dp.outputs[0]);

    // Softmax backward: 4 operations per score; reads dP and the saved probabilities.
    et::TraceNode softmax = find(sink, 0, layer + "attention.softmax.bwd");
    EXPECT_EQ(softmax.numOps(), 4 * scores);
    EXPECT_EQ(softmax.tensorSize(), 3 * scoreBytes);
    NodeTensors dScores = tensorsOf(softmax);
    EXPECT_EQ(tensorsOf(find(sink, 0, layer + "attention.bwd.dq")).inputs[0], dScores.outputs[0]);
    EXPECT_EQ(tensorsOf(find(sink, 0, layer + "attention.bwd.dk")).inputs[0], dScores.outputs[0]);

    // The dropout backward of each block reads the gradient and the mask.
    et::TraceNode block = find(sink, 0, layer + "mlp_dropout.bwd");
    EXPECT_EQ(block.numOps(), 2 * streamElements);
    EXPECT_EQ(block.tensorSize(), 2 * streamBytes + streamElements);
}

TEST(TransformerKernels, FusedAttentionBackwardIsOneKernel)
{
    MemorySink sink = generateAll(Transformer(smallDense()));
    et::TraceNode bwd = find(sink, 0, "bwd.mb0.layer0.attention.bwd");
    EXPECT_EQ(bwd.opKind(), "attention");
    EXPECT_EQ(bwd.gemmM(), 64);
    EXPECT_EQ(bwd.gemmN(), 64);
    EXPECT_EQ(bwd.gemmK(), 64);
    EXPECT_EQ(bwd.gemmBatch(), 4);
    // Q K^T recomputed, then dP, dV, dQ, dK: five products of the forward's size.
    EXPECT_EQ(bwd.numOps(), 5 * attentionProduct);
    // Reads dO, Q K V (64 x 768) and O; writes dQ dK dV. No score crosses HBM.
    EXPECT_EQ(bwd.tensorSize(), 2 * streamBytes + 2 * 98304U);
    NodeTensors tensors = tensorsOf(bwd);
    EXPECT_EQ(tensors.outputs[0], tensorsOf(find(sink, 0, "bwd.mb0.layer0.qkv.dgrad")).inputs[0]);
    EXPECT_EQ(attentionFlopFactor(smallDense()), 14.0);
}

TEST(TransformerKernels, GemmBackwardPassesTheDataGradientOn)
{
    MemorySink sink = generateAll(Transformer(smallDense()));
    const std::string layer = "bwd.mb0.layer0.";
    NodeTensors dgrad = tensorsOf(find(sink, 0, layer + "mlp_down.dgrad"));
    NodeTensors wgrad = tensorsOf(find(sink, 0, layer + "mlp_down.wgrad"));
    // Both read dY; the next kernel reads the data gradient, not the weight gradient.
    EXPECT_EQ(wgrad.inputs[1], dgrad.inputs[0]);
    EXPECT_EQ(tensorsOf(find(sink, 0, layer + "activation.bwd")).inputs[0], dgrad.outputs[0]);
}

TEST(TransformerKernels, SeparateGradientAccumulationAfterEachWeightGradient)
{
    TransformerSpec spec = smallDense();
    spec.gradAccumulation = GradAccumulation::Separate;
    MemorySink sink = generateAll(Transformer(spec));
    const std::string layer = "bwd.mb0.layer0.";
    std::vector<std::string> accumulations;
    for (const std::string& name : kernels(sink, layer))
        if (name.find(".accumulate") != std::string::npos)
            accumulations.push_back(name);
    EXPECT_EQ(
        accumulations,
        (std::vector<std::string>{
            "mlp_down.accumulate", "mlp_up.accumulate", "attn_out.accumulate", "qkv.accumulate"}));
    // mlp_down's weight, 1024 x 256: one add per element; reads the bf16 gradient and the
    // fp32 buffer, writes the buffer.
    et::TraceNode add = find(sink, 0, layer + "mlp_down.accumulate");
    EXPECT_EQ(add.numOps(), 262144);
    EXPECT_EQ(add.tensorSize(), 262144U * (2 + 4 + 4));
    NodeTensors tensors = tensorsOf(add);
    EXPECT_EQ(tensors.inputs[0], tensorsOf(find(sink, 0, layer + "mlp_down.wgrad")).outputs[0]);
    // The data gradient still goes on to the activation's backward.
    EXPECT_EQ(tensorsOf(find(sink, 0, layer + "activation.bwd")).inputs[0],
              tensorsOf(find(sink, 0, layer + "mlp_down.dgrad")).outputs[0]);
    // The embedding's gradient (32,000 x 256) and the head's are accumulated too.
    EXPECT_EQ(find(sink, 0, "bwd.mb0.embedding.accumulate").numOps(), 32000 * 256);
    find(sink, 0, "bwd.mb0.lm_head.accumulate");
    // Not written by default.
    MemorySink plain = generateAll(Transformer(smallDense()));
    for (const et::TraceNode& node : plain.ranks.at(0))
        EXPECT_EQ(node.name.find("accumulate"), std::string::npos) << node.name;
}

TEST(TransformerKernels, FusedAttentionReadsTheGroupedQkvProjection)
{
    TransformerSpec spec = smallDense();
    spec.model.kvHeads = 2;
    MemorySink sink = generateAll(Transformer(spec));
    // 64 tokens x (4 + 2 x 2) heads x 64 x 2 B: the QKV projection's output, on chip or not.
    NodeTensors attention = tensorsOf(find(sink, 0, "fwd.mb0.layer0.attention"));
    EXPECT_EQ(attention.inputs[0], tensorsOf(find(sink, 0, "fwd.mb0.layer0.qkv")).outputs[0]);
    EXPECT_EQ(attention.inputs[0].bytes, 65536U);
}

TEST(TransformerKernels, DropoutOnlyInTraining)
{
    TransformerSpec spec = smallDense();
    spec.dropout = 0.1;
    spec.phase = Phase::Inference;
    spec.attention = AttentionKernel::Unfused;
    spec.decodeTokens = 1;
    MemorySink sink = generateAll(Transformer(spec));
    for (const et::TraceNode& node : sink.ranks.at(0))
        EXPECT_EQ(node.name.find("dropout"), std::string::npos) << node.name;
    // Decode reads the cached keys (65 tokens x 4 heads x 64 x 2 B) with Q K^T and the
    // cached values with P V.
    const std::string layer = "decode1.mb0.layer0.";
    NodeTensors qk = tensorsOf(find(sink, 0, layer + "attention.scores"));
    ASSERT_EQ(qk.inputs.size(), 2U);
    EXPECT_EQ(qk.inputs[1].bytes, 65U * 4 * 64 * 2);
    NodeTensors pv = tensorsOf(find(sink, 0, layer + "attention.context"));
    ASSERT_EQ(pv.inputs.size(), 3U);
    EXPECT_EQ(pv.inputs[2].bytes, 65U * 4 * 64 * 2);
}

} // namespace
} // namespace etsim::workloads
