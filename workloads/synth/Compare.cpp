#include "workloads/synth/Compare.h"

#include <algorithm>
#include <set>
#include <sstream>

namespace etsim::workloads::synth {

namespace {

// Joint counts of (previous kind, kind) pairs from the order-2 contexts; empty for order 1.
Categorical bigrams(const TraceModel& model)
{
    Categorical pairs;
    for (const auto& [context, next] : model.ngrams) {
        if (context.empty() || context.find(' ') != std::string::npos)
            continue;
        for (const auto& [kind, count] : next)
            pairs[context + " " + kind] += count;
    }
    return pairs;
}

DistributionDistance distance(const std::string& kind,
                              const std::string& quantity,
                              const Quantiles& a,
                              const Quantiles& b)
{
    DistributionDistance d;
    d.kind = kind;
    d.quantity = quantity;
    d.countA = a.count();
    d.countB = b.count();
    d.ks = ksDistance(a, b);
    d.emd = emdLog10(a, b);
    d.meanA = a.mean();
    d.meanB = b.mean();
    return d;
}

} // namespace

double Comparison::worstKs(uint64_t minCount) const
{
    double worst = 0;
    for (const DistributionDistance& d : distributions)
        if (d.countA >= minCount && d.countB >= minCount)
            worst = std::max(worst, d.ks);
    return worst;
}

Comparison compareModels(const TraceModel& a, const TraceModel& b)
{
    Comparison result;
    result.kindMix = tvDistance(a.kindMix(), b.kindMix());
    result.bigramMix = tvDistance(bigrams(a), bigrams(b));
    result.collectiveMix = tvDistance(a.collectiveMix(), b.collectiveMix());
    result.nodesPerRankA = a.nodesPerRank();
    result.nodesPerRankB = b.nodesPerRank();
    std::set<std::string> kinds;
    for (const auto& entry : a.kinds)
        kinds.insert(entry.first);
    for (const auto& entry : b.kinds)
        kinds.insert(entry.first);
    const KindStats none;
    for (const std::string& kind : kinds) {
        auto inA = a.kinds.find(kind);
        auto inB = b.kinds.find(kind);
        const KindStats& sa = inA == a.kinds.end() ? none : inA->second;
        const KindStats& sb = inB == b.kinds.end() ? none : inB->second;
        for (std::size_t q = 0; q < quantityCount; ++q)
            if (!sa.quantities[q].empty() || !sb.quantities[q].empty())
                result.distributions.push_back(distance(kind,
                                                        quantityName(static_cast<Quantity>(q)),
                                                        sa.quantities[q],
                                                        sb.quantities[q]));
        if (!sa.depDistance.empty() || !sb.depDistance.empty())
            result.distributions.push_back(
                distance(kind, "dep_distance", sa.depDistance, sb.depDistance));
    }
    return result;
}

nlohmann::ordered_json comparisonToJson(const Comparison& comparison)
{
    nlohmann::ordered_json out;
    out["kind_mix_tv"] = comparison.kindMix;
    out["bigram_mix_tv"] = comparison.bigramMix;
    out["collective_mix_tv"] = comparison.collectiveMix;
    out["nodes_per_rank"] = {comparison.nodesPerRankA, comparison.nodesPerRankB};
    out["distributions"] = nlohmann::ordered_json::array();
    for (const DistributionDistance& d : comparison.distributions)
        out["distributions"].push_back({{"kind", d.kind},
                                        {"quantity", d.quantity},
                                        {"count", {d.countA, d.countB}},
                                        {"mean", {d.meanA, d.meanB}},
                                        {"ks", d.ks},
                                        {"emd_log10", d.emd}});
    return out;
}

} // namespace etsim::workloads::synth
