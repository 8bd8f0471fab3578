#pragma once
// `etsim mem`: drives the HBM model alone with synthetic traffic or an STL request trace and
// prints bandwidth, the latency distribution and row-buffer statistics (docs/cli.md).
//
// Exit codes (apps/ExitCode.h): 0 ran; 1 the input is the problem (a malformed trace line, a
// memory configuration that breaks a rule); 2 cannot start (bad usage or value, a file that
// does not exist or cannot be opened).

#include "apps/ExitCode.h"

#include <CLI/CLI.hpp>

namespace etsim::apps {

// Adds the `mem` subcommand to `app`; when it runs it stores its exit code in `result`, which
// must outlive app.parse().
void addMemCommand(CLI::App& app, ExitCode& result);

} // namespace etsim::apps
