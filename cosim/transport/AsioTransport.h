#pragma once
// Unix-domain and TCP transports over Boost.Asio (blocking sockets; the reading side runs on
// the link's I/O thread). TCP sets TCP_NODELAY; writes use MSG_NOSIGNAL (Asio does on Linux),
// so a dead peer is an error value, never SIGPIPE. Listening defaults to loopback, and a Unix
// socket is created with owner-only permissions.

#include "cosim/transport/Transport.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace etsim::cosim {

/// A parsed peer address: "unix:/path", "tcp:HOST:PORT", "shm" or "shm:/path" (shared-memory
/// rings handed over on the Unix socket at /path; plain "shm" lets etsim pick the path).
struct Endpoint {
    enum class Kind { Unix, Tcp, SharedMemory };
    /// The accepted forms, for error messages.
    static constexpr const char* forms =
        "use \"unix:/path\", \"tcp:127.0.0.1:PORT\", \"shm\" or \"shm:/path\"";
    Kind kind = Kind::Unix;
    std::string path; // Unix, SharedMemory (the handshake socket; empty: etsim picks one)
    std::string host; // TCP
    std::uint16_t port = 0;

    /// Throws CosimError naming the text and the accepted forms.
    static Endpoint parse(const std::string& text);
    /// nullopt with `problem` set ("unknown scheme") when the text is not an endpoint.
    static std::optional<Endpoint> tryParse(const std::string& text, std::string& problem);
    std::string toString() const;
};

/// Connects to a listening peer, retrying until `timeout` (a spawned peer may not listen yet).
/// Throws CosimError naming the endpoint and the last error.
std::unique_ptr<Transport> connectTo(const Endpoint& endpoint, std::chrono::milliseconds timeout);

/// A listening socket; accept() waits at most a timeout.
class Listener {
public:
    /// Binds and listens. A Unix path is removed first if it is a stale socket, and the socket
    /// file gets mode 0600. TCP port 0 picks a free port (see port()).
    explicit Listener(const Endpoint& endpoint);
    ~Listener();
    Listener(const Listener&) = delete;
    Listener& operator=(const Listener&) = delete;

    /// The endpoint as bound (with the real TCP port).
    const Endpoint& endpoint() const;
    /// Waits up to `timeout` for one connection; throws CosimError on timeout.
    /// Waits for one connection; throws CosimError after `timeout`, or as soon as `giveUp`
    /// (asked every 50 ms, optional) returns a reason.
    std::unique_ptr<Transport>
    accept(std::chrono::milliseconds timeout,
           const std::function<std::optional<std::string>()>& giveUp = nullptr);

private:
    struct State;
    std::unique_ptr<State> state;
};

} // namespace etsim::cosim
