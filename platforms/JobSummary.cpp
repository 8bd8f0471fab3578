#include "platforms/JobSummary.h"

#include "kernel/Error.h"

#include <algorithm>
#include <map>

namespace etsim::platform {

namespace {

double scalarAt(const StatGroup& root, const std::string& path)
{
    const Stat* stat = root.findStat(path);
    if (const auto* scalar = dynamic_cast<const Scalar*>(stat))
        return scalar->value();
    if (const auto* counter = dynamic_cast<const Counter*>(stat))
        return static_cast<double>(counter->value());
    return 0.0;
}

} // namespace

void checkTraceRanks(std::size_t traceRanks, const PlatformConfig& platform, const JobSpec& job)
{
    if (traceRanks == platform.ranks)
        return;
    throw Error("rank count mismatch: the trace " + job.trace.string() + " has " +
                std::to_string(traceRanks) + " rank(s) but the platform" +
                (platform.name.empty() ? "" : " \"" + platform.name + "\"") + " has " +
                std::to_string(platform.ranks) +
                (traceRanks == 1
                     ? "; run a one-rank trace as many ranks with --replicate " +
                           std::to_string(platform.ranks)
                     : "; pick a platform with " + std::to_string(traceRanks) + " ranks"));
}

std::vector<CollectiveSummary> summariseCollectives(const std::vector<net::CollectiveRecord>& all)
{
    std::map<std::string, CollectiveSummary> byType;
    for (const net::CollectiveRecord& record : all) {
        CollectiveSummary& summary = byType[toString(record.type)];
        summary.type = toString(record.type);
        ++summary.count;
        summary.bytes += record.bytes;
        summary.timePs += record.endPs - record.startPs;
    }
    std::vector<CollectiveSummary> list;
    for (auto& [type, summary] : byType)
        list.push_back(summary);
    return list;
}

RankResources rankResources(const StatGroup& stats, std::uint32_t rank)
{
    const std::string prefix = "rank" + std::to_string(rank) + ".";
    RankResources resources;
    resources.tensorBusy = scalarAt(stats, prefix + "accelerator.compute.tensor_busy");
    resources.flops = scalarAt(stats, prefix + "accelerator.compute.flops");
    resources.hbmBytes = scalarAt(stats, prefix + "hbm.bytes") +
                         scalarAt(stats, prefix + "hbm.bytes_read") +
                         scalarAt(stats, prefix + "hbm.bytes_written");
    const std::string sram = prefix + "accelerator.sram.";
    OnChipSummary& onChip = resources.onChip;
    onChip.hits = scalarAt(stats, sram + "hits");
    onChip.hitBytes = scalarAt(stats, sram + "hit_bytes");
    onChip.misses = scalarAt(stats, sram + "misses");
    onChip.missBytes = scalarAt(stats, sram + "miss_bytes");
    onChip.evictions = scalarAt(stats, sram + "evictions");
    onChip.writebackBytes = scalarAt(stats, sram + "writeback_bytes");
    onChip.untrackedNodes = scalarAt(stats, sram + "untracked_nodes");
    return resources;
}

void summariseResources(ResourceSummary& resources,
                        const PlatformConfig& platform,
                        std::uint64_t simulatedPs,
                        const std::vector<RankResources>& ranks,
                        const std::vector<LinkUsage>& links,
                        const std::string& linksUnavailable)
{
    // Summed in rank order, so that a partitioned run adds the same numbers in the same order.
    double tensorBusy = 0.0;
    for (const RankResources& rank : ranks) {
        tensorBusy += rank.tensorBusy;
        resources.flops += rank.flops;
        resources.hbmBytes += rank.hbmBytes;
        resources.onChip.add(rank.onChip);
    }
    const double seconds = static_cast<double>(simulatedPs) * 1e-12;
    if (seconds <= 0.0)
        return;
    const double count = platform.ranks;
    const accel::AccelConfig& accelerator = platform.accelerator;
    const double peak = accelerator.tensor.peak.get(accelerator.defaultDataType).flopsPerSecond();
    resources.tensorBusy = tensorBusy / (accelerator.computeUnits * count * seconds);
    resources.flopUtilisation = peak > 0.0 ? resources.flops / (peak * count * seconds) : 0.0;
    const double hbmPeak = platform.hbm.organisation.devicePeak().bytesPerSecond();
    resources.hbmUtilisation =
        hbmPeak > 0.0 ? resources.hbmBytes / (hbmPeak * count * seconds) : 0.0;
    std::vector<LinkSummary> busiest;
    for (const LinkUsage& link : links)
        busiest.push_back({link.name,
                           static_cast<double>(link.busyPs) / static_cast<double>(simulatedPs),
                           link.bytes});
    std::sort(busiest.begin(), busiest.end(), [](const LinkSummary& a, const LinkSummary& b) {
        return a.utilisation > b.utilisation;
    });
    if (busiest.size() > 5)
        busiest.resize(5);
    resources.busiestLinks = std::move(busiest);
    resources.linksUnavailable = linksUnavailable;
}

} // namespace etsim::platform
