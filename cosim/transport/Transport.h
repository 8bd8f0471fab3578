#pragma once
// A reliable, ordered byte stream between etsim and a peer. The codec and the sync logic see
// only this interface; errors come back as values so the caller words the final message
// (naming peer, channel and simulated time).

#include <cstddef>
#include <cstdint>
#include <string>

namespace etsim::cosim {

struct IoResult {
    std::size_t bytes = 0;
    bool endOfStream = false; // the other side closed the stream
    std::string error;        // empty on success
    bool ok() const { return error.empty() && !endOfStream; }
};

class Transport {
public:
    virtual ~Transport() = default;
    /// Writes all `size` bytes (blocking).
    virtual IoResult write(const std::uint8_t* data, std::size_t size) = 0;
    /// Reads between 1 and `size` bytes, blocking until some arrive or the stream ends.
    virtual IoResult read(std::uint8_t* data, std::size_t size) = 0;
    /// Ends the stream: a read blocked in another thread returns; safe to call from any thread
    /// and more than once.
    virtual void shutdown() = 0;
    /// "unix:/tmp/peer.sock", "tcp:127.0.0.1:5000", "memory".
    virtual std::string describe() const = 0;
};

} // namespace etsim::cosim
