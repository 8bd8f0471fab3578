#include "platforms/partition/PartitionPlan.h"

#include "kernel/Error.h"
#include "kernel/Units.h"

#include <algorithm>
#include <limits>
#include <ostream>
#include <string>

namespace etsim::platform {

namespace {

// Unit u of n goes to partition floor(u * k / n): contiguous blocks whose sizes differ by at
// most one, in order.
std::uint32_t blockOf(std::uint64_t unit, std::uint64_t units, std::uint32_t partitions)
{
    return static_cast<std::uint32_t>(unit * partitions / units);
}

std::vector<std::uint32_t> stridesOf(const net::NetConfig& fabric)
{
    std::vector<std::uint32_t> strides;
    std::uint32_t stride = 1;
    for (const net::DimConfig& dim : fabric.dims) {
        strides.push_back(stride);
        stride *= dim.size;
    }
    return strides;
}

// Contiguous blocks of `unitRanks` ranks each.
void splitUnits(PartitionPlan& plan, std::uint32_t unitRanks)
{
    const std::uint32_t units = plan.ranks / unitRanks;
    for (std::uint32_t rank = 0; rank < plan.ranks; ++rank)
        plan.owner[rank] = blockOf(rank / unitRanks, units, plan.partitions);
}

// auto on a multi-dimensional topology: slices of the innermost dimensions, as large as
// still give every partition at least one, so that only the outermost dimensions are cut.
std::string splitOutermost(PartitionPlan& plan, const net::NetConfig& fabric)
{
    const std::vector<std::uint32_t> strides = stridesOf(fabric);
    std::size_t first = fabric.dims.size(); // first dimension that is cut
    while (first > 0 && plan.ranks / strides[first - 1] < plan.partitions)
        --first;
    // plan.partitions <= ranks, so dimension 0 (stride 1) always qualifies.
    first = first == 0 ? 0 : first - 1;
    splitUnits(plan, strides[first]);
    const std::size_t last = fabric.dims.size() - 1;
    std::string text = first == last
                           ? "by the outermost dimension (dimension " + std::to_string(last) + ")"
                           : "by the outermost dimensions (dimensions " + std::to_string(first) +
                                 "-" + std::to_string(last) + ")";
    if (first > 0)
        text += ", whole slices of dimension" + std::string(first > 1 ? "s 0-" : " ") +
                std::to_string(first - 1) + " (" + std::to_string(strides[first]) + " ranks each)";
    return text;
}

std::string splitByDim(PartitionPlan& plan, const net::NetConfig& fabric, const std::string& arg)
{
    const std::string option = "--partition-by dim:" + arg;
    if (fabric.topologyKind != net::TopologyKind::MultiDim)
        throw Error(option + ": a fat_tree fabric has no dimensions; use --partition-by auto, "
                             "nodes or ranks");
    std::size_t used = 0;
    unsigned long dim = 0;
    try {
        dim = std::stoul(arg, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used == 0 || used != arg.size())
        throw Error(option + ": write a dimension index, e.g. dim:0");
    if (dim >= fabric.dims.size())
        throw Error(option + ": the fabric has " + std::to_string(fabric.dims.size()) +
                    " dimensions (0-" + std::to_string(fabric.dims.size() - 1) + ")");
    const std::uint32_t size = fabric.dims[dim].size;
    if (size < plan.partitions)
        throw Error(option + ": dimension " + std::to_string(dim) + " has " + std::to_string(size) +
                    " members, fewer than the " + std::to_string(plan.partitions) +
                    " partitions; pick a larger dimension or fewer --partitions");
    const std::uint32_t stride = stridesOf(fabric)[dim];
    for (std::uint32_t rank = 0; rank < plan.ranks; ++rank)
        plan.owner[rank] = blockOf(rank / stride % size, size, plan.partitions);
    return "by dimension " + std::to_string(dim) + " (ranges of its " + std::to_string(size) +
           " coordinates)";
}

// The fastest a message can cross one hop of latency `latency` in this fidelity, ps: the
// ASTRA-sim fidelities count whole nanoseconds, rounded down.
std::uint64_t hopFloorPs(const net::NetConfig& fabric, Time latency)
{
    const bool astra = fabric.fidelity == net::Fidelity::AstraAware ||
                       fabric.fidelity == net::Fidelity::AstraUnaware;
    return astra ? latency.ps() / 1000 * 1000 : latency.ps();
}

void findLookahead(PartitionPlan& plan, const net::NetConfig& fabric)
{
    if (plan.partitions == 1) {
        plan.lookaheadReason = "one partition: nothing crosses";
        return;
    }
    // astra_aware: a message goes on in another process at the first link that process times,
    // one link after it entered a cut dimension (net::Partitioning::LinkOwners).
    const bool linkOwners =
        net::abilitiesOf(fabric.fidelity).partitioning == net::Partitioning::LinkOwners;
    std::uint64_t best = std::numeric_limits<std::uint64_t>::max();
    std::string reason;
    if (linkOwners && fabric.topologyKind == net::TopologyKind::FatTree)
        throw Error("--partitions " + std::to_string(plan.partitions) + ": a partitioned " +
                    std::string(enumName(net::fidelityNames, fabric.fidelity)) +
                    " run needs a multi_dim fabric: the links between a fat tree's switches "
                    "queue the messages of ranks of every process, and each link's queue must "
                    "live in one process; run in one process, or use astra_unaware");
    if (fabric.topologyKind == net::TopologyKind::FatTree) {
        // Every route between two endpoints goes up a host link and down another.
        plan.cutDims.push_back(0);
        best = 2 * hopFloorPs(fabric, fabric.fatTree.hostLatency);
        reason = "2 host links of the fat tree at " + toString(fabric.fatTree.hostLatency);
    } else {
        const std::vector<std::uint32_t> strides = stridesOf(fabric);
        for (std::uint32_t dim = 0; dim < fabric.dims.size(); ++dim) {
            const std::uint32_t stride = strides[dim];
            const std::uint32_t size = fabric.dims[dim].size;
            bool cut = false;
            for (std::uint32_t rank = 0; rank < plan.ranks && !cut; ++rank) {
                const std::uint32_t lineStart = rank - rank / stride % size * stride;
                cut = plan.owner[rank] != plan.owner[lineStart];
            }
            if (!cut)
                continue;
            plan.cutDims.push_back(dim);
            const net::DimConfig& config = fabric.dims[dim];
            // A switch dimension's transfer crosses two links (up to the switch and down);
            // with link owners it changes process after the first.
            const std::uint32_t hops = config.kind == net::DimKind::Switch && !linkOwners ? 2 : 1;
            const std::uint64_t route = hops * hopFloorPs(fabric, config.latency);
            if (route < best) {
                best = route;
                reason = std::to_string(hops) + (hops == 1 ? " link" : " links") +
                         " of dimension " + std::to_string(dim) + " (" +
                         std::string(enumName(net::dimKindNames, config.kind)) + ") at " +
                         toString(config.latency);
            }
        }
    }
    if (best == 0)
        throw Error("--partitions " + std::to_string(plan.partitions) +
                    ": the links across the "
                    "cut (" +
                    reason +
                    ") take no time, so a partitioned run has no lookahead "
                    "to synchronise with; give them a latency (at least 1 ns in the astra "
                    "fidelities) or split elsewhere with --partition-by");
    if (linkOwners) {
        // A hand-over pays no message delay; but the process that times a message's last link
        // tells the sender's process when it arrived (the send completes then), which is at
        // least the last link's latency and the message delay later (a NIC's ejection link
        // has no latency).
        std::uint64_t lastLink = fabric.nicBandwidth.bytesPerSecond() > 0.0
                                     ? 0
                                     : std::numeric_limits<std::uint64_t>::max();
        std::uint32_t fastest = 0;
        for (std::uint32_t dim = 0; dim < fabric.dims.size(); ++dim) {
            const std::uint64_t hop = hopFloorPs(fabric, fabric.dims[dim].latency);
            if (hop < lastLink) {
                lastLink = hop;
                fastest = dim;
            }
        }
        lastLink += fabric.messageDelay.ps();
        if (lastLink < best) {
            best = lastLink;
            reason =
                lastLink == fabric.messageDelay.ps() && fabric.nicBandwidth.bytesPerSecond() > 0.0
                    ? "a NIC ejection link (no latency) before a send's completion goes back"
                    : "1 link of dimension " + std::to_string(fastest) + " at " +
                          toString(fabric.dims[fastest].latency) +
                          " before a send's completion goes back";
            if (fabric.messageDelay.ps() != 0)
                reason += ", plus the message delay of " + toString(fabric.messageDelay);
        }
        if (best == 0)
            throw Error("--partitions " + std::to_string(plan.partitions) + ": " + reason +
                        " takes no time, so a partitioned run has no lookahead to synchronise "
                        "with; give the links a latency (at least 1 ns)");
        plan.lookaheadPs = best;
        plan.lookaheadReason = reason;
        return;
    }
    plan.lookaheadPs = best + fabric.messageDelay.ps();
    plan.lookaheadReason = reason;
    if (fabric.messageDelay.ps() != 0)
        plan.lookaheadReason += ", plus the message delay of " + toString(fabric.messageDelay);
}

} // namespace

std::vector<std::uint32_t> PartitionPlan::ranksOf(std::uint32_t partition) const
{
    std::vector<std::uint32_t> result;
    for (std::uint32_t rank = 0; rank < owner.size(); ++rank)
        if (owner[rank] == partition)
            result.push_back(rank);
    return result;
}

PartitionPlan planPartitions(const PlatformConfig& config, const PartitionRequest& request)
{
    const std::string option = "--partitions " + std::to_string(request.partitions);
    if (request.partitions == 0)
        throw Error(option + ": a run needs at least one partition");
    if (request.partitions > config.ranks)
        throw Error(option + ": the platform has " + std::to_string(config.ranks) +
                    " ranks; give at most " + std::to_string(config.ranks) + " partitions");
    PartitionPlan plan;
    plan.partitions = request.partitions;
    plan.ranks = config.ranks;
    plan.owner.assign(config.ranks, 0);
    const net::NetConfig& fabric = config.fabric;
    const std::string& by = request.by;
    const bool multiDim = fabric.topologyKind == net::TopologyKind::MultiDim;
    const std::uint32_t perNode = config.ranksPerNode == 0 ? config.ranks : config.ranksPerNode;
    if (by == "auto" && multiDim && !fabric.dims.empty()) {
        plan.scheme = splitOutermost(plan, fabric);
    } else if (by == "nodes" || (by == "auto" && config.ranks / perNode >= request.partitions)) {
        if (config.ranks / perNode < request.partitions)
            throw Error("--partition-by nodes: the platform has " +
                        std::to_string(config.ranks / perNode) + " nodes of " +
                        std::to_string(perNode) + " ranks (ranks_per_node), fewer than the " +
                        std::to_string(request.partitions) +
                        " partitions; use --partition-by ranks or fewer --partitions");
        splitUnits(plan, perNode);
        plan.scheme = "by nodes (whole nodes of " + std::to_string(perNode) + " ranks)";
    } else if (by == "ranks" || by == "auto") {
        splitUnits(plan, 1);
        plan.scheme = "by ranks (contiguous blocks)";
    } else if (by.rfind("dim:", 0) == 0) {
        plan.scheme = splitByDim(plan, fabric, by.substr(4));
    } else {
        throw Error("--partition-by " + by + ": not a split; use auto, nodes, ranks or dim:N");
    }
    findLookahead(plan, fabric);
    return plan;
}

std::optional<std::string> partitionsRefusal(std::uint32_t partitions, bool mpiBuilt)
{
    if (mpiBuilt || partitions <= 1)
        return std::nullopt;
    return "--partitions " + std::to_string(partitions) +
           ": this etsim was built without MPI, so it runs in one process only; install OpenMPI "
           "(scripts/install-deps.sh installs libopenmpi-dev and openmpi-bin), rebuild, and "
           "start the run with mpirun -n " +
           std::to_string(partitions) + " (--explain-partition prints the split without MPI)";
}

std::string formatRankRanges(const std::vector<std::uint32_t>& ranks)
{
    std::string text;
    for (std::size_t first = 0; first < ranks.size();) {
        std::size_t last = first;
        while (last + 1 < ranks.size() && ranks[last + 1] == ranks[last] + 1)
            ++last;
        text += (text.empty() ? "" : ",") + std::to_string(ranks[first]);
        if (last > first)
            text += "-" + std::to_string(ranks[last]);
        first = last + 1;
    }
    return text;
}

void writePartitionPlan(std::ostream& out, const PartitionPlan& plan)
{
    out << "partitions: " << plan.partitions << " processes for " << plan.ranks << " ranks, "
        << plan.scheme << "\n";
    for (std::uint32_t partition = 0; partition < plan.partitions; ++partition) {
        const std::vector<std::uint32_t> ranks = plan.ranksOf(partition);
        out << "  partition " << partition << ": " << ranks.size()
            << " ranks: " << formatRankRanges(ranks) << "\n";
    }
    if (plan.partitions > 1) {
        out << "cut dimensions:";
        for (std::uint32_t dim : plan.cutDims)
            out << " " << dim;
        out << "\n";
    }
    out << "lookahead: " << toString(Time::fromPs(plan.lookaheadPs)) << " (" << plan.lookaheadReason
        << ")\n";
}

} // namespace etsim::platform
