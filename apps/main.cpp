// etsim: the command-line front end. Each subcommand parses its options, calls the
// libraries, and maps what happened to the exit codes of apps/ExitCode.h.

#include "apps/Demo.h"
#include "apps/ExitCode.h"
#include "kernel/Error.h"

#include <CLI/CLI.hpp>
#include <systemc>

#include <cstdint>
#include <iostream>

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
    CLI::App app{"etsim: run Chakra execution traces on simulated AI hardware", "etsim"};
    app.set_version_flag("--version", "etsim 0.1.0");
    app.require_subcommand(1);

    etsim::apps::DemoOptions demo;
    CLI::App* demoCommand =
        app.add_subcommand("demo", "Run a small built-in simulation (ranks sharing a memory)");
    demoCommand->add_option("--ranks", demo.ranks, "Number of ranks")->check(CLI::Range(1u, 4096u));
    demoCommand->add_option("--steps", demo.steps, "Compute-then-write steps per rank")
        ->check(CLI::Range(1u, 1000000u));
    demoCommand->add_option("--bytes", demo.bytesPerStep, "Bytes written per step")
        ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 31));

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& error) {
        int code = app.exit(error);
        return code == 0 ? toInt(ExitCode::Success) : toInt(ExitCode::CannotStart);
    }
    try {
        if (demoCommand->parsed())
            return etsim::apps::runDemo(demo, std::cout) == 0 ? toInt(ExitCode::Success)
                                                              : toInt(ExitCode::InputProblem);
    } catch (const etsim::Error& error) {
        std::cerr << "etsim: " << error.what() << '\n';
        return toInt(ExitCode::InputProblem);
    } catch (const sc_core::sc_report& report) {
        std::cerr << "etsim: " << report.what() << '\n';
        return toInt(ExitCode::InputProblem);
    }
    return toInt(ExitCode::Success);
}
