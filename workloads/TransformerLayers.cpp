// One Transformer layer of one rank, forward and backward: the norms, the projections around
// attention (TransformerAttention.cpp), the dense MLP, the residual adds and dropout.
#include "workloads/TransformerRankPlan.h"

#include <algorithm>
#include <cmath>

namespace etsim::workloads {

using detail::d;
using et::CollectiveType;
using et::OpKind;

double Transformer::RankPlan::layerWeights() const
{
    double mlp = m.experts == 0
                     ? m.mlpParameters() / p.tp
                     : job.stageExpertParameters(at.pp) / layersHere + d(m.hidden) * m.experts;
    return m.attentionParameters() / p.tp + mlp + 2.0 * m.hidden;
}

void Transformer::RankPlan::tpGather(const std::string& prefix,
                                     const char* block,
                                     const char* suffix,
                                     uint32_t tokens)
{
    // An all-gather's size is what each member contributes (as for ZeRO's gathers).
    if (spec.sequenceParallel)
        collective(prefix + block + "_allgather" + suffix,
                   CollectiveType::AllGather,
                   job.tpAllReduceBytes(tokens) / p.tp,
                   tpGroup);
}

void Transformer::RankPlan::tpCombine(const std::string& prefix,
                                      const char* block,
                                      const char* suffix,
                                      uint32_t tokens)
{
    if (p.tp < 2)
        return;
    if (spec.sequenceParallel)
        collective(prefix + block + "_reducescatter" + suffix,
                   CollectiveType::ReduceScatter,
                   job.tpAllReduceBytes(tokens),
                   tpGroup);
    else
        collective(prefix + block + "_allreduce" + suffix,
                   CollectiveType::AllReduce,
                   job.tpAllReduceBytes(tokens),
                   tpGroup);
}

void Transformer::RankPlan::layerForward(
    const std::string& prefix, uint32_t batch, uint32_t queries, uint32_t context, uint64_t kvBytes)
{
    int64_t tokens = int64_t{batch} * queries;
    int64_t local = streamTokens(tokens);
    int64_t h = m.hidden;
    int64_t dh = m.headDim();
    int64_t qkv = (int64_t{heads} + 2 * int64_t{kvHeads}) * dh;
    auto blockTokens = static_cast<uint32_t>(tokens);
    // The layer's input is the residual stream the attention block branches from.
    TensorUse input = current(d(local) * h);
    elementwise(prefix + "norm1", 5.0 * d(local) * h, d(local) * h);
    tpGather(prefix, "attn", "", blockTokens);
    gemm(prefix + "qkv", tokens, qkv, h);
    attentionForward(prefix, batch, queries, context, kvBytes);
    gemm(prefix + "attn_out", tokens, h, int64_t{heads} * dh);
    tpCombine(prefix, "attn", "", blockTokens);
    residualAdd(prefix + "attn_residual", local, input);
    TensorUse middle = activation;
    elementwise(prefix + "norm2", 5.0 * d(local) * h, d(local) * h);
    tpGather(prefix, "mlp", "", blockTokens);
    mlpForward(prefix, tokens);
    tpCombine(prefix, "mlp", "", blockTokens);
    residualAdd(prefix + "mlp_residual", local, middle);
}

void Transformer::RankPlan::mlpForward(const std::string& prefix, int64_t tokens)
{
    if (m.experts > 0) {
        expertMlpForward(prefix, tokens);
        return;
    }
    int64_t h = m.hidden;
    int64_t f = ffnShard();
    int64_t up = upWidth();
    gemm(prefix + "mlp_up", tokens, up, h);
    // GeLU with its bias (Megatron-LM's fused bias-GeLU), or SwiGLU: the gate times the up
    // projection, so a gated MLP reads 2 f and writes f.
    elementwise(prefix + "activation", 4.0 * d(tokens) * f, d(tokens) * up, d(tokens) * f);
    gemm(prefix + "mlp_down", tokens, h, f);
}

void Transformer::RankPlan::mlpBackward(const std::string& prefix, int64_t tokens)
{
    if (m.experts > 0) {
        expertMlpBackward(prefix, tokens);
        return;
    }
    int64_t h = m.hidden;
    int64_t f = ffnShard();
    int64_t up = upWidth();
    gemmBackward(prefix + "mlp_down", tokens, h, f);
    elementwiseBackward(
        prefix + "activation.bwd", 4.0 * d(tokens) * f, d(tokens) * f, d(tokens) * up);
    gemmBackward(prefix + "mlp_up", tokens, up, h);
}

void Transformer::RankPlan::gemmBackward(const std::string& name,
                                         int64_t rows,
                                         int64_t cols,
                                         int64_t inner)
{
    // Both read the output's gradient dY (rows x cols); the data gradient (rows x inner) goes on
    // to the next kernel, the weight gradient to the optimizer.
    TensorUse outputGradient = current(d(rows) * d(cols));
    matmul(name + ".dgrad",
           {rows, inner, cols},
           {outputGradient, fresh(static_cast<uint64_t>(cols * inner * bytes))});
    TensorUse inputGradient = activation;
    matmul(name + ".wgrad",
           {inner, cols, rows},
           {fresh(static_cast<uint64_t>(inner * rows * bytes)), outputGradient});
    accumulateGradient(name + ".accumulate", d(inner) * d(cols));
    activation = inputGradient;
}

void Transformer::RankPlan::accumulateGradient(const std::string& name, double elements)
{
    if (spec.gradAccumulation != GradAccumulation::Separate)
        return;
    TensorUse kept = activation;
    // The gradient just written is in the trace's element type, the buffer in the gradient
    // element type (main_grad: fp32 with bf16).
    auto buffer = static_cast<uint64_t>(elements * gradBytes);
    NodeTensors tensors;
    tensors.inputs = {current(elements), fresh(buffer)};
    tensors.outputs = {fresh(buffer)};
    vectorKernel(name, elements, tensors);
    activation = kept;
}

void Transformer::RankPlan::layerBackward(const std::string& prefix, uint32_t batch)
{
    int64_t tokens = int64_t{batch} * job.spec.seqLen;
    int64_t h = m.hidden;
    int64_t dh = m.headDim();
    int64_t qkv = (int64_t{heads} + 2 * int64_t{kvHeads}) * dh;
    double stream = d(streamTokens(tokens)) * h;
    auto blockTokens = static_cast<uint32_t>(tokens);
    // The gradient of the layer's output goes through the MLP block and around it. Each
    // collective is the conjugate of its forward one: a gather's backward reduce-scatters.
    TensorUse outputGradient = current(stream);
    if (dropoutActive())
        dropoutBackward(prefix + "mlp_dropout.bwd", stream);
    tpGather(prefix, "mlp", ".bwd", blockTokens);
    mlpBackward(prefix, tokens);
    tpCombine(prefix, "mlp", ".bwd", blockTokens);
    elementwiseBackward(prefix + "norm2.bwd", 8.0 * stream, stream, stream);
    gradientSum(prefix + "mlp_residual.bwd", outputGradient);
    TensorUse middleGradient = activation;
    if (dropoutActive())
        dropoutBackward(prefix + "attn_dropout.bwd", stream);
    tpGather(prefix, "attn", ".bwd", blockTokens);
    gemmBackward(prefix + "attn_out", tokens, h, int64_t{heads} * dh);
    if (spec.recompute == Recompute::Selective) {
        // The attention core's forward again, from the saved Q, K and V, when its backward
        // needs what it did not keep; the output projection kept its own input.
        TensorUse contextGradient = activation;
        attentionForward(prefix + "recompute.", batch, job.spec.seqLen, job.spec.seqLen, 0);
        activation = contextGradient;
    }
    attentionBackward(prefix, batch);
    gemmBackward(prefix + "qkv", tokens, qkv, h);
    tpCombine(prefix, "attn", ".bwd", blockTokens);
    elementwiseBackward(prefix + "norm1.bwd", 8.0 * stream, stream, stream);
    gradientSum(prefix + "attn_residual.bwd", middleGradient);
}

void Transformer::RankPlan::elementwiseBackward(const std::string& name,
                                                double ops,
                                                double elements,
                                                double savedElements)
{
    NodeTensors tensors;
    tensors.inputs = {current(elements), fresh(static_cast<uint64_t>(savedElements * bytes))};
    tensors.outputs = {output(static_cast<uint64_t>(savedElements * bytes))};
    vectorKernel(name, ops, tensors);
}

// Dropout keeps a mask of one byte per element (PyTorch's dropout), which its backward reads.
void Transformer::RankPlan::dropout(const std::string& name, double elements)
{
    // A random draw, a comparison and the 1 / (1 - p) scaling per element.
    NodeTensors tensors;
    tensors.inputs = {current(elements)};
    tensors.outputs = {output(static_cast<uint64_t>(elements * bytes)),
                       fresh(static_cast<uint64_t>(elements))};
    vectorKernel(name, 3.0 * elements, tensors);
}

void Transformer::RankPlan::dropoutBackward(const std::string& name, double elements)
{
    // The mask and the scaling per element.
    NodeTensors tensors;
    tensors.inputs = {current(elements), fresh(static_cast<uint64_t>(elements))};
    tensors.outputs = {output(static_cast<uint64_t>(elements * bytes))};
    vectorKernel(name, 2.0 * elements, tensors);
}

void Transformer::RankPlan::residualAdd(const std::string& name, int64_t tokens, TensorUse stream)
{
    double elements = d(tokens) * m.hidden;
    NodeTensors tensors;
    tensors.inputs = {current(elements), stream};
    tensors.outputs = {output(static_cast<uint64_t>(elements * bytes))};
    // Megatron-LM's bias-dropout-add: the bias, the dropout (draw, compare, scale) and the
    // add in one kernel, which also writes the mask.
    double opsPerElement = 1;
    if (dropoutActive()) {
        tensors.outputs.push_back(fresh(static_cast<uint64_t>(elements)));
        opsPerElement = 5;
    }
    vectorKernel(name, opsPerElement * elements, tensors);
}

void Transformer::RankPlan::gradientSum(const std::string& name, TensorUse skipped)
{
    double elements = d(skipped.bytes) / d(bytes);
    NodeTensors tensors;
    tensors.inputs = {current(elements), skipped};
    tensors.outputs = {output(skipped.bytes)};
    vectorKernel(name, elements, tensors);
}

double Transformer::RankPlan::activationBytes(uint32_t batch) const
{
    double sbh = d(batch) * spec.seqLen * m.hidden;
    if (spec.recompute == Recompute::Full)
        return sbh * bytes;
    // Korthikanti et al. 2022 (section 4, 16-bit activations): s b h (10 + 24 / t + 5 a s /
    // h t) bytes per layer; sequence parallelism shards the 10 too (34 / t), and selective
    // recomputation keeps none of the attention core's 5 a s / h.
    double t = p.tp;
    double replicated = spec.sequenceParallel ? 0.0 : 10.0;
    double sharded = spec.sequenceParallel ? 34.0 : 24.0;
    double attentionCore =
        spec.recompute == Recompute::Selective ? 0.0 : 5.0 * m.heads * spec.seqLen / d(m.hidden);
    return sbh * (replicated + (sharded + attentionCore) / t) * bytes / 2;
}

} // namespace etsim::workloads
