#pragma once
// A summary of a Chakra trace for people and scripts (`etsim trace info`): ranks, nodes per
// type, collectives by type and size, total work and bytes, and the longest dependency chain
// of each rank. Streams every node once; keeps a TraceGraph per rank (freed after the rank)
// and one duration per node for the chain.

#include "et_driver/TraceSet.h"

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace etsim::et {

// The edges a dependency chain follows.
enum class ChainEdges { Data, Ctrl, DataAndCtrl };
// "data", "ctrl", "data+ctrl".
const char* chainEdgesName(ChainEdges edges);

struct CollectiveInfo {
    uint64_t count = 0;
    // Sum of comm_size, bytes.
    uint64_t totalBytes = 0;
    // Number of collectives per comm_size (bytes); collectives without comm_size are under -1.
    std::map<int64_t, uint64_t> countBySize;
};

struct RankInfo {
    uint32_t rank = 0;
    std::string file;
    bool metadataPresent = false;
    std::string metadataVersion;
    uint64_t nodes = 0;
    ChainEdges chainEdges = ChainEdges::Data;
    // Most nodes on one dependency chain.
    uint64_t longestChainNodes = 0;
    // Whether any node has a duration; the critical path is only meaningful then.
    bool hasDurations = false;
    // Largest summed duration_micros over the dependency chains, and the nodes on that chain.
    uint64_t criticalPathMicros = 0;
    uint64_t criticalPathNodes = 0;
    // Nodes left out of the chains because they are on a cycle or wait for one.
    uint64_t nodesOnCycles = 0;
};

struct TraceInfo {
    uint32_t ranks = 0;
    uint64_t nodes = 0;
    // Keyed by the NodeType number (numbers outside the enum are kept as they are).
    std::map<int32_t, uint64_t> nodesByType;
    // Keyed by the comm_type value; COMM_COLL_NODEs without comm_type are under -1.
    std::map<int32_t, CollectiveInfo> collectives;
    // Sum of num_ops (operations), of tensor_size and of comm_size over comm nodes (bytes).
    // Negative values are not added.
    uint64_t totalNumOps = 0;
    uint64_t totalTensorBytes = 0;
    uint64_t totalCommBytes = 0;
    std::vector<RankInfo> rankInfos;
};

struct TraceInfoOptions {
    // Edges of the dependency chains; by default data edges, or control edges for a file whose
    // nodes have control dependencies only (legacy text-converter traces, spec 7.1).
    std::optional<ChainEdges> chainEdges;
};

// The rank of a file named name.<rank>.et or name.<rank>.et.gz; nullopt for other names.
std::optional<uint32_t> rankFromFileName(const std::filesystem::path& file);

// A file, a prefix or a folder (as TraceSet takes them). Throws TraceError for files that
// cannot be found or read to the end.
TraceInfo readTraceInfo(const std::filesystem::path& fileOrPrefix, TraceInfoOptions options = {});
TraceInfo readTraceInfo(TraceSet& set, TraceInfoOptions options = {});

} // namespace etsim::et
