#include "platforms/partition/PartitionedJob.h"

#include "kernel/Error.h"
#include "kernel/ScTime.h"
#include "kernel/Simulation.h"
#include "kernel/Stats.h"
#include "kernel/Units.h"
#include "platforms/BreakdownSweep.h"
#include "platforms/JobSummary.h"
#include "platforms/Platform.h"
#include "platforms/TimelineTracks.h"
#include "platforms/TraceHashes.h"
#include "platforms/partition/PartitionSync.h"
#include "platforms/partition/PartitionTimeline.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

namespace etsim::platform {

namespace {

// The fabric's way out: messages to ranks of other partitions go to the synchronisation.
class SyncLink final : public net::PartitionLink {
public:
    SyncLink(const PartitionPlan& plan, PartitionSync& sync, std::uint32_t self)
        : plan(plan), sync(sync), self(self)
    {
    }
    bool isLocal(std::uint32_t rank) const override { return plan.owner.at(rank) == self; }
    bool together(std::uint32_t a, std::uint32_t b) const override
    {
        return plan.owner.at(a) == plan.owner.at(b);
    }
    void depart(const net::CrossMessage& message) override
    {
        sync.depart(plan.owner.at(message.via), message);
    }

private:
    const PartitionPlan& plan;
    PartitionSync& sync;
    std::uint32_t self;
};

std::uint64_t psOf(const sc_core::sc_time& time)
{
    return fromScTime(time).ps();
}

// The time of this process's next event, or neverPs.
std::uint64_t nextEventPs(const Simulation& simulation)
{
    if (simulation.ended() || !sc_core::sc_pending_activity())
        return neverPs;
    return psOf(simulation.now()) + psOf(sc_core::sc_time_to_pending_activity());
}

// The largest of every process's `value`, known to all of them.
std::uint64_t
maxOverPartitions(PartitionTransport& transport, std::uint64_t value, std::uint64_t nowPs)
{
    std::vector<std::uint8_t> bytes(8);
    for (int at = 0; at < 8; ++at)
        bytes[at] = static_cast<std::uint8_t>(value >> (8 * at));
    std::vector<std::vector<std::uint8_t>> outgoing(transport.partitions(), bytes);
    outgoing[transport.self()].clear();
    const std::vector<std::vector<std::uint8_t>> incoming = transport.exchange(outgoing, nowPs);
    std::uint64_t largest = value;
    for (std::uint32_t peer = 0; peer < incoming.size(); ++peer) {
        if (peer == transport.self())
            continue;
        if (incoming[peer].size() != 8)
            throw PartitionFailure("partition " + std::to_string(peer) +
                                   " sent a broken simulated time");
        std::uint64_t theirs = 0;
        for (int at = 0; at < 8; ++at)
            theirs |= std::uint64_t{incoming[peer][at]} << (8 * at);
        largest = std::max(largest, theirs);
    }
    return largest;
}

// A node of ranks split between processes has no process that sees all of its ranks, which
// its utilisation track (their mean) needs.
void requireWholeNodesForNodeTracks(const PlatformConfig& platform,
                                    const TimelineSpec& spec,
                                    const PartitionPlan& plan)
{
    if (spec.path.empty() || !spec.nodeTracks)
        return;
    const std::uint32_t perNode = platform.ranksPerNode;
    for (std::uint32_t first = 0; first < platform.ranks; first += perNode)
        for (std::uint32_t rank = first + 1; rank < first + perNode && rank < platform.ranks;
             ++rank)
            if (plan.owner[rank] != plan.owner[first])
                throw Error("--timeline: node " + std::to_string(first / perNode) + " (ranks " +
                            std::to_string(first) + "-" + std::to_string(first + perNode - 1) +
                            ") is split between partitions " + std::to_string(plan.owner[first]) +
                            " and " + std::to_string(plan.owner[rank]) +
                            ", and its utilisation track is the mean over all its ranks: "
                            "partition by whole nodes (--partition-by nodes or auto) or leave "
                            "the node tracks out (--timeline-no-node-tracks)");
}

// ---------------------------------------------------------------------------------------------
// A process's share of the report, as JSON for the trip to partition 0.

nlohmann::json breakdownJson(const RankBreakdown& rank)
{
    return {rank.rank,
            rank.finishPs,
            rank.computePs,
            rank.memoryPs,
            rank.exposedCommPs,
            rank.idlePs,
            rank.commPs,
            rank.overlapPs,
            rank.astraExposedCommPs,
            rank.nodes};
}

RankBreakdown breakdownOf(const nlohmann::json& json)
{
    RankBreakdown rank;
    rank.rank = json.at(0);
    rank.finishPs = json.at(1);
    rank.computePs = json.at(2);
    rank.memoryPs = json.at(3);
    rank.exposedCommPs = json.at(4);
    rank.idlePs = json.at(5);
    rank.commPs = json.at(6);
    rank.overlapPs = json.at(7);
    rank.astraExposedCommPs = json.at(8);
    rank.nodes = json.at(9);
    return rank;
}

struct Share {
    std::uint32_t partition = 0;
    std::string outcome;
    std::string problem;
    std::uint64_t simulatedPs = 0;
    std::uint64_t events = 0;
    double wallSeconds = 0.0;
    std::uint64_t nodes = 0;
    std::uint64_t fallbacks = 0;
    std::vector<RankBreakdown> ranks;
    std::vector<std::pair<std::uint32_t, RankResources>> resources;
    std::vector<net::CollectiveRecord> collectives;
    std::vector<LinkUsage> links;
    std::string linksUnavailable;
    std::vector<std::pair<std::uint32_t, TraceFileInfo>> files;
    std::vector<std::string> shutdownProblems;
};

std::vector<std::uint8_t> encodeShare(const Share& share)
{
    nlohmann::json json;
    json["partition"] = share.partition;
    json["outcome"] = share.outcome;
    json["problem"] = share.problem;
    json["simulated_ps"] = share.simulatedPs;
    json["events"] = share.events;
    json["wall_seconds"] = share.wallSeconds;
    json["nodes"] = share.nodes;
    json["fallbacks"] = share.fallbacks;
    json["ranks"] = nlohmann::json::array();
    for (const RankBreakdown& rank : share.ranks)
        json["ranks"].push_back(breakdownJson(rank));
    json["resources"] = nlohmann::json::array();
    for (const auto& [rank, used] : share.resources)
        json["resources"].push_back({rank,
                                     used.tensorBusy,
                                     used.flops,
                                     used.hbmBytes,
                                     used.onChip.hits,
                                     used.onChip.hitBytes,
                                     used.onChip.misses,
                                     used.onChip.missBytes,
                                     used.onChip.evictions,
                                     used.onChip.writebackBytes,
                                     used.onChip.untrackedNodes});
    json["collectives"] = nlohmann::json::array();
    for (const net::CollectiveRecord& record : share.collectives)
        json["collectives"].push_back({static_cast<int>(record.type),
                                       record.bytes,
                                       record.ranks,
                                       record.group,
                                       record.sequence,
                                       record.startPs,
                                       record.endPs});
    json["links"] = nlohmann::json::array();
    for (const LinkUsage& link : share.links)
        json["links"].push_back({link.name, link.bytes, link.busyPs});
    json["links_unavailable"] = share.linksUnavailable;
    json["files"] = nlohmann::json::array();
    for (const auto& [rank, file] : share.files)
        json["files"].push_back({rank, file.path, file.bytes, file.sha256, file.crc32});
    json["shutdown_problems"] = share.shutdownProblems;
    const std::string text = json.dump();
    return {text.begin(), text.end()};
}

Share decodeShare(const std::vector<std::uint8_t>& bytes, std::uint32_t from)
{
    try {
        const nlohmann::json json = nlohmann::json::parse(bytes.begin(), bytes.end());
        Share share;
        share.partition = json.at("partition");
        share.outcome = json.at("outcome");
        share.problem = json.at("problem");
        share.simulatedPs = json.at("simulated_ps");
        share.events = json.at("events");
        share.wallSeconds = json.at("wall_seconds");
        share.nodes = json.at("nodes");
        share.fallbacks = json.at("fallbacks");
        for (const nlohmann::json& rank : json.at("ranks"))
            share.ranks.push_back(breakdownOf(rank));
        for (const nlohmann::json& used : json.at("resources"))
            share.resources.emplace_back(used.at(0).get<std::uint32_t>(),
                                         RankResources{used.at(1),
                                                       used.at(2),
                                                       used.at(3),
                                                       OnChipSummary{used.at(4),
                                                                     used.at(5),
                                                                     used.at(6),
                                                                     used.at(7),
                                                                     used.at(8),
                                                                     used.at(9),
                                                                     used.at(10)}});
        for (const nlohmann::json& record : json.at("collectives")) {
            net::CollectiveRecord entry;
            entry.type = static_cast<CollectiveType>(record.at(0).get<int>());
            entry.bytes = record.at(1);
            entry.ranks = record.at(2);
            entry.group = record.at(3);
            entry.sequence = record.at(4);
            entry.startPs = record.at(5);
            entry.endPs = record.at(6);
            share.collectives.push_back(entry);
        }
        for (const nlohmann::json& link : json.at("links"))
            share.links.push_back({link.at(0), link.at(1), link.at(2)});
        share.linksUnavailable = json.at("links_unavailable");
        for (const nlohmann::json& file : json.at("files"))
            share.files.emplace_back(file.at(0).get<std::uint32_t>(),
                                     TraceFileInfo{file.at(1), file.at(2), file.at(3), file.at(4)});
        share.shutdownProblems = json.at("shutdown_problems").get<std::vector<std::string>>();
        return share;
    } catch (const std::exception& error) {
        throw PartitionFailure("partition " + std::to_string(from) +
                               " sent a broken share of the report: " + error.what());
    }
}

// One record per collective: a share holds its members' first post and last completion.
std::vector<net::CollectiveRecord> mergeCollectives(const std::vector<Share>& shares)
{
    std::map<std::pair<std::uint64_t, std::uint64_t>, net::CollectiveRecord> byKey;
    for (const Share& share : shares)
        for (const net::CollectiveRecord& record : share.collectives) {
            auto [entry, fresh] = byKey.try_emplace({record.group, record.sequence}, record);
            if (!fresh) {
                entry->second.startPs = std::min(entry->second.startPs, record.startPs);
                entry->second.endPs = std::max(entry->second.endPs, record.endPs);
            }
        }
    std::vector<net::CollectiveRecord> merged;
    for (auto& [key, record] : byKey)
        merged.push_back(record);
    return merged;
}

RunReport mergeShares(const std::vector<Share>& shares, const PlatformConfig& platform)
{
    RunReport report;
    report.platformName = platform.name;
    report.platform = platform.resolved;
    report.outcome = "finished";
    std::vector<std::pair<std::uint32_t, RankResources>> resources;
    std::map<std::uint32_t, TraceFileInfo> files;
    for (const Share& share : shares) {
        if (share.outcome != "finished" && report.outcome == "finished")
            report.outcome = share.outcome;
        if (!share.problem.empty())
            report.problem += (report.problem.empty() ? "" : "\n") + std::string("partition ") +
                              std::to_string(share.partition) + ": " + share.problem;
        report.simulatedPs = std::max(report.simulatedPs, share.simulatedPs);
        report.events += share.events;
        report.wallSeconds = std::max(report.wallSeconds, share.wallSeconds);
        report.nodes += share.nodes;
        report.fallbacks += share.fallbacks;
        report.ranks.insert(report.ranks.end(), share.ranks.begin(), share.ranks.end());
        resources.insert(resources.end(), share.resources.begin(), share.resources.end());
        for (const auto& [rank, file] : share.files)
            files.emplace(rank, file);
        for (const std::string& problem : share.shutdownProblems)
            report.shutdownProblems.push_back(problem);
    }
    report.finished = report.outcome == "finished";
    std::sort(report.ranks.begin(), report.ranks.end(), [](const auto& a, const auto& b) {
        return a.rank < b.rank;
    });
    std::sort(resources.begin(), resources.end(), [](const auto& a, const auto& b) {
        return a.first < b.first;
    });
    for (auto& [rank, file] : files)
        report.traceFiles.push_back(file);
    report.collectives = summariseCollectives(mergeCollectives(shares));
    // Every process has every link; each counted the messages it sent.
    std::vector<LinkUsage> links = shares.front().links;
    std::uint64_t sharedLinks = 0;
    for (std::size_t link = 0; link < links.size(); ++link) {
        std::uint32_t users = links[link].bytes > 0 ? 1 : 0;
        for (std::size_t share = 1; share < shares.size(); ++share) {
            if (link >= shares[share].links.size())
                continue;
            const LinkUsage& theirs = shares[share].links[link];
            users += theirs.bytes > 0 ? 1 : 0;
            links[link].bytes += theirs.bytes;
            links[link].busyPs += theirs.busyPs;
        }
        sharedLinks += users > 1 ? 1 : 0;
    }
    std::string linksUnavailable = shares.front().linksUnavailable;
    // Where flows share links (flow fidelity), a link busy in two processes at once would be
    // counted twice: its busy time is the union of theirs, which no process saw.
    if (linksUnavailable.empty() && sharedLinks > 0 &&
        net::abilitiesOf(platform.fabric.fidelity).partitioning ==
            net::Partitioning::PerProcessSharing)
        linksUnavailable =
            std::to_string(sharedLinks) +
            " links carried messages of more than one process; a partitioned " +
            std::string(enumName(net::fidelityNames, platform.fabric.fidelity)) +
            " run shares a link only between the messages of one process, so messages of two "
            "processes that met on one ran as if alone (docs/partitioned-runs.md); run in one "
            "process for exact link figures and times";
    if (!linksUnavailable.empty())
        links.clear();
    std::vector<RankResources> perRank;
    for (const auto& [rank, used] : resources)
        perRank.push_back(used);
    summariseResources(
        report.resources, platform, report.simulatedPs, perRank, links, linksUnavailable);
    return report;
}

} // namespace

RunReport runPartitionedJob(const PlatformConfig& platform,
                            const JobSpec& job,
                            const JobOptions& options,
                            const PartitionPlan& plan,
                            PartitionTransport& transport)
{
    const std::uint32_t self = transport.self();
    if (transport.partitions() != plan.partitions)
        throw Error("--partitions " + std::to_string(plan.partitions) + ": mpirun started " +
                    std::to_string(transport.partitions()) +
                    " processes; start the run with "
                    "mpirun -n " +
                    std::to_string(plan.partitions));
    const TimelineSpec& spec = options.timeline;
    requireWholeNodesForNodeTracks(platform, spec, plan);
    // A link's busy slices merge the messages of every rank that uses it, and a process
    // sees only its own ranks' messages.
    if (spec.linkTracks.value_or(false))
        throw Error("--timeline-links on: a partitioned run draws no link tracks, because a "
                    "link's busy slices join the messages of ranks in every process; leave "
                    "the option out, or run in one process for them");
    const std::vector<bool> drawn = drawnRanks(platform, spec);
    const bool allRanks = drawsEveryRank(drawn);
    std::vector<bool> local(platform.ranks);
    for (std::uint32_t rank = 0; rank < platform.ranks; ++rank)
        local[rank] = plan.owner[rank] == self;

    TraceInput input(job.trace, job.replicate, local);
    // Hashed beside the run (TraceHashes.h).
    TraceHashes hashes(input.filesToHash());
    checkTraceRanks(input.rankCount(), platform, job);
    SimulationOptions simulationOptions;
    simulationOptions.logSpec = options.logSpec;
    simulationOptions.eventsFromOutside = true;
    Simulation simulation(simulationOptions);
    StatGroup stats("platform");
    Platform built("platform", platform, simulation, stats, ComponentRegistry::defaults(), local);
    PartitionSync sync(plan.partitions, self, plan.lookaheadPs);
    SyncLink link(plan, sync, self);
    built.fabric().setPartition(&link);
    // Swept as nodes finish; every interval is kept only for a timeline's utilisation tracks.
    RunBreakdowns breakdowns(platform.ranks, !spec.path.empty());
    built.onRecord(
        [&](const et::NodeRecord& record) { breakdowns.add(toUnderlying(record.rank), record); });
    std::optional<PartitionTimeline> timeline;
    if (!spec.path.empty())
        timeline.emplace(spec, self);
    built.attach(input.sources(),
                 job.groups,
                 &simulation.logs().get("et_driver"),
                 timeline && allRanks ? &timeline->timeline() : nullptr);
    if (timeline && !allRanks)
        drawRecords(built, timeline->timeline(), drawn, local);
    breakdowns.follow(built.drivers());
    simulation.elaborate();

    // Rounds: send what left and a grant, take in what came, run up to the bound.
    std::vector<std::vector<std::uint8_t>> outgoing(plan.partitions);
    // astra_aware: this process's links carry other processes' messages, also once its own
    // ranks are done and its kernel has ended; the fabric then runs on its own.
    const bool linkOwners =
        net::abilitiesOf(platform.fabric.fidelity).partitioning == net::Partitioning::LinkOwners;
    while (true) {
        const std::uint64_t nowPs = psOf(simulation.now());
        const std::uint64_t nextPs = simulation.ended() && linkOwners ? built.fabric().nextEventPs()
                                                                      : nextEventPs(simulation);
        std::vector<PartitionRound> rounds = sync.takeRounds(nextPs, nowPs);
        for (std::uint32_t peer = 0; peer < plan.partitions; ++peer)
            outgoing[peer] = peer == self ? std::vector<std::uint8_t>{} : encodeRound(rounds[peer]);
        const std::vector<std::vector<std::uint8_t>> incoming = transport.exchange(outgoing, nowPs);
        for (std::uint32_t peer = 0; peer < plan.partitions; ++peer)
            rounds[peer] = peer == self ? PartitionRound{} : decodeRound(incoming[peer], peer);
        sync.receiveRounds(rounds);
        // A process whose ranks are all done has no use for messages (none can be for them),
        // unless they pass through its links.
        if (!simulation.ended() || linkOwners)
            for (const PartitionRound& round : rounds)
                for (const net::CrossMessage& message : round.messages)
                    built.fabric().receive(message);
        if (sync.finished())
            break;
        const std::uint64_t bound = sync.bound();
        if (!simulation.ended() && bound > nowPs)
            simulation.advanceTo(bound == neverPs ? sc_core::sc_max_time()
                                                  : toScTime(Time::fromPs(bound)));
        else if (simulation.ended() && linkOwners && bound != neverPs)
            built.fabric().runAfterEnd(bound);
    }
    const RunResult result = simulation.conclude();

    Share share;
    share.partition = self;
    const std::vector<const et::RankDriver*> drivers = built.drivers();
    et::DeadlockScope scope;
    scope.ranks = platform.ranks;
    scope.elsewhere = [&plan, self](std::uint32_t rank) {
        return plan.owner[rank] == self ? std::string()
                                        : "partition " + std::to_string(plan.owner[rank]);
    };
    share.problem = et::deadlockReport(drivers, scope);
    share.outcome =
        result.outcome == RunOutcome::AllIdle && share.problem.empty() ? "finished" : "deadlock";
    share.events = result.deltaCycles;
    share.wallSeconds = result.wallSeconds;
    PartitionTimeline::Written written;
    if (timeline) {
        // The counters' samples span the whole run, as in one process.
        std::uint64_t finishPs = 0;
        for (const et::RankDriver* driver : drivers)
            finishPs = std::max(finishPs, driver->finishPs());
        const std::uint64_t nowPs = psOf(simulation.now());
        writeUtilisationTracks(timeline->timeline(),
                               platform,
                               spec,
                               drawn,
                               local,
                               breakdowns.intervals(),
                               maxOverPartitions(transport, finishPs, nowPs));
        written = timeline->gather(transport, nowPs);
    }
    for (const et::RankDriver* driver : drivers) {
        const std::uint32_t rank = toUnderlying(driver->rank());
        share.simulatedPs = std::max(share.simulatedPs, driver->finishPs());
        share.nodes += driver->nodesFinished();
        share.fallbacks += driver->fallbacks().total();
        share.ranks.push_back(breakdowns.finish(rank, driver->finishPs()));
        share.resources.emplace_back(rank, rankResources(stats, rank));
    }
    share.collectives = built.fabric().collectives();
    share.links = built.fabric().linkUsage();
    share.linksUnavailable = built.fabric().linkUsageUnavailable();
    share.files = hashes.take();
    share.shutdownProblems = built.shutdownProblems();

    const std::vector<std::vector<std::uint8_t>> shares =
        transport.gather(encodeShare(share), psOf(simulation.now()));
    if (self != 0) {
        RunReport own;
        own.outcome = share.outcome;
        own.finished = share.outcome == "finished";
        own.problem = share.problem;
        return own;
    }
    std::vector<Share> all;
    for (std::uint32_t peer = 0; peer < plan.partitions; ++peer)
        all.push_back(peer == 0 ? share : decodeShare(shares[peer], peer));
    RunReport report = mergeShares(all, platform);
    PartitionSummary split;
    split.count = plan.partitions;
    split.scheme = plan.scheme;
    for (std::uint32_t partition = 0; partition < plan.partitions; ++partition)
        split.ranks.push_back(static_cast<std::uint32_t>(plan.ranksOf(partition).size()));
    split.lookaheadPs = plan.lookaheadPs;
    report.partitions = std::move(split);
    if (timeline) {
        report.timelinePath = spec.path;
        report.timelineEvents = written.events;
        report.timelineBytes = written.bytes;
    }
    return report;
}

} // namespace etsim::platform
