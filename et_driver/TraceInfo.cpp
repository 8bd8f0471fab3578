#include "et_driver/TraceInfo.h"

#include "et_driver/TraceGraph.h"

#include <algorithm>

namespace etsim::et {

namespace fs = std::filesystem;

const char* chainEdgesName(ChainEdges edges)
{
    switch (edges) {
    case ChainEdges::Data:
        return "data";
    case ChainEdges::Ctrl:
        return "ctrl";
    case ChainEdges::DataAndCtrl:
        return "data+ctrl";
    }
    return "data";
}

namespace {

void addRank(TraceInfo& info, TraceReader& reader, uint32_t rank, const TraceInfoOptions& options)
{
    RankInfo rankInfo;
    rankInfo.rank = rank;
    rankInfo.file = reader.path().string();
    rankInfo.metadataPresent = reader.metadata().present;
    rankInfo.metadataVersion = reader.metadata().version();

    TraceGraph graph;
    std::vector<uint64_t> durations;
    TraceNode node;
    while (reader.next(node)) {
        graph.addNode(node.id, node.dataDeps, node.ctrlDeps, true);
        durations.push_back(node.durationMicros);
        rankInfo.hasDurations = rankInfo.hasDurations || node.durationMicros > 0;
        ++info.nodesByType[static_cast<int32_t>(node.type)];
        if (std::optional<int64_t> ops = node.numOps(); ops && *ops > 0)
            info.totalNumOps += static_cast<uint64_t>(*ops);
        if (std::optional<uint64_t> bytes = node.tensorSize())
            info.totalTensorBytes += *bytes;
        std::optional<int64_t> commBytes = node.commSize();
        bool comm = node.type == NodeType::CommColl || node.type == NodeType::CommSend ||
                    node.type == NodeType::CommRecv;
        if (comm && commBytes && *commBytes > 0)
            info.totalCommBytes += static_cast<uint64_t>(*commBytes);
        if (node.type == NodeType::CommColl) {
            CollectiveInfo& c = info.collectives[node.commType().value_or(-1)];
            ++c.count;
            if (commBytes && *commBytes > 0)
                c.totalBytes += static_cast<uint64_t>(*commBytes);
            ++c.countBySize[commBytes && *commBytes >= 0 ? *commBytes : -1];
        }
    }
    rankInfo.nodes = graph.size();
    info.nodes += graph.size();

    graph.resolve();
    if (options.chainEdges)
        rankInfo.chainEdges = *options.chainEdges;
    else
        rankInfo.chainEdges =
            graph.edgeCount(EdgeKind::Data) == 0 && graph.edgeCount(EdgeKind::Ctrl) > 0
                ? ChainEdges::Ctrl
                : ChainEdges::Data;
    EdgeMask mask{rankInfo.chainEdges != ChainEdges::Ctrl, rankInfo.chainEdges != ChainEdges::Data};

    // Longest paths over a topological order: each node extends the best chain of its deps.
    std::vector<uint32_t> order = graph.topologicalOrder(mask);
    rankInfo.nodesOnCycles = graph.size() - order.size();
    std::vector<uint32_t> chainNodes(graph.size(), 0);
    std::vector<uint64_t> pathMicros(graph.size(), 0);
    std::vector<uint32_t> pathNodes(graph.size(), 0);
    for (uint32_t v : order) {
        uint32_t bestChain = 0;
        uint64_t bestMicros = 0;
        uint32_t bestMicrosNodes = 0;
        auto visit = [&](EdgeKind kind) {
            for (const uint32_t* d = graph.depsBegin(v, kind); d != graph.depsEnd(v, kind); ++d) {
                bestChain = std::max(bestChain, chainNodes[*d]);
                if (pathMicros[*d] > bestMicros ||
                    (pathMicros[*d] == bestMicros && pathNodes[*d] > bestMicrosNodes)) {
                    bestMicros = pathMicros[*d];
                    bestMicrosNodes = pathNodes[*d];
                }
            }
        };
        if (mask.data)
            visit(EdgeKind::Data);
        if (mask.ctrl)
            visit(EdgeKind::Ctrl);
        chainNodes[v] = bestChain + 1;
        pathMicros[v] = bestMicros + durations[v];
        pathNodes[v] = bestMicrosNodes + 1;
        rankInfo.longestChainNodes = std::max<uint64_t>(rankInfo.longestChainNodes, chainNodes[v]);
        if (pathMicros[v] > rankInfo.criticalPathMicros ||
            (pathMicros[v] == rankInfo.criticalPathMicros &&
             pathNodes[v] > rankInfo.criticalPathNodes)) {
            rankInfo.criticalPathMicros = pathMicros[v];
            rankInfo.criticalPathNodes = pathNodes[v];
        }
    }
    info.rankInfos.push_back(std::move(rankInfo));
}

} // namespace

std::optional<uint32_t> rankFromFileName(const fs::path& file)
{
    std::string name = file.filename().string();
    for (const std::string suffix : {".et.gz", ".et"}) {
        if (name.size() <= suffix.size() ||
            name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
            continue;
        std::string stem = name.substr(0, name.size() - suffix.size());
        std::size_t dot = stem.rfind('.');
        std::string digits = dot == std::string::npos ? std::string() : stem.substr(dot + 1);
        if (digits.empty() || digits.size() > 9 ||
            !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
            return std::nullopt;
        return static_cast<uint32_t>(std::stoul(digits));
    }
    return std::nullopt;
}

TraceInfo readTraceInfo(const fs::path& fileOrPrefix, TraceInfoOptions options)
{
    std::error_code error;
    if (fs::is_regular_file(fileOrPrefix, error)) {
        TraceInfo info;
        info.ranks = 1;
        TraceReader reader(fileOrPrefix);
        addRank(info, reader, rankFromFileName(fileOrPrefix).value_or(0), options);
        return info;
    }
    TraceSet set(fileOrPrefix);
    return readTraceInfo(set, options);
}

TraceInfo readTraceInfo(TraceSet& set, TraceInfoOptions options)
{
    TraceInfo info;
    info.ranks = static_cast<uint32_t>(set.rankCount());
    for (uint32_t rank = 0; rank < info.ranks; ++rank) {
        addRank(info, set.reader(rank), rank, options);
        set.reader(rank).suspend();
    }
    return info;
}

} // namespace etsim::et
