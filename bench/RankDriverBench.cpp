// Driver overhead: trace nodes per second through RankDriver against zero-latency targets,
// next to a raw SystemC loop doing the same number of event notifications. Each rank runs a
// dependency chain of compute nodes, so every node costs one issue, one response and one
// wake-up of the driver's method, as a real trace's critical path does.

#include "et_driver/NodeLowering.h"
#include "et_driver/RankDriver.h"
#include "kernel/Simulation.h"
#include "tests/support/ScKernel.h"

#include <benchmark/benchmark.h>
#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_target_socket.h>

#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace {

using Kernel = etsim::test::ScKernel;

// Completes every transaction in the next delta cycle (zero simulated time).
class ZeroTarget : public sc_core::sc_module {
public:
    tlm_utils::multi_passthrough_target_socket<ZeroTarget> socket;

    explicit ZeroTarget(const sc_core::sc_module_name& name) : sc_core::sc_module(name)
    {
        socket.register_nb_transport_fw(this, &ZeroTarget::forward);
        SC_HAS_PROCESS(ZeroTarget);
        SC_METHOD(respond);
        sensitive << due;
        dont_initialize();
    }

private:
    tlm::tlm_sync_enum
    forward(int index, tlm::tlm_generic_payload& payload, tlm::tlm_phase& phase, sc_core::sc_time&)
    {
        if (phase != tlm::BEGIN_REQ)
            return tlm::TLM_COMPLETED;
        payload.acquire();
        waiting.emplace_back(index, &payload);
        due.notify(sc_core::SC_ZERO_TIME);
        phase = tlm::END_REQ;
        return tlm::TLM_UPDATED;
    }
    void respond()
    {
        responding.swap(waiting);
        for (auto& [index, payload] : responding) {
            payload->set_response_status(tlm::TLM_OK_RESPONSE);
            tlm::tlm_phase phase = tlm::BEGIN_RESP;
            sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
            socket[index]->nb_transport_bw(*payload, phase, delay);
            payload->release();
        }
        responding.clear();
    }
    std::vector<std::pair<int, tlm::tlm_generic_payload*>> waiting;
    std::vector<std::pair<int, tlm::tlm_generic_payload*>> responding;
    sc_core::sc_event due;
};

// The process's peak resident set (VmHWM), MiB.
double peakRssMiB()
{
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line))
        if (line.rfind("VmHWM:", 0) == 0)
            return std::stod(line.substr(6)) / 1024.0;
    return 0.0;
}

std::vector<etsim::et::TraceNode> chain(std::uint64_t nodes)
{
    std::vector<etsim::et::TraceNode> list;
    list.reserve(nodes);
    for (std::uint64_t id = 1; id <= nodes; ++id) {
        etsim::et::TraceNode node;
        node.id = id;
        node.name = "kernel";
        node.type = etsim::et::NodeType::Comp;
        node.setNumOps(0);
        if (id > 1)
            node.dataDeps = {id - 1};
        list.push_back(std::move(node));
    }
    return list;
}

void driverNodes(benchmark::State& state)
{
    auto ranks = static_cast<std::uint32_t>(state.range(0));
    auto perRank = static_cast<std::uint64_t>(state.range(1));
    std::vector<etsim::et::TraceNode> trace = chain(perRank);
    std::uint64_t finished = 0;
    for (auto _ : state) {
        state.PauseTiming();
        {
            Kernel kernel;
            etsim::Simulation simulation;
            etsim::et::LoweringContext context(ranks);
            ZeroTarget target("target");
            std::vector<std::unique_ptr<etsim::et::RankDriver>> drivers;
            for (std::uint32_t rank = 0; rank < ranks; ++rank) {
                drivers.push_back(
                    std::make_unique<etsim::et::RankDriver>(("rank" + std::to_string(rank)).c_str(),
                                                            static_cast<etsim::RankId>(rank),
                                                            etsim::et::vectorSource(trace),
                                                            context,
                                                            simulation,
                                                            etsim::et::RankDriverOptions{}));
                drivers.back()->computeSocket.bind(target.socket);
                drivers.back()->memorySocket.bind(target.socket);
                drivers.back()->communicationSocket.bind(target.socket);
            }
            simulation.elaborate();
            state.ResumeTiming();
            simulation.run();
            state.PauseTiming();
            for (const auto& driver : drivers)
                finished += driver->nodesFinished();
        }
        state.ResumeTiming();
    }
    state.counters["nodes/s"] =
        benchmark::Counter(static_cast<double>(finished), benchmark::Counter::kIsRate);
    state.counters["peak_rss_MiB"] = peakRssMiB();
}
// The 16,384-rank case shows the per-rank footprint at the scale; run it alone
// (--benchmark_filter=driverNodes/16384) so that its peak RSS is its own.
BENCHMARK(driverNodes)
    ->Args({1, 100000})
    ->Args({1024, 100})
    ->Args({16384, 10})
    ->Unit(benchmark::kMillisecond);

// The floor: per rank one SC_METHOD that re-notifies its event in the next delta cycle, as
// many times as the driver handles nodes.
class Notifier : public sc_core::sc_module {
public:
    Notifier(const sc_core::sc_module_name& name, std::uint64_t count)
        : sc_core::sc_module(name), left(count)
    {
        SC_HAS_PROCESS(Notifier);
        SC_METHOD(fire);
        sensitive << event;
    }
    std::uint64_t fired = 0;

private:
    void fire()
    {
        if (left == 0)
            return;
        --left;
        ++fired;
        event.notify(sc_core::SC_ZERO_TIME);
    }
    std::uint64_t left;
    sc_core::sc_event event;
};

void rawNotifications(benchmark::State& state)
{
    auto ranks = static_cast<std::uint32_t>(state.range(0));
    auto perRank = static_cast<std::uint64_t>(state.range(1));
    std::uint64_t fired = 0;
    for (auto _ : state) {
        state.PauseTiming();
        {
            Kernel kernel;
            std::vector<std::unique_ptr<Notifier>> notifiers;
            for (std::uint32_t rank = 0; rank < ranks; ++rank)
                notifiers.push_back(
                    std::make_unique<Notifier>(("n" + std::to_string(rank)).c_str(), perRank));
            state.ResumeTiming();
            sc_core::sc_start();
            state.PauseTiming();
            for (const auto& notifier : notifiers)
                fired += notifier->fired;
        }
        state.ResumeTiming();
    }
    state.counters["nodes/s"] =
        benchmark::Counter(static_cast<double>(fired), benchmark::Counter::kIsRate);
}
BENCHMARK(rawNotifications)->Args({1, 100000})->Args({1024, 100})->Unit(benchmark::kMillisecond);

} // namespace
