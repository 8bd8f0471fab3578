// Entry point of the benchmark binaries. libsystemc.so references sc_main, so one must exist
// even though no benchmark here elaborates a design through it.
//
// The benchmarks run with the heap the etsim command gives its runs: huge pages asked of
// malloc where the kernel gives them only when asked (kernel/HugePages.h), so that a figure
// measured here is what a user's run sees. ETSIM_HUGE_PAGES=0 measures without them.
#include "kernel/HugePages.h"

#include <benchmark/benchmark.h>
#include <systemc>

int sc_main(int /*argc*/, char** /*argv*/)
{
    return 0;
}

int main(int argc, char** argv)
{
    etsim::restartWithHugePages(argv);
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv))
        return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
