#pragma once
// Runs a command line as a user would and collects its exit code and output.

#include <string>

namespace etsim::test {

struct CommandResult {
    int code = -1;      // exit code; -1 when the process did not exit normally
    std::string output; // stdout and stderr together
};

// Runs `commandLine` through the shell with stderr merged into stdout.
CommandResult runCommand(const std::string& commandLine);

// True when `part` occurs in `text` (for checks on a command's output).
inline bool contains(const std::string& text, const std::string& part)
{
    return text.find(part) != std::string::npos;
}

#ifdef ETSIM_BINARY
// Runs the etsim binary under test (the target's ETSIM_BINARY) with `arguments`.
inline CommandResult runEtsim(const std::string& arguments)
{
    return runCommand(std::string(ETSIM_BINARY) + " " + arguments);
}
#endif

} // namespace etsim::test
