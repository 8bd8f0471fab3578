#pragma once
// A request, from any thread, that a running simulation stop at the next delta cycle (a
// signal handled by the embedding program, a user's "cancel"). The SystemC kernel may only be
// stopped from its own thread, so the request reaches it through a primitive channel's
// async_request_update, the one thread-safe entry SystemC has; the channel's update() then
// calls sc_stop. A request made before the simulation runs stops it before time zero.
//
//     etsim::StopRequest stop;                      // owned by the program, outlives the run
//     options.stop = &stop;                         // SimulationOptions
//     ... from a signal-handling thread: stop.request("SIGINT");
//     RunResult result = simulation.run();          // outcome Interrupted

#include <atomic>
#include <functional>
#include <mutex>
#include <string>

namespace etsim {

class StopRequest {
public:
    /// Asks the attached simulation to stop; thread-safe. The first reason is kept.
    void request(const std::string& why);
    bool requested() const { return asked.load(); }
    /// The reason given to the first request ("SIGINT"), empty before.
    std::string reason() const;

    /// Called by Simulation: `wake` is run (under a lock) on every request while attached.
    void attach(std::function<void()> wake);
    void detach();

private:
    mutable std::mutex lock;
    std::atomic<bool> asked{false};
    std::string why;
    std::function<void()> waker;
};

} // namespace etsim
