// Acquire/release throughput of PayloadPool against allocating a payload per transaction.
// Figures are in bench/README.md ("Payload pool").

#include "kernel/Extensions.h"
#include "kernel/PayloadPool.h"

#include <benchmark/benchmark.h>
#include <tlm>

#include <memory>
#include <vector>

namespace {

// One transaction's payload life: acquire, touch, release. Argument: data length in bytes.
void poolAcquireRelease(benchmark::State& state)
{
    etsim::PayloadPool pool("bench.pool");
    const auto dataLength = static_cast<unsigned int>(state.range(0));
    for (auto _ : state) { // NOLINT(clang-analyzer-deadcode.DeadStores): benchmark idiom
        tlm::tlm_generic_payload& payload = pool.acquire(dataLength);
        payload.set_address(0x1000);
        benchmark::DoNotOptimize(payload.get_data_ptr());
        payload.release();
    }
    state.counters["created"] = static_cast<double>(pool.stats().created);
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK(poolAcquireRelease)->Arg(0)->Arg(64)->Arg(4096);

// The same with `window` payloads in flight before any is released, as with an outstanding
// limit; reported per payload.
void poolWindow(benchmark::State& state)
{
    etsim::PayloadPool pool("bench.pool");
    const auto window = static_cast<std::size_t>(state.range(0));
    std::vector<tlm::tlm_generic_payload*> inFlight(window);
    for (auto _ : state) { // NOLINT(clang-analyzer-deadcode.DeadStores): benchmark idiom
        for (auto& slot : inFlight)
            slot = &pool.acquire(64);
        for (auto* payload : inFlight)
            payload->release();
    }
    state.counters["created"] = static_cast<double>(pool.stats().created);
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(window));
}
BENCHMARK(poolWindow)->Arg(64);

// Pooled payload plus an EtNodeExtension attached per transaction and freed on return: the
// extension's allocation is the remaining per-transaction cost.
void poolWithExtension(benchmark::State& state)
{
    etsim::PayloadPool pool("bench.pool");
    etsim::EtNodeInfo info;
    info.kind = etsim::NodeKind::MemLoad;
    info.bytes = 64;
    for (auto _ : state) { // NOLINT(clang-analyzer-deadcode.DeadStores): benchmark idiom
        tlm::tlm_generic_payload& payload = pool.acquire(64);
        payload.set_extension(new etsim::EtNodeExtension(info));
        benchmark::DoNotOptimize(etsim::EtNodeExtension::find(payload));
        payload.release();
    }
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK(poolWithExtension);

// Baseline: a fresh payload (and data buffer) from the heap per transaction.
void newDelete(benchmark::State& state)
{
    const auto dataLength = static_cast<unsigned int>(state.range(0));
    for (auto _ : state) { // NOLINT(clang-analyzer-deadcode.DeadStores): benchmark idiom
        auto payload = std::make_unique<tlm::tlm_generic_payload>();
        std::unique_ptr<unsigned char[]> data;
        if (dataLength > 0) {
            data = std::make_unique<unsigned char[]>(dataLength);
            payload->set_data_ptr(data.get());
            payload->set_data_length(dataLength);
        }
        payload->set_address(0x1000);
        benchmark::DoNotOptimize(payload->get_data_ptr());
    }
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK(newDelete)->Arg(0)->Arg(64)->Arg(4096);

} // namespace
