#include "platforms/Job.h"

#include "kernel/Error.h"
#include "kernel/Log.h"
#include "kernel/ScTime.h"
#include "kernel/Simulation.h"
#include "kernel/Stats.h"
#include "kernel/Timeline.h"
#include "kernel/Units.h"
#include "kernel/WallProfile.h"
#include "platforms/JobSummary.h"
#include "platforms/Platform.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <sstream>

namespace etsim::platform {

namespace {

// Process ids of the timeline: ranks first, then the fabric, then one per node of ranks.
std::uint32_t fabricProcess(const PlatformConfig& platform)
{
    return platform.ranks;
}

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

// The counter tracks: per rank in detail, and per node of ranks (their mean).
void writeUtilisationTracks(Timeline& timeline,
                            const PlatformConfig& platform,
                            const TimelineSpec& spec,
                            const std::vector<bool>& detailed,
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
    const std::size_t samples =
        static_cast<std::size_t>((endPs - startPs + samplePs - 1) / samplePs);
    for (std::uint32_t rank = 0; rank < platform.ranks; ++rank) {
        if (!detailed[rank])
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

// The text of the exception being handled (etsim errors, SystemC reports, anything else).
std::string describeCurrentException()
{
    try {
        throw;
    } catch (const sc_core::sc_report& error) {
        return error.what();
    } catch (const std::exception& error) {
        return error.what();
    } catch (...) {
        return "an unknown error";
    }
}

void summarise(RunReport& report,
               const PlatformConfig& platform,
               Platform& built,
               const StatGroup& stats,
               const TimelineSpec& spec,
               const std::vector<bool>& detailed,
               std::vector<std::vector<NodeInterval>>& intervals,
               Timeline* timeline);

} // namespace

RankBreakdown
breakdown(std::uint32_t rank, std::uint64_t finishPs, std::vector<NodeInterval> intervals)
{
    // Categories in precedence order; host work counts as compute.
    enum Category { ComputeCat, MemoryCat, CommCat, categoryCount };
    struct Edge {
        std::uint64_t timePs;
        int delta;
        Category category;
        // Accelerator compute, not host work: ASTRA-sim's exposed communication counts
        // CPU ops as exposed.
        bool gpu;
    };
    std::vector<Edge> edges;
    edges.reserve(intervals.size() * 2);
    for (const NodeInterval& interval : intervals) {
        Category category = ComputeCat;
        switch (interval.engine) {
        case et::Engine::Compute:
        case et::Engine::Host:
            category = ComputeCat;
            break;
        case et::Engine::Memory:
            category = MemoryCat;
            break;
        case et::Engine::Communication:
            category = CommCat;
            break;
        case et::Engine::Instant:
            continue;
        }
        const std::uint64_t end = std::min(interval.endPs, finishPs);
        if (interval.startPs >= end)
            continue;
        const bool gpu = interval.engine == et::Engine::Compute;
        edges.push_back({interval.startPs, +1, category, gpu});
        edges.push_back({end, -1, category, gpu});
    }
    std::sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) {
        return a.timePs < b.timePs;
    });
    RankBreakdown result;
    result.rank = rank;
    result.finishPs = finishPs;
    result.nodes = intervals.size();
    std::array<int, categoryCount> active{};
    int activeGpu = 0;
    std::uint64_t gpuComputePs = 0;
    std::uint64_t last = 0;
    auto account = [&](std::uint64_t until) {
        const std::uint64_t span = until - last;
        if (active[ComputeCat] > 0)
            result.computePs += span;
        else if (active[MemoryCat] > 0)
            result.memoryPs += span;
        else if (active[CommCat] > 0)
            result.exposedCommPs += span;
        else
            result.idlePs += span;
        if (active[CommCat] > 0)
            result.commPs += span;
        if (active[CommCat] > 0 && active[ComputeCat] > 0)
            result.overlapPs += span;
        if (activeGpu > 0)
            gpuComputePs += span;
        last = until;
    };
    for (const Edge& edge : edges) {
        if (edge.timePs > last)
            account(edge.timePs);
        active[edge.category] += edge.delta;
        if (edge.gpu)
            activeGpu += edge.delta;
    }
    if (finishPs > last)
        account(finishPs);
    result.astraExposedCommPs = finishPs - gpuComputePs;
    return result;
}

// ---------------------------------------------------------------------------------------------

RunReport runJob(const PlatformConfig& platform, const JobSpec& job, const JobOptions& options)
{
    TraceInput input(job.trace, job.replicate);
    checkTraceRanks(input.rankCount(), platform, job);
    RunReport report;
    report.traceFiles = input.files();
    report.platformName = platform.name;
    report.platform = platform.resolved;

    std::uint64_t nodesDone = 0;
    SimulationOptions simulationOptions;
    simulationOptions.logSpec = options.logSpec;
    simulationOptions.stop = options.stop;
    if (options.progress) {
        simulationOptions.progressInterval = sc_core::sc_time(10, sc_core::SC_US);
        simulationOptions.onProgress = [&](const Progress& progress) {
            options.progress(
                {progress.simulatedTime.to_seconds(), nodesDone, progress.wallSeconds});
        };
    }
    Simulation simulation(simulationOptions);
    StatGroup stats("platform");
    // Before the platform: its models find the profile through their stats groups.
    std::optional<WallProfile> wall;
    if (options.profile) {
        wall.emplace();
        stats.attachWallProfile(&*wall);
    }
    Platform built("platform", platform, simulation, stats);

    const TimelineSpec& spec = options.timeline;
    std::vector<bool> detailed(platform.ranks, !spec.ranks.has_value());
    if (spec.ranks)
        for (std::uint32_t rank : *spec.ranks) {
            if (rank >= platform.ranks)
                throw Error("timeline rank " + std::to_string(rank) + ": the platform" +
                            (platform.name.empty() ? "" : " \"" + platform.name + "\"") +
                            " has ranks 0 to " + std::to_string(platform.ranks - 1));
            detailed[rank] = true;
        }
    const bool allRanks = std::find(detailed.begin(), detailed.end(), false) == detailed.end();
    std::unique_ptr<Timeline> timeline;
    if (!spec.path.empty()) {
        TimelineOptions timelineOptions;
        timelineOptions.windowStartPs = spec.startPs;
        timelineOptions.windowEndPs = spec.endPs;
        timeline = std::make_unique<Timeline>(spec.path, timelineOptions);
        if (spec.linkTracks.value_or(allRanks))
            built.attachFabricTimeline(*timeline, fabricProcess(platform));
    }
    // With a rank filter the drivers do not write the timeline; the selected ranks' nodes
    // are written from their records instead (without the dependency arrows).
    std::vector<std::vector<NodeInterval>> intervals(platform.ranks);
    built.onRecord([&](const et::NodeRecord& record) {
        ++nodesDone;
        intervals[toUnderlying(record.rank)].push_back(
            {record.issuePs, record.finishPs, record.engine});
    });
    built.attach(input.sources(),
                 job.groups,
                 &simulation.logs().get("et_driver"),
                 allRanks ? timeline.get() : nullptr);
    if (timeline && !allRanks) {
        for (std::uint32_t rank = 0; rank < platform.ranks; ++rank)
            if (detailed[rank])
                timeline->processName(rank, "rank " + std::to_string(rank), rank);
        built.onRecord([&timeline, detailed](const et::NodeRecord& record) {
            const std::uint32_t rank = toUnderlying(record.rank);
            if (!detailed[rank] || record.finishPs <= record.issuePs)
                return;
            timeline->complete(rank,
                               static_cast<std::uint32_t>(record.engine),
                               record.name,
                               et::engineName(record.engine),
                               record.issuePs,
                               record.finishPs - record.issuePs,
                               {{"bytes", record.bytes}});
        });
    }

    RunResult result;
    try {
        if (wall)
            wall->start();
        result = simulation.run();
        if (wall)
            wall->stop();
    } catch (...) {
        // The run started: what it did so far is reported, with the error, before the error
        // goes on to the caller.
        if (options.failure != nullptr) {
            const std::string problem = describeCurrentException();
            *options.failure = report;
            try {
                summarise(*options.failure,
                          platform,
                          built,
                          stats,
                          spec,
                          detailed,
                          intervals,
                          timeline.get());
            } catch (...) { // NOLINT(bugprone-empty-catch): the first error is the one to report
            }
            options.failure->finished = false;
            options.failure->outcome = "failed";
            options.failure->problem = problem;
            options.failure->simulatedPs =
                std::max(options.failure->simulatedPs, fromScTime(simulation.now()).ps());
        }
        throw;
    }
    const std::vector<const et::RankDriver*> drivers = built.drivers();
    report.finished = result.outcome == RunOutcome::AllIdle;
    report.outcome = report.finished ? "finished" : runOutcomeName(result.outcome);
    if (result.outcome == RunOutcome::Interrupted) {
        report.problem = "interrupted" +
                         (options.stop->reason().empty() ? "" : " by " + options.stop->reason()) +
                         " at simulated time " + toString(fromScTime(result.simulatedTime));
    } else if (report.finished) {
        report.problem = et::deadlockReport(drivers);
        if (!report.problem.empty()) {
            report.finished = false;
            report.outcome = "deadlock";
        }
    } else {
        report.problem = et::deadlockReport(drivers);
    }
    report.wallSeconds = result.wallSeconds;
    report.events = result.deltaCycles;
    if (wall) {
        WallProfileSummary& profile = report.profile.emplace();
        profile.seconds = wall->totalSeconds();
        profile.otherSeconds = wall->otherSeconds();
        for (std::size_t index = 0; index < wallPartCount; ++index) {
            const auto part = static_cast<WallPart>(index);
            const WallProfile::Share share = wall->share(part);
            profile.parts.push_back(
                {std::string(wallPartName(part)), share.seconds, share.entries});
        }
    }
    summarise(report, platform, built, stats, spec, detailed, intervals, timeline.get());
    // A peer that did not confirm the end may not have finished its part: the run failed.
    report.shutdownProblems = built.shutdownProblems();
    if (report.finished && !report.shutdownProblems.empty()) {
        report.finished = false;
        report.outcome = "failed";
        for (const std::string& problem : report.shutdownProblems)
            report.problem += (report.problem.empty() ? "" : "\n") + problem;
    }
    if (result.outcome == RunOutcome::Interrupted)
        report.simulatedPs = std::max(report.simulatedPs, fromScTime(result.simulatedTime).ps());
    return report;
}

namespace {

// Fills the per-rank, collective, utilisation and timeline parts of `report` from what the
// run recorded, and closes the timeline.
void summarise(RunReport& report,
               const PlatformConfig& platform,
               Platform& built,
               const StatGroup& stats,
               const TimelineSpec& spec,
               const std::vector<bool>& detailed,
               std::vector<std::vector<NodeInterval>>& intervals,
               Timeline* timeline)
{
    const std::vector<const et::RankDriver*> drivers = built.drivers();

    for (const et::RankDriver* driver : drivers)
        report.simulatedPs = std::max(report.simulatedPs, driver->finishPs());
    if (timeline)
        writeUtilisationTracks(*timeline, platform, spec, detailed, intervals, report.simulatedPs);
    for (const et::RankDriver* driver : drivers) {
        const std::uint32_t rank = toUnderlying(driver->rank());
        report.nodes += driver->nodesFinished();
        report.fallbacks += driver->fallbacks().total();
        report.ranks.push_back(breakdown(rank, driver->finishPs(), std::move(intervals[rank])));
    }

    report.collectives = summariseCollectives(built.fabric().collectives());
    std::vector<RankResources> perRank;
    for (std::uint32_t rank = 0; rank < platform.ranks; ++rank)
        perRank.push_back(rankResources(stats, rank));
    summariseResources(report.resources,
                       platform,
                       report.simulatedPs,
                       perRank,
                       built.fabric().linkUsage(),
                       built.fabric().linkUsageUnavailable());

    if (timeline) {
        timeline->close();
        report.timelinePath = timeline->path();
        report.timelineEvents = timeline->eventCount();
        std::error_code unknown;
        const std::uintmax_t bytes = std::filesystem::file_size(timeline->path(), unknown);
        report.timelineBytes = unknown ? 0 : static_cast<std::uint64_t>(bytes);
    }
}

} // namespace

} // namespace etsim::platform
