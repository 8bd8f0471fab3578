#pragma once
// `etsim trace import pytorch`: host execution traces (one per rank) and, optionally, the
// Kineto traces of the same run become one Chakra ET per rank, PREFIX.<rank>.et, plus
// PREFIX.comm_groups.json (docs/pytorch-import.md). Files are paired by the host process id
// (Kineto's distributedInfo rank when pids are ambiguous); collectives are checked across ranks
// by their sequence numbers. Memory: one rank's traces at a time.

#include "importers/pytorch/RankGraph.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

namespace etsim::importers::pytorch {

struct ImportRequest {
    std::vector<std::filesystem::path> hostFiles;
    std::vector<std::filesystem::path> kinetoFiles;
    // Output prefix DIR/NAME: DIR/NAME.<rank>.et.
    std::filesystem::path prefix;
    ImportOptions options;
    bool gzip = false;
};

struct ImportResult {
    std::vector<RankSummary> ranks;
    std::vector<std::filesystem::path> written;
    std::filesystem::path commGroupFile;
    int64_t worldSize = -1;
    // Collectives per rank (the same on every rank once checked).
    uint64_t collectivesPerRank = 0;
    // All-to-all(v) collectives whose per-rank sizes differed and were set to the largest.
    uint64_t harmonisedCollectives = 0;
};

// Runs the import. Throws etsim::Error for bad input (named file, node and fix); nothing is
// left at the output paths then (files are written under temporary names and renamed at the
// end).
ImportResult importPytorch(const ImportRequest& request);

// The end-of-run summary: what went to which rank, nodes by type, collectives by type and
// group, matching figures and everything that was not kept, with the reason.
void printSummary(const ImportResult& result, std::ostream& out);
nlohmann::json summaryJson(const ImportResult& result);

} // namespace etsim::importers::pytorch
