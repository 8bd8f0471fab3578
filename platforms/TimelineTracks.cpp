#include "platforms/TimelineTracks.h"

#include "kernel/Error.h"
#include "kernel/Timeline.h"
#include "platforms/Platform.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <string>

namespace etsim::platform {

namespace {

// Process id of node n of ranks: after the ranks and the fabric.
std::uint32_t nodeProcess(const PlatformConfig& platform, std::uint32_t node)
{
    return platform.ranks + 1 + node;
}

// Engine classes of the utilisation counters, in the order of their series.
constexpr std::size_t utilisationClasses = 3;
constexpr const char* utilisationSeries[utilisationClasses] = {
    "compute", "memory", "communication"};

std::optional<std::size_t> utilisationClass(et::Engine engine)
{
    switch (engine) {
    case et::Engine::Compute:
    case et::Engine::Host:
        return 0;
    case et::Engine::Memory:
        return 1;
    case et::Engine::Communication:
        return 2;
    case et::Engine::Instant:
        break;
    }
    return std::nullopt;
}

using UtilisationSamples = std::vector<std::array<double, utilisationClasses>>;

// Adds `weight` x the fraction of each sample during which a node of each class was in flight
// (overlapping nodes of one class count once).
void addUtilisation(const std::vector<NodeInterval>& intervals,
                    std::uint64_t startPs,
                    std::uint64_t samplePs,
                    double weight,
                    UtilisationSamples& into)
{
    const std::uint64_t endPs = startPs + samplePs * into.size();
    std::array<std::vector<std::pair<std::uint64_t, std::uint64_t>>, utilisationClasses> spans;
    for (const NodeInterval& interval : intervals) {
        const std::optional<std::size_t> kind = utilisationClass(interval.engine);
        const std::uint64_t from = std::max(interval.startPs, startPs);
        const std::uint64_t to = std::min(interval.endPs, endPs);
        if (kind && from < to)
            spans[*kind].emplace_back(from, to);
    }
    for (std::size_t kind = 0; kind < utilisationClasses; ++kind) {
        std::vector<std::pair<std::uint64_t, std::uint64_t>>& list = spans[kind];
        std::sort(list.begin(), list.end());
        std::uint64_t covered = startPs; // everything before this is counted
        for (const auto& [from, to] : list) {
            for (std::uint64_t t = std::max(from, covered); t < to;) {
                const std::uint64_t sample = (t - startPs) / samplePs;
                const std::uint64_t next = std::min(to, startPs + (sample + 1) * samplePs);
                into[sample][kind] +=
                    weight * static_cast<double>(next - t) / static_cast<double>(samplePs);
                t = next;
            }
            covered = std::max(covered, to);
        }
    }
}

// One counter per sample whose value (to 0.1 %) differs from the one before; a counter
// holds its value until the next sample, so the track is exact to that resolution.
void writeUtilisation(Timeline& timeline,
                      std::uint32_t processId,
                      std::uint64_t startPs,
                      std::uint64_t samplePs,
                      const UtilisationSamples& samples)
{
    std::array<double, utilisationClasses> last{-1.0, -1.0, -1.0};
    auto emit = [&](std::uint64_t timePs, const std::array<double, utilisationClasses>& value) {
        if (value == last)
            return;
        timeline.counter(processId,
                         "utilisation",
                         timePs,
                         {{utilisationSeries[0], value[0]},
                          {utilisationSeries[1], value[1]},
                          {utilisationSeries[2], value[2]}});
        last = value;
    };
    for (std::size_t i = 0; i < samples.size(); ++i) {
        std::array<double, utilisationClasses> rounded{};
        for (std::size_t kind = 0; kind < utilisationClasses; ++kind)
            rounded[kind] = std::round(std::min(samples[i][kind], 1.0) * 1000.0) / 1000.0;
        emit(startPs + samplePs * i, rounded);
    }
    emit(startPs + samplePs * samples.size(), {});
}

} // namespace

std::uint32_t timelineFabricProcess(const PlatformConfig& platform)
{
    return platform.ranks;
}

std::vector<bool> drawnRanks(const PlatformConfig& platform, const TimelineSpec& spec)
{
    std::vector<bool> drawn(platform.ranks, !spec.ranks.has_value());
    if (spec.ranks)
        for (std::uint32_t rank : *spec.ranks) {
            if (rank >= platform.ranks)
                throw Error("timeline rank " + std::to_string(rank) + ": the platform" +
                            (platform.name.empty() ? "" : " \"" + platform.name + "\"") +
                            " has ranks 0 to " + std::to_string(platform.ranks - 1));
            drawn[rank] = true;
        }
    return drawn;
}

bool drawsEveryRank(const std::vector<bool>& drawn)
{
    return std::find(drawn.begin(), drawn.end(), false) == drawn.end();
}

void drawRecords(Platform& built,
                 Timeline& timeline,
                 const std::vector<bool>& drawn,
                 const std::vector<bool>& local)
{
    std::vector<bool> draws(drawn.size());
    for (std::uint32_t rank = 0; rank < drawn.size(); ++rank) {
        draws[rank] = drawn[rank] && local[rank];
        if (draws[rank])
            timeline.processName(rank, "rank " + std::to_string(rank), rank);
    }
    built.onRecord([&timeline, draws = std::move(draws)](const et::NodeRecord& record) {
        const std::uint32_t rank = toUnderlying(record.rank);
        if (!draws[rank] || record.finishPs <= record.issuePs)
            return;
        timeline.complete(rank,
                          static_cast<std::uint32_t>(record.engine),
                          record.name(),
                          et::engineName(record.engine),
                          record.issuePs,
                          record.finishPs - record.issuePs,
                          {{"bytes", record.bytes}});
    });
}

void writeUtilisationTracks(Timeline& timeline,
                            const PlatformConfig& platform,
                            const TimelineSpec& spec,
                            const std::vector<bool>& drawn,
                            const std::vector<bool>& local,
                            const std::vector<std::vector<NodeInterval>>& intervals,
                            std::uint64_t simulatedPs)
{
    const std::uint64_t startPs = spec.startPs;
    const std::uint64_t endPs = std::min(spec.endPs, simulatedPs);
    if (endPs <= startPs)
        return;
    std::uint64_t samplePs = spec.samplePs;
    if (samplePs == 0) {
        // Whole nanoseconds keep the sample times short in the file.
        const std::uint64_t even =
            (endPs - startPs + defaultTimelineSamples - 1) / defaultTimelineSamples;
        samplePs = std::max<std::uint64_t>(1000, (even + 999) / 1000 * 1000);
    }
    samplePs = std::max(samplePs, (endPs - startPs + maxTimelineSamples - 1) / maxTimelineSamples);
    const auto samples = static_cast<std::size_t>((endPs - startPs + samplePs - 1) / samplePs);
    for (std::uint32_t rank = 0; rank < platform.ranks; ++rank) {
        if (!drawn[rank] || !local[rank])
            continue;
        UtilisationSamples values(samples);
        addUtilisation(intervals[rank], startPs, samplePs, 1.0, values);
        writeUtilisation(timeline, rank, startPs, samplePs, values);
    }
    if (!spec.nodeTracks)
        return;
    const std::uint32_t perNode = platform.ranksPerNode;
    for (std::uint32_t node = 0; node * perNode < platform.ranks; ++node) {
        const std::uint32_t first = node * perNode;
        if (!std::all_of(local.begin() + first, local.begin() + first + perNode, [](bool own) {
                return own;
            }))
            continue;
        const std::uint32_t process = nodeProcess(platform, node);
        timeline.processName(process,
                             "node " + std::to_string(node) + " (ranks " + std::to_string(first) +
                                 "-" + std::to_string(first + perNode - 1) + ", mean)",
                             process);
        UtilisationSamples values(samples);
        for (std::uint32_t rank = first; rank < first + perNode; ++rank)
            addUtilisation(intervals[rank], startPs, samplePs, 1.0 / perNode, values);
        writeUtilisation(timeline, process, startPs, samplePs, values);
    }
}

} // namespace etsim::platform
