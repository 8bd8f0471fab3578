#pragma once
// Running a trace on a platform and what comes out of it: the embeddable entry point behind
// `etsim run` (and the one a user's sc_main calls):
//
//     auto config = etsim::platform::loadPlatform("hgx_h100", {{"driver.mode", "replay"}});
//     etsim::platform::JobSpec job{"traces/step"};          // prefix or folder
//     etsim::platform::RunReport report = etsim::platform::runJob(config, job);
//     etsim::platform::writeReportText(std::cout, report);
//
// runJob elaborates the platform in the current SystemC kernel and runs it to the end, so it
// can be called once per process (the SystemC kernel cannot be restarted).
//
// Time breakdown of a rank: every instant from 0 to the rank's finish is counted once, as
// compute if a compute or host node is in flight, else memory if a memory node is, else
// communication if a send, recv or collective is, else idle; so the four sum to the finish
// time. A node is in flight from its issue to its completion (queueing in an engine counts).
// docs/report.md describes the JSON schema.

#include "et_driver/ProcessGroups.h"
#include "et_driver/RankDriver.h"
#include "et_driver/TraceReadAhead.h"
#include "et_driver/TraceReader.h"
#include "et_driver/TraceSet.h"
#include "kernel/StopRequest.h"
#include "platforms/PlatformConfig.h"

#include <nlohmann/json.hpp>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace etsim::platform {

/// Version of the JSON report; bumped whenever a documented name or meaning changes.
inline constexpr int reportSchemaVersion = 1;

/// A trace file as the report records it (reproducibility).
struct TraceFileInfo {
    std::string path;
    std::uint64_t bytes = 0;
    /// SHA-256 (FIPS 180-4) of the file's bytes, as 64 lower-case hex digits.
    std::string sha256;
    /// zlib CRC-32 of the file's bytes, as 8 hex digits (kept for schema 1 readers).
    std::string crc32;
};

/// Size and hashes of one file, read once. Throws etsim::Error naming the path when it
/// cannot be read. `stop`, when given and set, ends the reading at the next block (the
/// description is then incomplete: TraceHashes drops it).
TraceFileInfo describeTraceFile(const std::filesystem::path& path,
                                const std::atomic<bool>* stop = nullptr);

/// The ranks of a job: a multi-rank trace, or one rank replicated.
class TraceInput {
public:
    /// `prefixOrFolder` as et::findRankFiles takes it. With replicate > 0 the trace must have
    /// one rank, which runs as `replicate` identical ranks (collectives span them all).
    /// Throws TraceError / etsim::Error for a missing trace or a replicate of a multi-rank one.
    /// `localRanks` (one flag per rank; empty = all): a partitioned run reads and hashes only
    /// the marked ranks' files (docs/partitioned-runs.md).
    explicit TraceInput(const std::filesystem::path& prefixOrFolder,
                        std::uint32_t replicate = 0,
                        std::vector<bool> localRanks = {});
    ~TraceInput();
    TraceInput(const TraceInput&) = delete;
    TraceInput& operator=(const TraceInput&) = delete;

    std::size_t rankCount() const;
    /// One node source per rank, valid while this object lives.
    std::vector<et::NodeSource> sources();
    /// The files the report describes (TraceHashes), each with the rank it is the file of:
    /// with local ranks, only theirs; a replicated trace's one file (rank 0) in every process.
    std::vector<std::pair<std::uint32_t, std::filesystem::path>> filesToHash() const;

private:
    // Every rank's reader, the replicas of a one-rank trace included: the set keeps only as
    // many files open as the process may (a 65,536-rank replica is one file read 65,536 times).
    std::unique_ptr<et::TraceSet> set;
    // Decodes the ranks' next nodes on a second thread; made on the first sources() call.
    std::unique_ptr<et::TraceReadAhead> readAhead;
    std::vector<et::RankFile> rankFiles;
    bool replicated = false;
    std::vector<bool> local;
};

struct JobSpec {
    /// Trace prefix ("dir/name" for dir/name.0.et ...) or folder.
    std::filesystem::path trace;
    /// Run a one-rank trace as this many ranks; 0 = the trace's own ranks.
    std::uint32_t replicate = 0;
    /// Communicator groups known up front (ASTRA-sim comm-group file).
    std::vector<et::ProcessGroup> groups;
};

/// What the progress callback sees.
struct JobProgress {
    double simulatedSeconds = 0.0;
    std::uint64_t nodesDone = 0;
    double wallSeconds = 0.0;
};

/// What the timeline holds (docs/report.md, Timeline): per-node slices of the chosen ranks,
/// utilisation counters per rank and per node (host) of ranks, the fabric's link tracks.
struct TimelineSpec {
    /// Chrome/Perfetto timeline file; empty = none.
    std::string path;
    /// Ranks whose nodes go to the timeline as slices (with their utilisation counters);
    /// nullopt = all ranks, an empty list = none. A rank the platform lacks is an error.
    std::optional<std::vector<std::uint32_t>> ranks;
    /// Only [startPs, endPs) of simulated time is written (slices clipped to it).
    std::uint64_t startPs = 0;
    std::uint64_t endPs = std::numeric_limits<std::uint64_t>::max();
    /// Width of one sample of the utilisation counters (ps); 0 = the window (or the run, when
    /// the window reaches past its end) over `defaultTimelineSamples`.
    std::uint64_t samplePs = 0;
    /// Per-node (host) utilisation counters: the mean over the node's ranks.
    bool nodeTracks = true;
    /// The fabric's per-link busy tracks (flow fidelity); nullopt = only when every rank is
    /// drawn (a large fabric writes far more link slices than nodes: docs/report.md).
    std::optional<bool> linkTracks;
};

/// Parses `--timeline-window START:END`: two times with units ("2ms:3ms", "1.5 us:2 us");
/// either side may be empty (from the start, to the end). Throws etsim::Error naming the
/// text for a missing colon, a time without a unit or an end not after the start.
std::pair<std::uint64_t, std::uint64_t> parseTimelineWindow(const std::string& text);
/// Parses `--timeline-ranks`: "all" (nullopt), "none" (empty) or a comma list of ranks and
/// ranges ("0,3,8-15"). Throws etsim::Error naming the bad item.
std::optional<std::vector<std::uint32_t>> parseRankList(const std::string& text);

/// Samples per utilisation counter track when TimelineSpec::samplePs is 0.
inline constexpr std::uint64_t defaultTimelineSamples = 500;
/// Most samples per utilisation counter track: a narrower TimelineSpec::samplePs is widened
/// to (window or run) / this, so `--timeline-sample 1ps` cannot make a timeline of gigabytes.
inline constexpr std::uint64_t maxTimelineSamples = 100000;

struct RunReport;

/// How RunReport::stats renders the stats tree (kernel/Stats.h, docs/outputs.md).
enum class StatsFormat : std::uint8_t { None, Json, Text };

struct JobOptions {
    TimelineSpec timeline;
    /// Log levels (LogRegistry::configure); empty = warnings and errors.
    std::string logSpec;
    /// Called about every 10 us of simulated time.
    std::function<void(const JobProgress&)> progress;
    /// When set, a request on it (a signal) ends the run early: runJob then returns a report
    /// with outcome "interrupted", the timeline closed and valid up to that time.
    StopRequest* stop = nullptr;
    /// When set, a run that fails after the simulation started (a peer failure, an error
    /// raised by a model) fills this with the report of what ran until then, outcome "failed"
    /// and the error as its problem, before the error propagates out of runJob.
    RunReport* failure = nullptr;
    /// Measure where the wall time goes, per part of the platform (RunReport::profile).
    bool profile = false;
    /// Render every model's stats into RunReport::stats.
    StatsFormat stats = StatsFormat::None;
};

/// Host time per part of the platform (kernel/WallProfile.h), with --profile.
struct WallShare {
    std::string part;
    double seconds = 0.0;
    std::uint64_t entries = 0;
};
struct WallProfileSummary {
    /// The simulation's run, start to end.
    double seconds = 0.0;
    /// driver, accelerator, hbm, fabric, cosim: in that order.
    std::vector<WallShare> parts;
    /// In no part: the SystemC scheduler and what no model marks.
    double otherSeconds = 0.0;
    /// Whether malloc asks for transparent huge pages, and why (kernel/HugePages.h): the
    /// setting that moves a many-rank run's wall time most without changing its results.
    std::string heapHugePages;
};

/// How a partitioned run was split (docs/partitioned-runs.md).
struct PartitionSummary {
    std::uint32_t count = 0;
    /// The split in words, e.g. "by the outermost dimension (dimension 1)".
    std::string scheme;
    /// The ranks each process held, by partition.
    std::vector<std::uint32_t> ranks;
    std::uint64_t lookaheadPs = 0;
};

struct RankBreakdown {
    std::uint32_t rank = 0;
    std::uint64_t finishPs = 0;
    std::uint64_t computePs = 0;
    std::uint64_t memoryPs = 0;
    /// Communication not hidden behind compute or memory.
    std::uint64_t exposedCommPs = 0;
    std::uint64_t idlePs = 0;
    /// Time with communication in flight at all, and with both it and compute in flight.
    std::uint64_t commPs = 0;
    std::uint64_t overlapPs = 0;
    /// ASTRA-sim's "exposed communication": finish minus time with GPU (not host) compute in
    /// flight, so host ops and memory count as exposed, as in that simulator.
    std::uint64_t astraExposedCommPs = 0;
    std::uint64_t nodes = 0;
};

struct CollectiveSummary {
    std::string type;
    std::uint64_t count = 0;
    /// Sum of the collectives' sizes (as posted), B.
    std::uint64_t bytes = 0;
    /// Sum of first post to last completion, ps.
    std::uint64_t timePs = 0;
};

struct LinkSummary {
    std::string name;
    double utilisation = 0.0;
    double bytes = 0.0;
};

/// The accelerators' on-chip residency models summed over ranks (docs/accel.md, On-chip
/// memory); all zero with sram.policy legacy.
struct OnChipSummary {
    double hits = 0.0;
    double hitBytes = 0.0;
    double misses = 0.0;
    double missBytes = 0.0;
    double evictions = 0.0;
    double writebackBytes = 0.0;
    /// Compute nodes that named no tensors: all their bytes came from HBM.
    double untrackedNodes = 0.0;

    void add(const OnChipSummary& other)
    {
        hits += other.hits;
        hitBytes += other.hitBytes;
        misses += other.misses;
        missBytes += other.missBytes;
        evictions += other.evictions;
        writebackBytes += other.writebackBytes;
        untrackedNodes += other.untrackedNodes;
    }
};

struct ResourceSummary {
    /// Tensor-unit busy time over (units x ranks x simulated time).
    double tensorBusy = 0.0;
    /// FLOPs executed over (peak of the default data type x ranks x simulated time).
    double flopUtilisation = 0.0;
    double flops = 0.0;
    /// HBM bytes moved over (device peak x ranks x simulated time).
    double hbmUtilisation = 0.0;
    double hbmBytes = 0.0;
    OnChipSummary onChip;
    /// The busiest links, most used first (at most 5).
    std::vector<LinkSummary> busiestLinks;
    /// Set when the fabric could not measure its links (busiestLinks is then empty): why, e.g.
    /// a co-simulation peer that carried the messages did not report them.
    std::string linksUnavailable;
};

struct RunReport {
    /// "finished", "deadlock", "failed", "interrupted" or "stopped" (docs/report.md).
    std::string outcome;
    bool finished = false;
    /// When not finished: the deadlock report, the error, or what interrupted the run.
    std::string problem;
    /// Co-simulation peers that failed at shutdown (did not answer TERMINATE); a run that
    /// finished otherwise is "failed" because of them.
    std::vector<std::string> shutdownProblems;
    std::uint64_t simulatedPs = 0;
    std::vector<RankBreakdown> ranks;
    std::vector<CollectiveSummary> collectives;
    ResourceSummary resources;
    double wallSeconds = 0.0;
    /// With JobOptions::profile.
    std::optional<WallProfileSummary> profile;
    /// With JobOptions::stats: the stats tree at the end of the run, rendered.
    std::string stats;
    /// SystemC delta cycles: the kernel's measure of events processed.
    std::uint64_t events = 0;
    /// Only for a run split over processes (etsim run --partitions).
    std::optional<PartitionSummary> partitions;
    std::uint64_t nodes = 0;
    std::uint64_t fallbacks = 0;
    std::vector<TraceFileInfo> traceFiles;
    std::string platformName;
    nlohmann::ordered_json platform; // resolved platform
    std::string timelinePath;
    std::uint64_t timelineEvents = 0;
    /// Size of the timeline file, B.
    std::uint64_t timelineBytes = 0;
};

/// Builds the platform, runs the job, and summarises it. Throws etsim::Error (ConfigError,
/// TraceError, ...) for inputs that cannot run, including a trace whose rank count is not the
/// platform's; a run that deadlocks returns a report with finished = false.
RunReport
runJob(const PlatformConfig& platform, const JobSpec& job, const JobOptions& options = {});

/// The per-rank breakdown of a set of node intervals (exposed for tests).
struct NodeInterval {
    std::uint64_t startPs = 0;
    std::uint64_t endPs = 0;
    et::Engine engine = et::Engine::Instant;
};
RankBreakdown
breakdown(std::uint32_t rank, std::uint64_t finishPs, const std::vector<NodeInterval>& intervals);

/// The human-readable report.
void writeReportText(std::ostream& out, const RunReport& report);
/// The JSON report (docs/report.md); `commandLine` and `version` are recorded as given.
nlohmann::ordered_json reportToJson(const RunReport& report,
                                    const std::vector<std::string>& commandLine,
                                    const std::string& version);

} // namespace etsim::platform
