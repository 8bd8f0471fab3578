#pragma once
// `etsim collective verify FILE...` proves what custom collective algorithms compute (MSCCL
// XML, or a Chakra algorithm trace prefix); `etsim gen collective` writes the built-in
// algorithms as MSCCL XML or Chakra algorithm traces. docs/cli.md documents both.
//
// Exit codes (apps/ExitCode.h): 0 verified / written; 1 a program is wrong (the message names
// the rank, chunk and step) or malformed; 2 cannot start (bad usage, a missing file, an
// output that cannot be written).

#include "apps/ExitCode.h"

#include <CLI/CLI.hpp>

namespace etsim::apps {

/// Adds `collective verify` to `app` and `collective` under the `gen` subcommand, which
/// addGenCommands() must have added before.
void addCollectiveCommands(CLI::App& app, ExitCode& result);

} // namespace etsim::apps
