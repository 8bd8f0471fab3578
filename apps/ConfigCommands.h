#pragma once
// `etsim config keys [COMPONENT] [--markdown]`: every key a platform file takes, with its type
// or unit, default and help, from the components' parameter tables (docs/cli.md).
//
// Exit codes (apps/ExitCode.h): 0 listed; 2 cannot start (an unknown component).

#include "apps/ExitCode.h"

#include <CLI/CLI.hpp>

namespace etsim::apps {

/// Adds `config keys` to `app`.
void addConfigCommands(CLI::App& app, ExitCode& result);

} // namespace etsim::apps
