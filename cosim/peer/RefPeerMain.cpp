// etsim-ref-peer: the reference co-simulation peer, a fixed-latency component.
//
//   etsim-ref-peer --endpoint unix:/tmp/etsim.sock | tcp:HOST:PORT | shm:/tmp/etsim.sock
//                  [--listen] [--latency-ps 1000000] [--ps-per-byte 0] [--stall-after N]
//                  [--bad-frame-after N] [--major M]
//
// By default it connects to the endpoint (etsim listens, e.g. when it spawned this program);
// with --listen it waits for etsim to connect. Exit code 0 after TERMINATE, 1 on errors.

#include "cosim/peer/FixedLatencyPeer.h"
#include "cosim/transport/AsioTransport.h"
#include "cosim/transport/SharedMemoryTransport.h"

#include <cstdlib>
#include <iostream>
#include <string>

namespace {

std::uint64_t number(const std::string& option, const char* text)
{
    char* end = nullptr;
    const unsigned long long value = std::strtoull(text, &end, 10);
    if (end == text || *end != '\0')
        throw etsim::cosim::CosimError(option + ": \"" + text + "\" is not a whole number");
    return value;
}

} // namespace

int main(int argc, char** argv)
{
    using namespace etsim::cosim;
    try {
        std::string endpointText;
        bool listen = false;
        FixedLatencyOptions options;
        PeerOptions peer;
        peer.name = "ref-peer";
        for (int index = 1; index < argc; ++index) {
            const std::string option = argv[index];
            auto value = [&]() -> const char* {
                if (index + 1 >= argc)
                    throw CosimError(option + " needs a value");
                return argv[++index];
            };
            if (option == "--endpoint")
                endpointText = value();
            else if (option == "--listen")
                listen = true;
            else if (option == "--latency-ps")
                options.latencyPs = number(option, value());
            else if (option == "--ps-per-byte")
                options.psPerByte = number(option, value());
            else if (option == "--stall-after")
                options.stallAfter = number(option, value());
            else if (option == "--bad-frame-after")
                options.badFrameAfter = number(option, value());
            else if (option == "--major")
                peer.major = static_cast<std::uint8_t>(number(option, value()));
            else if (option == "--name")
                peer.name = value();
            else
                throw CosimError("unknown option " + option);
        }
        if (endpointText.empty())
            throw CosimError(
                "--endpoint is required (unix:/path, tcp:127.0.0.1:PORT or shm:/path)");
        Endpoint endpoint = Endpoint::parse(endpointText);
        // "shm:/path": the host hands the shared-memory rings over on the Unix socket /path.
        const bool shared = endpoint.kind == Endpoint::Kind::SharedMemory;
        if (shared) {
            if (endpoint.path.empty())
                throw CosimError("--endpoint shm needs the socket path: shm:/path");
            endpoint.kind = Endpoint::Kind::Unix;
        }
        std::unique_ptr<Transport> transport;
        if (listen) {
            Listener listener(endpoint);
            transport = listener.accept(peer.timeout);
        } else {
            transport = connectTo(endpoint, std::chrono::milliseconds(10000));
        }
        if (shared)
            transport = acceptSharedMemory(std::move(transport), peer.timeout);
        peer.minLatencyPs = options.latencyPs;
        PeerSession session(std::move(transport), peer);
        session.accept();
        const FixedLatencyReport report = runFixedLatencyPeer(session, options);
        std::cerr << "ref-peer: " << report.requests << " requests, " << report.responses
                  << " responses, " << report.causalityViolations << " causality violations\n";
        return report.causalityViolations == 0 ? 0 : 1;
    } catch (const std::exception& error) {
        std::cerr << "ref-peer: " << error.what() << '\n';
        return 1;
    }
}
