// ZeRO (Rajbhandari et al. 2020) on the data-parallel group: stage 3 gathers each layer's
// weights before use and scatters its gradients; stages 1 and 2 reduce-scatter the gradients
// and all-gather the updated parameters around the optimizer step.
#include "workloads/TransformerRankPlan.h"

#include <algorithm>
#include <cmath>

namespace etsim::workloads {

using detail::d;
using et::CollectiveType;
using et::OpKind;

void Transformer::RankPlan::zeroGatherLayer(const std::string& prefix)
{
    if (spec.zero == 3 && p.dp > 1)
        collective(prefix + "param_allgather",
                   CollectiveType::AllGather,
                   static_cast<int64_t>(layerWeights() * bytes / p.dp),
                   dpGroup);
}

void Transformer::RankPlan::zeroScatterLayerGradients(const std::string& prefix)
{
    if (spec.zero == 3 && p.dp > 1)
        collective(prefix + "grad_reducescatter",
                   CollectiveType::ReduceScatter,
                   static_cast<int64_t>(layerWeights() * gradBytes),
                   dpGroup);
}

void Transformer::RankPlan::optimizer()
{
    double dense = job.stageDenseParameters(at.pp);
    double experts = job.stageExpertParameters(at.pp);
    int64_t denseBytes = job.dpGradientBytes(at.pp);
    int64_t expertBytes = job.expertGradientBytes(at.pp);
    bool sharded = spec.zero >= 1 && p.dp > 1;
    if (p.dp > 1 && spec.zero == 0)
        collective("grad_allreduce", CollectiveType::AllReduce, denseBytes, dpGroup);
    if (p.dp > 1 && (spec.zero == 1 || spec.zero == 2))
        collective("grad_reducescatter", CollectiveType::ReduceScatter, denseBytes, dpGroup);
    uint32_t edp = p.dp / p.ep;
    if (experts > 0 && edp > 1)
        collective("expert_grad_allreduce", CollectiveType::AllReduce, expertBytes, edpGroup);
    double shard = (sharded ? dense / p.dp : dense / spec.optimizerShards) + experts;
    adam("optimizer.adam", shard);
    if (p.dp > 1 && (spec.zero == 1 || spec.zero == 2))
        collective("param_allgather",
                   CollectiveType::AllGather,
                   static_cast<int64_t>(std::llround(dense / p.dp * bytes)),
                   dpGroup);
}

} // namespace etsim::workloads
