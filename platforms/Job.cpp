#include "platforms/Job.h"

#include "et_driver/TraceError.h"
#include "kernel/Error.h"
#include "kernel/Log.h"
#include "kernel/Simulation.h"
#include "kernel/Stats.h"
#include "kernel/Timeline.h"
#include "kernel/Units.h"
#include "platforms/Platform.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <limits>
#include <map>
#include <openssl/evp.h>
#include <optional>
#include <ostream>
#include <sstream>
#include <zlib.h>

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

// Three decimals in the largest unit that keeps the number at least 1 (table columns).
std::string formatPs(std::uint64_t ps)
{
    char text[32];
    const double value = static_cast<double>(ps);
    if (ps >= 1000000000ULL)
        std::snprintf(text, sizeof text, "%.3f ms", value * 1e-9);
    else if (ps >= 1000000ULL)
        std::snprintf(text, sizeof text, "%.3f us", value * 1e-6);
    else
        std::snprintf(text, sizeof text, "%.3f ns", value * 1e-3);
    return text;
}

// Decimal units, three decimals: "1.202 GB".
std::string formatBytes(double bytes)
{
    char text[32];
    if (bytes >= 1e9)
        std::snprintf(text, sizeof text, "%.3f GB", bytes * 1e-9);
    else if (bytes >= 1e6)
        std::snprintf(text, sizeof text, "%.3f MB", bytes * 1e-6);
    else if (bytes >= 1e3)
        std::snprintf(text, sizeof text, "%.3f kB", bytes * 1e-3);
    else
        std::snprintf(text, sizeof text, "%.0f B", bytes);
    return text;
}

double percent(std::uint64_t part, std::uint64_t whole)
{
    return whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole);
}

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

} // namespace

// ---------------------------------------------------------------------------------------------

std::pair<std::uint64_t, std::uint64_t> parseTimelineWindow(const std::string& text)
{
    const std::string where = "--timeline-window " + text + ": ";
    const std::size_t colon = text.find(':');
    if (colon == std::string::npos)
        throw Error(where + "expected START:END with units, e.g. 2ms:3ms (either side may be "
                            "empty)");
    auto parseSide = [&](const std::string& side, std::uint64_t empty) {
        if (side.find_first_not_of(" \t") == std::string::npos)
            return empty;
        try {
            return Time::parse(side).ps();
        } catch (const Error& error) {
            throw Error(where + "\"" + side + "\" is not a time: " + error.what() +
                        " (write a unit, e.g. 2ms, 1.5 us, 700 ns)");
        }
    };
    const std::uint64_t start = parseSide(text.substr(0, colon), 0);
    const std::uint64_t end =
        parseSide(text.substr(colon + 1), std::numeric_limits<std::uint64_t>::max());
    if (end <= start)
        throw Error(where + "the end (" + toString(Time::fromPs(end)) +
                    ") must come after the start (" + toString(Time::fromPs(start)) + ")");
    return {start, end};
}

std::optional<std::vector<std::uint32_t>> parseRankList(const std::string& text)
{
    if (text == "all")
        return std::nullopt;
    std::vector<std::uint32_t> ranks;
    if (text == "none")
        return ranks;
    auto number = [&](const std::string& item, const std::string& digits) {
        if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos ||
            digits.size() > 9)
            throw Error("--timeline-ranks " + text + ": \"" + item +
                        "\" is not a rank or a range (write all, none, or e.g. 0,3,8-15)");
        return static_cast<std::uint32_t>(std::stoul(digits));
    };
    std::size_t begin = 0;
    while (begin <= text.size()) {
        std::size_t comma = text.find(',', begin);
        if (comma == std::string::npos)
            comma = text.size();
        const std::string item = text.substr(begin, comma - begin);
        const std::size_t dash = item.find('-');
        if (dash == std::string::npos) {
            ranks.push_back(number(item, item));
        } else {
            const std::uint32_t first = number(item, item.substr(0, dash));
            const std::uint32_t last = number(item, item.substr(dash + 1));
            if (last < first)
                throw Error("--timeline-ranks " + text + ": the range \"" + item +
                            "\" ends before it starts");
            if (last - first >= (1U << 24))
                throw Error("--timeline-ranks " + text + ": the range \"" + item +
                            "\" holds more ranks than a platform can have");
            for (std::uint32_t rank = first; rank <= last; ++rank)
                ranks.push_back(rank);
        }
        begin = comma + 1;
    }
    return ranks;
}

// ---------------------------------------------------------------------------------------------

TraceFileInfo describeTraceFile(const std::filesystem::path& path)
{
    TraceFileInfo info;
    info.path = path.string();
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw Error(info.path + ": cannot open to hash it (check that the file is readable)");
    // OpenSSL's EVP interface: one context per file, freed on every path out.
    std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> sha(EVP_MD_CTX_new(), EVP_MD_CTX_free);
    if (!sha || EVP_DigestInit_ex(sha.get(), EVP_sha256(), nullptr) != 1)
        throw Error(info.path + ": cannot start a SHA-256 digest (OpenSSL libcrypto failed)");
    std::array<char, 1 << 16> buffer{};
    uLong crc = crc32(0L, Z_NULL, 0);
    while (in) {
        in.read(buffer.data(), buffer.size());
        const std::streamsize got = in.gcount();
        if (got <= 0)
            break;
        crc = crc32(crc, reinterpret_cast<const Bytef*>(buffer.data()), static_cast<uInt>(got));
        if (EVP_DigestUpdate(sha.get(), buffer.data(), static_cast<std::size_t>(got)) != 1)
            throw Error(info.path + ": SHA-256 digest failed (OpenSSL libcrypto)");
        info.bytes += static_cast<std::uint64_t>(got);
    }
    if (in.bad())
        throw Error(info.path + ": read error after " + std::to_string(info.bytes) +
                    " bytes while hashing it");
    std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
    unsigned int digestLength = 0;
    if (EVP_DigestFinal_ex(sha.get(), digest.data(), &digestLength) != 1 || digestLength != 32)
        throw Error(info.path + ": SHA-256 digest failed (OpenSSL libcrypto)");
    constexpr char hexDigits[] = "0123456789abcdef";
    info.sha256.reserve(2 * digestLength);
    for (unsigned int i = 0; i < digestLength; ++i) {
        info.sha256 += hexDigits[digest[i] >> 4];
        info.sha256 += hexDigits[digest[i] & 0xf];
    }
    char hex[9];
    std::snprintf(hex, sizeof hex, "%08lx", static_cast<unsigned long>(crc));
    info.crc32 = hex;
    return info;
}

// ---------------------------------------------------------------------------------------------

TraceInput::TraceInput(const std::filesystem::path& prefixOrFolder, std::uint32_t replicate)
{
    rankFiles = et::findRankFiles(prefixOrFolder);
    if (replicate == 0) {
        set = std::make_unique<et::TraceSet>(prefixOrFolder);
        return;
    }
    if (rankFiles.size() != 1)
        throw Error("--replicate " + std::to_string(replicate) + " runs a one-rank trace, but " +
                    prefixOrFolder.string() + " has " + std::to_string(rankFiles.size()) +
                    " ranks; drop --replicate");
    for (std::uint32_t rank = 0; rank < replicate; ++rank)
        replicas.push_back(std::make_unique<et::TraceReader>(rankFiles.front().path));
}

TraceInput::~TraceInput() = default;

std::size_t TraceInput::rankCount() const
{
    return set ? set->rankCount() : replicas.size();
}

std::vector<et::NodeSource> TraceInput::sources()
{
    std::vector<et::NodeSource> list;
    if (set) {
        for (std::uint32_t rank = 0; rank < set->rankCount(); ++rank)
            list.emplace_back([this, rank](et::TraceNode& node) { return set->next(rank, node); });
    } else {
        for (auto& reader : replicas)
            list.push_back(et::readerSource(*reader));
    }
    return list;
}

std::vector<TraceFileInfo> TraceInput::files() const
{
    std::vector<TraceFileInfo> list;
    for (const et::RankFile& file : rankFiles)
        list.push_back(describeTraceFile(file.path));
    return list;
}

// ---------------------------------------------------------------------------------------------

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
    if (input.rankCount() != platform.ranks)
        throw Error(
            "rank count mismatch: the trace " + job.trace.string() + " has " +
            std::to_string(input.rankCount()) + " rank(s) but the platform" +
            (platform.name.empty() ? "" : " \"" + platform.name + "\"") + " has " +
            std::to_string(platform.ranks) +
            (input.rankCount() == 1
                 ? "; run a one-rank trace as many ranks with --replicate " +
                       std::to_string(platform.ranks)
                 : "; pick a platform with " + std::to_string(input.rankCount()) + " ranks"));

    RunReport report;
    report.traceFiles = input.files();
    report.platformName = platform.name;
    report.platform = platform.resolved;

    std::uint64_t nodesDone = 0;
    SimulationOptions simulationOptions;
    simulationOptions.logSpec = options.logSpec;
    if (options.progress) {
        simulationOptions.progressInterval = sc_core::sc_time(10, sc_core::SC_US);
        simulationOptions.onProgress = [&](const Progress& progress) {
            options.progress(
                {progress.simulatedTime.to_seconds(), nodesDone, progress.wallSeconds});
        };
    }
    Simulation simulation(simulationOptions);
    StatGroup stats("platform");
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

    RunResult result = simulation.run();
    const std::vector<const et::RankDriver*> drivers = built.drivers();
    report.finished = result.outcome == RunOutcome::AllIdle;
    report.outcome = report.finished ? "finished" : runOutcomeName(result.outcome);
    if (report.finished) {
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

    std::map<std::string, CollectiveSummary> byType;
    for (const net::CollectiveRecord& record : built.fabric().collectives()) {
        CollectiveSummary& summary = byType[toString(record.type)];
        summary.type = toString(record.type);
        ++summary.count;
        summary.bytes += record.bytes;
        summary.timePs += record.endPs - record.startPs;
    }
    for (auto& [type, summary] : byType)
        report.collectives.push_back(summary);

    // Utilisation over the whole run.
    const double seconds = static_cast<double>(report.simulatedPs) * 1e-12;
    const double ranks = platform.ranks;
    ResourceSummary& resources = report.resources;
    double tensorBusy = 0.0;
    for (std::uint32_t rank = 0; rank < platform.ranks; ++rank) {
        const std::string prefix = "rank" + std::to_string(rank) + ".";
        tensorBusy += scalarAt(stats, prefix + "accelerator.compute.tensor_busy");
        resources.flops += scalarAt(stats, prefix + "accelerator.compute.flops");
        resources.hbmBytes += scalarAt(stats, prefix + "hbm.bytes") +
                              scalarAt(stats, prefix + "hbm.bytes_read") +
                              scalarAt(stats, prefix + "hbm.bytes_written");
    }
    if (seconds > 0.0) {
        const accel::AccelConfig& accelerator = platform.accelerator;
        const double peak =
            accelerator.tensor.peak.get(accelerator.defaultDataType).flopsPerSecond();
        resources.tensorBusy = tensorBusy / (accelerator.computeUnits * ranks * seconds);
        resources.flopUtilisation = peak > 0.0 ? resources.flops / (peak * ranks * seconds) : 0.0;
        const double hbmPeak = platform.hbm.organisation.devicePeak().bytesPerSecond();
        resources.hbmUtilisation =
            hbmPeak > 0.0 ? resources.hbmBytes / (hbmPeak * ranks * seconds) : 0.0;
        std::vector<LinkSummary> links;
        for (const LinkUsage& link : built.fabric().linkUsage())
            links.push_back(
                {link.name,
                 static_cast<double>(link.busyPs) / static_cast<double>(report.simulatedPs),
                 link.bytes});
        std::sort(links.begin(), links.end(), [](const LinkSummary& a, const LinkSummary& b) {
            return a.utilisation > b.utilisation;
        });
        if (links.size() > 5)
            links.resize(5);
        resources.busiestLinks = std::move(links);
        resources.linksUnavailable = built.fabric().linkUsageUnavailable();
    }

    if (timeline) {
        timeline->close();
        report.timelinePath = timeline->path();
        report.timelineEvents = timeline->eventCount();
        std::error_code unknown;
        const std::uintmax_t bytes = std::filesystem::file_size(timeline->path(), unknown);
        report.timelineBytes = unknown ? 0 : static_cast<std::uint64_t>(bytes);
    }
    return report;
}

// ---------------------------------------------------------------------------------------------

void writeReportText(std::ostream& out, const RunReport& report)
{
    out << "etsim run: " << (report.platformName.empty() ? "platform" : report.platformName) << ", "
        << report.ranks.size() << " ranks, " << report.nodes << " nodes, " << report.outcome
        << "\n";
    out << "simulated time: " << formatPs(report.simulatedPs) << "\n";
    if (!report.finished && !report.problem.empty())
        out << "\n" << report.problem << "\n";

    out << "\nper rank (compute / memory / exposed comm / idle; overlap = compute with comm in "
           "flight)\n";
    out << "  rank        finish       compute        memory  exposed comm          idle"
           "       overlap  astra exposed\n";
    // A thousand ranks would drown the report: show the first 16 and the slowest.
    std::vector<const RankBreakdown*> shown;
    for (const RankBreakdown& rank : report.ranks)
        if (shown.size() < 16)
            shown.push_back(&rank);
    if (report.ranks.size() > 16) {
        const RankBreakdown* slowest = &report.ranks.front();
        for (const RankBreakdown& rank : report.ranks)
            if (rank.finishPs > slowest->finishPs)
                slowest = &rank;
        if (slowest->rank >= 16)
            shown.push_back(slowest);
    }
    for (const RankBreakdown* rank : shown) {
        out << "  " << std::setw(4) << rank->rank << std::setw(14) << formatPs(rank->finishPs)
            << std::setw(14) << formatPs(rank->computePs) << std::setw(14)
            << formatPs(rank->memoryPs) << std::setw(14) << formatPs(rank->exposedCommPs)
            << std::setw(14) << formatPs(rank->idlePs) << std::setw(14) << formatPs(rank->overlapPs)
            << std::setw(15) << formatPs(rank->astraExposedCommPs) << "\n";
    }
    if (shown.size() < report.ranks.size())
        out << "  ... " << report.ranks.size() - shown.size() << " more ranks in the JSON report\n";
    if (!report.ranks.empty()) {
        std::uint64_t finish = 0, compute = 0, memory = 0, comm = 0, idle = 0;
        for (const RankBreakdown& rank : report.ranks) {
            finish += rank.finishPs;
            compute += rank.computePs;
            memory += rank.memoryPs;
            comm += rank.exposedCommPs;
            idle += rank.idlePs;
        }
        out << std::fixed << std::setprecision(1) << "  all ranks: compute "
            << percent(compute, finish) << " %, memory " << percent(memory, finish)
            << " %, exposed comm " << percent(comm, finish) << " %, idle " << percent(idle, finish)
            << " %\n";
    }

    out << "\ncollectives\n";
    if (report.collectives.empty())
        out << "  none in the fabric\n";
    for (const CollectiveSummary& collective : report.collectives) {
        out << "  " << std::left << std::setw(16) << collective.type << std::right << std::setw(6)
            << collective.count << " x, " << std::setw(12)
            << formatBytes(static_cast<double>(collective.bytes)) << ", " << std::setw(12)
            << formatPs(collective.timePs) << " total\n";
    }

    const ResourceSummary& resources = report.resources;
    out << "\nutilisation\n" << std::fixed << std::setprecision(1);
    out << "  tensor units busy " << 100.0 * resources.tensorBusy << " %, FLOP utilisation "
        << 100.0 * resources.flopUtilisation << " % of peak\n";
    out << "  HBM bandwidth " << 100.0 * resources.hbmUtilisation << " % of peak ("
        << formatBytes(resources.hbmBytes) << " moved)\n";
    for (const LinkSummary& link : resources.busiestLinks)
        out << "  link " << link.name << ": " << 100.0 * link.utilisation << " % busy, "
            << formatBytes(link.bytes) << "\n";
    if (!resources.linksUnavailable.empty())
        out << "  link utilisation unavailable: " << resources.linksUnavailable << "\n";

    out << "\nsimulator: " << std::setprecision(3) << report.wallSeconds << " s wall, "
        << report.events << " events (" << std::setprecision(0)
        << (report.wallSeconds > 0 ? static_cast<double>(report.events) / report.wallSeconds : 0.0)
        << " events/s)";
    if (report.fallbacks > 0)
        out << ", " << report.fallbacks << " nodes ran as fallbacks (see the warnings)";
    out << "\n";
    if (!report.timelinePath.empty())
        out << "timeline: " << report.timelinePath << " (" << report.timelineEvents << " events, "
            << formatBytes(static_cast<double>(report.timelineBytes)) << ")\n";
    out.unsetf(std::ios::floatfield);
}

nlohmann::ordered_json reportToJson(const RunReport& report,
                                    const std::vector<std::string>& commandLine,
                                    const std::string& version)
{
    auto ns = [](std::uint64_t ps) { return static_cast<double>(ps) / 1000.0; };
    nlohmann::ordered_json json;
    json["schema_version"] = reportSchemaVersion;
    json["etsim_version"] = version;
    json["outcome"] = report.outcome;
    json["simulated_time_ns"] = ns(report.simulatedPs);
    json["ranks"] = nlohmann::ordered_json::array();
    for (const RankBreakdown& rank : report.ranks)
        json["ranks"].push_back({{"rank", rank.rank},
                                 {"finish_ns", ns(rank.finishPs)},
                                 {"compute_ns", ns(rank.computePs)},
                                 {"exposed_comm_ns", ns(rank.exposedCommPs)},
                                 {"memory_ns", ns(rank.memoryPs)},
                                 {"idle_ns", ns(rank.idlePs)},
                                 {"comm_ns", ns(rank.commPs)},
                                 {"overlap_ns", ns(rank.overlapPs)},
                                 {"astra_exposed_comm_ns", ns(rank.astraExposedCommPs)},
                                 {"nodes", rank.nodes}});
    json["collectives"] = nlohmann::ordered_json::array();
    for (const CollectiveSummary& collective : report.collectives)
        json["collectives"].push_back({{"type", collective.type},
                                       {"count", collective.count},
                                       {"bytes", collective.bytes},
                                       {"time_ns", ns(collective.timePs)}});
    nlohmann::ordered_json links = nlohmann::ordered_json::array();
    for (const LinkSummary& link : report.resources.busiestLinks)
        links.push_back(
            {{"name", link.name}, {"utilisation", link.utilisation}, {"bytes", link.bytes}});
    json["resources"] = {{"tensor_busy", report.resources.tensorBusy},
                         {"flop_utilisation", report.resources.flopUtilisation},
                         {"flops", report.resources.flops},
                         {"hbm_utilisation", report.resources.hbmUtilisation},
                         {"hbm_bytes", report.resources.hbmBytes},
                         {"busiest_links", links}};
    if (!report.resources.linksUnavailable.empty())
        json["resources"]["links_unavailable"] = report.resources.linksUnavailable;
    json["wall_seconds"] = report.wallSeconds;
    json["events"] = report.events;
    json["nodes"] = report.nodes;
    json["fallback_nodes"] = report.fallbacks;
    if (!report.finished)
        json["problem"] = report.problem;
    json["platform"] = {{"name", report.platformName}, {"resolved", report.platform}};
    json["trace_files"] = nlohmann::ordered_json::array();
    for (const TraceFileInfo& file : report.traceFiles)
        json["trace_files"].push_back({{"path", file.path},
                                       {"bytes", file.bytes},
                                       {"sha256", file.sha256},
                                       {"crc32", file.crc32}});
    json["command_line"] = commandLine;
    if (!report.timelinePath.empty())
        json["timeline"] = report.timelinePath;
    return json;
}

} // namespace etsim::platform
