// The report of a run, for people (text) and for scripts (JSON, docs/report.md).
#include "kernel/Units.h"
#include "platforms/Job.h"

#include <iomanip>
#include <ostream>

namespace etsim::platform {

namespace {

double percent(std::uint64_t part, std::uint64_t whole)
{
    return whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole);
}

std::string formatPs(std::uint64_t ps)
{
    return toRoundedString(Time::fromPs(ps));
}

} // namespace

void writeReportText(std::ostream& out, const RunReport& report)
{
    out << "etsim run: " << (report.platformName.empty() ? "platform" : report.platformName) << ", "
        << report.ranks.size() << " ranks, " << report.nodes << " nodes, " << report.outcome
        << "\n";
    if (report.partitions) {
        // What the rest of the report does not say: how the run was split.
        out << report.partitions->count << " partitions (" << report.partitions->scheme
            << "), ranks per partition:";
        const char* separator = " ";
        for (std::uint32_t ranks : report.partitions->ranks) {
            out << separator << ranks;
            separator = ", ";
        }
        out << "; lookahead " << formatPs(report.partitions->lookaheadPs) << "\n";
    }
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
        std::uint64_t finish = 0;
        std::uint64_t compute = 0;
        std::uint64_t memory = 0;
        std::uint64_t comm = 0;
        std::uint64_t idle = 0;
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
            << toRoundedBytes(static_cast<double>(collective.bytes)) << ", " << std::setw(12)
            << formatPs(collective.timePs) << " total\n";
    }

    const ResourceSummary& resources = report.resources;
    out << "\nutilisation\n" << std::fixed << std::setprecision(1);
    out << "  tensor units busy " << 100.0 * resources.tensorBusy << " %, FLOP utilisation "
        << 100.0 * resources.flopUtilisation << " % of peak\n";
    out << "  HBM bandwidth " << 100.0 * resources.hbmUtilisation << " % of peak ("
        << toRoundedBytes(resources.hbmBytes) << " moved)\n";
    const OnChipSummary& onChip = resources.onChip;
    if (onChip.hits + onChip.misses + onChip.untrackedNodes > 0) {
        out << "  on-chip memory: " << std::setprecision(0) << onChip.hits << " hits ("
            << toRoundedBytes(onChip.hitBytes) << "), " << onChip.misses << " misses ("
            << toRoundedBytes(onChip.missBytes) << " from HBM), " << onChip.evictions
            << " evictions (" << toRoundedBytes(onChip.writebackBytes) << " written back)\n"
            << std::setprecision(1);
        if (onChip.untrackedNodes > 0)
            out << "  on-chip memory: " << std::setprecision(0) << onChip.untrackedNodes
                << " compute nodes untracked: they name no tensors (Chakra inputs/outputs), so "
                   "all their bytes came from HBM with no on-chip reuse\n"
                << std::setprecision(1);
    }
    for (const LinkSummary& link : resources.busiestLinks)
        out << "  link " << link.name << ": " << 100.0 * link.utilisation << " % busy, "
            << toRoundedBytes(link.bytes) << "\n";
    if (!resources.linksUnavailable.empty())
        out << "  link utilisation unavailable: " << resources.linksUnavailable << "\n";

    out << "\nsimulator: " << std::setprecision(3) << report.wallSeconds << " s wall, "
        << report.events << " events (" << std::setprecision(0)
        << (report.wallSeconds > 0 ? static_cast<double>(report.events) / report.wallSeconds : 0.0)
        << " events/s)";
    if (report.fallbacks > 0)
        out << ", " << report.fallbacks << " nodes ran as fallbacks (see the warnings)";
    out << "\n";
    if (report.profile) {
        const WallProfileSummary& profile = *report.profile;
        // Shares of the measured run, each part without the parts it called.
        auto line = [&](const std::string& part, double seconds, const std::string& entries) {
            const double share = profile.seconds > 0 ? 100.0 * seconds / profile.seconds : 0.0;
            out << "  " << std::left << std::setw(12) << part << std::right << std::setw(9)
                << std::setprecision(3) << seconds << " s " << std::setw(6) << std::setprecision(1)
                << share << " %" << entries << "\n";
        };
        out << "wall time by part (--profile, " << std::setprecision(3) << profile.seconds
            << " s measured):\n";
        for (const WallShare& part : profile.parts)
            line(part.part, part.seconds, "  " + std::to_string(part.entries) + " entries");
        line("other", profile.otherSeconds, "  (SystemC scheduler, unmarked code)");
        out << "  heap huge pages: " << profile.heapHugePages << "\n";
    }
    if (!report.timelinePath.empty())
        out << "timeline: " << report.timelinePath << " (" << report.timelineEvents << " events, "
            << toRoundedBytes(static_cast<double>(report.timelineBytes)) << ")\n";
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
                         {"on_chip",
                          {{"hits", report.resources.onChip.hits},
                           {"hit_bytes", report.resources.onChip.hitBytes},
                           {"misses", report.resources.onChip.misses},
                           {"miss_bytes", report.resources.onChip.missBytes},
                           {"evictions", report.resources.onChip.evictions},
                           {"writeback_bytes", report.resources.onChip.writebackBytes},
                           {"untracked_nodes", report.resources.onChip.untrackedNodes}}},
                         {"busiest_links", links}};
    if (!report.resources.linksUnavailable.empty())
        json["resources"]["links_unavailable"] = report.resources.linksUnavailable;
    json["wall_seconds"] = report.wallSeconds;
    json["events"] = report.events;
    if (report.partitions) {
        json["partitions"] = {{"count", report.partitions->count},
                              {"split", report.partitions->scheme},
                              {"ranks", report.partitions->ranks},
                              {"lookahead_ns", ns(report.partitions->lookaheadPs)}};
    }
    if (report.profile) {
        nlohmann::ordered_json parts = nlohmann::ordered_json::object();
        for (const WallShare& part : report.profile->parts)
            parts[part.part] = {{"seconds", part.seconds}, {"entries", part.entries}};
        json["profile"] = {{"seconds", report.profile->seconds},
                           {"parts", parts},
                           {"other_seconds", report.profile->otherSeconds},
                           {"heap_huge_pages", report.profile->heapHugePages}};
    }
    json["nodes"] = report.nodes;
    json["fallback_nodes"] = report.fallbacks;
    if (!report.finished)
        json["problem"] = report.problem;
    if (!report.shutdownProblems.empty())
        json["shutdown_problems"] = report.shutdownProblems;
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
