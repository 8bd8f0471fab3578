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
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <map>
#include <ostream>
#include <sstream>
#include <zlib.h>

namespace etsim::platform {

namespace {

TraceFileInfo describeFile(const std::filesystem::path& path)
{
    TraceFileInfo info;
    info.path = path.string();
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw Error(info.path + ": cannot open to hash it");
    std::array<char, 1 << 16> buffer{};
    uLong crc = crc32(0L, Z_NULL, 0);
    while (in) {
        in.read(buffer.data(), buffer.size());
        const std::streamsize got = in.gcount();
        if (got <= 0)
            break;
        crc = crc32(crc, reinterpret_cast<const Bytef*>(buffer.data()), static_cast<uInt>(got));
        info.bytes += static_cast<std::uint64_t>(got);
    }
    char hex[9];
    std::snprintf(hex, sizeof hex, "%08lx", static_cast<unsigned long>(crc));
    info.crc32 = hex;
    return info;
}

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

} // namespace

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
        list.push_back(describeFile(file.path));
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

    std::unique_ptr<Timeline> timeline;
    if (!options.timelinePath.empty())
        timeline = std::make_unique<Timeline>(options.timelinePath);
    // With a rank filter the drivers do not write the timeline; the selected ranks' nodes
    // are written from their records instead (without the dependency arrows).
    std::vector<std::vector<NodeInterval>> intervals(platform.ranks);
    built.onRecord([&](const et::NodeRecord& record) {
        ++nodesDone;
        intervals[toUnderlying(record.rank)].push_back(
            {record.issuePs, record.finishPs, record.engine});
    });
    const bool allRanks = options.timelineRanks.empty();
    built.attach(input.sources(),
                 job.groups,
                 &simulation.logs().get("et_driver"),
                 allRanks ? timeline.get() : nullptr);
    if (timeline && !allRanks) {
        std::vector<bool> wanted(platform.ranks, false);
        for (std::uint32_t rank : options.timelineRanks)
            if (rank < platform.ranks)
                wanted[rank] = true;
        for (std::uint32_t rank = 0; rank < platform.ranks; ++rank)
            if (wanted[rank])
                timeline->processName(rank, "rank " + std::to_string(rank), rank);
        built.onRecord([&timeline, wanted](const et::NodeRecord& record) {
            const std::uint32_t rank = toUnderlying(record.rank);
            if (!wanted[rank] || record.finishPs <= record.issuePs)
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

    for (const et::RankDriver* driver : drivers) {
        const std::uint32_t rank = toUnderlying(driver->rank());
        report.simulatedPs = std::max(report.simulatedPs, driver->finishPs());
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
    }

    if (timeline) {
        timeline->close();
        report.timelinePath = timeline->path();
        report.timelineEvents = timeline->eventCount();
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

    out << "\nsimulator: " << std::setprecision(3) << report.wallSeconds << " s wall, "
        << report.events << " events (" << std::setprecision(0)
        << (report.wallSeconds > 0 ? static_cast<double>(report.events) / report.wallSeconds : 0.0)
        << " events/s)";
    if (report.fallbacks > 0)
        out << ", " << report.fallbacks << " nodes ran as fallbacks (see the warnings)";
    out << "\n";
    if (!report.timelinePath.empty())
        out << "timeline: " << report.timelinePath << " (" << report.timelineEvents << " events)\n";
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
    json["wall_seconds"] = report.wallSeconds;
    json["events"] = report.events;
    json["nodes"] = report.nodes;
    json["fallback_nodes"] = report.fallbacks;
    if (!report.finished)
        json["problem"] = report.problem;
    json["platform"] = {{"name", report.platformName}, {"resolved", report.platform}};
    json["trace_files"] = nlohmann::ordered_json::array();
    for (const TraceFileInfo& file : report.traceFiles)
        json["trace_files"].push_back(
            {{"path", file.path}, {"bytes", file.bytes}, {"crc32", file.crc32}});
    json["command_line"] = commandLine;
    if (!report.timelinePath.empty())
        json["timeline"] = report.timelinePath;
    return json;
}

} // namespace etsim::platform
