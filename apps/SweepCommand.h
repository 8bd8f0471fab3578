#pragma once
// `etsim sweep`: run a design-space sweep (docs/sweep.md), and `etsim compare`: put two or
// more run reports side by side. Thin front ends over etsim::sweep.

#include "apps/ExitCode.h"

namespace CLI {
class App;
}

namespace etsim::apps {

// Registers `etsim sweep` and `etsim compare`; callbacks store the exit code in `result`.
void addSweepCommands(CLI::App& app, ExitCode& result);

} // namespace etsim::apps
