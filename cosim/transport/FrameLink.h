#pragma once
// Frames over a Transport: writes from the caller's thread, reads on a dedicated I/O thread
// that validates each frame (limits checked before allocating) and queues it. The consumer
// waits with a wall-clock timeout, so a dead, stalled or babbling peer always surfaces as a
// CosimError, never as a hang. SystemC-free.

#include "cosim/transport/Transport.h"
#include "cosim/wire/Frame.h"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace etsim::cosim {

class FrameLink {
public:
    /// Takes the transport and starts the I/O thread. `peerName` is used in error messages
    /// until the handshake tells the real name (setPeerName).
    FrameLink(std::unique_ptr<Transport> transport, Limits limits, std::string peerName);
    ~FrameLink();
    FrameLink(const FrameLink&) = delete;
    FrameLink& operator=(const FrameLink&) = delete;

    /// Encodes and writes one frame. Throws CosimError if the stream is broken.
    void send(const Frame& frame);
    /// Writes several encoded frames at once (batching small frames).
    void sendEncoded(const std::vector<std::uint8_t>& bytes);

    /// The next frame if one is queued; throws CosimError if the stream failed (EOF, reset,
    /// malformed frame) and nothing is queued any more.
    std::optional<Frame> poll();
    /// Waits up to `timeout` for the next frame; nullopt on timeout. Spins for a few
    /// microseconds first (a peer on the same machine often answers that fast), then blocks.
    std::optional<Frame> wait(std::chrono::microseconds timeout);

    /// Closes the stream and joins the I/O thread.
    void close();

    const std::string& peerName() const { return name; }
    void setPeerName(std::string peerName) { name = std::move(peerName); }
    std::string describe() const { return transport->describe(); }

private:
    void readLoop();
    bool readExactly(std::uint8_t* data, std::size_t size, std::string& problem, bool& eof);

    std::unique_ptr<Transport> transport;
    Limits limits;
    std::string name;
    std::mutex mutex;
    std::condition_variable arrived;
    std::deque<Frame> queue;
    std::string failure; // set once by the I/O thread when the stream ends or breaks
    bool failed = false;
    std::thread reader;
    std::mutex writeMutex;
    std::vector<std::uint8_t> writeBuffer;
};

} // namespace etsim::cosim
