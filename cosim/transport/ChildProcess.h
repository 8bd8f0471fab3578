#pragma once
// A peer program etsim starts itself ("spawn" in the proxy options): started as
// `/bin/sh -c LINE` in its own process group, stopped at the end of the run (after a grace
// period, the group is killed).

#include <chrono>
#include <optional>
#include <string>
#include <sys/types.h>

namespace etsim::cosim {

class ChildProcess {
public:
    /// Starts `/bin/sh -c commandLine` (so "VAR=1 cmd" works); throws CosimError if it cannot.
    explicit ChildProcess(const std::string& commandLine);
    /// Waits up to the grace period for the child to exit, then kills it.
    ~ChildProcess();
    ChildProcess(const ChildProcess&) = delete;
    ChildProcess& operator=(const ChildProcess&) = delete;

    pid_t id() const { return pid; }
    /// Waits up to `timeout` for the child to exit; true when it has.
    bool waitExit(std::chrono::milliseconds timeout);
    /// SIGKILL to the child's process group, and reap.
    void kill();
    /// Without waiting: how the child ended ("exited with status 3", "was killed by signal 9
    /// (Killed)"), or nullopt while it runs.
    std::optional<std::string> exited();

private:
    // waitpid with `options`; true once the child is reaped (its status is then in `how`).
    bool reap(int options);

    pid_t pid = -1;
    bool reaped = false;
    std::string how;
};

} // namespace etsim::cosim
