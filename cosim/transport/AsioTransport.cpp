#include "cosim/transport/AsioTransport.h"

#include "cosim/wire/Frame.h"

#include <boost/asio.hpp>

#include <atomic>
#include <poll.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace etsim::cosim {

namespace asio = boost::asio;

namespace {

template <typename Socket>
class AsioTransport final : public Transport {
public:
    AsioTransport(std::unique_ptr<asio::io_context> context, Socket socket, std::string name)
        : context(std::move(context)), socket(std::move(socket)), name(std::move(name))
    {
    }
    ~AsioTransport() override
    {
        shutdown();
        boost::system::error_code ignored;
        socket.close(ignored);
    }

    IoResult write(const std::uint8_t* data, std::size_t size) override
    {
        boost::system::error_code error;
        const std::size_t written = asio::write(socket, asio::buffer(data, size), error);
        if (error)
            return IoResult{written, false, name + ": write failed: " + error.message()};
        return IoResult{written, false, {}};
    }

    IoResult read(std::uint8_t* data, std::size_t size) override
    {
        boost::system::error_code error;
        const std::size_t count = socket.read_some(asio::buffer(data, size), error);
        // A killed peer shows as end of stream or as a reset, depending on timing.
        if (error == asio::error::eof || error == asio::error::connection_reset)
            return IoResult{0, true, {}};
        if (error) {
            if (closed.load())
                return IoResult{0, true, {}};
            return IoResult{0, false, name + ": read failed: " + error.message()};
        }
        return IoResult{count, false, {}};
    }

    void shutdown() override
    {
        // ::shutdown on the descriptor wakes a read blocked in the I/O thread; closing the
        // socket object there would race with that read.
        if (!closed.exchange(true))
            ::shutdown(socket.native_handle(), SHUT_RDWR);
    }

    std::string describe() const override { return name; }

private:
    std::unique_ptr<asio::io_context> context;
    Socket socket;
    std::string name;
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
        // Owner-only from the start: the umask applies when bind() creates the file.
        const mode_t previous = ::umask(0077);
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

std::unique_ptr<Transport> Listener::accept(std::chrono::milliseconds timeout)
{
    const int descriptor = state->unixAcceptor ? state->unixAcceptor->native_handle()
                                               : state->tcpAcceptor->native_handle();
    pollfd waitFor{descriptor, POLLIN, 0};
    const int ready = ::poll(&waitFor, 1, static_cast<int>(timeout.count()));
    if (ready <= 0)
        throw CosimError("cosim: no peer connected to " + state->endpoint.toString() + " within " +
                         std::to_string(timeout.count()) + " ms");
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
