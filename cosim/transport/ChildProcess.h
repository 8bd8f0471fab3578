#pragma once
// A peer program etsim starts itself ("spawn" in the proxy options): started through
// /bin/sh, stopped at the end of the run (after a grace period, killed).

#include <chrono>
#include <string>
#include <sys/types.h>

namespace etsim::cosim {

class ChildProcess {
public:
    /// Starts `/bin/sh -c commandLine`; throws CosimError if it cannot.
    explicit ChildProcess(const std::string& commandLine);
    /// Waits up to the grace period for the child to exit, then kills it.
    ~ChildProcess();
    ChildProcess(const ChildProcess&) = delete;
    ChildProcess& operator=(const ChildProcess&) = delete;

    pid_t id() const { return pid; }
    /// Waits up to `timeout` for the child to exit; true when it has.
    bool waitExit(std::chrono::milliseconds timeout);
    /// SIGKILL and reap.
    void kill();

private:
    pid_t pid = -1;
    bool reaped = false;
};

} // namespace etsim::cosim
