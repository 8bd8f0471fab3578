#include "importers/pytorch/PytorchImport.h"

#include "et_driver/ProcessGroups.h"
#include "et_driver/TraceWriter.h"
#include "kernel/Error.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>

namespace etsim::importers::pytorch {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct KinetoInfo {
    fs::path file;
    int64_t pid = -1;
    int64_t rank = -1;
    int64_t worldSize = -1;
};

// One rank of the job: its host file, its Kineto file if any, its rank.
struct RankInput {
    fs::path host;
    std::optional<std::size_t> kineto;
    int64_t rank = -1;
    std::string rankSource;
};

// The rank number at the end of a file name ("dlrm_eg_3.json.gz" -> 3), -1 without one.
int64_t trailingNumber(const fs::path& file)
{
    std::string name = file.filename().string();
    for (const char* ext : {".gz", ".json", ".pt.trace"})
        if (name.size() > std::string(ext).size() &&
            name.compare(name.size() - std::string(ext).size(), std::string::npos, ext) == 0)
            name.erase(name.size() - std::string(ext).size());
    std::size_t end = name.size();
    std::size_t begin = end;
    while (begin > 0 && std::isdigit(static_cast<unsigned char>(name[begin - 1])) != 0)
        --begin;
    if (begin == end || end - begin > 9 || begin == 0 ||
        std::isalnum(static_cast<unsigned char>(name[begin - 1])) != 0)
        return -1;
    return std::stoll(name.substr(begin, end - begin));
}

struct CommKey {
    std::string group;
    int64_t seq;
    et::CollectiveType type;
    CommKind kind;
    int64_t bytes;
};

std::string describe(const CommKey& c)
{
    std::string what = c.kind == CommKind::Send ? std::string("send")
                       : c.kind == CommKind::Recv
                           ? std::string("recv")
                           : et::collectiveTypeName(static_cast<int32_t>(c.type));
    return what + " (seq " + std::to_string(c.seq) + ", " + std::to_string(c.bytes) + " B)";
}

class Output {
public:
    Output(fs::path prefix, bool gzip) : prefix(std::move(prefix)), gzip(gzip) {}
    ~Output()
    {
        // Not committed: leave nothing half-written behind.
        std::error_code error;
        for (const auto& [temporary, final] : files)
            fs::remove(temporary, error);
    }
    Output(const Output&) = delete;
    Output& operator=(const Output&) = delete;

    fs::path rankFile(uint32_t rank) const
    {
        return prefix.string() + "." + std::to_string(rank) + (gzip ? ".et.gz" : ".et");
    }
    fs::path reserve(const fs::path& final)
    {
        fs::path temporary = final.string() + ".partial";
        files.emplace_back(temporary, final);
        return temporary;
    }
    std::vector<fs::path> commit()
    {
        std::vector<fs::path> done;
        for (const auto& [temporary, final] : files) {
            std::error_code error;
            fs::rename(temporary, final, error);
            if (error)
                throw Error(final.string() + ": cannot move the finished file into place (" +
                            error.message() + ")");
            done.push_back(final);
        }
        files.clear();
        return done;
    }

private:
    fs::path prefix;
    bool gzip;
    std::vector<std::pair<fs::path, fs::path>> files;
};

ChakraProtoMsg::GlobalMetadata metadataFor(const HostTrace& host, uint32_t rank, int64_t worldSize)
{
    ChakraProtoMsg::GlobalMetadata metadata = et::TraceWriter::defaultMetadata();
    auto text = [&](const char* name, const std::string& value) {
        ChakraProtoMsg::AttributeProto* a = metadata.add_attr();
        a->set_name(name);
        a->set_string_val(value);
    };
    auto integer = [&](const char* name, int64_t value) {
        ChakraProtoMsg::AttributeProto* a = metadata.add_attr();
        a->set_name(name);
        a->set_int64_val(value);
    };
    text("schema", host.schema);
    integer("pid", host.pid);
    text("time", host.time);
    integer("start_ts", host.startTs);
    integer("finish_ts", host.finishTs);
    integer("rank", rank);
    if (worldSize > 0)
        integer("world_size", worldSize);
    text("source", "etsim trace import pytorch");
    return metadata;
}

} // namespace

ImportResult importPytorch(const ImportRequest& request)
{
    if (request.hostFiles.empty())
        throw Error("no host trace given: pass --host FILE... (one ExecutionTraceObserver JSON "
                    "per rank)");
    std::string name = request.prefix.filename().string();
    if (name.empty() || name == "." || name == "..")
        throw Error("-o " + request.prefix.string() +
                    ": give an output prefix DIR/NAME (files DIR/NAME.<rank>.et)");
    std::error_code error;
    fs::path folder = request.prefix.parent_path();
    if (!folder.empty() && !fs::is_directory(folder, error))
        throw Error("-o " + request.prefix.string() + ": the folder " + folder.string() +
                    " does not exist; create it first");

    // Kineto files: who is who.
    std::vector<KinetoInfo> kinetos;
    for (const fs::path& file : request.kinetoFiles) {
        KinetoTrace trace = readKinetoTrace(file);
        if (trace.pid < 0)
            throw Error(file.string() + ": no host operator events (cpu_op), so the trace cannot "
                                        "be paired with a host trace; was it captured with "
                                        "ProfilerActivity.CPU?");
        kinetos.push_back({file, trace.pid, trace.rank, trace.worldSize});
    }
    std::map<int64_t, std::vector<std::size_t>> kinetoByPid;
    for (std::size_t k = 0; k < kinetos.size(); ++k)
        kinetoByPid[kinetos[k].pid].push_back(k);

    ImportResult result;
    std::vector<RankInput> inputs;
    std::set<std::size_t> kinetoUsed;
    // First pass: pair, find ranks, read the communication of every rank.
    std::vector<std::vector<CommRecord>> rankComms;
    std::unique_ptr<RankGraph> kept;
    std::unique_ptr<KinetoTrace> keptKineto;
    bool singlePass = request.hostFiles.size() == 1;
    for (std::size_t h = 0; h < request.hostFiles.size(); ++h) {
        const fs::path& file = request.hostFiles[h];
        HostTrace host = readHostTrace(file);
        RankInput in;
        in.host = file;
        if (!kinetos.empty()) {
            auto found = kinetoByPid.find(host.pid);
            if (found == kinetoByPid.end()) {
                std::string pids;
                for (const KinetoInfo& k : kinetos)
                    pids += (pids.empty() ? "" : ", ") + std::to_string(k.pid);
                throw Error(file.string() + ": no Kineto trace has this host trace's pid " +
                            std::to_string(host.pid) + " (the Kineto traces given have pids " +
                            pids +
                            "); give the Kineto trace of every rank, or leave --kineto out to "
                            "import the host traces alone");
            }
            if (found->second.size() == 1)
                in.kineto = found->second.front();
            else {
                // Several processes with one pid (different machines): the rank decides.
                int64_t fromName = trailingNumber(file);
                for (std::size_t k : found->second)
                    if (kinetos[k].rank == fromName)
                        in.kineto = k;
                if (!in.kineto)
                    throw Error(file.string() + ": " + std::to_string(found->second.size()) +
                                " Kineto traces have pid " + std::to_string(host.pid) +
                                " and none has the rank of this file's name; give the files of "
                                "one job");
            }
            if (!kinetoUsed.insert(*in.kineto).second)
                throw Error(kinetos[*in.kineto].file.string() +
                            ": paired with two host traces (same pid); give each rank's host "
                            "trace once");
            in.rank = kinetos[*in.kineto].rank;
            in.rankSource = "Kineto distributedInfo";
        }
        std::unique_ptr<KinetoTrace> kineto;
        if (in.kineto)
            kineto = std::make_unique<KinetoTrace>(readKinetoTrace(kinetos[*in.kineto].file));
        int64_t worldSize = in.kineto ? kinetos[*in.kineto].worldSize : -1;
        auto graph = std::make_unique<RankGraph>(
            std::move(host), kineto.get(), 0, worldSize, request.options);
        if (in.rank < 0) {
            in.rank = rankFromRecords(graph->communication());
            in.rankSource = "record_param_comms";
        }
        if (in.rank < 0) {
            in.rank = trailingNumber(file);
            in.rankSource = "file name";
        }
        if (in.rank < 0) {
            in.rank = static_cast<int64_t>(h);
            in.rankSource = "position on the command line";
        }
        for (const CommRecord& c : graph->communication())
            if (c.group == "0" && c.groupSize > 0)
                result.worldSize = std::max(result.worldSize, c.groupSize);
        if (worldSize > 0)
            result.worldSize = worldSize;
        rankComms.push_back(graph->communication());
        if (singlePass) {
            // Emitting needs the Kineto trace alive: keep both until then.
            kept = std::move(graph);
            keptKineto = std::move(kineto);
        }
        inputs.push_back(std::move(in));
    }
    for (std::size_t k = 0; k < kinetos.size(); ++k)
        if (kinetoUsed.count(k) == 0)
            throw Error(kinetos[k].file.string() + ": no host trace has its pid " +
                        std::to_string(kinetos[k].pid) +
                        "; give the host trace of that rank too (--host)");

    // Ranks: unique, and 0..N-1 (or a single rank, written as rank 0 of a one-rank trace).
    std::map<int64_t, std::size_t> byRank;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        auto [it, added] = byRank.emplace(inputs[i].rank, i);
        if (!added)
            throw Error(inputs[i].host.string() + " and " + inputs[it->second].host.string() +
                        " are both rank " + std::to_string(inputs[i].rank) + " (from their " +
                        inputs[i].rankSource + "); give each rank once");
    }
    if (inputs.size() > 1 && (byRank.begin()->first != 0 ||
                              byRank.rbegin()->first != static_cast<int64_t>(inputs.size()) - 1)) {
        std::string list;
        for (const auto& [r, i] : byRank)
            list += (list.empty() ? "" : ", ") + std::to_string(r);
        throw Error("the host traces are ranks " + list +
                    ", but a multi-rank trace needs ranks 0.." + std::to_string(inputs.size() - 1) +
                    "; give every rank of the job, or import one rank alone");
    }
    if (result.worldSize < 0)
        result.worldSize = static_cast<int64_t>(inputs.size());

    // Collectives across ranks: per group, the same sequence numbers and types in the same
    // order on every rank; all-to-all(v) sizes may differ and become the largest.
    std::vector<std::vector<int64_t>> bytes(inputs.size());
    if (inputs.size() > 1) {
        std::map<std::string, std::map<int64_t, std::vector<std::size_t>>> byGroup;
        for (std::size_t i = 0; i < inputs.size(); ++i) {
            bytes[i].resize(rankComms[i].size());
            std::map<std::string, int64_t> lastSeq;
            for (std::size_t c = 0; c < rankComms[i].size(); ++c) {
                const CommRecord& r = rankComms[i][c];
                bytes[i][c] = r.bytes;
                if (r.kind != CommKind::Collective)
                    continue;
                byGroup[r.group][inputs[i].rank].push_back(c);
            }
        }
        for (auto& entry : byGroup) {
            // Named references: lambdas cannot capture structured bindings in C++17.
            const std::string& group = entry.first;
            auto& ranks = entry.second;
            const auto& [refRank, refList] = *ranks.begin();
            std::size_t ref = byRank[refRank];
            for (const auto& [r, list] : ranks) {
                std::size_t i = byRank[r];
                for (std::size_t k = 0; k < std::max(list.size(), refList.size()); ++k) {
                    auto key = [&](std::size_t who, const std::vector<std::size_t>& l) {
                        const CommRecord& c = rankComms[who][l[k]];
                        return CommKey{group, c.seq, c.type, c.kind, c.bytes};
                    };
                    if (k >= list.size() || k >= refList.size()) {
                        std::size_t longer = k >= list.size() ? ref : i;
                        const auto& longList = k >= list.size() ? refList : list;
                        throw Error("collectives of process group \"" + group +
                                    "\" disagree: " + request.hostFiles[longer].string() +
                                    " (rank " + std::to_string(inputs[longer].rank) + ") has " +
                                    std::to_string(longList.size()) + ", " +
                                    request.hostFiles[longer == ref ? i : ref].string() + " has " +
                                    std::to_string(k) + "; the next is " +
                                    describe(key(longer, longList)) +
                                    ". Capture every rank in the same iteration of one job");
                    }
                    CommKey a = key(ref, refList);
                    CommKey b = key(i, list);
                    if (a.seq != b.seq || a.type != b.type || a.kind != b.kind)
                        throw Error("collectives of process group \"" + group +
                                    "\" disagree at position " + std::to_string(k) + ": " +
                                    request.hostFiles[ref].string() + " (rank " +
                                    std::to_string(refRank) + ") has " + describe(a) + ", " +
                                    request.hostFiles[i].string() + " (rank " + std::to_string(r) +
                                    ") has " + describe(b) +
                                    "; sequence numbers must match one to one. Capture every "
                                    "rank in the same iteration of one job");
                }
            }
            // Harmonise all-to-all(v) sizes position by position.
            for (std::size_t k = 0; k < refList.size(); ++k) {
                const CommRecord& first = rankComms[ref][refList[k]];
                if (first.type != et::CollectiveType::AllToAll)
                    continue;
                int64_t largest = 0;
                bool differ = false;
                for (const auto& [r, list] : ranks) {
                    int64_t b = rankComms[byRank[r]][list[k]].bytes;
                    differ = differ || b != first.bytes;
                    largest = std::max(largest, b);
                }
                if (!differ)
                    continue;
                ++result.harmonisedCollectives;
                for (const auto& [r, list] : ranks)
                    bytes[byRank[r]][list[k]] = largest;
            }
        }
    }
    result.collectivesPerRank = rankComms.empty() ? 0 : rankComms.front().size();

    // Second pass: build each rank again and write it.
    Output output(request.prefix, request.gzip);
    for (const auto& [rankNumber, i] : byRank) {
        uint32_t outRank = inputs.size() == 1 ? 0 : static_cast<uint32_t>(rankNumber);
        std::unique_ptr<RankGraph> graph;
        std::unique_ptr<KinetoTrace> kineto;
        if (singlePass) {
            graph = std::move(kept);
            graph->setRank(static_cast<uint32_t>(rankNumber));
        } else {
            if (inputs[i].kineto)
                kineto =
                    std::make_unique<KinetoTrace>(readKinetoTrace(kinetos[*inputs[i].kineto].file));
            graph = std::make_unique<RankGraph>(readHostTrace(inputs[i].host),
                                                kineto.get(),
                                                outRank,
                                                result.worldSize,
                                                request.options);
            for (std::size_t c = 0; c < bytes[i].size(); ++c)
                graph->setCommBytes(c, bytes[i][c]);
        }
        graph->summary.rank = static_cast<uint32_t>(rankNumber);
        fs::path final = output.rankFile(outRank);
        et::TraceWriterOptions writerOptions;
        writerOptions.compression =
            request.gzip ? et::TraceCompression::Gzip : et::TraceCompression::None;
        et::TraceWriter writer(
            output.reserve(final),
            metadataFor(graph->hostTrace(), static_cast<uint32_t>(rankNumber), result.worldSize),
            writerOptions);
        graph->emit([&](const ChakraProtoMsg::Node& node) { writer.write(node); });
        writer.close();
        graph->summary.rank = static_cast<uint32_t>(rankNumber);
        result.ranks.push_back(graph->summary);
        if (rankNumber == byRank.begin()->first) {
            // Communicator groups other than the default one, for --comm-groups.
            std::ostringstream groups;
            groups << "{";
            bool first = true;
            for (const auto& [pg, group] : graph->groups().groups) {
                std::optional<int64_t> id = et::groupId(pg);
                if (!id || *id < 1)
                    continue;
                groups << (first ? "\n" : ",\n") << "  \"" << *id << "\": [";
                std::vector<int64_t> members = group.ranks;
                if (members.empty())
                    for (int64_t r = 0; r < result.worldSize; ++r)
                        members.push_back(r);
                for (std::size_t m = 0; m < members.size(); ++m)
                    groups << (m == 0 ? "" : ", ") << members[m];
                groups << "]";
                first = false;
            }
            groups << (first ? "}\n" : "\n}\n");
            result.commGroupFile = request.prefix.string() + ".comm_groups.json";
            std::ofstream out(output.reserve(result.commGroupFile));
            out << groups.str();
            out.close();
            if (!out)
                throw Error(result.commGroupFile.string() + ": cannot write (disk full or no "
                                                            "permission?)");
        }
        result.ranks.back().kinetoFile =
            inputs[i].kineto ? kinetos[*inputs[i].kineto].file.string() : std::string();
        result.ranks.back().hostFile = inputs[i].host.string();
        result.ranks.back().rankSource = inputs[i].rankSource;
    }
    result.written = output.commit();
    return result;
}

} // namespace etsim::importers::pytorch
