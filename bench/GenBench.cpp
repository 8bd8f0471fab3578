// `etsim gen` at scale: thousands of rank files written into a temporary folder that is
// removed afterwards. Counters: ranks, nodes and bytes written per second, and the process's
// peak resident memory, which must not grow with the rank count (ranks are generated one at a
// time and streamed node by node).

#include "workloads/Microbench.h"
#include "workloads/Presets.h"
#include "workloads/Transformer.h"

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <sys/resource.h>

namespace {

namespace fs = std::filesystem;
using namespace etsim::workloads;

// A fresh folder under the system temporary folder, removed with everything in it.
class ScratchFolder {
public:
    ScratchFolder()
    {
        std::string pattern = (fs::temp_directory_path() / "etsim-gen-bench-XXXXXX").string();
        if (mkdtemp(pattern.data()) == nullptr)
            throw std::runtime_error("cannot create a temporary folder");
        root = pattern;
    }
    ~ScratchFolder()
    {
        std::error_code error;
        fs::remove_all(root, error);
    }
    ScratchFolder(const ScratchFolder&) = delete;
    ScratchFolder& operator=(const ScratchFolder&) = delete;
    const fs::path& path() const { return root; }

private:
    fs::path root;
};

double peakResidentMiB()
{
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return static_cast<double>(usage.ru_maxrss) / 1024.0; // ru_maxrss is in KiB on Linux
}

void writeAndCount(benchmark::State& state, const Workload& workload)
{
    uint64_t nodes = 0;
    uint64_t bytes = 0;
    for (auto _ : state) {
        ScratchFolder folder;
        WriteOptions options;
        options.folder = folder.path();
        options.name = "job";
        WriteSummary summary = writeWorkload(workload, options);
        nodes += summary.nodes;
        bytes += summary.bytes;
    }
    state.counters["ranks"] = workload.rankCount();
    state.counters["nodes/s"] =
        benchmark::Counter(static_cast<double>(nodes), benchmark::Counter::kIsRate);
    state.SetBytesProcessed(static_cast<int64_t>(bytes));
    state.counters["peakRssMiB"] = peakResidentMiB();
}

// All-reduce in groups of 8 (a TP-like layout), 4 repetitions with a GEMM in between.
void BM_GenMicrobench(benchmark::State& state)
{
    MicrobenchSpec spec;
    spec.ranks = static_cast<uint32_t>(state.range(0));
    spec.groupSize = 8;
    spec.iterations = 4;
    spec.computeFlops = int64_t{1} << 30;
    spec.bytes = 64 << 20;
    writeAndCount(state, Microbench(spec));
}
BENCHMARK(BM_GenMicrobench)->Arg(1024)->Arg(16384)->Unit(benchmark::kMillisecond)->Iterations(1);

// Llama-3 70B training step, TP 8 x PP 4 x DP, 8 micro-batches of one 8192-token sequence.
void BM_GenLlama70bTraining(benchmark::State& state)
{
    TransformerSpec spec;
    spec.model = findModelPreset("llama3-70b")->model;
    spec.parallel = {8, 4, static_cast<uint32_t>(state.range(0)), 1};
    spec.globalBatch = 8 * spec.parallel.dp;
    writeAndCount(state, Transformer(spec));
}
BENCHMARK(BM_GenLlama70bTraining)->Arg(4)->Arg(32)->Unit(benchmark::kMillisecond)->Iterations(1);

} // namespace
