// Drives etsim's runtime from a host program's own sc_main: one participant does timed work,
// the host runs the simulation step by step and then to completion.

#include "kernel/Simulation.h"

#include <systemc>

#include <iostream>

namespace {

// Busy for `steps` periods of 100 ns, then idle: the simulation ends when it is.
class Job : public sc_core::sc_module {
public:
    SC_HAS_PROCESS(Job);
    Job(const sc_core::sc_module_name& name, etsim::Simulation& simulation, int steps)
        : sc_core::sc_module(name), activity(simulation.enroll("job")), steps(steps)
    {
        activity.busy();
        SC_THREAD(work);
    }

private:
    void work()
    {
        for (int step = 0; step < steps; ++step)
            wait(100, sc_core::SC_NS);
        activity.idle();
    }

    etsim::ActivityToken activity;
    int steps;
};

} // namespace

int sc_main(int /*argc*/, char** /*argv*/)
{
    etsim::Simulation simulation;
    Job job("job", simulation, 10);
    simulation.elaborate();

    etsim::RunResult partial = simulation.runUntil(sc_core::sc_time(250, sc_core::SC_NS));
    std::cout << "paused at " << partial.simulatedTime << " ("
              << etsim::runOutcomeName(partial.outcome) << ")\n";
    etsim::RunResult result = simulation.run();
    std::cout << "finished at " << result.simulatedTime << " ("
              << etsim::runOutcomeName(result.outcome) << ")\n";
    return result.outcome == etsim::RunOutcome::AllIdle ? 0 : 1;
}
