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
    // The whole line goes to the shell as written, so "VAR=1 peer --flag" and pipes work. The
    // child leads its own process group: kill() reaches the peer and not only the shell, and
    // a Ctrl-C at the terminal reaches etsim alone, which then ends the peer with TERMINATE.
    // It starts with no signal blocked and default actions, whatever etsim blocks itself.
    const char* arguments[] = {"/bin/sh", "-c", commandLine.c_str(), nullptr};
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    sigset_t none;
    sigemptyset(&none);
    sigset_t defaults;
    sigemptyset(&defaults);
    for (int signal : {SIGINT, SIGTERM, SIGHUP, SIGPIPE})
        sigaddset(&defaults, signal);
    posix_spawnattr_setsigmask(&attributes, &none);
    posix_spawnattr_setsigdefault(&attributes, &defaults);
    posix_spawnattr_setpgroup(&attributes, 0);
    posix_spawnattr_setflags(
        &attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
    const int error = ::posix_spawn(
        &pid, "/bin/sh", nullptr, &attributes, const_cast<char* const*>(arguments), environ);
    posix_spawnattr_destroy(&attributes);
    if (error != 0)
        throw CosimError("cosim: cannot start peer \"" + commandLine +
                         "\": " + std::strerror(error));
}

ChildProcess::~ChildProcess()
{
    if (!waitExit(std::chrono::milliseconds(1000)))
        kill();
}

bool ChildProcess::reap(int options)
{
    if (reaped)
        return true;
    int status = 0;
    const pid_t done = ::waitpid(pid, &status, options);
    if (done == pid) {
        reaped = true;
        if (WIFEXITED(status))
            how = "exited with status " + std::to_string(WEXITSTATUS(status));
        else if (WIFSIGNALED(status))
            how = "was killed by signal " + std::to_string(WTERMSIG(status)) + " (" +
                  strsignal(WTERMSIG(status)) + ")";
        return true;
    }
    if (done < 0 && errno == ECHILD) {
        reaped = true;
        how = "has exited";
        return true;
    }
    return false;
}

std::optional<std::string> ChildProcess::exited()
{
    if (!reap(WNOHANG))
        return std::nullopt;
    return how;
}

bool ChildProcess::waitExit(std::chrono::milliseconds timeout)
{
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!reap(WNOHANG)) {
        if (std::chrono::steady_clock::now() >= deadline)
            return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return true;
}

void ChildProcess::kill()
{
    if (reaped)
        return;
    // The group: the shell and whatever it started.
    ::kill(-pid, SIGKILL);
    ::kill(pid, SIGKILL);
    reap(0);
}

} // namespace etsim::cosim
