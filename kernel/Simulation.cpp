#include "kernel/Simulation.h"

#include "kernel/Error.h"
#include "kernel/StopRequest.h"

#include <tlm_utils/tlm_quantumkeeper.h>

#include <algorithm>
#include <utility>

namespace etsim {

// Counts busy participants and stops the kernel when the count drops to zero. The stop is
// decided one delta cycle later, so a participant that goes idle and busy again within the
// same time step (a driver finishing one node and issuing the next) does not end the run.
class ActivityMonitor : public sc_core::sc_module {
public:
    SC_HAS_PROCESS(ActivityMonitor);
    explicit ActivityMonitor(const sc_core::sc_module_name& name) : sc_core::sc_module(name)
    {
        SC_METHOD(checkIdle);
        sensitive << becameIdle;
        dont_initialize();
    }

    std::size_t enroll(std::string name)
    {
        names.push_back(std::move(name));
        busyFlags.push_back(false);
        return names.size() - 1;
    }

    void setBusy(std::size_t index, bool busy)
    {
        if (busyFlags[index] == busy)
            return;
        busyFlags[index] = busy;
        busy ? ++busyCount : --busyCount;
        if (busyCount == 0 && sc_core::sc_is_running())
            becameIdle.notify(sc_core::SC_ZERO_TIME);
    }

    bool isBusy(std::size_t index) const { return busyFlags[index]; }
    std::size_t busy() const { return busyCount; }
    std::size_t participants() const { return names.size(); }
    bool stoppedWhenIdle() const { return stoppedIdle; }

    std::vector<std::string> busyNames() const
    {
        std::vector<std::string> busy;
        for (std::size_t index = 0; index < names.size(); ++index)
            if (busyFlags[index])
                busy.push_back(names[index]);
        return busy;
    }

private:
    void start_of_simulation() override
    {
        // Participants that never become busy must not keep an otherwise finished run alive.
        if (!names.empty() && busyCount == 0)
            becameIdle.notify(sc_core::SC_ZERO_TIME);
    }

    void checkIdle()
    {
        if (busyCount != 0)
            return;
        stoppedIdle = true;
        sc_core::sc_stop();
    }

    std::vector<std::string> names;
    std::vector<bool> busyFlags;
    std::size_t busyCount = 0;
    bool stoppedIdle = false;
    sc_core::sc_event becameIdle{"became_idle"};
};

// Carries a StopRequest from any thread into the kernel: async_request_update is thread-safe,
// and update() runs in the kernel's update phase, where sc_stop is allowed.
class AsyncStop : public sc_core::sc_prim_channel {
public:
    AsyncStop() : sc_core::sc_prim_channel("etsim_stop_request") {}
    void wake() { async_request_update(); }

private:
    void update() override { sc_core::sc_stop(); }
};

void ActivityToken::busy()
{
    if (monitor != nullptr)
        monitor->setBusy(index, true);
}

void ActivityToken::idle()
{
    if (monitor != nullptr)
        monitor->setBusy(index, false);
}

bool ActivityToken::isBusy() const
{
    return monitor != nullptr && monitor->isBusy(index);
}

const char* runOutcomeName(RunOutcome outcome)
{
    switch (outcome) {
    case RunOutcome::AllIdle:
        return "all-idle";
    case RunOutcome::TimeReached:
        return "time-reached";
    case RunOutcome::Deadlock:
        return "deadlock";
    case RunOutcome::Stopped:
        return "stopped";
    case RunOutcome::Interrupted:
        return "interrupted";
    }
    return "?";
}

Simulation::Simulation(SimulationOptions options)
    : options(std::move(options)), log(logRegistry.get("simulation"))
{
    logRegistry.configure(this->options.logSpec);
    if (sc_core::sc_get_status() != sc_core::SC_ELABORATION)
        throw Error("etsim::Simulation must be created before the SystemC simulation starts "
                    "(create it in sc_main before sc_start)");
    if (this->options.globalQuantum <= sc_core::SC_ZERO_TIME)
        throw Error("simulation: the global quantum must be greater than zero");
    tlm_utils::tlm_quantumkeeper::set_global_quantum(this->options.globalQuantum);
    // The idle monitor ends every normal run with sc_stop; SystemC's info note about it
    // ("Simulation stopped by user") is noise. Warnings and errors are untouched.
    sc_core::sc_report_handler::set_actions(
        "/OSCI/SystemC", sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
    monitor = std::make_unique<ActivityMonitor>("etsim_activity");
    if (this->options.stop != nullptr) {
        asyncStop = std::make_unique<AsyncStop>();
        this->options.stop->attach([channel = asyncStop.get()] { channel->wake(); });
    }
}

Simulation::~Simulation()
{
    if (options.stop != nullptr)
        options.stop->detach();
}

ActivityToken Simulation::enroll(const std::string& name)
{
    if (sc_core::sc_get_status() != sc_core::SC_ELABORATION)
        throw Error("simulation: participant \"" + name +
                    "\" enrolled after elaboration; enroll while building the modules");
    return ActivityToken(monitor.get(), monitor->enroll(name));
}

std::size_t Simulation::busyCount() const
{
    return monitor->busy();
}

void Simulation::elaborate()
{
    // sc_start refuses a kernel left at end of elaboration, so the start-of-simulation step
    // runs here too; the kernel then waits, paused at time zero, for run().
    if (sc_core::sc_get_status() == sc_core::SC_ELABORATION) {
        sc_core::sc_get_curr_simcontext()->elaborate();
        sc_core::sc_get_curr_simcontext()->prepare_to_simulate();
    }
}

RunResult Simulation::run()
{
    return runTo(nullptr);
}

RunResult Simulation::runUntil(const sc_core::sc_time& until)
{
    return runTo(&until);
}

RunResult Simulation::conclude()
{
    const bool wasFinished = finished;
    finished = true;
    if (wasFinished && monitor->stoppedWhenIdle())
        return result(RunOutcome::AllIdle);
    return result(monitor->busy() == 0 ? RunOutcome::AllIdle : RunOutcome::Deadlock);
}

RunResult Simulation::result(RunOutcome outcome) const
{
    log.info("run ",
             runOutcomeName(outcome),
             " at ",
             sc_core::sc_time_stamp(),
             " after ",
             sc_core::sc_delta_count(),
             " delta cycles");
    RunResult out;
    out.outcome = outcome;
    out.simulatedTime = sc_core::sc_time_stamp();
    out.deltaCycles = sc_core::sc_delta_count();
    out.wallSeconds = std::chrono::duration<double>(wallTime).count();
    out.busyParticipants = monitor->busyNames();
    return out;
}

RunOutcome Simulation::advanceTo(const sc_core::sc_time& until)
{
    return runChunks(&until);
}

RunResult Simulation::runTo(const sc_core::sc_time* until)
{
    const RunOutcome outcome = runChunks(until);
    RunResult out = result(outcome);
    if (outcome == RunOutcome::Deadlock)
        log.error("deadlock at ",
                  out.simulatedTime,
                  ": ",
                  out.busyParticipants.size(),
                  " participant(s) still busy with no events left");
    return out;
}

RunOutcome Simulation::runChunks(const sc_core::sc_time* until)
{
    if (finished)
        throw Error("simulation: the run has already ended; a SystemC kernel cannot restart");
    if (until != nullptr && *until < sc_core::sc_time_stamp())
        throw Error("simulation: cannot run until " + until->to_string() +
                    ", simulated time is already " + sc_core::sc_time_stamp().to_string());
    elaborate();

    const bool reportProgress =
        options.onProgress && options.progressInterval > sc_core::SC_ZERO_TIME;
    const auto wallStart = std::chrono::steady_clock::now();
    const auto wallBefore = wallTime;
    auto updateWall = [&] {
        wallTime = wallBefore + (std::chrono::steady_clock::now() - wallStart);
    };

    // The kernel runs in chunks that end at the next progress report or at `until`; each chunk
    // exits early when events run out, which is how a deadlock is told from a finished run.
    auto interrupted = [&] { return options.stop != nullptr && options.stop->requested(); };
    while (true) {
        if (interrupted()) {
            // Requested before the run or between chunks: the kernel is not running.
            finished = true;
            return RunOutcome::Interrupted;
        }
        sc_core::sc_time chunkEnd = sc_core::sc_max_time();
        if (reportProgress) {
            // A chunk reaches at least the next event, so a long idle span of simulated time
            // (a replayed node of days) costs one chunk, not one per progress interval.
            const sc_core::sc_time left = sc_core::sc_max_time() - sc_core::sc_time_stamp();
            const sc_core::sc_time step =
                std::max(options.progressInterval, sc_core::sc_time_to_pending_activity());
            chunkEnd = step >= left ? sc_core::sc_max_time() : sc_core::sc_time_stamp() + step;
        }
        if (until != nullptr)
            chunkEnd = std::min(chunkEnd, *until);
        if (chunkEnd == sc_core::sc_max_time())
            sc_core::sc_start();
        else {
            sc_core::sc_start(chunkEnd - sc_core::sc_time_stamp(), sc_core::SC_EXIT_ON_STARVATION);
            // Starvation mode also returns early when the next event lies beyond the chunk;
            // time then moves to the chunk's end without processing anything.
            if (sc_core::sc_get_status() != sc_core::SC_STOPPED && sc_core::sc_pending_activity() &&
                sc_core::sc_time_stamp() < chunkEnd)
                sc_core::sc_start(chunkEnd - sc_core::sc_time_stamp(), sc_core::SC_RUN_TO_TIME);
        }
        updateWall();

        if (sc_core::sc_get_status() == sc_core::SC_STOPPED) {
            finished = true;
            if (monitor->stoppedWhenIdle())
                return RunOutcome::AllIdle;
            return interrupted() ? RunOutcome::Interrupted : RunOutcome::Stopped;
        }
        if (!sc_core::sc_pending_activity() && options.eventsFromOutside && until != nullptr)
            return RunOutcome::TimeReached;
        if (!sc_core::sc_pending_activity()) {
            // Out of events. With nobody busy this is a natural end; otherwise nothing can wake
            // the busy participants again, unless a stop was requested: a participant that gave
            // up its wait on seeing the request can empty the kernel before the request's
            // wake-up arrives, and that run was interrupted, not deadlocked.
            finished = true;
            if (interrupted())
                return RunOutcome::Interrupted;
            return monitor->busy() == 0 ? RunOutcome::AllIdle : RunOutcome::Deadlock;
        }
        if (reportProgress)
            options.onProgress(Progress{sc_core::sc_time_stamp(),
                                        sc_core::sc_delta_count(),
                                        std::chrono::duration<double>(wallTime).count(),
                                        monitor->busy()});
        if (until != nullptr && sc_core::sc_time_stamp() >= *until)
            return RunOutcome::TimeReached;
    }
}

} // namespace etsim
