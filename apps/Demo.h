#pragma once
// `etsim demo`: a small built-in simulation that exercises the runtime end to end (ranks that
// alternate computation with transfers to a memory they share) until platforms and traces
// are wired into `etsim run`.

#include "apps/ExitCode.h"

#include <cstdint>
#include <iosfwd>
#include <string>

namespace CLI {
class App;
}

namespace etsim::apps {

struct DemoOptions {
    static constexpr unsigned defaultRanks = 4;
    static constexpr unsigned defaultSteps = 8;
    static constexpr std::uint64_t defaultBytesPerStep = 64ull << 20; // 64 MiB
    static constexpr double defaultComputeNsPerStep = 20000.0;        // 20 us
    static constexpr double defaultMemoryGBps = 900.0;                // decimal GB/s
    static constexpr double defaultMemoryLatencyNs = 500.0;

    unsigned ranks = defaultRanks;
    unsigned steps = defaultSteps;
    std::uint64_t bytesPerStep = defaultBytesPerStep;
    double computeNsPerStep = defaultComputeNsPerStep;
    double memoryGBps = defaultMemoryGBps;
    double memoryLatencyNs = defaultMemoryLatencyNs;
    std::string logSpec; // etsim --log
};

// Runs the demo in the current SystemC kernel and writes a short report to `out`.
// Returns 0 on success, 1 when the simulation did not finish (deadlock).
int runDemo(const DemoOptions& options, std::ostream& out);

// Registers `etsim demo`; its callback stores the command's exit code in `result`.
// `logSpec` is the value of the global --log option, read when the command runs.
void addDemoCommand(CLI::App& app, const std::string& logSpec, ExitCode& result);

} // namespace etsim::apps
