#pragma once
// cosim::IoThread reads a FrameLink on a thread of its own and hands each frame to the SystemC
// kernel through a thread-safe async update (sc_prim_channel::async_request_update): the
// update phase notifies arrived(), so the Proxy handles a frame in the next delta cycle after
// it came, while the kernel runs, instead of at its next sync point. This is the Proxy's
// `io: thread` mode (docs/cosim.md).
//
// When the kernel must not advance without the peer (a conservative proxy at its bound, or any
// proxy whose kernel has nothing else to do), its thread waits on the queue with the wall-clock
// timeout: SystemC 2.3 offers no way to hold simulated time from another thread. The frames
// still arrive only through this queue, which the I/O thread fills.
//
// A link failure (end of stream, reset, malformed frame) is queued after the frames that came
// before it and thrown by poll()/wait() once they are taken, as FrameLink does.

#include "cosim/transport/FrameLink.h"

#include <systemc>

#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

namespace etsim::cosim {

class IoThread final : public sc_core::sc_prim_channel, public FrameSource {
public:
    /// Starts reading `link`, which must outlive this object, and marks it as read by another
    /// thread (FrameLink::setConcurrentReader).
    IoThread(const char* name, FrameLink& link);
    /// Stops the thread: closes the link and joins.
    ~IoThread() override;
    IoThread(const IoThread&) = delete;
    IoThread& operator=(const IoThread&) = delete;

    /// Notified (in the delta cycle after the update) when frames or a failure arrived.
    const sc_core::sc_event& arrived() const { return arrivedEvent; }

    std::optional<Frame> poll() override;
    std::optional<Frame> wait(std::chrono::microseconds timeout) override;
    /// Frames cross threads here, so buffers are not recycled.
    void recycle(Frame& frame) override { frame.payload.clear(); }

    /// Frames read by the thread so far.
    std::uint64_t framesRead() const;

private:
    void read();
    void update() override;
    std::optional<Frame> takeLocked();

    FrameLink& link;
    sc_core::sc_event arrivedEvent;
    mutable std::mutex mutex;
    std::condition_variable ready;
    std::deque<Frame> frames;
    std::string failure;
    bool failed = false;
    bool stopping = false;
    std::uint64_t readCount = 0;
    std::thread reader; // last: starts after everything it uses exists
};

} // namespace etsim::cosim
