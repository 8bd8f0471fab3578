#pragma once
// Frames over a Transport. The thread that asks for a frame reads and validates it itself
// (limits checked before allocating): a round trip costs no hand-off between threads, which on
// a loaded machine is most of its time. The waiting thread spins briefly, then blocks in the
// transport with a wall-clock deadline, so a dead, stalled or babbling peer always surfaces as
// a CosimError, never as a hang. A send whose stream is full keeps reading incoming frames
// into the queue, so two sides writing at once cannot deadlock. SystemC-free.
//
// One thread uses a link at a time; close() may come from any thread. The exception is
// setConcurrentReader: then one thread reads (poll, wait, recycle) while another sends.

#include "cosim/transport/FrameSource.h"
#include "cosim/transport/Transport.h"
#include "cosim/wire/Frame.h"

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace etsim::cosim {

class FrameLink final : public FrameSource {
public:
    static constexpr std::chrono::milliseconds defaultWriteTimeout{10000};
    /// How long wait() polls before it blocks.
    static constexpr std::chrono::microseconds spin{20};

    /// Takes the transport. `peerName` is used in error messages until the handshake tells
    /// the real name (setPeerName).
    FrameLink(std::unique_ptr<Transport> transport, Limits limits, std::string peerName);
    ~FrameLink() override;
    FrameLink(const FrameLink&) = delete;
    FrameLink& operator=(const FrameLink&) = delete;

    /// Encodes and writes one frame. Throws CosimError if the stream is broken or the peer
    /// has not read for the write timeout.
    void send(const Frame& frame);
    /// Writes several encoded frames at once (batching small frames).
    void sendEncoded(const std::vector<std::uint8_t>& bytes);

    /// The next frame if one has arrived (never blocks); throws CosimError if the stream
    /// failed (EOF, reset, malformed frame) and no frame is left.
    std::optional<Frame> poll() override;
    /// Waits up to `timeout` for the next frame; nullopt on timeout.
    std::optional<Frame> wait(std::chrono::microseconds timeout) override;
    /// Takes back the payload buffer of a frame that has been handled, so that a later frame
    /// reuses it instead of allocating (a round trip then allocates nothing on the link).
    void recycle(Frame& frame) override;

    /// Another thread reads this link while sends come from the caller's: a send whose stream
    /// is full then waits for room only, instead of reading incoming frames meanwhile (the
    /// reader keeps the stream moving, so two sides writing at once still cannot deadlock).
    void setConcurrentReader(bool concurrent) { concurrentReader = concurrent; }

    /// Shuts the stream down.
    void close();

    const std::string& peerName() const { return name; }
    void setPeerName(std::string peerName) { name = std::move(peerName); }
    std::string describe() const { return transport->describe(); }
    /// How long a send waits for the peer to make room.
    void setWriteTimeout(std::chrono::milliseconds timeout) { writeTimeout = timeout; }

private:
    // Reads what has arrived without blocking and cuts it into frames; false when nothing
    // new came. Records a failure instead of throwing.
    bool receive();
    std::optional<Frame> take();
    void write(const std::uint8_t* data, std::size_t size, const char* what);

    std::unique_ptr<Transport> transport;
    Limits limits;
    std::string name;
    std::chrono::milliseconds writeTimeout = defaultWriteTimeout;
    bool concurrentReader = false;
    std::vector<std::uint8_t> inbound; // [inboundStart, inboundEnd): read, not yet cut into frames
    std::size_t inboundStart = 0;
    std::size_t inboundEnd = 0;
    std::optional<FrameHeader> pendingHeader; // decoded header of the frame being received
    // Frames cut but not yet taken: [queueHead, queue.size()). A vector emptied when drained
    // keeps its capacity, unlike a deque, which frees and allocates blocks as it moves.
    std::vector<Frame> queue;
    std::size_t queueHead = 0;
    std::vector<std::vector<std::uint8_t>> spare; // recycled payload buffers
    std::string failure;                          // set once when the stream ends or breaks
    bool failed = false;
    std::vector<std::uint8_t> writeBuffer;
};

} // namespace etsim::cosim
