#pragma once
// `etsim gen learn|synth|compare`: fit a statistical model of traces, sample synthetic traces
// from it, and measure how alike two traces are (docs/synth.md, docs/cli.md).
//
// Exit codes (apps/ExitCode.h): 0 done; 1 a compare run that did not finish; 2 cannot start
// (bad usage, a missing trace, a model file that is not valid, an output that cannot be
// written).

#include "apps/ExitCode.h"

#include <CLI/CLI.hpp>

namespace etsim::apps {

// Adds learn, synth and compare under `gen`; the one that runs stores its code in `result`.
void addSynthCommands(CLI::App& gen, ExitCode& result);

} // namespace etsim::apps
