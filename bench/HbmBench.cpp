// Speed of the HBM models: simulated bursts per wall second for the detailed model (streaming
// and random traffic, with the simulated bandwidth as a counter) and transactions per second
// for the analytic one.

#include "kernel/Stats.h"
#include "models/hbm/AnalyticHbm.h"
#include "models/hbm/HbmDevice.h"

#include <benchmark/benchmark.h>

#include <cstdint>

namespace {

using namespace etsim;
using namespace etsim::hbm;

HbmConfig detailedHbm3()
{
    HbmConfig config = hbmPreset(HbmPreset::Hbm3_6400);
    config.fidelity = Fidelity::Detailed;
    return config;
}

// Streams 8 MiB of reads as 16 KiB DMA transactions, 16 in flight.
void BM_HbmDetailedStreaming(benchmark::State& state)
{
    HbmConfig config = detailedHbm3();
    std::uint64_t size = 16384;
    std::uint64_t count = 512;
    std::uint64_t bursts = size / config.organisation.burstBytes() * count;
    double simulatedSeconds = 0.0;
    for (auto _ : state) {
        StatGroup stats("hbm");
        std::uint64_t done = 0;
        std::uint64_t lastPs = 0;
        HbmDevice device(config, stats, [&](std::uint64_t, std::uint64_t ps) {
            ++done;
            lastPs = ps;
        });
        std::uint64_t submitted = 0;
        std::uint64_t now = 0;
        while (done < count) {
            while (submitted < count && submitted - done < 16) {
                device.submit(submitted, submitted * size, size, false, now);
                ++submitted;
            }
            now = device.nextEventPs();
            device.runUntil(now);
        }
        simulatedSeconds = static_cast<double>(lastPs) * 1e-12;
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * bursts));
    state.counters["sim_GBps"] = static_cast<double>(size * count) / simulatedSeconds * 1e-9;
    state.counters["of_peak"] = static_cast<double>(size * count) / simulatedSeconds /
                                config.organisation.devicePeak().bytesPerSecond();
}
BENCHMARK(BM_HbmDetailedStreaming)->Unit(benchmark::kMillisecond);

// 65,536 reads of 32 B at random addresses, all queued at once.
void BM_HbmDetailedRandom(benchmark::State& state)
{
    HbmConfig config = detailedHbm3();
    std::uint64_t count = 65536;
    double simulatedSeconds = 0.0;
    for (auto _ : state) {
        StatGroup stats("hbm");
        std::uint64_t lastPs = 0;
        HbmDevice device(
            config, stats, [&](std::uint64_t, std::uint64_t ps) { lastPs = std::max(lastPs, ps); });
        std::uint64_t random = 12345;
        for (std::uint64_t i = 0; i < count; ++i) {
            random = random * 6364136223846793005ULL + 1442695040888963407ULL;
            device.submit(
                i, ((random >> 20) % config.organisation.deviceBytes()) & ~31ULL, 32, false, 0);
        }
        device.drain();
        simulatedSeconds = static_cast<double>(lastPs) * 1e-12;
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * count));
    state.counters["sim_GBps"] = static_cast<double>(32 * count) / simulatedSeconds * 1e-9;
    state.counters["of_peak"] = static_cast<double>(32 * count) / simulatedSeconds /
                                config.organisation.devicePeak().bytesPerSecond();
}
BENCHMARK(BM_HbmDetailedRandom)->Unit(benchmark::kMillisecond);

// Analytic transactions of 1 MiB, back to back.
void BM_HbmAnalytic(benchmark::State& state)
{
    HbmConfig config = hbmPreset(HbmPreset::Hbm3H100);
    StatGroup stats("hbm");
    AnalyticHbm hbm(config, stats);
    std::uint64_t now = 0;
    for (auto _ : state) {
        now = hbm.complete(now, 1 << 20, false);
        benchmark::DoNotOptimize(now);
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_HbmAnalytic);

} // namespace
