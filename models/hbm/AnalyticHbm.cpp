#include "models/hbm/AnalyticHbm.h"

#include <algorithm>
#include <cmath>

namespace etsim::hbm {

AnalyticHbm::AnalyticHbm(const HbmConfig& config, StatGroup& stats)
    : bytesPerPs(config.organisation.devicePeak().bytesPerSecond() * config.analytic.efficiency *
                 1e-12)
    , latencyPs(config.analytic.latency.ps())
    , transactions(stats.addCounter("transactions", "", "transactions completed"))
    , bytesMoved(stats.addCounter("bytes", "B", "bytes moved"))
    , latency(stats.addDistribution(
          "latency",
          "ns",
          "transaction latency: arrival to the last data beat",
          {20, 30, 40, 50, 75, 100, 150, 200, 300, 500, 1000, 2000, 5000, 10000, 100000}))
{
}

std::uint64_t
AnalyticHbm::serve(std::uint64_t& serverFreePs, std::uint64_t arrivalPs, std::uint64_t bytes) const
{
    std::uint64_t start = std::max(arrivalPs, serverFreePs);
    serverFreePs =
        start + static_cast<std::uint64_t>(std::llround(static_cast<double>(bytes) / bytesPerPs));
    return serverFreePs + latencyPs;
}

std::uint64_t AnalyticHbm::complete(std::uint64_t arrivalPs, std::uint64_t bytes)
{
    std::uint64_t done = serve(freePs, arrivalPs, bytes);
    ++transactions;
    bytesMoved += bytes;
    latency.sample(static_cast<double>(done - arrivalPs) * 1e-3);
    return done;
}

} // namespace etsim::hbm
