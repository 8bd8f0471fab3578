// The end-of-run summary of `etsim trace import pytorch`, as text and as JSON.
#include "importers/pytorch/PytorchImport.h"

#include <iomanip>

namespace etsim::importers::pytorch {

namespace {

using nlohmann::json;

std::string us(int64_t ns)
{
    std::ostringstream out;
    out << std::fixed << std::setprecision(1) << static_cast<double>(ns) / 1000.0 << " us";
    return out.str();
}

// What was not written as a node, and why; the same list for text and JSON.
std::vector<std::pair<std::string, uint64_t>> dropped(const RankSummary& r)
{
    std::vector<std::pair<std::string, uint64_t>> out;
    out.emplace_back("thread/process root nodes (not operators)", r.rootNodes);
    out.emplace_back("wait records (completion of an earlier collective, not a collective)",
                     r.waitRecords);
    out.emplace_back("NCCL kernels merged into their collective's node", r.ncclKernelsMerged);
    out.emplace_back("GPU ops without a launching call in the Kineto trace, dropped on request",
                     r.kernelsDropped);
    out.emplace_back("host ops left out by --gpu-only", r.hostNodesDropped);
    out.emplace_back("Kineto host events with no host-trace op (time kept in the enclosing op)",
                     r.kinetoOpsWithoutHostOp);
    for (const auto& [why, count] : r.unknownCommRecords)
        out.emplace_back("record_param_comms with " + why +
                             " (kept as a host op, no "
                             "communication node)",
                         count);
    return out;
}

} // namespace

void printSummary(const ImportResult& result, std::ostream& out)
{
    for (const RankSummary& r : result.ranks) {
        out << "rank " << r.rank << " (from " << r.rankSource << "): " << r.hostFile;
        if (!r.kinetoFile.empty())
            out << " + " << r.kinetoFile;
        out << "\n  schema " << r.schema << "; host ops " << r.hostOps;
        if (!r.kinetoFile.empty())
            out << ", matched to Kineto events " << r.matchedOps << " of " << r.hostOps << " by "
                << r.matchedBy << "; GPU ops " << r.gpuEvents << ", " << r.kernelsWithoutHostOp
                << " without a launching host op";
        out << "\n  host ops with a GPU op " << r.hostOpsWithKernel << ", without "
            << r.hostOpsWithoutKernel;
        if (r.gpuNodesFromShapes > 0)
            out << "; GPU nodes from operator shapes (no Kineto) " << r.gpuNodesFromShapes;
        out << "\n";
        if (!r.kinetoFile.empty())
            out << "  NCCL kernels " << r.ncclKernels << ": " << r.ncclKernelsAttached
                << " attached to their collective, " << r.ncclKernelsWithoutCollective
                << " without one (kept as GPU compute); collectives without a kernel "
                << r.collectivesWithoutKernel << "\n";
        out << "  nodes " << r.nodes << ":";
        for (const auto& [type, count] : r.nodesByType)
            out << " " << type << " " << count << ";";
        out << "\n  collectives:";
        if (r.collectives.empty())
            out << " none";
        for (const auto& [key, count] : r.collectives)
            out << " " << key.first << " in group \"" << key.second << "\" x " << count << ";";
        out << "\n  edges: launch " << r.launchEdges << ", stream order " << r.streamEdges
            << ", tensor data " << r.dataEdges << ", cross-thread " << r.crossThreadEdges
            << ", CPU-GPU sync " << r.syncEdges << "\n";
        if (!r.kinetoFile.empty())
            out << "  host time: " << us(r.gapFoldedNs)
                << " outside any op folded into the next op, " << us(r.syncWaitNs)
                << " in synchronising calls left to the sync edges; ProfilerStep span "
                << us(r.stepSpanNs) << "\n";
        out << "  not written as nodes:";
        bool any = false;
        for (const auto& [why, count] : dropped(r))
            if (count > 0) {
                out << "\n    " << count << " " << why;
                any = true;
            }
        out << (any ? "\n" : " nothing\n");
    }
    if (result.harmonisedCollectives > 0)
        out << result.harmonisedCollectives
            << " all-to-all(v) collectives differ in size between ranks: comm_size is the "
               "largest rank's, comm_size_local each rank's own\n";
    for (const std::filesystem::path& file : result.written)
        out << "wrote " << file.string() << "\n";
}

json summaryJson(const ImportResult& result)
{
    json ranks = json::array();
    for (const RankSummary& r : result.ranks) {
        json types = json::object();
        for (const auto& [type, count] : r.nodesByType)
            types[type] = count;
        json collectives = json::array();
        for (const auto& [key, count] : r.collectives)
            collectives.push_back({{"type", key.first}, {"group", key.second}, {"count", count}});
        json notWritten = json::array();
        for (const auto& [why, count] : dropped(r))
            if (count > 0)
                notWritten.push_back({{"what", why}, {"count", count}});
        ranks.push_back({{"rank", r.rank},
                         {"rankFrom", r.rankSource},
                         {"host", r.hostFile},
                         {"kineto", r.kinetoFile},
                         {"schema", r.schema},
                         {"hostOps", r.hostOps},
                         {"matchedOps", r.matchedOps},
                         {"matchedBy", r.matchedBy},
                         {"gpuOps", r.gpuEvents},
                         {"gpuOpsWithoutHostOp", r.kernelsWithoutHostOp},
                         {"hostOpsWithGpuOp", r.hostOpsWithKernel},
                         {"hostOpsWithoutGpuOp", r.hostOpsWithoutKernel},
                         {"ncclKernels", r.ncclKernels},
                         {"ncclKernelsAttached", r.ncclKernelsAttached},
                         {"ncclKernelsWithoutCollective", r.ncclKernelsWithoutCollective},
                         {"collectivesWithoutKernel", r.collectivesWithoutKernel},
                         {"gpuNodesFromShapes", r.gpuNodesFromShapes},
                         {"nodes", r.nodes},
                         {"nodesByType", types},
                         {"collectives", collectives},
                         {"edges",
                          {{"launch", r.launchEdges},
                           {"stream", r.streamEdges},
                           {"data", r.dataEdges},
                           {"crossThread", r.crossThreadEdges},
                           {"sync", r.syncEdges}}},
                         {"gapFoldedNs", r.gapFoldedNs},
                         {"syncWaitNs", r.syncWaitNs},
                         {"profilerStepNs", r.stepSpanNs},
                         {"notWritten", notWritten}});
    }
    json files = json::array();
    for (const std::filesystem::path& file : result.written)
        files.push_back(file.string());
    return {{"ranks", ranks},
            {"worldSize", result.worldSize},
            {"collectivesPerRank", result.collectivesPerRank},
            {"harmonisedAllToAll", result.harmonisedCollectives},
            {"written", files}};
}

} // namespace etsim::importers::pytorch
