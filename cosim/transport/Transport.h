#pragma once
// A reliable, ordered byte stream between etsim and a peer. The codec and the sync logic see
// only this interface; errors come back as values so the caller words the final message
// (naming peer, channel and simulated time).
//
// The calls never block except waitIo and waitWritable, so the thread that waits for the
// peer's answer can read the stream itself (no hand-off between threads on the round trip),
// and a writer whose stream is full keeps reading (two sides writing at once cannot
// deadlock).

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

namespace etsim::cosim {

struct IoResult {
    std::size_t bytes = 0;
    bool endOfStream = false; // the other side closed the stream (or this side shut it down)
    std::string error;        // empty on success
    bool ok() const { return error.empty() && !endOfStream; }
};

class Transport {
public:
    using Deadline = std::chrono::steady_clock::time_point;

    virtual ~Transport() = default;
    /// Writes up to `size` bytes without blocking; 0 bytes when the stream is full.
    virtual IoResult writeSome(const std::uint8_t* data, std::size_t size) = 0;
    /// Reads up to `size` bytes without blocking; 0 bytes when nothing has arrived.
    virtual IoResult readSome(std::uint8_t* data, std::size_t size) = 0;
    /// Blocks until bytes can be read (or, with `wantWrite`, written), the stream ends, it is
    /// shut down, or `deadline` passes; false only on the deadline. May return early: callers
    /// retry readSome/writeSome.
    virtual bool waitIo(bool wantWrite, Deadline deadline) = 0;
    /// Blocks until bytes can be written, the stream ends, it is shut down, or `deadline`
    /// passes; false only on the deadline. Unlike waitIo(true) it leaves the read side alone,
    /// so a writer may use it while another thread reads (the Proxy's I/O-thread mode).
    virtual bool waitWritable(Deadline deadline) = 0;
    /// Ends the stream: a waitIo in another thread returns, later reads see the end of the
    /// stream. Safe to call from any thread and more than once.
    virtual void shutdown() = 0;
    /// "unix:/tmp/peer.sock", "tcp:127.0.0.1:5000", "shm:/tmp/peer.sock", "memory".
    virtual std::string describe() const = 0;
    /// The socket descriptor for transports built on one (the shared-memory hand-over), else -1.
    virtual int descriptor() const { return -1; }
};

} // namespace etsim::cosim
