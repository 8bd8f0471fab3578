#include "apps/SignalWatcher.h"

#include <cerrno>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <pthread.h>

namespace etsim::apps {

namespace {

// How often the watcher looks whether it should end; bounds the wait at destruction.
constexpr long pollNanoseconds = 20'000'000;

} // namespace

const char* signalName(int signal)
{
    switch (signal) {
    case SIGINT:
        return "SIGINT";
    case SIGTERM:
        return "SIGTERM";
    case SIGHUP:
        return "SIGHUP";
    default:
        return "a signal";
    }
}

SignalWatcher::SignalWatcher(StopRequest& stop) : stop(stop)
{
    sigemptyset(&watched);
    sigaddset(&watched, SIGINT);
    sigaddset(&watched, SIGTERM);
    sigaddset(&watched, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &watched, &previous);
    watcher = std::thread([this] { watch(); });
}

SignalWatcher::~SignalWatcher()
{
    ending.store(true);
    watcher.join();
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

void SignalWatcher::watch()
{
    const timespec poll{0, pollNanoseconds};
    while (!ending.load()) {
        const int signal = sigtimedwait(&watched, nullptr, &poll);
        if (signal < 0)
            continue; // EAGAIN (the poll ran out) or EINTR
        int expected = 0;
        if (!received.compare_exchange_strong(expected, signal)) {
            // A second signal while the run winds down: the user wants out now.
            std::cerr << "etsim run: " << signalName(signal) << " again: exiting at once\n";
            std::_Exit(128 + signal);
        }
        stop.request(signalName(signal));
    }
}

} // namespace etsim::apps
