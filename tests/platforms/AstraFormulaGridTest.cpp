// Longer than most files: the grid's formulas are written out here, independently of the
// models, one per collective and topology family.
// The "every other case" half of ASTRA-sim compatibility: a grid of ASTRA-sim setups run
// through runJob on traces written with etsim's TraceWriter, each finish time compared with the
// closed-form formulas of shared/spec/astra-sim-semantics.md sections 2-4, computed here
// independently of etsim's models. Every case must agree within 0.1 %; the summary line of
// each family says how many agree to the nanosecond.
//
// A SystemC kernel runs once per process, so every case runs in a child process of its own
// (fork, then a fresh kernel); two run at a time. Each family is one test.

#include "et_driver/TraceWriter.h"
#include "platforms/Job.h"
#include "platforms/astra/AstraPlatform.h"
#include "tests/support/ScKernel.h"
#include "tests/support/TempDir.h"
#include "tests/support/TraceNodes.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace etsim::platforms::astra {
namespace {

using etsim::test::computeNode;
using etsim::test::gpuCollectiveNode;
using etsim::test::gpuMemoryNode;
using etsim::test::pointToPointNode;
using etsim::test::TempDir;
namespace fs = std::filesystem;
using et::CollectiveType;
using et::NodeType;
using et::TraceNode;

constexpr std::uint64_t ps = 1000; // per ns
constexpr double tolerance = 0.001;

// ---------------------------------------------------------------------------------------------
// The spec's formulas, written from the spec alone.

enum class Topology { Ring, FullyConnected, Switch };

const char* topologyName(Topology topology)
{
    switch (topology) {
    case Topology::Ring:
        return "Ring";
    case Topology::FullyConnected:
        return "FullyConnected";
    case Topology::Switch:
        return "Switch";
    }
    return "?";
}

struct Dim {
    Topology topology = Topology::Ring;
    std::uint64_t npus = 2;
    double gbps = 50;     // as written in the network file ("GB/s", really GiB/s)
    double latency = 500; // ns per hop
};

// Section 1: "GB/s" x 2^30 / 10^9 bytes per ns.
double bytesPerNs(double gbps)
{
    return gbps * 1073741824.0 / 1e9;
}

// Section 2: hops of a ring-algorithm message (a neighbour) in one dimension.
std::uint64_t neighbourHops(Topology topology)
{
    return topology == Topology::Switch ? 2 : 1;
}

// Section 2: one message of m bytes over h hops of a dimension, uncontended.
std::uint64_t delta(const Dim& dim, std::uint64_t hops, std::uint64_t bytes, bool aware)
{
    const double serialise = static_cast<double>(bytes) / bytesPerNs(dim.gbps);
    if (aware)
        return hops * static_cast<std::uint64_t>(std::floor(dim.latency + serialise));
    return static_cast<std::uint64_t>(
        std::floor(static_cast<double>(hops) * dim.latency + serialise));
}

struct SystemParams {
    std::uint64_t endpointDelay = 10;
    bool localBwAware = true;
    double localMemGbps = 1600; // decimal GB/s
    int splits = 4;
    int active = 1;
};

// Section 3.4: reducing a received message of m bytes.
std::uint64_t reduction(const SystemParams& system, std::uint64_t bytes)
{
    return 3 *
           static_cast<std::uint64_t>(std::floor(static_cast<double>(bytes) / system.localMemGbps));
}

enum class Coll { AllReduce, ReduceScatter, AllGather, AllToAll };

const char* collName(Coll coll)
{
    switch (coll) {
    case Coll::AllReduce:
        return "AR";
    case Coll::ReduceScatter:
        return "RS";
    case Coll::AllGather:
        return "AG";
    case Coll::AllToAll:
        return "A2A";
    }
    return "?";
}

CollectiveType collType(Coll coll)
{
    switch (coll) {
    case Coll::AllReduce:
        return CollectiveType::AllReduce;
    case Coll::ReduceScatter:
        return CollectiveType::ReduceScatter;
    case Coll::AllGather:
        return CollectiveType::AllGather;
    case Coll::AllToAll:
        return CollectiveType::AllToAll;
    }
    return CollectiveType::Barrier;
}

// Section 3.4's table: the ring algorithm's time for one phase of one chunk with input d.
std::uint64_t
phaseTime(Coll coll, const Dim& dim, std::uint64_t d, const SystemParams& system, bool aware)
{
    const std::uint64_t p = dim.npus;
    const std::uint64_t e = system.endpointDelay;
    const std::uint64_t h = neighbourHops(dim.topology);
    const std::uint64_t m = d / p;
    switch (coll) {
    case Coll::AllReduce:
        return e + 2 * (p - 1) * (delta(dim, h, m, aware) + e) + (p - 1) * reduction(system, m);
    case Coll::ReduceScatter:
        return e + (p - 1) * (delta(dim, h, m, aware) + e + reduction(system, m));
    case Coll::AllGather:
        return e + (p - 1) * (delta(dim, h, d, aware) + e);
    case Coll::AllToAll:
        return e + p * (p - 1) / 2 * (delta(dim, h, m, aware) + e);
    }
    return 0;
}

// The bytes of one message of a phase (for the congestion-aware collision term).
std::uint64_t messageBytes(Coll coll, const Dim& dim, std::uint64_t d)
{
    return coll == Coll::AllGather ? d : d / dim.npus;
}

struct Chunking {
    std::uint64_t chunk = 0; // c, bytes
    std::uint64_t count = 0; // n
};

// Section 3.1, with the small-collective inflation quirk.
Chunking chunking(Coll coll, std::uint64_t size, std::uint64_t splits, std::uint64_t totalNpus)
{
    std::uint64_t chunk = size / splits;
    if (coll != Coll::AllGather && totalNpus > chunk) {
        chunk = totalNpus;
        size = splits * chunk;
    }
    return {chunk, (size + chunk - 1) / chunk};
}

struct Phase {
    std::size_t dim = 0;
    Coll coll = Coll::AllReduce;
    std::uint64_t input = 0;
};

// Section 3.2: the phases of one chunk of c bytes over the dimensions; `localBwAware` splits
// an all-reduce into RS ..., AR(last), AG ..., baseline runs it as an AR in every dimension.
std::vector<Phase>
phasesOf(Coll coll, const std::vector<Dim>& dims, std::uint64_t chunk, bool localBwAware)
{
    std::vector<Phase> phases;
    std::uint64_t d = chunk;
    const std::size_t last = dims.size() - 1;
    switch (coll) {
    case Coll::AllReduce:
        if (!localBwAware) {
            for (std::size_t i = 0; i < dims.size(); ++i)
                phases.push_back({i, Coll::AllReduce, d});
            break;
        }
        for (std::size_t i = 0; i < last; ++i) {
            phases.push_back({i, Coll::ReduceScatter, d});
            d /= dims[i].npus;
        }
        phases.push_back({last, Coll::AllReduce, d});
        for (std::size_t i = last; i-- > 0;) {
            phases.push_back({i, Coll::AllGather, d});
            d *= dims[i].npus;
        }
        break;
    case Coll::ReduceScatter:
        for (std::size_t i = 0; i < dims.size(); ++i) {
            phases.push_back({i, Coll::ReduceScatter, d});
            d /= dims[i].npus;
        }
        break;
    case Coll::AllGather:
        for (std::size_t i = dims.size(); i-- > 0;) {
            phases.push_back({i, Coll::AllGather, d});
            d *= dims[i].npus;
        }
        break;
    case Coll::AllToAll:
        for (std::size_t i = 0; i < dims.size(); ++i)
            phases.push_back({i, Coll::AllToAll, d});
        break;
    }
    return phases;
}

std::uint64_t totalNpus(const std::vector<Dim>& dims)
{
    std::uint64_t total = 1;
    for (const Dim& dim : dims)
        total *= dim.npus;
    return total;
}

// Section 3.5, 1-D: ceil(n / a) T_chunk; congestion-aware Switch with a = 2 adds one
// uplink collision, floor(m / B), when a wave holds two chunks.
std::uint64_t oneDimCollective(
    Coll coll, const Dim& dim, std::uint64_t size, const SystemParams& system, bool aware)
{
    const Chunking chunks =
        chunking(coll, size, static_cast<std::uint64_t>(system.splits), dim.npus);
    const std::uint64_t chunkTime = phaseTime(coll, dim, chunks.chunk, system, aware);
    const std::uint64_t active = static_cast<std::uint64_t>(system.active);
    std::uint64_t total = (chunks.count + active - 1) / active * chunkTime;
    if (aware && active == 2 && chunks.count >= 2) {
        const double bytes = static_cast<double>(messageBytes(coll, dim, chunks.chunk));
        total += static_cast<std::uint64_t>(std::floor(bytes / bytesPerNs(dim.gbps)));
    }
    return total;
}

// Section 3.5, multi-dim unaware with a = 1: a flow shop of n identical chunks. With one
// server per phase (no dimension shared by two phases) the makespan of identical jobs is
// the sum of the phase times plus (n - 1) times the longest; the localBWAware all-reduce
// shares a dimension's queue between its RS and AG phases, so the formula (fill +
// n T_bottleneck + drain) holds when the bottleneck is the all-reduce phase of the last
// dimension and it is at least as long as the RS and AG phases of any other dimension
// together (or there is one chunk). `valid` is false when a case does not meet that.
struct FlowShop {
    std::uint64_t total = 0;
    bool valid = true;
};

FlowShop multiDimCollective(Coll coll,
                            const std::vector<Dim>& dims,
                            std::uint64_t size,
                            const SystemParams& system)
{
    const Chunking chunks =
        chunking(coll, size, static_cast<std::uint64_t>(system.splits), totalNpus(dims));
    std::vector<std::uint64_t> perDim(dims.size(), 0);
    std::uint64_t sum = 0;
    std::uint64_t longest = 0;
    std::size_t longestDim = 0;
    for (const Phase& phase : phasesOf(coll, dims, chunks.chunk, system.localBwAware)) {
        const std::uint64_t time =
            phaseTime(phase.coll, dims[phase.dim], phase.input, system, false);
        sum += time;
        perDim[phase.dim] += time;
        if (time > longest) {
            longest = time;
            longestDim = phase.dim;
        }
    }
    FlowShop result{sum + (chunks.count - 1) * longest, true};
    if (coll == Coll::AllReduce && system.localBwAware && dims.size() > 1 && chunks.count > 1) {
        result.valid = longestDim == dims.size() - 1;
        for (std::size_t i = 0; i + 1 < dims.size(); ++i)
            result.valid = result.valid && perDim[i] <= longest;
    }
    return result;
}

// Section 4, roofline: floor(num_ops / min(local_mem_bw 1e9 OI, peak 1e12) 1e9) ns.
std::uint64_t
rooflineNs(std::uint64_t ops, std::uint64_t bytes, double localMemGbps, double peakTflops)
{
    if (bytes == 0)
        return 0;
    const double intensity = static_cast<double>(ops) / static_cast<double>(bytes);
    const double perf = std::min(localMemGbps * 1e9 * intensity, peakTflops * 1e12);
    return static_cast<std::uint64_t>(std::floor(static_cast<double>(ops) / perf * 1e9));
}

// Section 4, remote memory: latency + floor(bytes / bw) ns.
std::uint64_t remoteMemoryNs(std::uint64_t bytes, double latency, double bytesPerNsBw)
{
    return static_cast<std::uint64_t>(latency) +
           static_cast<std::uint64_t>(std::floor(static_cast<double>(bytes) / bytesPerNsBw));
}

// ---------------------------------------------------------------------------------------------
// Traces and setups.

std::string formatNumber(double value)
{
    std::ostringstream out;
    out << value;
    return out.str();
}

std::string networkYaml(const std::vector<Dim>& dims)
{
    std::string topology;
    std::string npus;
    std::string bandwidth;
    std::string latency;
    for (const Dim& dim : dims) {
        const std::string sep = topology.empty() ? "" : ", ";
        topology += sep + topologyName(dim.topology);
        npus += sep + std::to_string(dim.npus);
        bandwidth += sep + formatNumber(dim.gbps);
        latency += sep + formatNumber(dim.latency);
    }
    return "topology: [ " + topology + " ]\nnpus_count: [ " + npus + " ]\nbandwidth: [ " +
           bandwidth + " ]\nlatency: [ " + latency + " ]\n";
}

std::string systemJson(const SystemParams& system, std::size_t dims, const std::string& extra = "")
{
    std::string implementation;
    for (std::size_t i = 0; i < dims; ++i)
        implementation += std::string(i == 0 ? "" : ", ") + "\"ring\"";
    std::string text = "{\n  \"scheduling-policy\": \"LIFO\",\n";
    text += "  \"endpoint-delay\": " + std::to_string(system.endpointDelay) + ",\n";
    text += "  \"active-chunks-per-dimension\": " + std::to_string(system.active) + ",\n";
    text += "  \"preferred-dataset-splits\": " + std::to_string(system.splits) + ",\n";
    for (const char* kind : {"all-reduce", "all-gather", "reduce-scatter", "all-to-all"})
        text += std::string("  \"") + kind + "-implementation\": [" + implementation + "],\n";
    text += std::string("  \"collective-optimization\": \"") +
            (system.localBwAware ? "localBWAware" : "baseline") + "\",\n";
    text += "  \"local-mem-bw\": " + formatNumber(system.localMemGbps) + extra + "\n}\n";
    return text;
}

struct Case {
    std::string name;
    std::string network;
    std::string system;
    std::string memory; // empty: none
    Congestion congestion = Congestion::Unaware;
    std::uint32_t ranks = 0;
    std::function<std::vector<TraceNode>(std::uint32_t)> nodesOf;
    /// The formula's finish time of every rank, ns.
    std::vector<std::uint64_t> expectedNs;
    /// Compare the sorted finish times (which of the ranks sharing a FIFO server goes first
    /// is not specified).
    bool sorted = false;
};

// ---------------------------------------------------------------------------------------------
// Running a case in a child process.

// In the child: builds the platform, runs it on a fresh kernel, writes "ok" and the finish of
// every rank in ps to `resultPath`, or "error" and the message.
void runChild(const Case& each, const fs::path& resultPath)
{
    std::ofstream out(resultPath);
    try {
        TempDir dir;
        for (std::uint32_t rank = 0; rank < each.ranks; ++rank) {
            et::TraceWriter writer(dir.file("job." + std::to_string(rank) + ".et"));
            for (const TraceNode& traceNode : each.nodesOf(rank))
                writer.write(traceNode);
            writer.close();
        }
        AstraFiles files;
        files.network = dir.write("network.yml", each.network);
        files.system = dir.write("system.json", each.system);
        if (!each.memory.empty())
            files.memory = dir.write("memory.json", each.memory);
        files.congestion = each.congestion;
        std::vector<std::string> warnings;
        platform::PlatformConfig config = loadAstraPlatform(files, warnings);
        platform::JobSpec job;
        job.trace = dir.file("job");
        etsim::test::ScKernel kernel;
        platform::JobOptions options;
        // Hundreds of runs: keep the expected ASTRA-sim warnings (0 us -> 1 ns, ...) quiet.
        options.logSpec = "error";
        platform::RunReport report = platform::runJob(config, job, options);
        if (!report.finished) {
            out << "error\nnot finished: " << report.problem.substr(0, 2000) << "\n";
            return;
        }
        out << "ok\n";
        for (const platform::RankBreakdown& rank : report.ranks)
            out << rank.finishPs << "\n";
    } catch (const std::exception& error) {
        out << "error\n" << error.what() << "\n";
    }
}

struct Result {
    bool ran = false;
    std::string error;
    std::vector<std::uint64_t> finishPs;
};

Result readResult(const fs::path& path)
{
    Result result;
    std::ifstream in(path);
    std::string status;
    if (!std::getline(in, status)) {
        result.error = "the child process wrote no result";
        return result;
    }
    if (status != "ok") {
        std::ostringstream text;
        text << in.rdbuf();
        result.error = text.str();
        return result;
    }
    result.ran = true;
    std::uint64_t value = 0;
    while (in >> value)
        result.finishPs.push_back(value);
    return result;
}

// Runs every case, at most two at a time, each in a process of its own; checks each against
// its formula and prints how many agree exactly and how many within the tolerance.
void runGrid(const std::string& family, const std::vector<Case>& cases)
{
    // A child inherits unflushed output and would print it again.
    std::cout.flush();
    std::fflush(nullptr);
    TempDir results;
    std::map<pid_t, std::size_t> running;
    std::vector<Result> outcomes(cases.size());
    const std::size_t parallel = 2;
    auto collect = [&](bool block) {
        int status = 0;
        const pid_t pid = waitpid(-1, &status, block ? 0 : WNOHANG);
        if (pid <= 0)
            return false;
        const std::size_t index = running.at(pid);
        running.erase(pid);
        outcomes[index] = readResult(results.file(std::to_string(index)));
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            outcomes[index].error +=
                " (child exited abnormally, status " + std::to_string(status) + ")";
        return true;
    };
    for (std::size_t index = 0; index < cases.size(); ++index) {
        while (running.size() >= parallel)
            collect(true);
        const pid_t pid = fork();
        ASSERT_GE(pid, 0) << "fork failed";
        if (pid == 0) {
            runChild(cases[index], results.file(std::to_string(index)));
            std::fflush(nullptr);
            _exit(0);
        }
        running[pid] = index;
    }
    while (!running.empty())
        collect(true);

    std::size_t exact = 0;
    std::size_t close = 0;
    double worst = 0.0;
    std::string worstName;
    for (std::size_t index = 0; index < cases.size(); ++index) {
        const Case& each = cases[index];
        const Result& outcome = outcomes[index];
        if (!outcome.ran) {
            ADD_FAILURE() << each.name << ": " << outcome.error;
            continue;
        }
        if (outcome.finishPs.size() != each.expectedNs.size()) {
            ADD_FAILURE() << each.name << ": " << outcome.finishPs.size() << " ranks, expected "
                          << each.expectedNs.size();
            continue;
        }
        std::vector<std::uint64_t> got = outcome.finishPs;
        std::vector<std::uint64_t> want = each.expectedNs;
        if (each.sorted) {
            std::sort(got.begin(), got.end());
            std::sort(want.begin(), want.end());
        }
        bool allExact = true;
        bool allClose = true;
        for (std::size_t rank = 0; rank < got.size(); ++rank) {
            const double expectedPs = static_cast<double>(want[rank] * ps);
            const double error = std::fabs(static_cast<double>(got[rank]) - expectedPs);
            const double relative = expectedPs > 0 ? error / expectedPs : error;
            if (got[rank] != want[rank] * ps)
                allExact = false;
            if (relative > worst) {
                worst = relative;
                worstName = each.name;
            }
            if (relative > tolerance) {
                allClose = false;
                ADD_FAILURE() << each.name << ": rank " << rank << " finished at "
                              << formatNumber(static_cast<double>(got[rank]) / ps)
                              << " ns, the formula says " << want[rank] << " ns ("
                              << formatNumber(relative * 100) << " %)";
            }
        }
        if (allExact)
            ++exact;
        else if (allClose)
            ++close;
    }
    std::cout << "[ grid     ] " << family << ": " << cases.size() << " cases, " << exact
              << " exact to the ns, " << close << " within 0.1 % but not exact, "
              << cases.size() - exact - close << " beyond; largest deviation "
              << formatNumber(worst * 100) << " %" << (worstName.empty() ? "" : " (") << worstName
              << (worstName.empty() ? "" : ")") << "\n";
}

// ---------------------------------------------------------------------------------------------
// The grids.

constexpr Coll allColls[] = {Coll::AllReduce, Coll::ReduceScatter, Coll::AllGather, Coll::AllToAll};

// The small size triggers the inflation quirk: 13 / 4 = 3 B per chunk < p for p >= 4, so the
// chunk becomes p bytes and S = 4p: four chunks, where ceil(13 / 3) would give five (at 1 B
// per message the quirk is otherwise hidden by the truncation to whole ns). With p = 2 there
// is no inflation and five chunks of 3 B run; 13 B < 16 ranks with one split.
constexpr std::uint64_t gridSizes[] = {13, 64 * 1024, 1024 * 1024, 16 * 1024 * 1024};

Dim oneDim(Topology topology, std::uint64_t npus)
{
    switch (topology) {
    case Topology::Ring:
        return {topology, npus, 50, 500};
    case Topology::FullyConnected:
        return {topology, npus, 100, 150};
    case Topology::Switch:
        return {topology, npus, 25, 700};
    }
    return {};
}

Case collectiveCase(const std::vector<Dim>& dims,
                    Coll coll,
                    std::uint64_t size,
                    const SystemParams& system,
                    Congestion congestion,
                    std::uint64_t expected)
{
    Case each;
    std::ostringstream name;
    for (const Dim& dim : dims)
        name << topologyName(dim.topology) << dim.npus << "(" << formatNumber(dim.gbps) << "GB/s,"
             << formatNumber(dim.latency) << "ns) ";
    name << collName(coll) << (system.localBwAware ? "" : " baseline") << " " << size
         << " B k=" << system.splits << " a=" << system.active
         << (congestion == Congestion::Aware ? " aware" : " unaware");
    each.name = name.str();
    each.network = networkYaml(dims);
    each.system = systemJson(system, dims.size());
    each.congestion = congestion;
    each.ranks = static_cast<std::uint32_t>(totalNpus(dims));
    each.nodesOf = [coll, size](std::uint32_t) {
        return std::vector<TraceNode>{gpuCollectiveNode(1, collType(coll), size)};
    };
    each.expectedNs.assign(each.ranks, expected);
    return each;
}

std::vector<Case> oneDimCases(bool aware, const std::function<bool(Topology, int)>& wanted)
{
    std::vector<Case> cases;
    for (Topology topology : {Topology::Ring, Topology::FullyConnected, Topology::Switch})
        for (std::uint64_t npus : {2, 4, 8, 16})
            for (std::uint64_t size : gridSizes)
                for (int splits : {1, 4})
                    for (int active : {1, 2}) {
                        if (!wanted(topology, active))
                            continue;
                        SystemParams system;
                        system.splits = splits;
                        system.active = active;
                        const Dim dim = oneDim(topology, npus);
                        for (Coll coll : allColls)
                            cases.push_back(
                                collectiveCase({dim},
                                               coll,
                                               size,
                                               system,
                                               aware ? Congestion::Aware : Congestion::Unaware,
                                               oneDimCollective(coll, dim, size, system, aware)));
                    }
    return cases;
}

// Section 3: Ring, FullyConnected and Switch x p in {2, 4, 8, 16} x four sizes x k in {1, 4}
// x a in {1, 2} x the four collectives, congestion-unaware: ceil(n / a) T_chunk.
TEST(AstraFormulaGrid, OneDimensionUnaware)
{
    runGrid("1-D congestion-unaware", oneDimCases(false, [](Topology, int) { return true; }));
}

// Congestion-aware, one chunk at a time: uncontended, delta = h floor(L + m / B).
TEST(AstraFormulaGrid, OneDimensionAwareOneActiveChunk)
{
    runGrid("1-D congestion-aware, a = 1",
            oneDimCases(true, [](Topology, int active) { return active == 1; }));
}

// Congestion-aware Switch with two active chunks: 2 T_chunk + floor(m / B) for four chunks.
TEST(AstraFormulaGrid, OneDimensionAwareSwitchTwoActiveChunks)
{
    runGrid("1-D congestion-aware Switch, a = 2",
            oneDimCases(true, [](Topology topology, int active) {
                return topology == Topology::Switch && active == 2;
            }));
}

// Multi-dim congestion-unaware, a = 1: the flow shop, fill + n T_bottleneck + drain. 65 B in
// four splits is inflated on 32 and 64 NPUs (four chunks of N bytes, not five of 16) and runs
// five chunks of 16 B on 16 NPUs.
TEST(AstraFormulaGrid, MultiDimensionUnawareFlowShop)
{
    const std::vector<std::vector<Dim>> networks{
        // The spec's 64-NPU example network, and smaller ones with a slow last dimension.
        {{Topology::Ring, 2, 200, 50},
         {Topology::FullyConnected, 8, 100, 500},
         {Topology::Switch, 4, 50, 2000}},
        {{Topology::Ring, 4, 200, 50}, {Topology::Switch, 4, 25, 1500}},
        {{Topology::FullyConnected, 2, 400, 20},
         {Topology::Ring, 2, 100, 200},
         {Topology::Switch, 8, 12, 3000}},
    };
    std::vector<Case> cases;
    std::string skipped;
    for (const std::vector<Dim>& dims : networks)
        for (std::uint64_t size : {std::uint64_t{65},
                                   std::uint64_t{256 * 1024},
                                   std::uint64_t{1024 * 1024},
                                   std::uint64_t{8 * 1024 * 1024}})
            for (int splits : {1, 4})
                for (Coll coll : allColls)
                    for (bool localBwAware : {true, false}) {
                        if (!localBwAware && coll != Coll::AllReduce)
                            continue; // the same phases either way
                        SystemParams system;
                        system.splits = splits;
                        system.localBwAware = localBwAware;
                        const FlowShop shop = multiDimCollective(coll, dims, size, system);
                        Case each = collectiveCase(
                            dims, coll, size, system, Congestion::Unaware, shop.total);
                        if (shop.valid)
                            cases.push_back(each);
                        else
                            skipped += "\n    " + each.name;
                    }
    if (!skipped.empty())
        std::cout << "[ grid     ] left out, the bottleneck is not the last dimension's all-reduce "
                     "(the closed form does not apply):"
                  << skipped << "\n";
    runGrid("multi-dim congestion-unaware flow shop, a = 1", cases);
}

// Section 4, compute: a chain of GPU nodes under the roofline (memory- and compute-bound,
// tensor_size 0 skipped), and the same trace replayed from duration_micros (0 -> 1 ns);
// host ops always replayed.
TEST(AstraFormulaGrid, ComputeRooflineAndReplay)
{
    struct Op {
        std::uint64_t ops;
        std::uint64_t bytes;
        std::uint64_t micros;
        bool cpu;
    };
    const std::vector<std::vector<Op>> chains{
        {{1000, 1000, 3, false}, {7777777, 3333, 0, false}, {1, 1, 1, false}},
        {{123456789012, 98765432, 17, false}, {0, 0, 2, true}, {5, 0, 0, false}},
        {{999999999999, 1, 250, false}, {2000000, 4000000, 9, false}},
        {{31415926535, 27182818, 0, false}, {31415926535, 2718281828, 4, false}, {1, 0, 6, true}},
    };
    std::vector<Case> cases;
    for (double peak : {100.0, 312.5, 989.0})
        for (double localMem : {1000.0, 2039.0, 3350.0})
            for (bool roofline : {true, false})
                for (std::size_t chainIndex = 0; chainIndex < chains.size(); ++chainIndex) {
                    const std::vector<Op>& chain = chains[chainIndex];
                    std::uint64_t expected = 0;
                    for (const Op& op : chain) {
                        if (op.cpu || !roofline)
                            expected += op.micros == 0 ? 1 : op.micros * 1000;
                        else
                            expected += rooflineNs(op.ops, op.bytes, localMem, peak);
                    }
                    SystemParams system;
                    system.localMemGbps = localMem;
                    Case each;
                    each.name = "chain " + std::to_string(chainIndex) + " peak " +
                                formatNumber(peak) + " mem " + formatNumber(localMem) +
                                (roofline ? " roofline" : " replay");
                    each.network = networkYaml({oneDim(Topology::Ring, 2)});
                    each.system = systemJson(
                        system,
                        1,
                        ",\n  \"roofline-enabled\": " + std::string(roofline ? "1" : "0") +
                            ",\n  \"peak-perf\": " + formatNumber(peak));
                    each.ranks = 2;
                    each.nodesOf = [chain](std::uint32_t) {
                        std::vector<TraceNode> nodes;
                        for (std::size_t i = 0; i < chain.size(); ++i) {
                            std::vector<std::uint64_t> deps;
                            if (i > 0)
                                deps.push_back(i);
                            TraceNode op = computeNode(
                                i + 1, chain[i].ops, chain[i].bytes, chain[i].micros, deps);
                            op.setIsCpuOp(chain[i].cpu);
                            nodes.push_back(op);
                        }
                        return nodes;
                    };
                    each.expectedNs.assign(2, expected);
                    cases.push_back(each);
                }
    runGrid("compute roofline / replay", cases);
}

// Section 4, remote memory: loads and stores of several sizes, t = latency + floor(bytes /
// bw) each; per NPU independent, per node one FIFO server per num-npus-per-node NPUs, a pool
// one FIFO server for all. Every rank issues the same chain, so a shared server serves the
// ranks round robin: the i-th of g ranks sharing it finishes at ((K - 1) g + i + 1) t for K
// equal requests.
TEST(AstraFormulaGrid, RemoteMemory)
{
    std::vector<Case> cases;
    const double latency = 250;
    const double bandwidth = 37;
    // Per NPU: a chain of different sizes, loads and stores alternating.
    const std::vector<std::uint64_t> chain{1, 4096, 1000003, 64 * 1024 * 1024 + 5};
    for (std::uint32_t ranks : {2U, 4U}) {
        Case each;
        each.name = "PER_NPU " + std::to_string(ranks) + " ranks, chain of four sizes";
        each.network = networkYaml({oneDim(Topology::Switch, ranks)});
        each.system = systemJson(SystemParams{}, 1);
        each.memory = R"({"memory-type": "PER_NPU_MEMORY_EXPANSION", "remote-mem-latency": 250,
                          "remote-mem-bw": 37})";
        each.ranks = ranks;
        each.nodesOf = [chain](std::uint32_t) {
            std::vector<TraceNode> nodes;
            for (std::size_t i = 0; i < chain.size(); ++i) {
                std::vector<std::uint64_t> deps;
                if (i > 0)
                    deps.push_back(i);
                nodes.push_back(gpuMemoryNode(i + 1, i % 2 == 0, chain[i], deps));
            }
            return nodes;
        };
        std::uint64_t expected = 0;
        for (std::uint64_t bytes : chain)
            expected += remoteMemoryNs(bytes, latency, bandwidth);
        each.expectedNs.assign(ranks, expected);
        cases.push_back(each);
    }
    // Shared servers: K equal requests per rank.
    struct Shared {
        const char* type;
        std::uint32_t ranks;
        std::uint32_t group; // NPUs per server
    };
    for (const Shared& shared : {Shared{"PER_NODE_MEMORY_EXPANSION", 4, 2},
                                 Shared{"PER_NODE_MEMORY_EXPANSION", 8, 4},
                                 Shared{"PER_NODE_MEMORY_EXPANSION", 8, 8},
                                 Shared{"MEMORY_POOL", 4, 4},
                                 Shared{"MEMORY_POOL", 8, 8}})
        for (std::uint64_t bytes :
             {std::uint64_t{100}, std::uint64_t{1 << 20}, std::uint64_t{12345678}})
            for (std::uint64_t requests : {1, 3}) {
                Case each;
                each.name = std::string(shared.type) + " " + std::to_string(shared.ranks) +
                            " ranks / " + std::to_string(shared.group) + " per server, " +
                            std::to_string(requests) + " x " + std::to_string(bytes) + " B";
                each.network = networkYaml({oneDim(Topology::Ring, shared.ranks)});
                each.system = systemJson(SystemParams{}, 1);
                each.memory = std::string(R"({"memory-type": ")") + shared.type +
                              R"(", "remote-mem-latency": 250, "remote-mem-bw": 37)";
                if (std::string(shared.type) == "PER_NODE_MEMORY_EXPANSION")
                    each.memory += ", \"num-npus-per-node\": " + std::to_string(shared.group);
                each.memory += "}";
                each.ranks = shared.ranks;
                each.nodesOf = [bytes, requests](std::uint32_t) {
                    std::vector<TraceNode> nodes;
                    for (std::uint64_t i = 0; i < requests; ++i) {
                        std::vector<std::uint64_t> deps;
                        if (i > 0)
                            deps.push_back(i);
                        nodes.push_back(gpuMemoryNode(i + 1, i % 2 == 1, bytes, deps));
                    }
                    return nodes;
                };
                const std::uint64_t one = remoteMemoryNs(bytes, latency, bandwidth);
                for (std::uint32_t server = 0; server < shared.ranks / shared.group; ++server)
                    for (std::uint64_t i = 0; i < shared.group; ++i)
                        each.expectedNs.push_back(((requests - 1) * shared.group + i + 1) * one);
                each.sorted = true;
                cases.push_back(each);
            }
    runGrid("remote memory", cases);
}

// Section 4, send/recv: one message of comm_size bytes, no chunking and no endpoint delay;
// sender and receiver complete when it arrives, after delta(comm_size) over the hops of the
// route (Ring: the shorter way round; FullyConnected 1; Switch 2); aware store-and-forward
// h floor(L + m / B), unaware floor(h L + m / B). Ranks not involved run a 1 ns compute.
TEST(AstraFormulaGrid, SendRecv)
{
    std::vector<Case> cases;
    for (Congestion congestion : {Congestion::Aware, Congestion::Unaware})
        for (Topology topology : {Topology::Ring, Topology::FullyConnected, Topology::Switch})
            for (std::uint64_t bytes : {std::uint64_t{1},
                                        std::uint64_t{4096},
                                        std::uint64_t{1000000},
                                        std::uint64_t{16777219}})
                for (std::uint32_t peer = 1; peer < 8; ++peer) {
                    if (topology != Topology::Ring && peer > 2)
                        continue;
                    const Dim dim = oneDim(topology, 8);
                    const std::uint64_t hops = topology == Topology::Ring ? std::min(peer, 8 - peer)
                                                                          : neighbourHops(topology);
                    const bool aware = congestion == Congestion::Aware;
                    const std::uint64_t arrival = delta(dim, hops, bytes, aware);
                    Case each;
                    each.name = std::string(topologyName(topology)) + "8 send 0 -> " +
                                std::to_string(peer) + " " + std::to_string(bytes) + " B" +
                                (aware ? " aware" : " unaware");
                    each.network = networkYaml({dim});
                    each.system = systemJson(SystemParams{}, 1);
                    each.congestion = congestion;
                    each.ranks = 8;
                    each.nodesOf = [peer, bytes](std::uint32_t rank) {
                        if (rank == 0)
                            return std::vector<TraceNode>{
                                pointToPointNode(1, true, 0, static_cast<int>(peer), bytes, 3)};
                        if (rank == peer)
                            return std::vector<TraceNode>{
                                pointToPointNode(1, false, static_cast<int>(peer), 0, bytes, 3)};
                        return std::vector<TraceNode>{computeNode(1, 0, 0, 0)};
                    };
                    each.expectedNs.assign(8, 1);
                    each.expectedNs[0] = arrival;
                    each.expectedNs[peer] = arrival;
                    cases.push_back(each);
                }
    runGrid("send/recv", cases);
}

} // namespace
} // namespace etsim::platforms::astra
