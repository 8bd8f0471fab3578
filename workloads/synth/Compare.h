#pragma once
// How alike two traces (or models) are, for `etsim gen compare` (docs/synth.md): the
// total-variation distance of their node-kind mix, bigram mix and collective mix, and per kind
// and quantity the Kolmogorov-Smirnov and earth mover's distances of the distributions.

#include "workloads/synth/TraceModel.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace etsim::workloads::synth {

struct DistributionDistance {
    /// "comp.gemm", and "num_ops", "tensor_size", "comm_size", "duration_us" or
    /// "dep_distance".
    std::string kind;
    std::string quantity;
    /// Values behind each side.
    uint64_t countA = 0;
    uint64_t countB = 0;
    /// 0..1.
    double ks = 0;
    /// Decades of log10(1 + value).
    double emd = 0;
    /// Mean of each side, in the quantity's unit.
    double meanA = 0;
    double meanB = 0;
};

struct Comparison {
    /// Total-variation distances, 0 (same) .. 1 (disjoint).
    double kindMix = 0;
    double bigramMix = 0;
    double collectiveMix = 0;
    /// Every kind/quantity present on either side, in kind order.
    std::vector<DistributionDistance> distributions;
    double nodesPerRankA = 0;
    double nodesPerRankB = 0;

    /// Largest KS distance over the distributions with at least `minCount` values on both
    /// sides (tiny samples are noisy).
    double worstKs(uint64_t minCount = 20) const;
};

Comparison compareModels(const TraceModel& a, const TraceModel& b);

nlohmann::ordered_json comparisonToJson(const Comparison& comparison);

} // namespace etsim::workloads::synth
