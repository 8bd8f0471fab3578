#include "et_driver/TraceSet.h"

#include "kernel/InputFile.h"
#include "kernel/OpenFileLimit.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

namespace etsim::et {

namespace fs = std::filesystem;

namespace {

struct RankName {
    std::string prefix; // file name without ".<rank>.et[.gz]"
    uint32_t rank = 0;
};

// Splits "name.<rank>.et" or "name.<rank>.et.gz".
std::optional<RankName> parseRankName(const std::string& fileName)
{
    std::string stem;
    if (fileName.size() > 3 && fileName.compare(fileName.size() - 3, 3, ".et") == 0)
        stem = fileName.substr(0, fileName.size() - 3);
    else if (fileName.size() > 6 && fileName.compare(fileName.size() - 6, 6, ".et.gz") == 0)
        stem = fileName.substr(0, fileName.size() - 6);
    else
        return std::nullopt;
    std::size_t dot = stem.rfind('.');
    if (dot == std::string::npos || dot + 1 == stem.size())
        return std::nullopt;
    std::string digits = stem.substr(dot + 1);
    if (digits.size() > 9 ||
        !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return std::nullopt;
    return RankName{stem.substr(0, dot), static_cast<uint32_t>(std::stoul(digits))};
}

std::string rangeText(const std::vector<RankFile>& files)
{
    if (files.empty())
        return "none";
    return std::to_string(files.front().rank) + "-" + std::to_string(files.back().rank);
}

} // namespace

std::vector<RankFile> findRankFiles(const fs::path& prefixOrFolder)
{
    std::error_code error;
    bool isFolder = fs::is_directory(prefixOrFolder, error);
    fs::path folder = isFolder ? prefixOrFolder : prefixOrFolder.parent_path();
    if (folder.empty())
        folder = ".";
    std::string wanted = isFolder ? std::string() : prefixOrFolder.filename().string();
    if (!fs::is_directory(folder, error))
        throw TraceError(prefixOrFolder.string(),
                         "no such folder " + folder.string() +
                             ": give a trace folder or a prefix such as dir/name for "
                             "dir/name.0.et, dir/name.1.et, ...");

    std::map<std::string, std::vector<RankFile>> byPrefix;
    for (const fs::directory_entry& entry : fs::directory_iterator(folder, error)) {
        std::optional<RankName> name = parseRankName(entry.path().filename().string());
        if (!name || (!isFolder && name->prefix != wanted))
            continue;
        // A rank's name on something else than a file is that rank's problem, not a gap.
        std::error_code typeError;
        const fs::file_status status = entry.status(typeError);
        if (!fs::is_regular_file(status))
            throw TraceError(entry.path().string(),
                             "rank " + std::to_string(name->rank) + " is " +
                                 fileTypeText(status.type()) +
                                 ", not a rank file; replace it with the rank's Chakra ET file");
        byPrefix[name->prefix].push_back(RankFile{name->rank, entry.path()});
    }
    if (error)
        throw TraceError(folder.string(), "cannot list the folder: " + error.message());
    // A rank file given where its trace is wanted: say which prefix names the trace.
    std::optional<RankName> fileName = parseRankName(prefixOrFolder.filename().string());
    if (byPrefix.empty() && !isFolder && fileName && fs::is_regular_file(prefixOrFolder, error))
        throw TraceError(prefixOrFolder.string(),
                         "this is the file of rank " + std::to_string(fileName->rank) +
                             " of a trace; give the trace's prefix " +
                             (prefixOrFolder.parent_path() / fileName->prefix).string() +
                             " (for all its rank files) or its folder");
    if (byPrefix.empty())
        throw TraceError(prefixOrFolder.string(),
                         isFolder ? "the folder holds no Chakra ET file named <prefix>.<rank>.et "
                                    "(or .et.gz); give the folder of a trace"
                                  : "no file " + prefixOrFolder.string() +
                                        ".<rank>.et (or .et.gz) exists; check the prefix");
    if (byPrefix.size() > 1) {
        std::string names;
        for (const auto& [prefix, files] : byPrefix)
            names += (names.empty() ? "" : ", ") + prefix;
        throw TraceError(prefixOrFolder.string(),
                         "the folder holds the rank files of several traces (" + names +
                             "); give a prefix such as " +
                             (folder / byPrefix.begin()->first).string() + " instead");
    }
    std::vector<RankFile> files = std::move(byPrefix.begin()->second);
    std::string prefixPath = (folder / byPrefix.begin()->first).string();
    std::sort(files.begin(), files.end(), [](const RankFile& a, const RankFile& b) {
        return a.rank < b.rank || (a.rank == b.rank && a.path < b.path);
    });
    for (std::size_t i = 0; i < files.size(); ++i) {
        if (i > 0 && files[i].rank == files[i - 1].rank)
            throw TraceError(prefixPath,
                             "rank " + std::to_string(files[i].rank) + " has two files, " +
                                 files[i - 1].path.filename().string() + " and " +
                                 files[i].path.filename().string() + "; remove one");
        if (files[i].rank != i)
            throw TraceError(prefixPath,
                             "rank " + std::to_string(i) + " is missing (expected " + prefixPath +
                                 "." + std::to_string(i) + ".et; found " +
                                 std::to_string(files.size()) + " files with ranks " +
                                 rangeText(files) +
                                 "); ranks must be numbered 0..N-1 without gaps");
    }
    return files;
}

TraceSet::TraceSet(const fs::path& prefixOrFolder, TraceSetOptions setOptions)
    : TraceSet(findRankFiles(prefixOrFolder), setOptions)
{
}

TraceSet::TraceSet(std::vector<RankFile> rankFiles, TraceSetOptions setOptions)
    : files(std::move(rankFiles))
    , options(setOptions)
    , readers(files.size())
    , recentPosition(files.size())
    , inRecent(files.size(), false)
{
    if (options.maxOpenFiles == 0)
        options.maxOpenFiles = automaticOpenFiles(openFileLimit());
}

std::size_t automaticOpenFiles(std::size_t limit)
{
    std::size_t reserve = std::max<std::size_t>(64, limit / 4);
    return std::max<std::size_t>(16, limit > reserve ? limit - reserve : 0);
}

TraceSet::~TraceSet() = default;

const fs::path& TraceSet::path(uint32_t rank) const
{
    return files.at(rank).path;
}

void TraceSet::checkRank(uint32_t rank) const
{
    if (rank >= files.size())
        throw Error("rank " + std::to_string(rank) + " is out of range: the trace has " +
                    std::to_string(files.size()) + " ranks");
}

void TraceSet::activate(uint32_t rank)
{
    checkRank(rank);
    // When every rank's file may stay open, no reader is ever suspended and the order of use
    // is not needed: a 1,024-rank step would otherwise relink a list node on every read.
    if (files.size() <= options.maxOpenFiles) {
        if (!readers[rank])
            readers[rank] = std::make_unique<TraceReader>(files[rank].path, options.reader);
        return;
    }
    if (inRecent[rank]) {
        recent.splice(recent.end(), recent, recentPosition[rank]);
    } else {
        // Make room before opening, so at most maxOpenFiles descriptors exist at any time.
        while (recent.size() >= options.maxOpenFiles) {
            uint32_t oldest = recent.front();
            recent.pop_front();
            inRecent[oldest] = false;
            readers[oldest]->suspend();
        }
        recent.push_back(rank);
        recentPosition[rank] = std::prev(recent.end());
        inRecent[rank] = true;
    }
    if (!readers[rank])
        readers[rank] = std::make_unique<TraceReader>(files[rank].path, options.reader);
}

TraceReader& TraceSet::reader(uint32_t rank)
{
    activate(rank);
    return *readers[rank];
}

const TraceMetadata& TraceSet::metadata(uint32_t rank)
{
    return reader(rank).metadata();
}

bool TraceSet::next(uint32_t rank, TraceNode& node)
{
    return reader(rank).next(node);
}

std::size_t TraceSet::nextBatch(uint32_t rank, std::vector<TraceNode>& batch)
{
    return reader(rank).nextBatch(batch);
}

std::size_t TraceSet::openFiles() const
{
    return static_cast<std::size_t>(
        std::count_if(readers.begin(), readers.end(), [](const auto& reader) {
            return reader && reader->isOpen();
        }));
}

} // namespace etsim::et
