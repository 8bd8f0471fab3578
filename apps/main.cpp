// etsim: the command-line front end. Each subcommand parses its options, calls the
// libraries, and maps what happened to the exit codes of apps/ExitCode.h.

#include "apps/CollectiveCommands.h"
#include "apps/ConfigCommands.h"
#include "apps/ExitCode.h"
#include "apps/GenCommands.h"
#include "apps/MemCommand.h"
#include "apps/RunCommand.h"
#include "apps/SweepCommand.h"
#include "apps/TraceCommands.h"
#include "apps/Version.h"
#include "kernel/Error.h"
#include "kernel/HugePages.h"
#include "kernel/Log.h"
#include "kernel/OpenFileLimit.h"

#include <CLI/CLI.hpp>
#include <google/protobuf/stubs/logging.h>
#include <systemc> // declares sc_main extern "C", as libsystemc.so expects it

#include <string>
#include <vector>

namespace {

using etsim::apps::ExitCode;
using etsim::apps::toInt;

} // namespace

// libsystemc.so references sc_main; etsim has its own main and never calls it.
int sc_main(int /*argc*/, char** /*argv*/)
{
    return 0;
}

int main(int argc, char** argv)
{
    // A long run's heap on huge pages (kernel/HugePages.h); first, as it may start etsim again.
    etsim::restartWithHugePages(argv);
    // Every failed parse is reported by etsim itself, naming the file and record; protobuf's
    // own log lines ("[libprotobuf ERROR google/protobuf/...]") would only repeat it with
    // the library's source paths.
    google::protobuf::SetLogHandler(nullptr);
    // A run streams one trace file per rank; with the soft limit's common default of 1,024
    // descriptors a 1,024-rank trace could not keep them all open, and reopening files at
    // every read made such runs twice as slow (bench/README.md, "The GPT-3 175B step with every
    // rank").
    etsim::raiseOpenFileLimit();
    CLI::App app{"etsim: run Chakra execution traces on simulated AI hardware", "etsim"};
    app.set_version_flag("--version", std::string("etsim ") + etsim::apps::etsimVersion);
    app.require_subcommand(1);
    // Each subcommand's callback stores its exit code here.
    ExitCode result = ExitCode::Success;
    std::string logSpec;
    app.add_option("--log",
                   logSpec,
                   "Log levels: LEVEL or LOGGER=LEVEL, comma-separated (trace, debug, info, warn, "
                   "error, off); e.g. --log info,et_driver=debug. Default: warnings and errors")
        ->check([](const std::string& spec) {
            // A bad level is bad usage (exit 2), found before any command starts.
            try {
                etsim::LogRegistry probe;
                probe.configure(spec);
            } catch (const etsim::Error& error) {
                return std::string(error.what());
            }
            return std::string();
        });
    etsim::apps::addTraceCommands(app, result);
    etsim::apps::addGenCommands(app, result);
    etsim::apps::addCollectiveCommands(app, result);
    etsim::apps::addMemCommand(app, result);
    etsim::apps::addConfigCommands(app, result);
    const std::vector<std::string> commandLine(argv, argv + argc);
    etsim::apps::addRunCommands(app, logSpec, commandLine, result);
    etsim::apps::addSweepCommands(app, result);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& error) {
        int code = app.exit(error);
        return code == 0 ? toInt(ExitCode::Success) : toInt(ExitCode::CannotStart);
    }
    return toInt(result);
}
