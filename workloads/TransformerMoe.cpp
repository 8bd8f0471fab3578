// The expert (MoE) MLP of one layer: a router, an all-to-all dispatch of each token to its
// top-k experts over the expert-parallel group, the experts' GEMMs, and the all-to-all back.
#include "workloads/TransformerRankPlan.h"

#include <algorithm>
#include <cmath>

namespace etsim::workloads {

using detail::d;
using et::CollectiveType;
using et::OpKind;

void Transformer::RankPlan::expertMlpForward(const std::string& prefix, int64_t tokens)
{
    int64_t h = m.hidden;
    int64_t f = ffnShard();
    int64_t up = upWidth();
    int64_t routed = tokens * m.topK;
    gemm(prefix + "router", tokens, m.experts, h);
    allToAll(prefix + "dispatch", routed);
    gemm(prefix + "expert_up", routed, up, h);
    elementwise(prefix + "expert_activation", 4.0 * d(routed) * f, d(routed) * up, d(routed) * f);
    gemm(prefix + "expert_down", routed, h, f);
    allToAll(prefix + "combine", routed);
}

void Transformer::RankPlan::expertMlpBackward(const std::string& prefix, int64_t tokens)
{
    int64_t h = m.hidden;
    int64_t f = ffnShard();
    int64_t up = upWidth();
    int64_t routed = tokens * m.topK;
    allToAll(prefix + "combine.bwd", routed);
    gemmBackward(prefix + "expert_down", routed, h, f);
    elementwiseBackward(
        prefix + "expert_activation.bwd", 4.0 * d(routed) * f, d(routed) * f, d(routed) * up);
    gemmBackward(prefix + "expert_up", routed, up, h);
    allToAll(prefix + "dispatch.bwd", routed);
    gemmBackward(prefix + "router", tokens, m.experts, h);
}

void Transformer::RankPlan::allToAll(const std::string& name, int64_t routed)
{
    if (p.ep > 1)
        collective(name, CollectiveType::AllToAll, routed * m.hidden * bytes, epGroup);
}

} // namespace etsim::workloads
