// Entry point of the benchmark binaries. libsystemc.so references sc_main, so one must exist
// even though no benchmark elaborates a design.
#include <benchmark/benchmark.h>
#include <systemc>

int sc_main(int /*argc*/, char** /*argv*/)
{
    return 0;
}

BENCHMARK_MAIN();
