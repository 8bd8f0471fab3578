#pragma once
// What every peer program's main() does before it serves a run: read --endpoint and --listen
// from the command line and open the connection to etsim (with the shared-memory hand-over for
// "shm:/path"). The program handles its own options in the loop:
//
//     PeerCommandLine line(argc, argv);
//     while (line.next()) {
//         if (line.option() == "--latency-ps") latencyPs = line.wholeNumber();
//         else throw CosimError("unknown option " + line.option());
//     }
//     PeerSession session(line.open(peer.timeout), peer);

#include "cosim/transport/Transport.h"

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

namespace etsim::cosim {

/// How long a peer that connects waits for etsim's socket (etsim listens before it spawns us).
inline constexpr std::chrono::milliseconds peerConnectTimeout{10000};

/// Opens the connection a peer serves etsim on. `endpointText` is unix:/path, tcp:HOST:PORT or
/// shm:/path (etsim hands the shared-memory rings over on the Unix socket /path). With `listen`
/// the peer waits up to `timeout` for etsim to connect; otherwise it connects (giving up after
/// peerConnectTimeout). The hand-over waits up to `timeout`. Throws CosimError when the text is
/// empty or not an endpoint, "shm" has no path, or connecting or the hand-over fails.
std::unique_ptr<Transport>
openPeerTransport(const std::string& endpointText, bool listen, std::chrono::milliseconds timeout);

/// Reads `text` as a whole number for `option`; throws CosimError naming both otherwise.
std::uint64_t parseWholeNumber(const std::string& option, const char* text);

/// Walks a peer program's options; consumes --endpoint TEXT and --listen itself.
class PeerCommandLine {
public:
    PeerCommandLine(int argc, char** argv);

    /// Moves to the next option the program handles; false when all are read.
    bool next();
    /// The current option ("--latency-ps").
    const std::string& option() const { return current; }
    /// The current option's value; throws CosimError "<option> needs a value" at the end.
    const char* value();
    /// value() read by parseWholeNumber.
    std::uint64_t wholeNumber() { return parseWholeNumber(current, value()); }

    const std::string& endpoint() const { return endpointText; }
    bool listen() const { return listening; }
    /// openPeerTransport(endpoint(), listen(), timeout).
    std::unique_ptr<Transport> open(std::chrono::milliseconds timeout) const;

private:
    int argc;
    char** argv;
    int index = 0;
    std::string current;
    std::string endpointText;
    bool listening = false;
};

} // namespace etsim::cosim
