// Attention of one layer of one rank, forward and backward, as one fused kernel or as the
// unfused kernels Megatron-LM ran before fused attention existed.
//
// Fused (FlashAttention, Dao et al. 2022; what current training stacks run): the s x s scores
// never leave the chip. Forward reads Q, K and V and writes the output; backward reads Q, K,
// V, the output and its gradient, recomputes the scores and writes the gradients of Q, K and
// V: five products of the forward's size (Dao 2023, FlashAttention-2).
//
// Unfused (Megatron-LM's ParallelAttention of 2021, megatron/model/transformer.py): a batched
// GEMM writes the scores Q K^T to HBM, the fused scale-mask-softmax kernel
// (megatron/model/fused_softmax.py) reads them and writes the probabilities, dropout reads
// those and writes the kept values and a one-byte mask, and a second batched GEMM reads them
// with V. Backward runs the same in reverse, each kernel reading what its forward saved.
// Scores count all s x s positions (the causal half is not left out, as for the GEMMs).
#include "workloads/TransformerRankPlan.h"

namespace etsim::workloads {

using detail::d;

namespace {

// Operations per score: the forward softmax scales, masks, takes the row maximum,
// exponentiates, sums and divides; its backward multiplies the gradient by the
// probabilities, sums the row, subtracts and multiplies again.
constexpr double softmaxOps = 6;
constexpr double softmaxBackwardOps = 4;

} // namespace

uint64_t Transformer::RankPlan::qkvBytes(int64_t tokens) const
{
    return static_cast<uint64_t>(tokens * (int64_t{heads} + 2 * int64_t{kvHeads}) * m.headDim() *
                                 bytes);
}

uint64_t Transformer::RankPlan::kvPartBytes(int64_t tokens) const
{
    return static_cast<uint64_t>(tokens * int64_t{kvHeads} * m.headDim() * bytes);
}

void Transformer::RankPlan::attentionForward(
    const std::string& prefix, uint32_t batch, uint32_t queries, uint32_t context, uint64_t kvBytes)
{
    if (spec.attention == AttentionKernel::Fused)
        fusedAttentionForward(prefix + "attention", batch, queries, context, kvBytes);
    else
        unfusedAttentionForward(prefix, batch, queries, context, kvBytes);
}

void Transformer::RankPlan::attentionBackward(const std::string& prefix, uint32_t batch)
{
    if (spec.attention == AttentionKernel::Fused)
        fusedAttentionBackward(prefix + "attention.bwd", batch);
    else
        unfusedAttentionBackward(prefix, batch);
}

void Transformer::RankPlan::fusedAttentionForward(
    const std::string& name, int64_t sequences, int64_t queries, int64_t keys, uint64_t kvBytes)
{
    int64_t batch = sequences * heads;
    int64_t dh = m.headDim();
    et::OperatorInfo info;
    info.kind = et::OpKind::Attention;
    info.dtype = spec.dtype;
    info.gemms.push_back({queries, keys, dh, batch});
    info.gemms.push_back({queries, dh, keys, batch});
    auto moved =
        static_cast<uint64_t>(batch * (2 * queries * dh + 2 * keys * dh) * bytes) + kvBytes;
    // Q, K, V as the QKV projection wrote them, the KV cache (inference), the output. Dropout,
    // when there is any, happens inside the kernel and moves nothing.
    NodeTensors tensors;
    tensors.inputs = {input(qkvBytes(sequences * queries))};
    if (kvBytes > 0)
        tensors.inputs.push_back(fresh(kvBytes));
    tensors.outputs = {output(static_cast<uint64_t>(batch * queries * dh * bytes))};
    step(out.compute(name, info, moved, deps(), tensors));
}

void Transformer::RankPlan::fusedAttentionBackward(const std::string& name, int64_t sequences)
{
    int64_t s = spec.seqLen;
    int64_t batch = sequences * heads;
    int64_t dh = m.headDim();
    auto outputBytes = static_cast<uint64_t>(batch * s * dh * bytes);
    // Q K^T again, then dP, dV, dQ and dK: written as the recomputed scores and one product
    // four head dims wide, so that num_ops is the five products' sum and the accelerator
    // prices the node as the attention it is (docs/accel.md).
    et::OperatorInfo info;
    info.kind = et::OpKind::Attention;
    info.dtype = spec.dtype;
    info.gemms.push_back({s, s, dh, batch});
    info.gemms.push_back({s, 4 * dh, s, batch});
    // Reads the output's gradient, Q, K and V and the output saved by the forward; writes the
    // gradients of Q, K and V as one tensor, the QKV projection's backward input.
    NodeTensors tensors;
    tensors.inputs = {
        current(d(batch) * s * dh), fresh(qkvBytes(sequences * s)), fresh(outputBytes)};
    tensors.outputs = {output(qkvBytes(sequences * s))};
    uint64_t moved = 0;
    for (const auto* list : {&tensors.inputs, &tensors.outputs})
        for (const TensorUse& tensor : *list)
            moved += tensor.bytes;
    step(out.compute(name, info, moved, deps(), tensors));
}

void Transformer::RankPlan::unfusedAttentionForward(
    const std::string& prefix, int64_t sequences, int64_t queries, int64_t keys, uint64_t kvBytes)
{
    int64_t batch = sequences * heads;
    int64_t dh = m.headDim();
    double scores = d(batch) * queries * keys;
    // Q K^T of the new tokens' Q and K (as the QKV projection wrote them) and the cached keys.
    std::vector<TensorUse> scoreInputs{input(qkvBytes(sequences * queries))};
    if (kvBytes > 0)
        scoreInputs.push_back(fresh(kvBytes / 2));
    matmul(prefix + "attention.scores", {queries, keys, dh, batch}, scoreInputs);
    elementwise(prefix + "attention.softmax", softmaxOps * scores, scores);
    if (dropoutActive())
        dropout(prefix + "attention.dropout", scores);
    // P V with the new tokens' V (written long before, by the QKV projection) and the cache.
    std::vector<TensorUse> valueInputs{current(scores), fresh(kvPartBytes(sequences * queries))};
    if (kvBytes > 0)
        valueInputs.push_back(fresh(kvBytes - kvBytes / 2));
    matmul(prefix + "attention.context", {queries, dh, keys, batch}, valueInputs);
}

void Transformer::RankPlan::unfusedAttentionBackward(const std::string& prefix, int64_t sequences)
{
    int64_t s = spec.seqLen;
    int64_t batch = sequences * heads;
    int64_t dh = m.headDim();
    double scores = d(batch) * s * s;
    auto scoreBytes = static_cast<uint64_t>(scores * bytes);
    TensorUse contextGradient = current(d(batch) * s * dh);
    // dV = P^T dC with the probabilities the forward saved (after dropout), dP = dC V^T.
    matmul(prefix + "attention.bwd.dv", {s, dh, s, batch}, {fresh(scoreBytes), contextGradient});
    matmul(prefix + "attention.bwd.dp",
           {s, s, dh, batch},
           {contextGradient, fresh(kvPartBytes(sequences * s))});
    if (dropoutActive())
        dropoutBackward(prefix + "attention.dropout.bwd", scores);
    elementwiseBackward(
        prefix + "attention.softmax.bwd", softmaxBackwardOps * scores, scores, scores);
    // dQ = dS K and dK = dS^T Q, both reading the scores' gradient.
    TensorUse scoreGradient = activation;
    matmul(prefix + "attention.bwd.dq",
           {s, dh, s, batch},
           {scoreGradient, fresh(kvPartBytes(sequences * s))});
    matmul(prefix + "attention.bwd.dk",
           {s, dh, s, batch},
           {scoreGradient, fresh(static_cast<uint64_t>(batch * s * dh * bytes))});
}

} // namespace etsim::workloads
