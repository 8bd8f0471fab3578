// The co-simulation bridge: round trips of small transactions over the bridge (FrameLink on
// the host side, PeerSession on the peer side, a peer thread answering at once) against a bare
// ping-pong of the same bytes on the same transport (plain blocking Boost.Asio; a plain
// shared-memory ring). Latency per round trip is reported as median and p99 counters (µs).
// Then the slowdown of a simulation whose component is proxied (to etsim-ref-peer, a separate
// process) against the same simulation with the component local.

#include "cosim/Proxy.h"
#include "cosim/peer/PeerSession.h"
#include "cosim/sync/Handshake.h"
#include "cosim/transport/AsioTransport.h"
#include "cosim/transport/FrameLink.h"
#include "cosim/transport/SharedMemoryTransport.h"
#include "kernel/ScTime.h"
#include "tests/cosim/Traffic.h"
#include "tests/support/ScKernel.h"

#include <benchmark/benchmark.h>
#include <boost/asio.hpp>
#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/peq_with_get.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <thread>
#include <unistd.h>

namespace {

using namespace etsim::cosim;
using Clock = std::chrono::steady_clock;

Endpoint benchEndpoint(bool unix)
{
    if (unix)
        return Endpoint::parse("unix:" + (std::filesystem::temp_directory_path() /
                                          ("etsim-bench-" + std::to_string(::getpid()) + ".sock"))
                                             .string());
    return Endpoint::parse("tcp:127.0.0.1:0");
}

void reportLatency(benchmark::State& state, std::vector<double>& micros)
{
    if (micros.empty())
        return;
    std::sort(micros.begin(), micros.end());
    state.counters["median_us"] = micros[micros.size() / 2];
    state.counters["p99_us"] = micros[micros.size() * 99 / 100];
    state.counters["round_trips_per_s"] =
        benchmark::Counter(static_cast<double>(micros.size()), benchmark::Counter::kIsRate);
}

// A small transaction: header + request payload with a node-info block.
Request smallRequest()
{
    Request request;
    request.command = 1;
    WireNodeInfo node;
    node.kind = 4;
    node.bytes = 4096;
    request.node = node;
    return request;
}

// Transport argument of the benchmarks: 0 Unix socket, 1 TCP loopback, 2 shared memory.
void BM_BridgeRoundTrip(benchmark::State& state)
{
    const bool shared = state.range(0) == 2;
    Listener listener(benchEndpoint(state.range(0) != 1));
    std::thread peer([endpoint = listener.endpoint(), shared] {
        PeerOptions options;
        options.name = "bench-peer";
        std::unique_ptr<Transport> transport = connectTo(endpoint, std::chrono::milliseconds(5000));
        if (shared)
            transport = acceptSharedMemory(std::move(transport), std::chrono::milliseconds(5000));
        PeerSession session(std::move(transport), options);
        session.accept();
        std::vector<PeerSession::Arrival> arrivals;
        while (session.advance(unlimitedPs, arrivals)) {
            for (const PeerSession::Arrival& arrival : arrivals)
                session.respond(arrival, arrival.timePs, Response{});
            arrivals.clear();
        }
    });
    std::unique_ptr<Transport> transport = listener.accept(std::chrono::milliseconds(5000));
    if (shared)
        transport = offerSharedMemory(std::move(transport));
    FrameLink link(std::move(transport), Limits{}, "bench-peer");
    Hello hello;
    hello.mode = SyncMode::Unsynchronised;
    hello.name = "etsim";
    handshakeAsHost(link, hello, "", std::chrono::milliseconds(5000));
    Frame frame;
    frame.header.type = MessageType::Request;
    frame.payload = encodeRequest(smallRequest());
    std::vector<double> micros;
    std::uint64_t id = 0;
    for (auto _ : state) {
        const auto start = Clock::now();
        frame.header.requestId = id++;
        link.send(frame);
        // Grants from the idle peer may come first; wait for the answer itself.
        while (true) {
            std::optional<Frame> answer = link.wait(std::chrono::seconds(5));
            if (!answer)
                throw CosimError("bench: no answer");
            const bool response = answer->header.type == MessageType::Response;
            link.recycle(*answer);
            if (response)
                break;
        }
        micros.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
    }
    Frame bye;
    bye.header.type = MessageType::Terminate;
    link.send(bye);
    peer.join();
    reportLatency(state, micros);
}
BENCHMARK(BM_BridgeRoundTrip)
    ->Arg(0)
    ->Arg(1)
    ->Arg(2)
    ->ArgName("transport")
    ->UseRealTime()
    ->MinTime(1.0);

// The bare baseline: the same number of bytes each way, one blocking write and read per side.
template <typename Socket>
void pingPong(benchmark::State& state, Socket& client, std::size_t bytes)
{
    std::vector<std::uint8_t> buffer(bytes);
    std::vector<double> micros;
    for (auto _ : state) {
        const auto start = Clock::now();
        boost::asio::write(client, boost::asio::buffer(buffer));
        boost::asio::read(client, boost::asio::buffer(buffer));
        micros.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
    }
    reportLatency(state, micros);
}

void BM_BareAsioPingPong(benchmark::State& state)
{
    namespace asio = boost::asio;
    const std::size_t bytes = headerSize + encodeRequest(smallRequest()).size();
    asio::io_context context;
    if (state.range(0) == 0) {
        using Protocol = asio::local::stream_protocol;
        const std::string path = benchEndpoint(true).path;
        ::unlink(path.c_str());
        Protocol::acceptor acceptor(context, Protocol::endpoint(path));
        std::thread echo([&] {
            Protocol::socket socket(context);
            acceptor.accept(socket);
            std::vector<std::uint8_t> buffer(bytes);
            boost::system::error_code error;
            while (!error) {
                asio::read(socket, asio::buffer(buffer), error);
                if (!error)
                    asio::write(socket, asio::buffer(buffer), error);
            }
        });
        Protocol::socket client(context);
        client.connect(Protocol::endpoint(path));
        pingPong(state, client, bytes);
        client.close();
        echo.join();
        ::unlink(path.c_str());
    } else {
        using Tcp = asio::ip::tcp;
        Tcp::acceptor acceptor(context, Tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
        std::thread echo([&] {
            Tcp::socket socket(context);
            acceptor.accept(socket);
            socket.set_option(Tcp::no_delay(true));
            std::vector<std::uint8_t> buffer(bytes);
            boost::system::error_code error;
            while (!error) {
                asio::read(socket, asio::buffer(buffer), error);
                if (!error)
                    asio::write(socket, asio::buffer(buffer), error);
            }
        });
        Tcp::socket client(context);
        client.connect(acceptor.local_endpoint());
        client.set_option(Tcp::no_delay(true));
        pingPong(state, client, bytes);
        client.close();
        echo.join();
    }
}
BENCHMARK(BM_BareAsioPingPong)->Arg(0)->Arg(1)->ArgName("transport")->UseRealTime()->MinTime(1.0);

// A plain shared-memory ring: one single-producer, single-consumer byte ring per direction in
// a MAP_SHARED memfd mapping, with the bridge's waiting policy (spin 20 µs, then block on an
// eventfd that the writer signals only when the reader says it waits). No framing, no checks.
struct PlainRing {
    alignas(64) std::atomic<std::uint64_t> head{0};
    alignas(64) std::atomic<std::uint64_t> tail{0};
    alignas(64) std::atomic<std::uint32_t> waiting{0};
    alignas(64) std::uint8_t data[4096];
};

class PlainRingEnd {
public:
    PlainRingEnd(PlainRing& out, PlainRing& in, int outEvent, int inEvent)
        : out(out), in(in), outEvent(outEvent), inEvent(inEvent)
    {
    }
    // The message is smaller than the ring and the other side consumes before answering, so
    // there is always room.
    void send(const std::uint8_t* bytes, std::size_t size)
    {
        const std::uint64_t head = out.head.load(std::memory_order_relaxed);
        for (std::size_t index = 0; index < size; ++index)
            out.data[(head + index) % sizeof out.data] = bytes[index];
        out.head.store(head + size, std::memory_order_release);
        std::atomic_thread_fence(std::memory_order_seq_cst);
        if (out.waiting.load(std::memory_order_relaxed) != 0) {
            const std::uint64_t one = 1;
            [[maybe_unused]] const ssize_t ignored = ::write(outEvent, &one, sizeof one);
        }
    }
    // False when the other side is done (a message of size 0 ends it).
    void receive(std::uint8_t* bytes, std::size_t size)
    {
        const auto start = Clock::now();
        while (available() < size) {
            if (Clock::now() - start < std::chrono::microseconds(20)) {
                std::this_thread::yield();
                continue;
            }
            in.waiting.store(1, std::memory_order_relaxed);
            std::atomic_thread_fence(std::memory_order_seq_cst);
            if (available() < size) {
                pollfd wanted{inEvent, POLLIN, 0};
                ::poll(&wanted, 1, 1000);
                std::uint64_t count = 0;
                [[maybe_unused]] const ssize_t ignored = ::read(inEvent, &count, sizeof count);
            }
            in.waiting.store(0, std::memory_order_relaxed);
        }
        const std::uint64_t tail = in.tail.load(std::memory_order_relaxed);
        for (std::size_t index = 0; index < size; ++index)
            bytes[index] = in.data[(tail + index) % sizeof in.data];
        in.tail.store(tail + size, std::memory_order_release);
    }

private:
    std::size_t available() const
    {
        return static_cast<std::size_t>(in.head.load(std::memory_order_acquire) -
                                        in.tail.load(std::memory_order_relaxed));
    }
    PlainRing& out;
    PlainRing& in;
    int outEvent;
    int inEvent;
};

void BM_BareShmRingPingPong(benchmark::State& state)
{
    const std::size_t bytes = headerSize + encodeRequest(smallRequest()).size();
    const int memory = ::memfd_create("bench-rings", MFD_CLOEXEC);
    if (memory < 0 || ::ftruncate(memory, 2 * sizeof(PlainRing)) != 0)
        throw CosimError("bench: memfd");
    void* region =
        ::mmap(nullptr, 2 * sizeof(PlainRing), PROT_READ | PROT_WRITE, MAP_SHARED, memory, 0);
    auto* rings = new (region) PlainRing[2];
    const int toEcho = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    const int toClient = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    std::atomic<bool> done{false};
    std::thread echo([&] {
        PlainRingEnd end(rings[1], rings[0], toClient, toEcho);
        std::vector<std::uint8_t> buffer(bytes);
        while (true) {
            end.receive(buffer.data(), bytes);
            if (done.load())
                return;
            end.send(buffer.data(), bytes);
        }
    });
    PlainRingEnd client(rings[0], rings[1], toEcho, toClient);
    std::vector<std::uint8_t> buffer(bytes);
    std::vector<double> micros;
    for (auto _ : state) {
        const auto start = Clock::now();
        client.send(buffer.data(), bytes);
        client.receive(buffer.data(), bytes);
        micros.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
    }
    done.store(true);
    client.send(buffer.data(), bytes);
    echo.join();
    ::munmap(region, 2 * sizeof(PlainRing));
    ::close(memory);
    ::close(toEcho);
    ::close(toClient);
    reportLatency(state, micros);
}
BENCHMARK(BM_BareShmRingPingPong)->UseRealTime()->MinTime(1.0);

// ---------------------------------------------------------------------------------------------
// Slowdown of a simulation whose component is proxied: 4 streams x 250 transactions, each
// stream issuing its next transaction one lookahead after the previous completed, against a
// fixed-latency component (latency = lookahead) that is either local or etsim-ref-peer behind
// a conservative Proxy. Only simulation.run() is timed (not the peer's start-up).

using Kernel = etsim::test::ScKernel;

// The local component: answers every BEGIN_REQ with BEGIN_RESP `latency` later.
class FixedLatency : public sc_core::sc_module {
public:
    tlm_utils::multi_passthrough_target_socket<FixedLatency> socket;

    SC_HAS_PROCESS(FixedLatency);
    FixedLatency(const sc_core::sc_module_name& name, sc_core::sc_time latency)
        : sc_module(name), socket("socket"), latency(latency), queue("queue")
    {
        socket.register_nb_transport_fw(this, &FixedLatency::forward);
        SC_METHOD(respond);
        sensitive << queue.get_event();
        dont_initialize();
    }

private:
    tlm::tlm_sync_enum forward(int index,
                               tlm::tlm_generic_payload& payload,
                               tlm::tlm_phase& phase,
                               sc_core::sc_time& delay)
    {
        if (phase != tlm::BEGIN_REQ)
            return tlm::TLM_COMPLETED;
        sources[&payload] = index;
        queue.notify(payload, delay + latency);
        phase = tlm::END_REQ;
        delay = sc_core::SC_ZERO_TIME;
        return tlm::TLM_UPDATED;
    }
    void respond()
    {
        while (tlm::tlm_generic_payload* payload = queue.get_next_transaction()) {
            const int index = sources[payload];
            sources.erase(payload);
            payload->set_response_status(tlm::TLM_OK_RESPONSE);
            tlm::tlm_phase phase = tlm::BEGIN_RESP;
            sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
            socket[index]->nb_transport_bw(*payload, phase, delay);
        }
    }
    sc_core::sc_time latency;
    tlm_utils::peq_with_get<tlm::tlm_generic_payload> queue;
    std::unordered_map<tlm::tlm_generic_payload*, int> sources;
};

constexpr int simStreams = 4;
constexpr int simPerStream = 250;

// Arguments: lookahead in ns; component 0 local, 1 proxied over a Unix socket, 2 proxied over
// shared memory, 3 and 4 the same with the proxy's I/O thread (io: thread).
void BM_ProxiedSimulation(benchmark::State& state)
{
    const std::uint64_t lookaheadPs = static_cast<std::uint64_t>(state.range(0)) * 1000;
    const int component = static_cast<int>(state.range(1));
    std::uint64_t waits = 0;
    for (auto _ : state) {
        Kernel kernel;
        etsim::Simulation simulation;
        etsim::test::Traffic traffic("traffic", simulation, simStreams, simPerStream, lookaheadPs);
        std::unique_ptr<FixedLatency> local;
        std::unique_ptr<Proxy> proxy;
        if (component == 0) {
            local = std::make_unique<FixedLatency>(
                "component", etsim::toScTime(etsim::Time::fromPs(lookaheadPs)));
            traffic.socket.bind(local->socket);
        } else {
            ProxyOptions options;
            options.peer = component % 2 == 1 ? benchEndpoint(true).toString() : "shm";
            options.io = component >= 3 ? IoMode::Thread : IoMode::Inline;
            options.spawn = std::string(ETSIM_REF_PEER) + " --endpoint {endpoint} --latency-ps " +
                            std::to_string(lookaheadPs);
            options.lookahead = etsim::Time::fromPs(lookaheadPs);
            options.timeout = std::chrono::milliseconds(10000);
            proxy = std::make_unique<Proxy>("component", options, &simulation);
            traffic.socket.bind(proxy->socket);
        }
        const auto start = Clock::now();
        simulation.run();
        state.SetIterationTime(std::chrono::duration<double>(Clock::now() - start).count());
        if (proxy)
            waits += proxy->waits();
    }
    state.counters["us_per_transaction"] = benchmark::Counter(
        static_cast<double>(state.iterations()) * simStreams * simPerStream * 1e-6,
        benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
    state.counters["kernel_waits_per_transaction"] =
        static_cast<double>(waits) /
        (static_cast<double>(state.iterations()) * simStreams * simPerStream);
}
BENCHMARK(BM_ProxiedSimulation)
    ->ArgsProduct({{100, 1000, 10000}, {0, 1, 2, 3, 4}})
    ->ArgNames({"lookahead_ns", "component"})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->MinTime(0.5);

} // namespace
