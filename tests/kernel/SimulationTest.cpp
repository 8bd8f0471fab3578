#include "kernel/Simulation.h"

#include "kernel/Error.h"
#include "kernel/StopRequest.h"
#include "tests/support/ScTest.h"

#include <gtest/gtest.h>
#include <systemc>
#include <tlm_utils/tlm_quantumkeeper.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace etsim {
namespace {

using sc_core::SC_NS;
using sc_core::sc_time;
using test::ScTest;

// Busy for `steps` waits of `step` each, then idle.
struct Worker : sc_core::sc_module {
    SC_HAS_PROCESS(Worker);
    Worker(const sc_core::sc_module_name& name, Simulation& simulation, int steps, sc_time step)
        : sc_core::sc_module(name)
        , token(simulation.enroll(std::string(name)))
        , steps(steps)
        , step(step)
    {
        token.busy();
        SC_THREAD(work);
    }
    void work()
    {
        for (int i = 0; i < steps; ++i)
            wait(step);
        token.idle();
    }
    ActivityToken token;
    int steps;
    sc_time step;
};

// Periodic activity that never ends on its own (like DRAM refresh).
struct Ticker : sc_core::sc_module {
    SC_HAS_PROCESS(Ticker);
    explicit Ticker(const sc_core::sc_module_name& name) : sc_core::sc_module(name)
    {
        SC_THREAD(tick);
    }
    void tick()
    {
        while (true) {
            wait(7, SC_NS);
            ++ticks;
        }
    }
    int ticks = 0;
};

TEST_F(ScTest, SimulationStopsWhenEveryParticipantIsIdle)
{
    Simulation simulation;
    Worker fast("fast", simulation, 2, sc_time(10, SC_NS));
    Worker slow("slow", simulation, 5, sc_time(10, SC_NS));
    Ticker ticker("ticker");
    RunResult result = simulation.run();
    EXPECT_EQ(result.outcome, RunOutcome::AllIdle);
    EXPECT_EQ(result.simulatedTime, sc_time(50, SC_NS));
    EXPECT_EQ(ticker.ticks, 7); // 7, 14, ..., 49 ns; the ticker alone does not keep it running
    EXPECT_TRUE(result.busyParticipants.empty());
    EXPECT_TRUE(simulation.ended());
}

TEST_F(ScTest, SimulationReportsDeadlockWithBusyNames)
{
    struct Stuck : sc_core::sc_module {
        SC_HAS_PROCESS(Stuck);
        Stuck(const sc_core::sc_module_name& name, Simulation& simulation)
            : sc_core::sc_module(name), token(simulation.enroll("rank3"))
        {
            token.busy();
            SC_THREAD(work);
        }
        void work()
        {
            wait(5, SC_NS);
            wait(never); // a completion that never comes
        }
        ActivityToken token;
        sc_core::sc_event never;
    };
    Simulation simulation;
    Stuck stuck("stuck", simulation);
    Worker done("done", simulation, 1, sc_time(3, SC_NS));
    RunResult result = simulation.run();
    EXPECT_EQ(result.outcome, RunOutcome::Deadlock);
    EXPECT_EQ(result.simulatedTime, sc_time(5, SC_NS));
    EXPECT_EQ(result.busyParticipants, std::vector<std::string>{"rank3"});
}

TEST_F(ScTest, SimulationRunsUntilTimeThenContinues)
{
    Simulation simulation;
    Worker worker("worker", simulation, 5, sc_time(10, SC_NS));
    RunResult first = simulation.runUntil(sc_time(25, SC_NS));
    EXPECT_EQ(first.outcome, RunOutcome::TimeReached);
    EXPECT_EQ(first.simulatedTime, sc_time(25, SC_NS));
    EXPECT_EQ(first.busyParticipants, std::vector<std::string>{"worker"});
    EXPECT_FALSE(simulation.ended());
    RunResult second = simulation.runUntil(sc_time(1, sc_core::SC_US));
    EXPECT_EQ(second.outcome, RunOutcome::AllIdle);
    EXPECT_EQ(second.simulatedTime, sc_time(50, SC_NS));
    EXPECT_THROW(simulation.run(), Error);
}

TEST_F(ScTest, SimulationAdvancesInWindowsThenConcludes)
{
    SimulationOptions options;
    options.eventsFromOutside = true;
    Simulation simulation(options);
    Worker worker("worker", simulation, 5, sc_time(10, SC_NS));
    EXPECT_EQ(simulation.advanceTo(sc_time(25, SC_NS)), RunOutcome::TimeReached);
    EXPECT_EQ(simulation.now(), sc_time(25, SC_NS));
    EXPECT_EQ(simulation.busyCount(), 1U);
    // The worker's last step ends at 50 ns: every participant idle ends the run there.
    EXPECT_EQ(simulation.advanceTo(sc_time(1, sc_core::SC_US)), RunOutcome::AllIdle);
    EXPECT_EQ(simulation.now(), sc_time(50, SC_NS));
    EXPECT_TRUE(simulation.ended());
    RunResult end = simulation.conclude();
    EXPECT_EQ(end.outcome, RunOutcome::AllIdle);
    EXPECT_EQ(end.simulatedTime, sc_time(50, SC_NS));
    EXPECT_TRUE(end.busyParticipants.empty());
}

TEST_F(ScTest, SimulationRunUntilAcrossAQuietGap)
{
    // No event between 10 ns and 90 ns: runUntil must still land exactly on 40 ns.
    Simulation simulation;
    Worker worker("worker", simulation, 1, sc_time(90, SC_NS));
    RunResult result = simulation.runUntil(sc_time(40, SC_NS));
    EXPECT_EQ(result.outcome, RunOutcome::TimeReached);
    EXPECT_EQ(result.simulatedTime, sc_time(40, SC_NS));
    EXPECT_THROW(simulation.runUntil(sc_time(30, SC_NS)), Error);
    EXPECT_EQ(simulation.run().simulatedTime, sc_time(90, SC_NS));
}

TEST_F(ScTest, SimulationCallsProgressAtEachInterval)
{
    std::vector<Progress> reports;
    SimulationOptions options;
    options.progressInterval = sc_time(10, SC_NS);
    options.onProgress = [&](const Progress& progress) { reports.push_back(progress); };
    Simulation simulation(options);
    Worker worker("worker", simulation, 4, sc_time(9, SC_NS)); // idle at 36 ns
    RunResult result = simulation.run();
    EXPECT_EQ(result.simulatedTime, sc_time(36, SC_NS));
    ASSERT_EQ(reports.size(), 3u);
    for (std::size_t i = 0; i < reports.size(); ++i) {
        EXPECT_EQ(reports[i].simulatedTime, sc_time(10.0 * double(i + 1), SC_NS));
        EXPECT_EQ(reports[i].busyParticipants, 1u);
        EXPECT_GE(reports[i].wallSeconds, 0.0);
    }
    EXPECT_LT(reports[0].deltaCycles, reports[2].deltaCycles);
}

TEST_F(ScTest, SimulationIdleAndBusyAgainInOneStepDoesNotStop)
{
    struct Relay : sc_core::sc_module {
        SC_HAS_PROCESS(Relay);
        Relay(const sc_core::sc_module_name& name, Simulation& simulation)
            : sc_core::sc_module(name), token(simulation.enroll("relay"))
        {
            token.busy();
            SC_THREAD(work);
        }
        void work()
        {
            wait(10, SC_NS);
            token.idle(); // one node done ...
            token.busy(); // ... and the next issued at the same time
            wait(10, SC_NS);
            token.idle();
        }
        ActivityToken token;
    };
    Simulation simulation;
    Relay relay("relay", simulation);
    Ticker ticker("ticker");
    EXPECT_EQ(simulation.run().simulatedTime, sc_time(20, SC_NS));
}

TEST_F(ScTest, SimulationWithIdleParticipantsEndsAtTimeZero)
{
    Simulation simulation;
    ActivityToken token = simulation.enroll("empty-trace");
    Ticker ticker("ticker");
    RunResult result = simulation.run();
    EXPECT_EQ(result.outcome, RunOutcome::AllIdle);
    EXPECT_EQ(result.simulatedTime, sc_core::SC_ZERO_TIME);
    EXPECT_FALSE(token.isBusy());
}

TEST_F(ScTest, SimulationWithoutParticipantsEndsWhenEventsRunOut)
{
    struct Once : sc_core::sc_module {
        SC_HAS_PROCESS(Once);
        explicit Once(const sc_core::sc_module_name& name) : sc_core::sc_module(name)
        {
            SC_THREAD(work);
        }
        void work() { wait(12, SC_NS); }
    };
    Simulation simulation;
    Once once("once");
    RunResult result = simulation.run();
    EXPECT_EQ(result.outcome, RunOutcome::AllIdle);
    EXPECT_EQ(result.simulatedTime, sc_time(12, SC_NS));
}

TEST_F(ScTest, SimulationErrorsReachTheEmbeddingProgram)
{
    struct Failing : sc_core::sc_module {
        SC_HAS_PROCESS(Failing);
        explicit Failing(const sc_core::sc_module_name& name) : sc_core::sc_module(name)
        {
            SC_THREAD(work);
        }
        void work()
        {
            wait(3, SC_NS);
            SC_REPORT_ERROR("etsim/test", "peer rank7 closed the connection");
        }
    };
    sc_core::sc_report_handler::set_actions(sc_core::SC_ERROR,
                                            sc_core::SC_DISPLAY | sc_core::SC_THROW);
    Simulation simulation;
    Failing failing("failing");
    try {
        simulation.run();
        FAIL() << "expected the error to propagate";
    } catch (const sc_core::sc_report& report) {
        EXPECT_STREQ(report.get_msg_type(), "etsim/test");
        EXPECT_STREQ(report.get_msg(), "peer rank7 closed the connection");
        EXPECT_EQ(report.get_time(), sc_time(3, SC_NS));
    }
}

// A stop requested from another thread (as a signal watcher does) ends a run that would
// otherwise go on for 10^9 steps, at the time it had reached, as Interrupted.
TEST_F(ScTest, SimulationStopsWhenAnotherThreadRequestsIt)
{
    StopRequest stop;
    SimulationOptions options;
    options.stop = &stop;
    Simulation simulation(options);
    Worker worker("worker", simulation, 1000000000, sc_time(1, SC_NS));
    std::thread requester([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        stop.request("SIGINT");
    });
    const RunResult result = simulation.run();
    requester.join();
    EXPECT_EQ(result.outcome, RunOutcome::Interrupted);
    EXPECT_STREQ(runOutcomeName(result.outcome), "interrupted");
    EXPECT_EQ(stop.reason(), "SIGINT");
    EXPECT_GT(result.simulatedTime, sc_time(0, SC_NS));
    EXPECT_LT(result.simulatedTime, sc_time(1e9, SC_NS));
    EXPECT_EQ(result.busyParticipants, std::vector<std::string>{"worker"});
}

// A participant that gives up its wait when it sees the stop flag (the co-simulation proxy
// does) may let the kernel run out of events before the request's wake-up reaches it: the
// flag is set, the wake-up not yet delivered. The run was interrupted, not deadlocked. The
// waker is detached here to hold the run in exactly that window.
struct GivesUpOnStop : sc_core::sc_module {
    SC_HAS_PROCESS(GivesUpOnStop);
    GivesUpOnStop(const sc_core::sc_module_name& name, Simulation& simulation, StopRequest& stop)
        : sc_core::sc_module(name), token(simulation.enroll(std::string(name))), stop(stop)
    {
        token.busy();
        SC_THREAD(work);
    }
    void work()
    {
        wait(sc_time(3, SC_NS));
        stop.request("SIGINT");
        // Stays busy and schedules nothing more, as a proxy waiting on a stalled peer does.
    }
    ActivityToken token;
    StopRequest& stop;
};

TEST_F(ScTest, SimulationOutOfEventsAfterAStopRequestIsInterruptedNotDeadlocked)
{
    StopRequest stop;
    SimulationOptions options;
    options.stop = &stop;
    Simulation simulation(options);
    stop.detach();
    GivesUpOnStop waiter("waiter", simulation, stop);
    const RunResult result = simulation.run();
    EXPECT_EQ(result.outcome, RunOutcome::Interrupted);
    EXPECT_EQ(result.simulatedTime, sc_time(3, SC_NS));
    EXPECT_EQ(result.busyParticipants, std::vector<std::string>{"waiter"});
}

TEST_F(ScTest, SimulationStopRequestedBeforeTheRunEndsItAtTimeZero)
{
    StopRequest stop;
    stop.request("SIGTERM");
    stop.request("SIGHUP"); // the first reason is kept
    SimulationOptions options;
    options.stop = &stop;
    Simulation simulation(options);
    Worker worker("worker", simulation, 5, sc_time(1, SC_NS));
    const RunResult result = simulation.run();
    EXPECT_EQ(result.outcome, RunOutcome::Interrupted);
    EXPECT_EQ(result.simulatedTime, sc_time(0, SC_NS));
    EXPECT_EQ(stop.reason(), "SIGTERM");
}

TEST_F(ScTest, SimulationRefusesLateEnrollmentAndBadQuantum)
{
    SimulationOptions bad;
    bad.globalQuantum = sc_core::SC_ZERO_TIME;
    EXPECT_THROW(Simulation{bad}, Error);

    Simulation simulation;
    Worker worker("worker", simulation, 1, sc_time(1, SC_NS));
    simulation.runUntil(sc_time(0.5, SC_NS));
    try {
        simulation.enroll("late");
        FAIL() << "expected an error";
    } catch (const Error& error) {
        EXPECT_STREQ(error.what(),
                     "simulation: participant \"late\" enrolled after elaboration; enroll while "
                     "building the modules");
    }
}

TEST_F(ScTest, SimulationAppliesTheLogSpec)
{
    SimulationOptions options;
    options.logSpec = "error,simulation=info,hbm=debug";
    Simulation simulation(options);
    EXPECT_EQ(simulation.logs().get("simulation").level(), LogLevel::Info);
    EXPECT_EQ(simulation.logs().get("hbm.channel0").level(), LogLevel::Debug);
    EXPECT_EQ(simulation.logs().get("net").level(), LogLevel::Error);

    SimulationOptions bad;
    bad.logSpec = "loud";
    EXPECT_THROW(Simulation{bad}, Error);
}

TEST_F(ScTest, SimulationSetsTheGlobalQuantumOnce)
{
    SimulationOptions options;
    options.globalQuantum = sc_time(250, SC_NS);
    Simulation simulation(options);
    EXPECT_EQ(tlm_utils::tlm_quantumkeeper::get_global_quantum(), sc_time(250, SC_NS));
}

} // namespace
} // namespace etsim
