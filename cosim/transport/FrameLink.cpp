#include "cosim/transport/FrameLink.h"

#include <algorithm>
#include <thread>

namespace etsim::cosim {

namespace {
constexpr std::size_t readChunk = 64 * 1024;
// Recycled buffers kept: enough for the frames of a busy batch, bounded so a burst of large
// frames does not pin their memory.
constexpr std::size_t maxSpare = 64;
constexpr std::size_t maxSpareCapacity = 64 * 1024;
} // namespace

FrameLink::FrameLink(std::unique_ptr<Transport> transport, Limits limits, std::string peerName)
    : transport(std::move(transport)), limits(limits), name(std::move(peerName))
{
}

FrameLink::~FrameLink()
{
    close();
}

void FrameLink::close()
{
    transport->shutdown();
}

bool FrameLink::receive()
{
    if (failed)
        return false;
    // The buffer keeps its size (no zero-filling per read): unread bytes are moved to the
    // front when the free tail is short, and the buffer grows only for a frame larger than it.
    if (inbound.size() - inboundEnd < readChunk / 2) {
        std::copy(inbound.begin() + static_cast<long>(inboundStart),
                  inbound.begin() + static_cast<long>(inboundEnd),
                  inbound.begin());
        inboundEnd -= inboundStart;
        inboundStart = 0;
        if (inbound.size() - inboundEnd < readChunk / 2)
            inbound.resize(inbound.size() + readChunk);
    }
    const IoResult result =
        transport->readSome(inbound.data() + inboundEnd, inbound.size() - inboundEnd);
    inboundEnd += result.bytes;
    const std::size_t buffered = inboundEnd - inboundStart;
    if (result.endOfStream || !result.error.empty()) {
        failed = true;
        if (!result.error.empty())
            failure = result.error;
        else if (pendingHeader)
            failure = std::string("the peer closed the connection inside a ") +
                      toString(pendingHeader->type) +
                      " frame (truncated frame: " + std::to_string(pendingHeader->payloadLength) +
                      " payload bytes announced)";
        else if (buffered > 0)
            failure = "the peer closed the connection inside a frame header (truncated frame)";
        else
            failure = "the peer closed the connection (end of stream or reset)";
        return false;
    }
    if (result.bytes == 0)
        return false;
    bool added = false;
    while (true) {
        const std::size_t available = inboundEnd - inboundStart;
        if (!pendingHeader) {
            if (available < headerSize)
                break;
            try {
                pendingHeader =
                    decodeHeader(inbound.data() + inboundStart, limits, "malformed frame");
            } catch (const CosimError& error) {
                failed = true;
                failure = error.what();
                return added;
            }
            inboundStart += headerSize;
            continue;
        }
        if (available < pendingHeader->payloadLength)
            break;
        Frame& frame = queue.emplace_back();
        frame.header = *pendingHeader;
        if (!spare.empty()) {
            frame.payload = std::move(spare.back());
            spare.pop_back();
        }
        const auto begin = inbound.begin() + static_cast<long>(inboundStart);
        frame.payload.assign(begin, begin + pendingHeader->payloadLength);
        inboundStart += pendingHeader->payloadLength;
        pendingHeader.reset();
        added = true;
    }
    if (inboundStart == inboundEnd)
        inboundStart = inboundEnd = 0;
    return added;
}

std::optional<Frame> FrameLink::take()
{
    if (queueHead == queue.size())
        return std::nullopt;
    std::optional<Frame> frame(std::move(queue[queueHead++]));
    if (queueHead == queue.size()) {
        queue.clear();
        queueHead = 0;
    }
    return frame;
}

void FrameLink::recycle(Frame& frame)
{
    if (spare.size() < maxSpare && frame.payload.capacity() <= maxSpareCapacity)
        spare.push_back(std::move(frame.payload));
    frame.payload.clear();
}

std::optional<Frame> FrameLink::poll()
{
    if (queueHead == queue.size())
        receive();
    if (std::optional<Frame> frame = take())
        return frame;
    if (failed)
        throw CosimError(failure);
    return std::nullopt;
}

std::optional<Frame> FrameLink::wait(std::chrono::microseconds timeout)
{
    const auto start = std::chrono::steady_clock::now();
    const auto deadline = start + timeout;
    // A short spin catches the answer of a peer on another core without a sleep/wake-up
    // round trip; it is bounded so two processes on two cores do not starve each other.
    while (true) {
        if (std::optional<Frame> frame = poll())
            return frame;
        if (std::chrono::steady_clock::now() - start >= spin)
            break;
        std::this_thread::yield();
    }
    while (true) {
        if (!transport->waitIo(false, deadline)) {
            // One last look: bytes may have come with the deadline.
            return poll();
        }
        if (std::optional<Frame> frame = poll())
            return frame;
    }
}

void FrameLink::write(const std::uint8_t* data, std::size_t size, const char* what)
{
    const auto deadline = std::chrono::steady_clock::now() + writeTimeout;
    std::size_t done = 0;
    while (done < size) {
        const IoResult result = transport->writeSome(data + done, size - done);
        if (!result.ok())
            throw CosimError(std::string("cannot send") + what + ": " +
                             (result.error.empty() ? "the stream is closed" : result.error));
        done += result.bytes;
        if (done == size)
            break;
        if (result.bytes > 0)
            continue;
        // Full. With no other reader, read what the peer sends meanwhile, so that it can
        // finish its own write.
        bool room = false;
        if (concurrentReader) {
            room = transport->waitWritable(deadline);
        } else {
            while (receive()) {
            }
            room = transport->waitIo(true, deadline);
        }
        if (!room)
            throw CosimError(std::string("cannot send") + what + ": the peer has not read for " +
                             std::to_string(writeTimeout.count()) + " ms");
    }
}

void FrameLink::send(const Frame& frame)
{
    writeBuffer.clear();
    appendFrame(frame, writeBuffer);
    const std::string what = std::string(" ") + toString(frame.header.type);
    write(writeBuffer.data(), writeBuffer.size(), what.c_str());
}

void FrameLink::sendEncoded(const std::vector<std::uint8_t>& bytes)
{
    write(bytes.data(), bytes.size(), "");
}

} // namespace etsim::cosim
