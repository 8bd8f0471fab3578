#include "platforms/Job.h"

#include "kernel/Error.h"
#include "kernel/HugePages.h"
#include "kernel/Log.h"
#include "kernel/ScTime.h"
#include "kernel/Simulation.h"
#include "kernel/Stats.h"
#include "kernel/Timeline.h"
#include "kernel/Units.h"
#include "kernel/WallProfile.h"
#include "platforms/BreakdownSweep.h"
#include "platforms/JobSummary.h"
#include "platforms/Platform.h"
#include "platforms/TimelineTracks.h"
#include "platforms/TraceHashes.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <sstream>

namespace etsim::platform {

namespace {

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
               RunBreakdowns& breakdowns,
               Timeline* timeline);

} // namespace

RankBreakdown
breakdown(std::uint32_t rank, std::uint64_t finishPs, const std::vector<NodeInterval>& intervals)
{
    BreakdownSweep sweep;
    for (const NodeInterval& interval : intervals)
        sweep.add(interval);
    return sweep.finish(rank, finishPs);
}

// ---------------------------------------------------------------------------------------------

RunReport runJob(const PlatformConfig& platform, const JobSpec& job, const JobOptions& options)
{
    TraceInput input(job.trace, job.replicate);
    checkTraceRanks(input.rankCount(), platform, job);
    RunReport report;
    // Hashed beside the run; the report takes the hashes when the run is over.
    TraceHashes hashes(input.filesToHash());
    auto takeHashes = [&hashes, &report] {
        for (auto& [rank, info] : hashes.take())
            report.traceFiles.push_back(std::move(info));
    };
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
    const std::vector<bool> detailed = drawnRanks(platform, spec);
    const bool allRanks = drawsEveryRank(detailed);
    std::unique_ptr<Timeline> timeline;
    if (!spec.path.empty()) {
        TimelineOptions timelineOptions;
        timelineOptions.windowStartPs = spec.startPs;
        timelineOptions.windowEndPs = spec.endPs;
        timeline = std::make_unique<Timeline>(spec.path, timelineOptions);
        if (spec.linkTracks.value_or(allRanks))
            built.attachFabricTimeline(*timeline, timelineFabricProcess(platform));
    }
    // Swept as nodes finish; every interval is kept only for a timeline's utilisation tracks.
    RunBreakdowns breakdowns(platform.ranks, timeline != nullptr);
    built.onRecord([&](const et::NodeRecord& record) {
        ++nodesDone;
        breakdowns.add(toUnderlying(record.rank), record);
    });
    built.attach(input.sources(),
                 job.groups,
                 &simulation.logs().get("et_driver"),
                 allRanks ? timeline.get() : nullptr);
    breakdowns.follow(built.drivers());
    // With a rank filter the drivers do not write the timeline; the selected ranks' nodes
    // are written from their records instead (without the dependency arrows).
    if (timeline && !allRanks)
        drawRecords(built, *timeline, detailed, std::vector<bool>(platform.ranks, true));

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
            try {
                takeHashes();
            } catch (...) { // NOLINT(bugprone-empty-catch): the run's error is the one to report
            }
            *options.failure = report;
            try {
                summarise(*options.failure,
                          platform,
                          built,
                          stats,
                          spec,
                          detailed,
                          breakdowns,
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
    takeHashes();
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
        profile.heapHugePages = heapHugePagesState();
        for (std::size_t index = 0; index < wallPartCount; ++index) {
            const auto part = static_cast<WallPart>(index);
            const WallProfile::Share share = wall->share(part);
            profile.parts.push_back(
                {std::string(wallPartName(part)), share.seconds, share.entries});
        }
    }
    summarise(report, platform, built, stats, spec, detailed, breakdowns, timeline.get());
    if (options.stats != StatsFormat::None) {
        std::ostringstream rendered;
        const std::uint64_t nowPs = fromScTime(simulation.now()).ps();
        if (options.stats == StatsFormat::Json)
            writeStatsJson(rendered, stats, nowPs);
        else
            writeStatsText(rendered, stats, nowPs);
        report.stats = rendered.str();
    }
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
               RunBreakdowns& breakdowns,
               Timeline* timeline)
{
    const std::vector<const et::RankDriver*> drivers = built.drivers();

    for (const et::RankDriver* driver : drivers)
        report.simulatedPs = std::max(report.simulatedPs, driver->finishPs());
    if (timeline)
        writeUtilisationTracks(*timeline,
                               platform,
                               spec,
                               detailed,
                               std::vector<bool>(platform.ranks, true),
                               breakdowns.intervals(),
                               report.simulatedPs);
    for (const et::RankDriver* driver : drivers) {
        const std::uint32_t rank = toUnderlying(driver->rank());
        report.nodes += driver->nodesFinished();
        report.fallbacks += driver->fallbacks().total();
        report.ranks.push_back(breakdowns.finish(rank, driver->finishPs()));
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
