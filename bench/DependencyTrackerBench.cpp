// Throughput and memory of the ET dependency tracker on a 10 M node trace shaped like a
// PyTorch-derived one: sparse ascending ids, a data chain per host thread, kernels depending
// on their launching op, a few long edges, a ctrl edge to a caller, and forward references.
// Figures are recorded in bench/README.md ("Dependency tracker").

#include "et_driver/DependencyTracker.h"

#include <benchmark/benchmark.h>

#include <array>
#include <cstdint>
#include <deque>
#include <fstream>
#include <string>

namespace etsim {
namespace {

constexpr std::uint64_t nodeCount = 10'000'000;

struct GeneratedNode {
    std::uint64_t id = 0;
    std::array<std::uint64_t, 3> data{};
    std::size_t dataCount = 0;
    std::array<std::uint64_t, 1> ctrl{};
    std::size_t ctrlCount = 0;
};

std::uint64_t idOf(std::uint64_t k)
{
    return 216 + 2 * k; // not dense, as in real traces
}

// Node k of the trace in creation (topological) order.
GeneratedNode generate(std::uint64_t k)
{
    GeneratedNode node;
    node.id = idOf(k);
    if (k >= 1 && k % 3 != 0)
        node.data[node.dataCount++] = idOf(k - 1); // kernel on its launching op
    if (k >= 4)
        node.data[node.dataCount++] = idOf(k - 4); // previous op of the same thread
    if (k >= 97 && k % 50 == 0)
        node.data[node.dataCount++] = idOf(k - 97); // cross-thread sync
    if (k >= 8)
        node.ctrl[node.ctrlCount++] = idOf(k - 1 - k % 8); // caller
    return node;
}

// Feed order: every 1000 nodes two neighbours are swapped, so the first of them names the
// second before it was added (a forward reference, as in the feeder test trace).
std::uint64_t creationIndexAt(std::uint64_t position)
{
    if (position % 1000 == 500 && position + 1 < nodeCount)
        return position + 1;
    if (position % 1000 == 501)
        return position - 1;
    return position;
}

double residentMiB(const char* field)
{
    std::ifstream status("/proc/self/status");
    std::string line;
    std::string key = std::string(field) + ":";
    while (std::getline(status, line))
        if (line.rfind(key, 0) == 0)
            return std::stod(line.substr(key.size())) / 1024.0; // the value is in kB
    return 0.0;
}

// Runs the driver loop of DependencyTracker.h: add while the window has room, issue up to
// maxInFlight in id order, finish the oldest in-flight node.
void drive(DependencyTracker& tracker, std::size_t window, std::size_t maxInFlight)
{
    std::deque<std::uint64_t> inFlight;
    std::uint64_t position = 0;
    for (;;) {
        while (position < nodeCount && tracker.wantsInput(window)) {
            GeneratedNode node = generate(creationIndexAt(position++));
            tracker.add(node.id,
                        IdSpan(node.data.data(), node.dataCount),
                        IdSpan(node.ctrl.data(), node.ctrlCount));
        }
        if (position == nodeCount && !tracker.feedingFinished())
            tracker.finishFeeding();
        while (tracker.hasReady() && inFlight.size() < maxInFlight)
            inFlight.push_back(tracker.popReady());
        if (inFlight.empty()) {
            if (tracker.feedingFinished())
                return;
            continue;
        }
        tracker.finish(inFlight.front());
        inFlight.pop_front();
    }
}

void report(benchmark::State& state, const DependencyTracker& tracker, double rssBefore)
{
    DependencyMemory bytes = tracker.memory();
    const DependencyStats& stats = tracker.stats();
    state.SetItemsProcessed(static_cast<std::int64_t>(stats.nodesFinished));
    state.counters["nodes"] = static_cast<double>(stats.nodesFinished);
    state.counters["edges/node"] =
        static_cast<double>(stats.edgesKept) / static_cast<double>(nodeCount);
    state.counters["fwdRefs"] = static_cast<double>(stats.forwardRefs);
    state.counters["peakPending"] = static_cast<double>(stats.peakPending);
    state.counters["B/node"] =
        static_cast<double>(bytes.indexBytes) / static_cast<double>(bytes.indexCount);
    state.counters["liveEdges"] = static_cast<double>(bytes.edgeSlots);
    state.counters["B/liveEdge"] = bytes.edgeSlots ? static_cast<double>(bytes.edgeBytes) /
                                                         static_cast<double>(bytes.edgeSlots)
                                                   : 0.0;
    state.counters["totalMiB"] = static_cast<double>(bytes.total()) / (1024.0 * 1024.0);
    state.counters["rssGrowMiB"] = residentMiB("VmRSS") - rssBefore;
    state.counters["peakRssMiB"] = residentMiB("VmHWM");
}

// Streaming: a 4096-node reader window, 16 nodes in flight.
void streamWindowed(benchmark::State& state)
{
    for (auto _ : state) {
        double rssBefore = residentMiB("VmRSS");
        DependencyTracker tracker;
        drive(tracker, 4096, 16);
        if (!tracker.done())
            state.SkipWithError("trace did not drain");
        report(state, tracker, rssBefore);
    }
}

// Worst case for memory: the whole trace is added before anything finishes, so every edge is
// live at once (what a dangling ctrl reference near the start causes under data+ctrl).
void loadAllThenDrain(benchmark::State& state)
{
    for (auto _ : state) {
        double rssBefore = residentMiB("VmRSS");
        DependencyTracker tracker;
        drive(tracker, nodeCount, 16);
        if (!tracker.done())
            state.SkipWithError("trace did not drain");
        report(state, tracker, rssBefore);
    }
}

BENCHMARK(streamWindowed)->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(loadAllThenDrain)->Iterations(1)->Unit(benchmark::kMillisecond);

} // namespace
} // namespace etsim
