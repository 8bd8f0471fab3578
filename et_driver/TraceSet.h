#pragma once
// All ranks of a multi-rank trace: the files `<prefix>.<rank>.et` (or `.et.gz`) for ranks
// 0..N-1, found from the prefix or from the folder holding them (spec 1.5).
//
// Readers are created on first use of a rank and hold a file descriptor only while needed:
// a reader closes its file at its end, and at most maxOpenFiles readers are open at once (the
// least recently used one is suspended when another needs its file). So thousands of ranks
// can be streamed side by side within the process's descriptor limit. By default the bound is
// most of that limit: a simulation reads its ranks round robin, and a least-recently-used bound
// below the rank count then suspends a reader at nearly every read.

#include "et_driver/TraceReader.h"

#include <cstdint>
#include <filesystem>
#include <list>
#include <memory>
#include <vector>

namespace etsim::et {

struct RankFile {
    uint32_t rank = 0;
    std::filesystem::path path;
};

// The rank files of a prefix ("dir/name" for dir/name.0.et, ...) or of a folder holding the
// files of exactly one prefix, sorted by rank. Throws TraceError when there is no rank file,
// when a rank between 0 and the highest one is missing (naming it), when a rank has both a
// .et and a .et.gz file, or when a folder holds more than one prefix (naming them).
std::vector<RankFile> findRankFiles(const std::filesystem::path& prefixOrFolder);

struct TraceSetOptions {
    TraceReaderOptions reader;
    // Readers holding an open file at once; 0 takes automaticOpenFiles() of the process's
    // descriptor limit. A suspended reader reopens its file and refills its buffer when read
    // again, so a bound below the rank count costs a system call or three per resumption.
    std::size_t maxOpenFiles = 0;
};

// Trace files a TraceSet may keep open under a descriptor limit of `limit`: three quarters of
// it, leaving the rest (at least 64) to the rest of the program, sockets, outputs and
// co-simulation peers included; never fewer than 16.
std::size_t automaticOpenFiles(std::size_t limit);

class TraceSet {
public:
    explicit TraceSet(const std::filesystem::path& prefixOrFolder, TraceSetOptions options = {});
    // The files given, rank i reading files[i] (one file may serve many ranks: a replicated
    // one-rank trace); no checks of their names.
    explicit TraceSet(std::vector<RankFile> files, TraceSetOptions options = {});
    ~TraceSet();
    TraceSet(const TraceSet&) = delete;
    TraceSet& operator=(const TraceSet&) = delete;

    std::size_t rankCount() const { return files.size(); }
    const std::filesystem::path& path(uint32_t rank) const;
    // Opens the rank's reader if needed (reading its record 0).
    const TraceMetadata& metadata(uint32_t rank);
    bool next(uint32_t rank, TraceNode& node);
    std::size_t nextBatch(uint32_t rank, std::vector<TraceNode>& batch);
    // The rank's reader, created if needed; valid until the TraceSet is destroyed. Reading
    // through it directly works but is not counted against maxOpenFiles: streaming many ranks
    // side by side should go through next()/nextBatch() of the set.
    TraceReader& reader(uint32_t rank);
    // Readers holding a file descriptor now.
    std::size_t openFiles() const;
    // Throws etsim::Error naming the rank and the rank count when the set has no such rank.
    void checkRank(uint32_t rank) const;

private:
    void activate(uint32_t rank);

    std::vector<RankFile> files;
    TraceSetOptions options;
    std::vector<std::unique_ptr<TraceReader>> readers;
    // Ranks whose reader may hold a file, most recently used last.
    std::list<uint32_t> recent;
    std::vector<std::list<uint32_t>::iterator> recentPosition;
    std::vector<bool> inRecent;
};

} // namespace etsim::et
