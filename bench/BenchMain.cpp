// Entry point of the benchmark binaries. libsystemc.so references sc_main, so one must exist
// even though no benchmark here elaborates a design through it.
#include <benchmark/benchmark.h>
#include <systemc>

int sc_main(int /*argc*/, char** /*argv*/)
{
    return 0;
}

BENCHMARK_MAIN();
