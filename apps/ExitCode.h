#pragma once
// The exit codes of every etsim subcommand (the same table is in README.md).

namespace etsim::apps {

enum class ExitCode : int {
    // The command did what was asked.
    Success = 0,
    // The input or the simulation has a problem: validation errors in a trace or platform,
    // a deadlock, a failed co-simulation peer.
    InputProblem = 1,
    // etsim could not start as asked: bad usage, an unknown option, a missing or unreadable file.
    CannotStart = 2,
    // `etsim run` stopped by a signal, cleanly (report and timeline written): 128 + the
    // signal's number, as a shell reports a process killed by it.
    StoppedBySighup = 129,
    StoppedBySigint = 130,
    StoppedBySigterm = 143,
};

// The exit code of a run stopped by `signal` (SIGHUP, SIGINT or SIGTERM).
constexpr ExitCode interruptedBy(int signal)
{
    return static_cast<ExitCode>(128 + signal);
}
// Any other exit code (a crash, an abort) is a bug in etsim.

constexpr int toInt(ExitCode code)
{
    return static_cast<int>(code);
}

} // namespace etsim::apps
