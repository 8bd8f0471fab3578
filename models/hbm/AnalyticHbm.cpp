#include "models/hbm/AnalyticHbm.h"

#include <algorithm>
#include <cmath>

namespace etsim::hbm {

AnalyticHbm::AnalyticHbm(const HbmConfig& config, StatGroup& stats)
    : readBytesPerPs(config.organisation.devicePeak().bytesPerSecond() *
                     config.analytic.efficiency * 1e-12)
    , writeBytesPerPs(config.organisation.devicePeak().bytesPerSecond() *
                      config.analytic.writeShare() * 1e-12)
    , turnaroundPs(config.analytic.turnaround.ps())
    , latencyPs(config.analytic.latency.ps())
    , transactions(stats.addCounter("transactions", "", "transactions completed"))
    , bytesMoved(stats.addCounter("bytes", "B", "bytes moved"))
    , turnarounds(stats.addCounter(
          "turnarounds", "", "transactions of the other direction than the one before"))
    , latency(stats.addDistribution(
          "latency",
          "ns",
          "transaction latency: arrival to the last data beat",
          {20, 30, 40, 50, 75, 100, 150, 200, 300, 500, 1000, 2000, 5000, 10000, 100000},
          1e-3)) // kept in whole ps, so runs of equal samples add up exactly
{
}

std::uint64_t AnalyticHbm::newTransferPs(std::uint64_t bytes, bool write) const
{
    LastTransfer& last = lastTransfer[write ? 1 : 0];
    const double rate = write ? writeBytesPerPs : readBytesPerPs;
    last.ps = static_cast<std::uint64_t>(std::llround(static_cast<double>(bytes) / rate));
    last.bytes = bytes;
    return last.ps;
}

std::uint64_t AnalyticHbm::complete(std::uint64_t arrivalPs, std::uint64_t bytes, bool write)
{
    if (state.used && state.lastWrite != write)
        ++turnarounds;
    std::uint64_t done = serve(state, arrivalPs, bytes, write);
    record(bytes, done - arrivalPs, 1);
    return done;
}

void AnalyticHbm::leaveAt(const Server& after, std::uint64_t turnaroundCount)
{
    turnarounds += turnaroundCount;
    state = after;
}

void AnalyticHbm::record(std::uint64_t bytes, std::uint64_t latencyPs, std::uint64_t times)
{
    transactions += times;
    bytesMoved += bytes * times;
    latency.sampleQuanta(latencyPs, times);
}

} // namespace etsim::hbm
