#pragma once
// `etsim trace info|validate|convert`: thin front ends over et_driver's TraceInfo,
// TraceValidator and the formats of apps/TraceFormats.h. docs/cli.md documents them.
//
// Exit codes (apps/ExitCode.h): 2 when the command cannot start (bad usage, a path that does
// not exist or cannot be opened, an unknown extension, an output that cannot be written, a
// DOT output over the node limit without --force); 1 when the input is the problem: findings
// of `validate` (errors, or warnings with --strict), or a trace that cannot be read to the end
// (corrupt or truncated) for any subcommand.

#include "apps/ExitCode.h"

#include <CLI/CLI.hpp>

namespace etsim::apps {

// Adds the `trace` subcommand and its subcommands to `app`. The subcommand that runs stores
// its exit code in `result`, which must outlive app.parse().
void addTraceCommands(CLI::App& app, ExitCode& result);

} // namespace etsim::apps
