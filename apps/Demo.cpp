#include "apps/Demo.h"

#include "kernel/Error.h"
#include "kernel/Simulation.h"

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

// A memory every rank writes to: one transfer at a time at `bandwidth`, plus a fixed latency.
// Transfers that arrive while it is busy queue behind the one in progress.
class SharedMemory : public sc_core::sc_module {
public:
    tlm_utils::multi_passthrough_target_socket<SharedMemory> socket{"socket"};

    SharedMemory(const sc_core::sc_module_name& name, double bytesPerSecond, sc_time latency)
        : sc_core::sc_module(name), bytesPerSecond(bytesPerSecond), latency(latency)
    {
        socket.register_b_transport(this, &SharedMemory::transport);
    }

    std::uint64_t bytesMoved = 0;
    sc_time busyTime;

private:
    void transport(int /*initiator*/, tlm::tlm_generic_payload& payload, sc_time& delay)
    {
        const sc_time arrival = sc_core::sc_time_stamp() + delay;
        const sc_time start = std::max(arrival, busyUntil);
        const sc_time transfer(double(payload.get_data_length()) / bytesPerSecond, sc_core::SC_SEC);
        busyUntil = start + transfer;
        busyTime += transfer;
        bytesMoved += payload.get_data_length();
        delay = busyUntil + latency - sc_core::sc_time_stamp();
        payload.set_response_status(tlm::TLM_OK_RESPONSE);
    }

    double bytesPerSecond;
    sc_time latency;
    sc_time busyUntil;
};

// Computes for a fixed time, then writes its result to memory, `steps` times.
class DemoRank : public sc_core::sc_module {
public:
    SC_HAS_PROCESS(DemoRank);
    tlm_utils::simple_initiator_socket<DemoRank> socket{"socket"};

    DemoRank(const sc_core::sc_module_name& name,
             Simulation& simulation,
             const DemoOptions& options)
        : sc_core::sc_module(name), activity(simulation.enroll(std::string(name))), options(options)
    {
        activity.busy();
        SC_THREAD(work);
    }

    sc_time computeTime;
    sc_time memoryTime;
    sc_time finishTime;

private:
    void work()
    {
        const sc_time compute(options.computeNsPerStep, sc_core::SC_NS);
        for (unsigned step = 0; step < options.steps; ++step) {
            wait(compute);
            computeTime += compute;

            // The payload carries a length but no data: the model needs sizes, not bytes.
            tlm::tlm_generic_payload payload;
            payload.set_command(tlm::TLM_WRITE_COMMAND);
            payload.set_address(0);
            payload.set_data_ptr(nullptr);
            payload.set_data_length(static_cast<unsigned>(options.bytesPerStep));
            payload.set_streaming_width(static_cast<unsigned>(options.bytesPerStep));
            payload.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
            sc_time delay = sc_core::SC_ZERO_TIME;
            const sc_time issued = sc_core::sc_time_stamp();
            socket->b_transport(payload, delay);
            wait(delay);
            memoryTime += sc_core::sc_time_stamp() - issued;
            if (payload.is_response_error())
                SC_REPORT_ERROR(name(), "memory answered with an error");
        }
        finishTime = sc_core::sc_time_stamp();
        activity.idle();
    }

    ActivityToken activity;
    DemoOptions options;
};

} // namespace

int runDemo(const DemoOptions& options, std::ostream& out)
{
    Simulation simulation;
    SharedMemory memory(
        "memory", options.memoryGBps * 1e9, sc_time(options.memoryLatencyNs, sc_core::SC_NS));
    std::vector<std::unique_ptr<DemoRank>> ranks;
    for (unsigned rank = 0; rank < options.ranks; ++rank) {
        ranks.push_back(std::make_unique<DemoRank>(
            ("rank" + std::to_string(rank)).c_str(), simulation, options));
        ranks.back()->socket.bind(memory.socket);
    }

    RunResult result = simulation.run();

    out << "etsim demo: " << options.ranks << " ranks x " << options.steps << " steps, "
        << options.bytesPerStep << " B per step to a shared " << options.memoryGBps
        << " GB/s memory\n";
    out << std::left << std::setw(8) << "rank" << std::setw(16) << "finished" << std::setw(16)
        << "compute"
        << "memory (incl. queueing)\n";
    for (unsigned rank = 0; rank < options.ranks; ++rank)
        out << std::setw(8) << rank << std::setw(16) << ranks[rank]->finishTime.to_string()
            << std::setw(16) << ranks[rank]->computeTime.to_string()
            << ranks[rank]->memoryTime.to_string() << '\n';
    const double seconds = result.simulatedTime.to_seconds();
    out << "simulated time: " << result.simulatedTime << " (" << runOutcomeName(result.outcome)
        << "), wall time: " << std::fixed << std::setprecision(3) << result.wallSeconds << " s\n";
    out << "memory: " << memory.bytesMoved << " B moved, utilisation " << std::setprecision(1)
        << (seconds > 0 ? 100.0 * memory.busyTime.to_seconds() / seconds : 0.0) << " %\n";
    return result.outcome == RunOutcome::AllIdle ? 0 : 1;
}

void addDemoCommand(CLI::App& app, ExitCode& result)
{
    auto options = std::make_shared<DemoOptions>();
    CLI::App* demo =
        app.add_subcommand("demo", "Run a small built-in simulation (ranks sharing a memory)");
    demo->add_option("--ranks", options->ranks, "Number of ranks")->check(CLI::Range(1u, 4096u));
    demo->add_option("--steps", options->steps, "Compute-then-write steps per rank")
        ->check(CLI::Range(1u, 1000000u));
    demo->add_option("--bytes", options->bytesPerStep, "Bytes written per step")
        ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 31));
    demo->callback([options, &result]() {
        try {
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
