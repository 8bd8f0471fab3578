// Training: each micro-batch forward and backward through this rank's pipeline stage, in the
// 1F1B order (warm-up forwards, alternating forward/backward, cool-down backwards), then the
// optimizer step.
#include "workloads/TransformerRankPlan.h"

#include <algorithm>
#include <cmath>

namespace etsim::workloads {

using detail::d;
using et::CollectiveType;
using et::OpKind;

void Transformer::RankPlan::forward(uint32_t mb)
{
    uint32_t b = spec.microBatch;
    uint32_t s = spec.seqLen;
    int64_t tokens = int64_t{b} * s;
    int64_t h = m.hidden;
    // With sequence parallelism a stage hands on its 1/tp of the tokens.
    int64_t local = streamTokens(tokens);
    int64_t activation = local * h * bytes;
    std::string tag = "fwd.mb" + std::to_string(mb);
    if (first) {
        elementwise(tag + ".embedding", 0, d(tokens) * h);
        if (dropoutActive())
            dropout(tag + ".embedding_dropout", d(local) * h);
    } else {
        receive(tag + ".recv_activation", at.pp - 1, activation, static_cast<int32_t>(2 * mb));
    }
    for (uint32_t layer = 0; layer < layersHere; ++layer) {
        std::string prefix = layerPrefix("fwd", mb, layer);
        zeroGatherLayer(prefix);
        if (spec.offload == Offload::Weights)
            memory(prefix + "load_weights", false, layerWeights() * bytes);
        layerForward(prefix, b, s, s, 0);
        if (spec.offload == Offload::Activations)
            memory(prefix + "store_activations", true, activationBytes(b));
    }
    if (last) {
        elementwise(tag + ".final_norm", 5.0 * d(local) * h, d(local) * h);
        tpGather(tag + ".", "lm_head", "", static_cast<uint32_t>(tokens));
        gemm(tag + ".lm_head", tokens, m.vocab / p.tp, h);
        elementwise(tag + ".loss", 5.0 * d(tokens) * m.vocab / p.tp, d(tokens) * m.vocab / p.tp);
    } else {
        send(tag + ".send_activation", at.pp + 1, activation, static_cast<int32_t>(2 * mb));
    }
}

void Transformer::RankPlan::backward(uint32_t mb)
{
    uint32_t b = spec.microBatch;
    int64_t tokens = int64_t{b} * spec.seqLen;
    int64_t h = m.hidden;
    int64_t local = streamTokens(tokens);
    int64_t activation = local * h * bytes;
    std::string tag = "bwd.mb" + std::to_string(mb);
    if (last) {
        elementwise(tag + ".loss", 3.0 * d(tokens) * m.vocab / p.tp, d(tokens) * m.vocab / p.tp);
        gemmBackward(tag + ".lm_head", tokens, m.vocab / p.tp, h);
        // The gather's conjugate (the head's input gradient without sequence parallelism is
        // one of the vocab-parallel reductions left out).
        if (spec.sequenceParallel)
            tpCombine(tag + ".", "lm_head", ".bwd", static_cast<uint32_t>(tokens));
        elementwiseBackward(tag + ".final_norm", 8.0 * d(local) * h, d(local) * h, d(local) * h);
    } else {
        receive(tag + ".recv_gradient", at.pp + 1, activation, static_cast<int32_t>(2 * mb + 1));
    }
    for (uint32_t l = layersHere; l-- > 0;) {
        std::string prefix = layerPrefix("bwd", mb, l);
        zeroGatherLayer(prefix);
        if (spec.offload == Offload::Weights)
            memory(prefix + "load_weights", false, layerWeights() * bytes);
        if (spec.offload == Offload::Activations)
            memory(prefix + "load_activations", false, activationBytes(b));
        if (spec.recompute == Recompute::Full)
            layerForward(layerPrefix("recompute", mb, l), b, spec.seqLen, spec.seqLen, 0);
        layerBackward(prefix, b);
        zeroScatterLayerGradients(prefix);
    }
    if (first && dropoutActive())
        dropoutBackward(tag + ".embedding_dropout.bwd", d(local) * h);
    if (first) {
        elementwise(tag + ".embedding", d(tokens) * h, d(tokens) * h);
        accumulateGradient(tag + ".embedding.accumulate", d(m.vocab) / p.tp * h);
    } else {
        send(tag + ".send_gradient", at.pp - 1, activation, static_cast<int32_t>(2 * mb + 1));
    }
}

void Transformer::RankPlan::training()
{
    uint32_t mbs = job.microBatches();
    uint32_t warmup = std::min(p.pp - at.pp - 1, mbs);
    for (uint32_t j = 0; j < warmup; ++j)
        forward(j);
    for (uint32_t i = 0; i + warmup < mbs; ++i) {
        forward(warmup + i);
        backward(i);
    }
    for (uint32_t i = mbs - warmup; i < mbs; ++i)
        backward(i);
    optimizer();
}

} // namespace etsim::workloads
