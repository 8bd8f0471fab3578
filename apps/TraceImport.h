#pragma once
// `etsim trace import pytorch`: the front end of importers/pytorch (docs/pytorch-import.md).
// Exit codes: 2 when the command cannot start (bad usage, an output folder that does not
// exist), 1 when an input is the problem (unreadable, unknown schema, ranks that disagree).

#include "apps/ExitCode.h"

#include <CLI/CLI.hpp>

namespace etsim::apps {

// Adds `import pytorch` under the `trace` subcommand.
void addTraceImportCommand(CLI::App& trace, ExitCode& result);

} // namespace etsim::apps
