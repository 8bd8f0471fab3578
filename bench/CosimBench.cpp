// The co-simulation bridge: round trips of small transactions over the bridge (FrameLink with
// its I/O thread on the host side, PeerSession on the peer side, a peer thread answering at
// once) against a bare blocking ping-pong of the same bytes on the same transport (plain
// Boost.Asio). Latency per round trip is reported as median and p99 counters (µs).

#include "cosim/peer/PeerSession.h"
#include "cosim/sync/Handshake.h"
#include "cosim/transport/AsioTransport.h"
#include "cosim/transport/FrameLink.h"

#include <benchmark/benchmark.h>
#include <boost/asio.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
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

void BM_BridgeRoundTrip(benchmark::State& state)
{
    const bool unix = state.range(0) == 0;
    Listener listener(benchEndpoint(unix));
    std::thread peer([endpoint = listener.endpoint()] {
        PeerOptions options;
        options.name = "bench-peer";
        PeerSession session(connectTo(endpoint, std::chrono::milliseconds(5000)), options);
        session.accept();
        std::vector<PeerSession::Arrival> arrivals;
        while (session.advance(unlimitedPs, arrivals)) {
            for (const PeerSession::Arrival& arrival : arrivals)
                session.respond(arrival, arrival.timePs, Response{});
            arrivals.clear();
        }
    });
    FrameLink link(listener.accept(std::chrono::milliseconds(5000)), Limits{}, "bench-peer");
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
            if (answer->header.type == MessageType::Response)
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
BENCHMARK(BM_BridgeRoundTrip)->Arg(0)->Arg(1)->ArgName("tcp")->UseRealTime()->MinTime(1.0);

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
BENCHMARK(BM_BareAsioPingPong)->Arg(0)->Arg(1)->ArgName("tcp")->UseRealTime()->MinTime(1.0);

} // namespace
