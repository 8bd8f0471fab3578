#pragma once
// Empirical distributions of the synthetic-trace model (docs/synth.md): a quantile sketch for
// sizes, FLOPs, durations and distances, a categorical count table for names and small
// integers, and the distances `etsim gen compare` reports between two of them.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace etsim::workloads::synth {

/// Non-negative values as the quantiles at 0, 1/32, ..., 1 (32 equal-mass bins), and the mean
/// of each bin. Within a bin, values follow lo + (hi - lo) * v^a with a chosen so the bin keeps
/// its mean: a bin that jumps from 1 MiB to 160 MiB because a few large values sit in it gives
/// mostly large values, as the data did. Without bin means (older models), values are
/// interpolated on a log scale (of 1 + value).
class Quantiles {
public:
    static constexpr int points = 33;
    static constexpr int bins = points - 1;

    /// The sketch of `samples` (taken by value: they are sorted). Empty samples give count 0.
    static Quantiles fromSamples(std::vector<double> samples);
    /// A sketch with the given count and quantiles (checked by the model loader, not here).
    static Quantiles fromValues(uint64_t count, std::vector<double> values);
    /// Adds bin means (`bins` values, bin b within [values[b], values[b + 1]]; not checked).
    void setMeans(std::vector<double> values) { binMeans = std::move(values); }

    uint64_t count() const { return n; }
    bool empty() const { return n == 0; }
    const std::vector<double>& values() const { return q; }
    /// Mean of each bin; empty when the sketch has none.
    const std::vector<double>& means() const { return binMeans; }

    /// The value at probability u in [0, 1) (inverse CDF as above); 0 when empty.
    double sample(double u) const;
    /// Mean of the inverse CDF over probabilities [from, to) (0 <= from < to <= 1): the
    /// expected value of a draw confined to that stratum. Strata that tile [0, 1) keep the
    /// distribution's mean exactly; 0 when empty.
    double meanBetween(double from, double to) const;
    /// Fraction of the distribution at or below x.
    double cdf(double x) const;
    /// Mean of the interpolated distribution.
    double mean() const;

private:
    uint64_t n = 0;
    std::vector<double> q;
    std::vector<double> binMeans;
};

/// Kolmogorov-Smirnov distance: the largest gap between the two CDFs, 0..1. 1 when exactly
/// one of them is empty, 0 when both are.
double ksDistance(const Quantiles& a, const Quantiles& b);
/// Earth mover's distance between the two distributions of log10(1 + value), in decades
/// (0.3 = typical values a factor of two apart). 0 when both are empty.
double emdLog10(const Quantiles& a, const Quantiles& b);

/// Counts per category (a dtype name, a peer offset, a group shape, a node kind).
using Categorical = std::map<std::string, uint64_t>;

uint64_t total(const Categorical& counts);
/// The category at probability u in [0, 1) in key order; "" when empty.
std::string pick(const Categorical& counts, double u);
/// Total-variation distance between the two normalised tables, 0..1.
double tvDistance(const Categorical& a, const Categorical& b);

/// Deterministic pseudo-random numbers (splitmix64): the same stream on every platform and
/// standard library, which std::*_distribution does not promise.
class Random {
public:
    explicit Random(uint64_t seed) : state(seed) {}
    uint64_t next();
    /// Uniform in [0, 1).
    double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

private:
    uint64_t state;
};

} // namespace etsim::workloads::synth
