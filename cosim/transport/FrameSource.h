#pragma once
// Where a side of the link takes its incoming frames from: the link itself, read on the
// thread that asks (FrameLink), or a queue that an I/O thread fills (cosim/IoThread). The
// Proxy handles frames the same way whichever it has. SystemC-free.

#include "cosim/wire/Frame.h"

#include <chrono>
#include <optional>

namespace etsim::cosim {

class FrameSource {
public:
    virtual ~FrameSource() = default;
    /// The next frame if one has arrived (never blocks); throws CosimError if the link failed
    /// (end of stream, reset, malformed frame) and no frame is left.
    virtual std::optional<Frame> poll() = 0;
    /// Waits up to `timeout` for the next frame; nullopt on timeout. Throws like poll().
    virtual std::optional<Frame> wait(std::chrono::microseconds timeout) = 0;
    /// Takes back the payload buffer of a frame that has been handled, for reuse.
    virtual void recycle(Frame& frame) = 0;
};

} // namespace etsim::cosim
