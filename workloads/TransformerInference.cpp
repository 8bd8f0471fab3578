// Inference: a prefill step and then one step per decoded token, each micro-batch through the
// pipeline stages, the last stage sending each new token back to the first.
#include "workloads/TransformerRankPlan.h"

#include <algorithm>
#include <cmath>

namespace etsim::workloads {

using detail::d;
using et::CollectiveType;
using et::OpKind;

void Transformer::RankPlan::inference()
{
    uint32_t mbs = job.microBatches();
    uint32_t b = spec.microBatch;
    uint32_t s = spec.seqLen;
    int64_t h = m.hidden;
    int64_t dh = m.headDim();
    // One step: prefill (step 0, s queries per sequence) or one decode token (step > 0).
    for (uint32_t stepIndex = 0; stepIndex <= spec.decodeTokens; ++stepIndex) {
        bool prefill = stepIndex == 0;
        uint32_t queries = prefill ? s : 1;
        uint32_t context = prefill ? s : s + stepIndex;
        int64_t tokens = int64_t{b} * queries;
        int64_t activation = tokens * h * bytes;
        for (uint32_t mb = 0; mb < mbs; ++mb) {
            auto tagBase = static_cast<int32_t>(2 * (int64_t{stepIndex} * mbs + mb));
            std::string tag =
                (prefill ? std::string("prefill") : "decode" + std::to_string(stepIndex)) + ".mb" +
                std::to_string(mb);
            if (first) {
                // From the second step on, the next token comes from the last stage.
                if (!prefill && p.pp > 1)
                    receive(tag + ".recv_token", p.pp - 1, int64_t{b} * 4, tagBase - 2 * mbs + 1);
                elementwise(tag + ".embedding", 0, d(tokens) * h);
            } else {
                receive(tag + ".recv_activation", at.pp - 1, activation, tagBase);
            }
            for (uint32_t layer = 0; layer < layersHere; ++layer) {
                std::string prefix = tag + ".layer" + std::to_string(firstLayer + layer) + ".";
                if (spec.offload == Offload::Weights)
                    memory(prefix + "load_weights", false, layerWeights() * bytes);
                // Decode reads the cached keys and values of every earlier token.
                uint64_t kvBytes =
                    prefill
                        ? 0
                        : static_cast<uint64_t>(2 * int64_t{b} * context * kvHeads * dh * bytes);
                layerForward(prefix, b, queries, context, kvBytes);
            }
            if (last) {
                // Only the last position of each sequence needs logits.
                elementwise(tag + ".final_norm", 5.0 * b * h, d(b) * h);
                gemm(tag + ".lm_head", b, m.vocab / p.tp, h);
                elementwise(tag + ".sample", 5.0 * b * m.vocab / p.tp, d(b) * m.vocab / p.tp);
                if (stepIndex < spec.decodeTokens && p.pp > 1)
                    send(tag + ".send_token", 0, int64_t{b} * 4, tagBase + 1);
            } else {
                send(tag + ".send_activation", at.pp + 1, activation, tagBase);
            }
        }
    }
}

} // namespace etsim::workloads
