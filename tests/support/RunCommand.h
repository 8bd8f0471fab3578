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

} // namespace etsim::test
