#include "workloads/synth/Distribution.h"

#include <algorithm>
#include <cmath>

namespace etsim::workloads::synth {

namespace {

double toLog(double value)
{
    return std::log1p(std::max(0.0, value));
}

double fromLog(double value)
{
    return std::expm1(value);
}

} // namespace

Quantiles Quantiles::fromSamples(std::vector<double> samples)
{
    Quantiles result;
    if (samples.empty())
        return result;
    std::sort(samples.begin(), samples.end());
    result.n = samples.size();
    result.q.resize(points);
    // Linear interpolation between order statistics (Hyndman-Fan type 7).
    auto at = [&](double u) {
        double position = u * static_cast<double>(samples.size() - 1);
        auto low = static_cast<std::size_t>(std::floor(position));
        std::size_t high = std::min(low + 1, samples.size() - 1);
        double t = position - static_cast<double>(low);
        return samples[low] + t * (samples[high] - samples[low]);
    };
    for (int i = 0; i < points; ++i)
        result.q[i] = at(static_cast<double>(i) / bins);
    // Bin means of the samples, each weighing 1/n (so the sketch keeps the sample mean up to
    // the clamping into the bin's quantile range).
    result.binMeans.assign(bins, 0.0);
    double n = static_cast<double>(samples.size());
    for (std::size_t i = 0; i < samples.size(); ++i) {
        double from = static_cast<double>(i) / n * bins;
        double to = static_cast<double>(i + 1) / n * bins;
        for (auto b = static_cast<int>(from); b < bins && b < to; ++b)
            result.binMeans[b] +=
                samples[i] * (std::min<double>(to, b + 1) - std::max<double>(from, b));
    }
    for (int b = 0; b < bins; ++b)
        result.binMeans[b] = std::clamp(result.binMeans[b], result.q[b], result.q[b + 1]);
    return result;
}

Quantiles Quantiles::fromValues(uint64_t count, std::vector<double> values)
{
    Quantiles result;
    result.n = count;
    result.q = std::move(values);
    return result;
}

double Quantiles::sample(double u) const
{
    if (n == 0)
        return 0.0;
    double position = std::clamp(u, 0.0, 1.0) * (points - 1);
    int low = std::min(static_cast<int>(position), points - 2);
    double t = position - low;
    double lo = q[low];
    double hi = q[low + 1];
    if (binMeans.size() != static_cast<std::size_t>(bins) || hi <= lo)
        return fromLog(toLog(lo) + t * (toLog(hi) - toLog(lo)));
    // The mean of lo + (hi - lo) v^a over v in [0, 1) is lo + (hi - lo) / (a + 1).
    double share = std::clamp((binMeans[low] - lo) / (hi - lo), 1e-4, 1.0 - 1e-4);
    double a = 1.0 / share - 1.0;
    return lo + (hi - lo) * std::pow(t, a);
}

double Quantiles::meanBetween(double from, double to) const
{
    if (n == 0)
        return 0.0;
    from = std::clamp(from, 0.0, 1.0);
    to = std::clamp(to, from, 1.0);
    if (to - from <= 0.0)
        return sample(from);
    bool powerLaw = binMeans.size() == static_cast<std::size_t>(bins);
    double sum = 0.0;
    for (auto b = static_cast<int>(from * bins); b < bins && b < to * bins; ++b) {
        // The stratum's part of bin b, as positions t in [t0, t1] within the bin.
        double t0 = std::max(0.0, from * bins - b);
        double t1 = std::min(1.0, to * bins - b);
        if (t1 <= t0)
            continue;
        double lo = q[b];
        double hi = q[b + 1];
        double part = 0.0;
        if (hi <= lo) {
            part = lo * (t1 - t0);
        } else if (powerLaw) {
            // The integral of lo + (hi - lo) t^a, the shape sample() uses.
            double share = std::clamp((binMeans[b] - lo) / (hi - lo), 1e-4, 1.0 - 1e-4);
            double a = 1.0 / share - 1.0;
            part = lo * (t1 - t0) +
                   (hi - lo) * (std::pow(t1, a + 1.0) - std::pow(t0, a + 1.0)) / (a + 1.0);
        } else {
            // Log interpolation has no simple integral: midpoint rule.
            constexpr int steps = 64;
            double width = (t1 - t0) / steps;
            for (int i = 0; i < steps; ++i)
                part += sample((b + t0 + (i + 0.5) * width) / bins) * width;
        }
        sum += part;
    }
    return sum / ((to - from) * bins);
}

double Quantiles::cdf(double x) const
{
    if (n == 0 || x < q.front())
        return 0.0;
    if (x >= q.back())
        return 1.0;
    // The last bin whose lower end is at or below x (ties: the top of a plateau).
    int low = static_cast<int>(std::upper_bound(q.begin(), q.end(), x) - q.begin()) - 1;
    double a = toLog(q[low]);
    double b = toLog(q[low + 1]);
    double t = b > a ? (toLog(x) - a) / (b - a) : 1.0;
    return (low + t) / (points - 1);
}

double Quantiles::mean() const
{
    if (n == 0)
        return 0.0;
    constexpr int steps = 512;
    double sum = 0.0;
    for (int i = 0; i < steps; ++i)
        sum += sample((i + 0.5) / steps);
    return sum / steps;
}

double ksDistance(const Quantiles& a, const Quantiles& b)
{
    if (a.empty() || b.empty())
        return a.empty() == b.empty() ? 0.0 : 1.0;
    double worst = 0.0;
    for (const Quantiles* side : {&a, &b}) {
        for (double x : side->values()) {
            worst = std::max(worst, std::abs(a.cdf(x) - b.cdf(x)));
            // Just below x as well, where a step of the other CDF may sit.
            double below = std::nextafter(x, -1.0);
            worst = std::max(worst, std::abs(a.cdf(below) - b.cdf(below)));
        }
    }
    return worst;
}

double emdLog10(const Quantiles& a, const Quantiles& b)
{
    if (a.empty() && b.empty())
        return 0.0;
    // In one dimension the earth mover's distance is the area between the inverse CDFs.
    constexpr int steps = 512;
    double sum = 0.0;
    for (int i = 0; i < steps; ++i) {
        double u = (i + 0.5) / steps;
        sum += std::abs(std::log10(1.0 + a.sample(u)) - std::log10(1.0 + b.sample(u)));
    }
    return sum / steps;
}

uint64_t total(const Categorical& counts)
{
    uint64_t sum = 0;
    for (const auto& entry : counts)
        sum += entry.second;
    return sum;
}

std::string pick(const Categorical& counts, double u)
{
    uint64_t all = total(counts);
    if (all == 0)
        return "";
    double target = u * static_cast<double>(all);
    double running = 0.0;
    for (const auto& [name, count] : counts) {
        running += static_cast<double>(count);
        if (target < running)
            return name;
    }
    return counts.rbegin()->first;
}

double tvDistance(const Categorical& a, const Categorical& b)
{
    double totalA = static_cast<double>(total(a));
    double totalB = static_cast<double>(total(b));
    if (totalA == 0 || totalB == 0)
        return totalA == totalB ? 0.0 : 1.0;
    double sum = 0.0;
    for (const auto& [name, count] : a) {
        auto other = b.find(name);
        double pb = other == b.end() ? 0.0 : other->second / totalB;
        sum += std::abs(count / totalA - pb);
    }
    for (const auto& [name, count] : b)
        if (a.find(name) == a.end())
            sum += count / totalB;
    return sum / 2.0;
}

uint64_t Random::next()
{
    uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

} // namespace etsim::workloads::synth
