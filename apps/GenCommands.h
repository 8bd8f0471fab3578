#pragma once
// `etsim gen microbench|transformer`: thin front ends over etsim::workloads, writing one
// standard Chakra ET per rank into a folder. docs/cli.md documents them.
//
// Exit codes (apps/ExitCode.h): 0 written; 2 cannot start (bad usage, an unknown preset or
// value, parameters that do not fit together, an output folder that cannot be written).

#include "apps/ExitCode.h"

#include <CLI/CLI.hpp>

namespace etsim::apps {

// Adds the `gen` subcommand and its subcommands to `app`. The subcommand that runs stores its
// exit code in `result`, which must outlive app.parse().
void addGenCommands(CLI::App& app, ExitCode& result);

} // namespace etsim::apps
