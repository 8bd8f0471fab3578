// `etsim trace import pytorch` throughput on the shared real traces: host nodes per second of
// the whole import (read, map, write), and of reading alone. Rates are per CPU second of the
// process (Google Benchmark's default), so a loaded machine shows in the wall time column,
// not in the rate. Skips (with a message) when the
// shared traces are absent. Set ETSIM_TRACES to the traces folder if it is not
// ../shared/traces of the source tree.

#include "importers/pytorch/HostTrace.h"
#include "importers/pytorch/JsonFile.h"
#include "importers/pytorch/PytorchImport.h"
#include "tests/support/FileList.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <sys/resource.h>
#include <unistd.h>

namespace {

namespace fs = std::filesystem;
namespace pt = etsim::importers::pytorch;

fs::path traces()
{
    if (const char* env = std::getenv("ETSIM_TRACES"); env != nullptr && *env != '\0')
        return env;
    return fs::path(ETSIM_SOURCE_DIR) / ".." / "shared" / "traces";
}

fs::path scratch()
{
    fs::path dir = fs::temp_directory_path() / ("etsim-import-bench-" + std::to_string(getpid()));
    fs::create_directories(dir);
    return dir;
}

void run(benchmark::State& state, pt::ImportRequest request)
{
    uint64_t hostOps = 0;
    for (auto _ : state) {
        pt::ImportResult result = pt::importPytorch(request);
        hostOps = 0;
        for (const pt::RankSummary& r : result.ranks)
            hostOps += r.hostOps;
    }
    state.counters["host_nodes"] = static_cast<double>(hostOps);
    state.counters["host_nodes_per_s"] =
        benchmark::Counter(static_cast<double>(hostOps) * static_cast<double>(state.iterations()),
                           benchmark::Counter::kIsRate);
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    state.counters["peak_rss_MiB"] = static_cast<double>(usage.ru_maxrss) / 1024.0;
    std::error_code error;
    fs::remove_all(request.prefix.parent_path(), error);
}

// ResNet rank 1, schema 1.1.0, host only: 14,389 host ops, 11.9 MB of JSON (gzip input).
void resnetHostOnly(benchmark::State& state)
{
    fs::path file = traces() / "pytorch-resnet-2gpu-et1.1.0-r1" / "resnet_2gpu_et.json.gz";
    if (!fs::exists(file)) {
        state.SkipWithError("shared traces not found: set ETSIM_TRACES");
        return;
    }
    pt::ImportRequest request;
    request.hostFiles = {file};
    request.prefix = scratch() / "resnet";
    run(state, request);
}
BENCHMARK(resnetHostOnly)->Unit(benchmark::kMillisecond);

// DLRM, 8 ranks of schema 1.0.1 with their Kineto traces: 13,376 host ops (two passes over
// the host traces: the cross-rank collective check, then the writing).
void dlrmWithKineto(benchmark::State& state)
{
    fs::path dir = traces() / "pytorch-dlrm-8r-et1.0.1-kineto";
    if (!fs::exists(dir)) {
        state.SkipWithError("shared traces not found: set ETSIM_TRACES");
        return;
    }
    pt::ImportRequest request;
    request.hostFiles = etsim::test::filesStartingWith(dir, "dlrm_eg_");
    request.kinetoFiles = etsim::test::filesStartingWith(dir, "worker");
    request.prefix = scratch() / "dlrm";
    run(state, request);
}
BENCHMARK(dlrmWithKineto)->Unit(benchmark::kMillisecond);

// Phase: reading the ResNet host trace alone (decompress, parse JSON, build the operators).
void resnetReadHostTrace(benchmark::State& state)
{
    fs::path file = traces() / "pytorch-resnet-2gpu-et1.1.0-r1" / "resnet_2gpu_et.json.gz";
    if (!fs::exists(file)) {
        state.SkipWithError("shared traces not found: set ETSIM_TRACES");
        return;
    }
    std::size_t ops = 0;
    for (auto _ : state)
        ops = pt::readHostTrace(file).ops.size();
    state.counters["host_nodes_per_s"] =
        benchmark::Counter(static_cast<double>(ops) * static_cast<double>(state.iterations()),
                           benchmark::Counter::kIsRate);
}
BENCHMARK(resnetReadHostTrace)->Unit(benchmark::kMillisecond);

} // namespace
