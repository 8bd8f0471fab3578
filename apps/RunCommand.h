#pragma once
// `etsim run`: a platform, a trace, a report and a timeline (docs/cli.md, docs/report.md), and
// `etsim plot`: a report drawn as SVG.

#include "apps/ExitCode.h"

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace etsim::apps {

// Registers `etsim run` and `etsim plot`; callbacks store the exit code in `result`.
// `logSpec` is the global --log value; `commandLine` is recorded in the JSON report.
void addRunCommands(CLI::App& app,
                    const std::string& logSpec,
                    const std::vector<std::string>& commandLine,
                    ExitCode& result);

} // namespace etsim::apps
