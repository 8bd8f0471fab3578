// One Transformer layer of one rank, forward and backward: attention and the dense MLP.
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

void Transformer::RankPlan::tpAllReduce(const std::string& name, uint32_t tokens)
{
    if (p.tp > 1)
        collective(name, CollectiveType::AllReduce, job.tpAllReduceBytes(tokens), tpGroup);
}

void Transformer::RankPlan::layerForward(
    const std::string& prefix, uint32_t batch, uint32_t queries, uint32_t context, uint64_t kvBytes)
{
    int64_t tokens = int64_t{batch} * queries;
    int64_t h = m.hidden;
    int64_t dh = m.headDim();
    int64_t qkv = (int64_t{heads} + 2 * int64_t{kvHeads}) * dh;
    elementwise(prefix + "norm1", 5.0 * d(tokens) * h, d(tokens) * h);
    gemm(prefix + "qkv", tokens, qkv, h);
    attention(prefix + "attention", queries, context, int64_t{batch} * heads, kvBytes);
    gemm(prefix + "attn_out", tokens, h, int64_t{heads} * dh);
    tpAllReduce(prefix + "attn_allreduce", static_cast<uint32_t>(tokens));
    elementwise(prefix + "norm2", 5.0 * d(tokens) * h, d(tokens) * h);
    mlpForward(prefix, tokens);
    tpAllReduce(prefix + "mlp_allreduce", static_cast<uint32_t>(tokens));
}

void Transformer::RankPlan::mlpForward(const std::string& prefix, int64_t tokens)
{
    if (m.experts > 0) {
        expertMlpForward(prefix, tokens);
        return;
    }
    int64_t h = m.hidden;
    int64_t f = m.ffn / p.tp;
    int64_t up = (m.gatedMlp ? 2 : 1) * f;
    gemm(prefix + "mlp_up", tokens, up, h);
    elementwise(prefix + "activation", 4.0 * d(tokens) * f, d(tokens) * up);
    gemm(prefix + "mlp_down", tokens, h, f);
}

void Transformer::RankPlan::gemmBackward(const std::string& name,
                                         int64_t rows,
                                         int64_t cols,
                                         int64_t inner)
{
    gemm(name + ".dgrad", rows, inner, cols);
    gemm(name + ".wgrad", inner, cols, rows);
}

void Transformer::RankPlan::layerBackward(const std::string& prefix, uint32_t batch)
{
    int64_t s = job.spec.seqLen;
    int64_t tokens = int64_t{batch} * s;
    int64_t h = m.hidden;
    int64_t dh = m.headDim();
    int64_t f = m.ffn / p.tp;
    int64_t up = (m.gatedMlp ? 2 : 1) * f;
    int64_t qkv = (int64_t{heads} + 2 * int64_t{kvHeads}) * dh;
    if (m.experts == 0) {
        gemmBackward(prefix + "mlp_down", tokens, h, f);
        elementwise(prefix + "activation.bwd", 4.0 * d(tokens) * f, d(tokens) * up);
        gemmBackward(prefix + "mlp_up", tokens, up, h);
    } else {
        expertMlpBackward(prefix, tokens);
    }
    tpAllReduce(prefix + "mlp_allreduce.bwd", static_cast<uint32_t>(tokens));
    elementwise(prefix + "norm2.bwd", 8.0 * d(tokens) * h, d(tokens) * h);
    gemmBackward(prefix + "attn_out", tokens, h, int64_t{heads} * dh);
    // Attention backward: four batched products (dP, dV, dQ, dK), each as large as one of
    // the two forward ones.
    int64_t b = int64_t{batch} * heads;
    gemm(prefix + "attention.bwd.dp", s, s, dh, b);
    gemm(prefix + "attention.bwd.dv", s, dh, s, b);
    gemm(prefix + "attention.bwd.dq", s, dh, s, b);
    gemm(prefix + "attention.bwd.dk", s, dh, s, b);
    gemmBackward(prefix + "qkv", tokens, qkv, h);
    tpAllReduce(prefix + "attn_allreduce.bwd", static_cast<uint32_t>(tokens));
    elementwise(prefix + "norm1.bwd", 8.0 * d(tokens) * h, d(tokens) * h);
}

double Transformer::RankPlan::activationBytes(uint32_t batch) const
{
    double sbh = d(batch) * spec.seqLen * m.hidden;
    if (spec.recompute == Recompute::Full)
        return sbh * bytes;
    double t = p.tp;
    return sbh * (10 + 24 / t + 5.0 * m.heads * spec.seqLen / (d(m.hidden) * t)) * bytes / 2;
}

} // namespace etsim::workloads
