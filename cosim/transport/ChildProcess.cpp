#include "cosim/transport/ChildProcess.h"

#include "cosim/wire/Frame.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <spawn.h>
#include <sys/wait.h>
#include <thread>

extern char** environ;

namespace etsim::cosim {

ChildProcess::ChildProcess(const std::string& commandLine)
{
    // exec: the child is the peer itself, so a kill reaches it and not only the shell.
    const std::string line = "exec " + commandLine;
    const char* arguments[] = {"/bin/sh", "-c", line.c_str(), nullptr};
    const int error = ::posix_spawn(
        &pid, "/bin/sh", nullptr, nullptr, const_cast<char* const*>(arguments), environ);
    if (error != 0)
        throw CosimError("cosim: cannot start peer \"" + commandLine +
                         "\": " + std::strerror(error));
}

ChildProcess::~ChildProcess()
{
    if (!waitExit(std::chrono::milliseconds(1000)))
        kill();
}

bool ChildProcess::waitExit(std::chrono::milliseconds timeout)
{
    if (reaped)
        return true;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
        int status = 0;
        const pid_t done = ::waitpid(pid, &status, WNOHANG);
        if (done == pid || (done < 0 && errno == ECHILD)) {
            reaped = true;
            return true;
        }
        if (std::chrono::steady_clock::now() >= deadline)
            return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
}

void ChildProcess::kill()
{
    if (reaped)
        return;
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    reaped = true;
}

} // namespace etsim::cosim
