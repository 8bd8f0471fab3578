#pragma once
// Turns SIGINT, SIGTERM and SIGHUP into a StopRequest for as long as it lives, so that
// `etsim run` stops cleanly: the simulation ends at its next delta cycle, the timeline and
// the report are written, co-simulation peers get their TERMINATE, and the command exits with
// 128 + the signal's number (130, 143, 129; README.md, exit codes).
//
// The signals are blocked in the creating thread, and so in every thread it starts later
// (threads inherit the mask), and a watcher thread takes them with sigwait: no code runs in a
// signal handler. A second signal while the run is winding down ends the process at once,
// with the same exit code. Create it before any other thread, restore by destroying it.

#include "kernel/StopRequest.h"

#include <atomic>
#include <csignal>
#include <thread>

namespace etsim::apps {

class SignalWatcher {
public:
    explicit SignalWatcher(StopRequest& stop);
    ~SignalWatcher();
    SignalWatcher(const SignalWatcher&) = delete;
    SignalWatcher& operator=(const SignalWatcher&) = delete;

    /// The signal that requested the stop, or 0.
    int signal() const { return received.load(); }
    /// The exit code for that signal: 128 + its number.
    int exitCode() const { return 128 + received.load(); }

private:
    void watch();

    StopRequest& stop;
    sigset_t watched{};
    sigset_t previous{};
    std::atomic<int> received{0};
    std::atomic<bool> ending{false};
    std::thread watcher;
};

/// "SIGINT", "SIGTERM", "SIGHUP", else "signal N".
const char* signalName(int signal);

} // namespace etsim::apps
