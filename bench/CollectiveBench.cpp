// Custom collective algorithms: the verifier and the step compiler on generated ring and
// halving-doubling all-reduce programs (the target: a 1,024-rank ring verified in
// under 1 s), and the MSCCL reader on the program's XML text.

#include "models/net/collectives/CustomAlgorithm.h"
#include "models/net/collectives/ProgramVerifier.h"
#include "platforms/collectives/MscclReader.h"
#include "platforms/collectives/ProgramGen.h"

#include <benchmark/benchmark.h>

#include <memory>

namespace {

using etsim::CollectiveType;
using etsim::net::AlgorithmKind;

void BM_VerifyRingAllReduce(benchmark::State& state)
{
    auto ranks = static_cast<std::uint32_t>(state.range(0));
    etsim::net::CollectiveProgram program =
        etsim::platform::generateProgram(AlgorithmKind::Ring, CollectiveType::AllReduce, ranks);
    std::uint64_t operations = 0;
    for (auto _ : state)
        operations = etsim::net::verifyProgram(program).operations;
    state.counters["operations"] = static_cast<double>(operations);
}
BENCHMARK(BM_VerifyRingAllReduce)->Arg(64)->Arg(256)->Arg(1024)->Unit(benchmark::kMillisecond);

void BM_VerifyHalvingDoublingAllReduce(benchmark::State& state)
{
    auto ranks = static_cast<std::uint32_t>(state.range(0));
    etsim::net::CollectiveProgram program = etsim::platform::generateProgram(
        AlgorithmKind::HalvingDoubling, CollectiveType::AllReduce, ranks);
    for (auto _ : state)
        benchmark::DoNotOptimize(etsim::net::verifyProgram(program));
}
BENCHMARK(BM_VerifyHalvingDoublingAllReduce)->Arg(1024)->Unit(benchmark::kMillisecond);

// Verification plus placing every operation on the step engine's steps (what loading a
// custom algorithm costs once, before the fabric runs).
void BM_CompileRingAllReduce(benchmark::State& state)
{
    auto ranks = static_cast<std::uint32_t>(state.range(0));
    auto program = std::make_shared<const etsim::net::CollectiveProgram>(
        etsim::platform::generateProgram(AlgorithmKind::Ring, CollectiveType::AllReduce, ranks));
    for (auto _ : state)
        benchmark::DoNotOptimize(std::make_unique<etsim::net::CustomAlgorithm>(program));
}
BENCHMARK(BM_CompileRingAllReduce)->Arg(1024)->Unit(benchmark::kMillisecond);

void BM_ParseMscclRingAllReduce(benchmark::State& state)
{
    auto ranks = static_cast<std::uint32_t>(state.range(0));
    std::string xml = etsim::platform::writeMsccl(
        etsim::platform::generateProgram(AlgorithmKind::Ring, CollectiveType::AllReduce, ranks));
    for (auto _ : state)
        benchmark::DoNotOptimize(etsim::platform::parseMsccl(xml, "ring.xml"));
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * xml.size()));
}
BENCHMARK(BM_ParseMscclRingAllReduce)->Arg(256)->Unit(benchmark::kMillisecond);

} // namespace
