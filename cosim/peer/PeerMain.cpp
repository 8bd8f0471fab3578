#include "cosim/peer/PeerMain.h"

#include "cosim/transport/AsioTransport.h"
#include "cosim/transport/SharedMemoryTransport.h"
#include "cosim/wire/Frame.h"

#include <cstdlib>

namespace etsim::cosim {

std::unique_ptr<Transport>
openPeerTransport(const std::string& endpointText, bool listen, std::chrono::milliseconds timeout)
{
    if (endpointText.empty())
        throw CosimError("--endpoint is required (unix:/path, tcp:127.0.0.1:PORT or shm:/path)");
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
        transport = listener.accept(timeout);
    } else {
        transport = connectTo(endpoint, peerConnectTimeout);
    }
    if (shared)
        transport = acceptSharedMemory(std::move(transport), timeout);
    return transport;
}

std::uint64_t parseWholeNumber(const std::string& option, const char* text)
{
    char* end = nullptr;
    const unsigned long long value = std::strtoull(text, &end, 10);
    if (end == text || *end != '\0')
        throw CosimError(option + ": \"" + text + "\" is not a whole number");
    return value;
}

PeerCommandLine::PeerCommandLine(int argc, char** argv) : argc(argc), argv(argv) {}

bool PeerCommandLine::next()
{
    while (++index < argc) {
        current = argv[index];
        if (current == "--endpoint")
            endpointText = value();
        else if (current == "--listen")
            listening = true;
        else
            return true;
    }
    return false;
}

const char* PeerCommandLine::value()
{
    if (index + 1 >= argc)
        throw CosimError(current + " needs a value");
    return argv[++index];
}

std::unique_ptr<Transport> PeerCommandLine::open(std::chrono::milliseconds timeout) const
{
    return openPeerTransport(endpointText, listening, timeout);
}

} // namespace etsim::cosim
