#include "apps/Demo.h"

#include "kernel/Error.h"
#include "kernel/Extensions.h"
#include "kernel/Ids.h"
#include "kernel/PayloadPool.h"
#include "kernel/Simulation.h"
#include "kernel/Stats.h"
#include "kernel/Units.h"

#include <CLI/CLI.hpp>
#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/simple_initiator_socket.h>

#include <algorithm>
#include <iomanip>
#include <iostream>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace etsim::apps {

namespace {

using sc_core::sc_time;

std::uint64_t nowPs()
{
    return toPicoseconds(sc_core::sc_time_stamp());
}

// A memory every rank writes to: one transfer at a time at `bandwidth`, plus a fixed latency.
// Transfers that arrive while it is busy queue behind the one in progress; the size comes from
// the transaction's EtNodeExtension, as for every etsim model.
class SharedMemory : public sc_core::sc_module {
public:
    tlm_utils::multi_passthrough_target_socket<SharedMemory> socket{"socket"};

    SharedMemory(const sc_core::sc_module_name& name,
                 Bandwidth bandwidth,
                 Time latency,
                 StatGroup& stats)
        : sc_core::sc_module(name)
        , bandwidth(bandwidth)
        , latency(latency)
        , bytesMoved(stats.addCounter("bytes", "B", "bytes written by all ranks"))
        , busy(stats.addTimeWeightedAverage("utilisation", "", "fraction of time transferring"))
    {
        socket.register_b_transport(this, &SharedMemory::transport);
    }

private:
    void transport(int /*initiator*/, tlm::tlm_generic_payload& payload, sc_time& delay)
    {
        const EtNodeInfo& work = EtNodeExtension::get(payload).info;
        const Time arrival = Time::fromScTime(sc_core::sc_time_stamp() + delay);
        const Time start = std::max(arrival, busyUntil);
        busyUntil = start + Size::fromBytes(work.bytes) / bandwidth;
        // The utilisation track is fed in order of arrival; transfers queue back to back, so
        // busy periods never overlap and the track only ever moves forward.
        busy.set(start.ps(), 1.0);
        busy.set(busyUntil.ps(), 0.0);
        bytesMoved += work.bytes;
        delay = (busyUntil + latency).toScTime() - sc_core::sc_time_stamp();
        payload.set_response_status(tlm::TLM_OK_RESPONSE);
    }

    Bandwidth bandwidth;
    Time latency;
    Time busyUntil;
    Counter& bytesMoved;
    TimeWeightedAverage& busy;
};

// Computes for a fixed time, then writes its result to memory, `steps` times.
class DemoRank : public sc_core::sc_module {
public:
    SC_HAS_PROCESS(DemoRank);
    tlm_utils::simple_initiator_socket<DemoRank> socket{"socket"};

    DemoRank(const sc_core::sc_module_name& name,
             RankId rank,
             Simulation& simulation,
             const DemoOptions& options,
             StatGroup& stats)
        : sc_core::sc_module(name)
        , rank(rank)
        , activity(simulation.enroll(std::string(name)))
        , options(options)
        , pool(std::string(name) + ".payloads")
        , computeTime(stats.addCounter("compute", "ps", "time spent computing"))
        , memoryTime(stats.addCounter("memory", "ps", "time writing, queueing included"))
        , finishTime(stats.addCounter("finished", "ps", "time the rank became idle"))
    {
        activity.busy();
        SC_THREAD(work);
    }

private:
    void work()
    {
        const sc_time compute(options.computeNsPerStep, sc_core::SC_NS);
        for (unsigned step = 0; step < options.steps; ++step) {
            wait(compute);
            computeTime += toPicoseconds(compute);

            tlm::tlm_generic_payload& payload = pool.acquire();
            payload.set_command(tlm::TLM_WRITE_COMMAND);
            auto* extension = new EtNodeExtension;
            extension->info.rank = rank;
            extension->info.node = NodeId{step};
            extension->info.kind = NodeKind::MemStore;
            extension->info.bytes = options.bytesPerStep;
            payload.set_extension(extension);
            sc_time delay = sc_core::SC_ZERO_TIME;
            const std::uint64_t issued = nowPs();
            socket->b_transport(payload, delay);
            wait(delay);
            memoryTime += nowPs() - issued;
            if (payload.is_response_error())
                SC_REPORT_ERROR(name(), "memory answered with an error");
            payload.release();
        }
        finishTime += nowPs();
        activity.idle();
    }

    RankId rank;
    ActivityToken activity;
    DemoOptions options;
    PayloadPool pool;
    Counter& computeTime;
    Counter& memoryTime;
    Counter& finishTime;
};

} // namespace

int runDemo(const DemoOptions& options, std::ostream& out)
{
    StatGroup stats("demo");
    SimulationOptions simulationOptions;
    simulationOptions.logSpec = options.logSpec;
    Simulation simulation(simulationOptions);
    SharedMemory memory("memory",
                        Bandwidth::fromBytesPerSecond(options.memoryGBps * 1e9),
                        Time::fromPs(static_cast<std::uint64_t>(options.memoryLatencyNs * 1e3)),
                        stats.addGroup("memory"));
    std::vector<std::unique_ptr<DemoRank>> ranks;
    for (unsigned rank = 0; rank < options.ranks; ++rank) {
        const std::string name = "rank" + std::to_string(rank);
        ranks.push_back(std::make_unique<DemoRank>(
            name.c_str(), RankId{rank}, simulation, options, stats.addGroup(name)));
        ranks.back()->socket.bind(memory.socket);
    }

    RunResult result = simulation.run();

    out << "etsim demo: " << options.ranks << " ranks x " << options.steps << " steps, "
        << Size::fromBytes(options.bytesPerStep) << " per step to a shared "
        << Bandwidth::fromBytesPerSecond(options.memoryGBps * 1e9) << " memory\n";
    out << "simulated time: " << Time::fromScTime(result.simulatedTime) << " ("
        << runOutcomeName(result.outcome) << "), wall time: " << std::fixed << std::setprecision(3)
        << result.wallSeconds << " s\n\n";
    writeStatsText(out, stats, toPicoseconds(result.simulatedTime));
    return result.outcome == RunOutcome::AllIdle ? 0 : 1;
}

void addDemoCommand(CLI::App& app, const std::string& logSpec, ExitCode& result)
{
    auto options = std::make_shared<DemoOptions>();
    CLI::App* demo =
        app.add_subcommand("demo", "Run a small built-in simulation (ranks sharing a memory)");
    demo->add_option("--ranks", options->ranks, "Number of ranks")->check(CLI::Range(1u, 4096u));
    demo->add_option("--steps", options->steps, "Compute-then-write steps per rank")
        ->check(CLI::Range(1u, 1000000u));
    demo->add_option("--bytes", options->bytesPerStep, "Bytes written per step")
        ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 31));
    demo->callback([options, &logSpec, &result]() {
        try {
            options->logSpec = logSpec;
            result = runDemo(*options, std::cout) == 0 ? ExitCode::Success : ExitCode::InputProblem;
        } catch (const Error& error) {
            std::cerr << "etsim demo: " << error.what() << '\n';
            result = ExitCode::InputProblem;
        } catch (const sc_core::sc_report& report) {
            std::cerr << "etsim demo: " << report.what() << '\n';
            result = ExitCode::InputProblem;
        }
    });
}

} // namespace etsim::apps
