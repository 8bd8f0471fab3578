#include "cosim/transport/AsioTransport.h"

#include "cosim/transport/PollUntil.h"
#include "cosim/wire/Frame.h"

#include <boost/asio.hpp>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace etsim::cosim {

namespace asio = boost::asio;

namespace {

// Blocking connect and accept go through Asio; the stream itself uses the descriptor with
// non-blocking send/recv and poll, woken by an eventfd on shutdown.
template <typename Socket>
class AsioTransport final : public Transport {
public:
    AsioTransport(std::unique_ptr<asio::io_context> context, Socket socket, std::string name)
        : context(std::move(context))
        , socket(std::move(socket))
        , name(std::move(name))
        , fd(this->socket.native_handle())
        , wake(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC))
    {
    }
    ~AsioTransport() override
    {
        shutdown();
        boost::system::error_code ignored;
        socket.close(ignored);
        if (wake >= 0)
            ::close(wake);
    }

    IoResult writeSome(const std::uint8_t* data, std::size_t size) override
    {
        if (closed.load())
            return IoResult{0, true, {}};
        const ssize_t written = ::send(fd, data, size, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (written >= 0)
            return IoResult{static_cast<std::size_t>(written), false, {}};
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
            return IoResult{0, false, {}};
        if (errno == EPIPE || errno == ECONNRESET)
            return IoResult{0,
                            false,
                            name + ": write failed: the peer closed the connection (" +
                                std::strerror(errno) + ")"};
        return IoResult{0, false, name + ": write failed: " + std::strerror(errno)};
    }

    IoResult readSome(std::uint8_t* data, std::size_t size) override
    {
        if (closed.load())
            return IoResult{0, true, {}};
        const ssize_t count = ::recv(fd, data, size, MSG_DONTWAIT);
        if (count > 0)
            return IoResult{static_cast<std::size_t>(count), false, {}};
        // A killed peer shows as end of stream or as a reset, depending on timing.
        if (count == 0 || errno == ECONNRESET)
            return IoResult{0, true, {}};
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
            return IoResult{0, false, {}};
        return IoResult{0, false, name + ": read failed: " + std::strerror(errno)};
    }

    bool waitIo(bool wantWrite, Deadline deadline) override
    {
        pollfd wanted[2] = {{fd, static_cast<short>(POLLIN | (wantWrite ? POLLOUT : 0)), 0},
                            {wake, POLLIN, 0}};
        return pollUntil(wanted, 2, deadline) || closed.load();
    }

    bool waitWritable(Deadline deadline) override
    {
        pollfd wanted[2] = {{fd, POLLOUT, 0}, {wake, POLLIN, 0}};
        return pollUntil(wanted, 2, deadline) || closed.load();
    }

    void shutdown() override
    {
        if (!closed.exchange(true)) {
            ::shutdown(fd, SHUT_RDWR);
            const std::uint64_t one = 1;
            [[maybe_unused]] const ssize_t ignored = ::write(wake, &one, sizeof one);
        }
    }

    std::string describe() const override { return name; }
    int descriptor() const override { return fd; }

private:
    std::unique_ptr<asio::io_context> context;
    Socket socket;
    std::string name;
    int fd;
    int wake;
    std::atomic<bool> closed{false};
};

std::unique_ptr<Transport> tryConnect(const Endpoint& endpoint, std::string& problem)
{
    auto context = std::make_unique<asio::io_context>();
    boost::system::error_code error;
    if (endpoint.kind == Endpoint::Kind::Unix) {
        asio::local::stream_protocol::socket socket(*context);
        socket.connect(asio::local::stream_protocol::endpoint(endpoint.path), error);
        if (!error)
            return std::make_unique<AsioTransport<asio::local::stream_protocol::socket>>(
                std::move(context), std::move(socket), endpoint.toString());
    } else {
        asio::ip::tcp::socket socket(*context);
        const asio::ip::address address = asio::ip::make_address(endpoint.host, error);
        if (error) {
            problem = "bad IP address '" + endpoint.host + "': " + error.message();
            return nullptr;
        }
        socket.connect(asio::ip::tcp::endpoint(address, endpoint.port), error);
        if (!error) {
            socket.set_option(asio::ip::tcp::no_delay(true), error);
            if (!error)
                return std::make_unique<AsioTransport<asio::ip::tcp::socket>>(
                    std::move(context), std::move(socket), endpoint.toString());
        }
    }
    problem = error.message();
    return nullptr;
}

} // namespace

std::optional<Endpoint> Endpoint::tryParse(const std::string& text, std::string& problem)
{
    auto fail = [&](const std::string& what) -> std::optional<Endpoint> {
        problem = what;
        return std::nullopt;
    };
    auto unixPath = [&](Endpoint endpoint, const std::string& path) -> std::optional<Endpoint> {
        endpoint.path = path;
        if (endpoint.path.empty())
            return fail("the socket path is empty");
        if (endpoint.path.size() >= 108)
            return fail("the socket path is longer than 107 characters");
        return endpoint;
    };
    Endpoint endpoint;
    if (text == "shm") {
        endpoint.kind = Kind::SharedMemory;
        return endpoint;
    }
    if (text.rfind("shm:", 0) == 0) {
        endpoint.kind = Kind::SharedMemory;
        return unixPath(endpoint, text.substr(4));
    }
    if (text.rfind("unix:", 0) == 0) {
        endpoint.kind = Kind::Unix;
        return unixPath(endpoint, text.substr(5));
    }
    if (text.rfind("tcp:", 0) == 0) {
        endpoint.kind = Kind::Tcp;
        const std::string rest = text.substr(4);
        const std::size_t colon = rest.rfind(':');
        if (colon == std::string::npos || colon == 0)
            return fail("expected HOST:PORT after \"tcp:\"");
        endpoint.host = rest.substr(0, colon);
        const std::string port = rest.substr(colon + 1);
        if (port.empty() || port.size() > 5 ||
            port.find_first_not_of("0123456789") != std::string::npos || std::stoul(port) > 65535)
            return fail("port \"" + port + "\" is not a number from 0 to 65535");
        endpoint.port = static_cast<std::uint16_t>(std::stoul(port));
        return endpoint;
    }
    return fail("unknown scheme");
}

Endpoint Endpoint::parse(const std::string& text)
{
    std::string problem;
    if (std::optional<Endpoint> endpoint = tryParse(text, problem))
        return *endpoint;
    throw CosimError("cosim: peer endpoint \"" + text + "\": " + problem + " (" + forms + ")");
}

std::string Endpoint::toString() const
{
    switch (kind) {
    case Kind::Unix:
        return "unix:" + path;
    case Kind::Tcp:
        return "tcp:" + host + ":" + std::to_string(port);
    case Kind::SharedMemory:
        return path.empty() ? "shm" : "shm:" + path;
    }
    return "?";
}

std::unique_ptr<Transport> connectTo(const Endpoint& endpoint, std::chrono::milliseconds timeout)
{
    if (endpoint.kind == Endpoint::Kind::SharedMemory)
        throw CosimError("cosim: connectTo cannot open \"shm\" directly; the shared-memory "
                         "transport is handed over on a Unix socket");
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::string problem;
    while (true) {
        if (std::unique_ptr<Transport> transport = tryConnect(endpoint, problem))
            return transport;
        if (std::chrono::steady_clock::now() >= deadline)
            throw CosimError("cosim: cannot connect to " + endpoint.toString() + " within " +
                             std::to_string(timeout.count()) + " ms: " + problem);
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
}

struct Listener::State {
    Endpoint endpoint;
    asio::io_context context;
    std::unique_ptr<asio::local::stream_protocol::acceptor> unixAcceptor;
    std::unique_ptr<asio::ip::tcp::acceptor> tcpAcceptor;
};

Listener::Listener(const Endpoint& endpoint) : state(std::make_unique<State>())
{
    state->endpoint = endpoint;
    boost::system::error_code error;
    if (endpoint.kind == Endpoint::Kind::Unix) {
        struct stat info {};
        if (::lstat(endpoint.path.c_str(), &info) == 0) {
            if (!S_ISSOCK(info.st_mode))
                throw CosimError("cosim: cannot listen on " + endpoint.toString() +
                                 ": the path exists and is not a socket");
            ::unlink(endpoint.path.c_str());
        }
        // Owner-only from the start (0600, PROTOCOL.md section 7): the umask applies when
        // bind() creates the file.
        const mode_t previous = ::umask(0177);
        state->unixAcceptor =
            std::make_unique<asio::local::stream_protocol::acceptor>(state->context);
        state->unixAcceptor->open(asio::local::stream_protocol(), error);
        if (!error)
            state->unixAcceptor->bind(asio::local::stream_protocol::endpoint(endpoint.path), error);
        ::umask(previous);
        if (!error)
            state->unixAcceptor->listen(asio::socket_base::max_listen_connections, error);
    } else if (endpoint.kind == Endpoint::Kind::Tcp) {
        const asio::ip::address address = asio::ip::make_address(endpoint.host, error);
        if (!error) {
            state->tcpAcceptor = std::make_unique<asio::ip::tcp::acceptor>(state->context);
            const asio::ip::tcp::endpoint local(address, endpoint.port);
            state->tcpAcceptor->open(local.protocol(), error);
            if (!error)
                state->tcpAcceptor->set_option(asio::socket_base::reuse_address(true), error);
            if (!error)
                state->tcpAcceptor->bind(local, error);
            if (!error)
                state->tcpAcceptor->listen(asio::socket_base::max_listen_connections, error);
            if (!error)
                state->endpoint.port = state->tcpAcceptor->local_endpoint().port();
        }
    } else {
        throw CosimError("cosim: cannot listen on \"shm\"; listen on a Unix socket instead");
    }
    if (error)
        throw CosimError("cosim: cannot listen on " + endpoint.toString() + ": " + error.message());
}

Listener::~Listener()
{
    if (state->unixAcceptor) {
        boost::system::error_code ignored;
        state->unixAcceptor->close(ignored);
        ::unlink(state->endpoint.path.c_str());
    }
}

const Endpoint& Listener::endpoint() const
{
    return state->endpoint;
}

std::unique_ptr<Transport>
Listener::accept(std::chrono::milliseconds timeout,
                 const std::function<std::optional<std::string>()>& giveUp)
{
    const int descriptor = state->unixAcceptor ? state->unixAcceptor->native_handle()
                                               : state->tcpAcceptor->native_handle();
    // In slices of 50 ms, so that `giveUp` (a spawned peer that exited) is asked as we go.
    constexpr std::chrono::milliseconds slice{50};
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left <= std::chrono::milliseconds::zero())
            throw CosimError("cosim: no peer connected to " + state->endpoint.toString() +
                             " within " + std::to_string(timeout.count()) + " ms");
        pollfd waitFor{descriptor, POLLIN, 0};
        const int ready = ::poll(&waitFor, 1, static_cast<int>(std::min(left, slice).count()));
        if (ready > 0)
            break;
        if (giveUp)
            if (std::optional<std::string> reason = giveUp())
                throw CosimError("cosim: no peer connected to " + state->endpoint.toString() +
                                 ": " + *reason);
    }
    auto context = std::make_unique<asio::io_context>();
    boost::system::error_code error;
    if (state->unixAcceptor) {
        asio::local::stream_protocol::socket socket(*context);
        state->unixAcceptor->accept(socket, error);
        if (!error)
            return std::make_unique<AsioTransport<asio::local::stream_protocol::socket>>(
                std::move(context), std::move(socket), state->endpoint.toString());
    } else {
        asio::ip::tcp::socket socket(*context);
        state->tcpAcceptor->accept(socket, error);
        if (!error)
            socket.set_option(asio::ip::tcp::no_delay(true), error);
        if (!error)
            return std::make_unique<AsioTransport<asio::ip::tcp::socket>>(
                std::move(context), std::move(socket), state->endpoint.toString());
    }
    throw CosimError("cosim: accept on " + state->endpoint.toString() +
                     " failed: " + error.message());
}

} // namespace etsim::cosim
