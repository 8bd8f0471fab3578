#pragma once
// The embeddable simulation lifecycle a user calls from sc_main:
//
//     etsim::Simulation simulation;                  // before or after building modules
//     MyPlatform platform("platform", simulation);   // participants enroll while elaborating
//     simulation.elaborate();                        // binding errors surface here
//     etsim::RunResult result = simulation.run();    // until every participant is idle
//
// Participants (trace drivers, co-simulation proxies, ...) enroll and say when they are busy.
// The run stops with sc_stop as soon as all of them are idle, so idle hardware models that
// still have periodic events (refresh, time grants) do not keep the simulation alive. When the
// kernel runs out of events while some participant is still busy, nothing can ever wake it:
// the run ends as a deadlock that names the busy participants.
//
// Errors raised during the run with SC_REPORT_ERROR/FATAL go through SystemC's report handler;
// with its default actions they propagate out of run() as sc_core::sc_report, so an embedding
// program can catch them or install its own handler.

#include "kernel/Log.h"

#include <systemc>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace etsim {

class ActivityMonitor;
class AsyncStop;
class StopRequest;

// What a progress callback sees.
struct Progress {
    sc_core::sc_time simulatedTime;
    std::uint64_t deltaCycles = 0; // SystemC delta cycles so far: a measure of events processed
    double wallSeconds = 0.0;      // wall-clock time spent in run()/runUntil() so far
    std::size_t busyParticipants = 0;
};

struct SimulationOptions {
    // The TLM global quantum for loosely-timed initiators; set once, here, never by a model.
    static constexpr double defaultGlobalQuantumNs = 1000.0;
    sc_core::sc_time globalQuantum{defaultGlobalQuantumNs, sc_core::SC_NS};

    // Simulated time between progress callbacks; zero turns progress reports off.
    sc_core::sc_time progressInterval = sc_core::SC_ZERO_TIME;
    std::function<void(const Progress&)> onProgress;

    // Log levels, e.g. "info" or "warn,et_driver=debug" (LogRegistry::configure); empty keeps
    // the default (warnings and errors only).
    std::string logSpec;

    // When set, a request on it (from any thread, e.g. a signal) ends the run at the next
    // delta cycle with RunOutcome::Interrupted. Must outlive the Simulation.
    StopRequest* stop = nullptr;
    // A partitioned run (docs/partitioned-runs.md): other processes add events between
    // runUntil calls, so running out of events is no end. runUntil then returns TimeReached
    // (at the time the events ran out), and the caller ends the run with conclude().
    bool eventsFromOutside = false;
};

enum class RunOutcome {
    AllIdle,     // every participant became idle (or there are none and events ran out)
    TimeReached, // runUntil reached its time with work left
    Deadlock,    // events ran out while participants were busy: nothing can wake them
    Stopped,     // something else called sc_stop
    Interrupted, // SimulationOptions::stop was requested (a signal, a cancel)
};

const char* runOutcomeName(RunOutcome outcome);

struct RunResult {
    RunOutcome outcome = RunOutcome::AllIdle;
    sc_core::sc_time simulatedTime;
    std::uint64_t deltaCycles = 0;
    double wallSeconds = 0.0;
    std::vector<std::string> busyParticipants; // who was busy when the run ended
};

// A participant's handle: says when it has work. Cheap to call on every change; counting is
// idempotent (busy() twice is still one busy participant).
class ActivityToken {
public:
    ActivityToken() = default;
    ActivityToken(ActivityMonitor* monitor, std::size_t index) : monitor(monitor), index(index) {}

    void busy();
    void idle();
    bool isBusy() const;

private:
    ActivityMonitor* monitor = nullptr;
    std::size_t index = 0;
};

class Simulation {
public:
    explicit Simulation(SimulationOptions options = {});
    ~Simulation();
    Simulation(const Simulation&) = delete;
    Simulation& operator=(const Simulation&) = delete;

    // Registers a participant whose business keeps the simulation running. Only before the
    // simulation starts; names are for deadlock reports.
    ActivityToken enroll(const std::string& name);

    // Finishes elaboration (binding checks, end_of_elaboration callbacks) without starting
    // time. Optional: run() elaborates when it has not been done.
    void elaborate();

    // Runs until every participant is idle, a deadlock, or an external sc_stop.
    RunResult run();
    // Runs until simulated time `until` at most (absolute), then returns; may be called again
    // with a later time unless the run has ended (AllIdle, Deadlock or Stopped).
    RunResult runUntil(const sc_core::sc_time& until);
    // runUntil for a caller that alternates many short runs with input from outside (a
    // partitioned run's rounds): only the outcome, without the RunResult, whose list of busy
    // participants costs a pass over all of them on every call.
    RunOutcome advanceTo(const sc_core::sc_time& until);
    // Ends a run whose events come also from outside (SimulationOptions::eventsFromOutside)
    // once the caller knows that none will come any more: AllIdle when no participant is busy,
    // else Deadlock.
    RunResult conclude();

    bool ended() const { return finished; }
    sc_core::sc_time now() const { return sc_core::sc_time_stamp(); }
    std::size_t busyCount() const;
    LogRegistry& logs() { return logRegistry; }
    /// SimulationOptions::stop (may be null): components that block on the outside world
    /// (a co-simulation peer) watch it so that a requested stop is not held up by them.
    const StopRequest* stopRequest() const { return options.stop; }

private:
    RunResult runTo(const sc_core::sc_time* until);
    RunOutcome runChunks(const sc_core::sc_time* until);
    RunResult result(RunOutcome outcome) const;

    SimulationOptions options;
    LogRegistry logRegistry;
    Logger& log;
    std::unique_ptr<ActivityMonitor> monitor;
    std::unique_ptr<AsyncStop> asyncStop;
    std::chrono::steady_clock::duration wallTime{};
    bool finished = false;
};

} // namespace etsim
