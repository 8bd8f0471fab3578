#include "cosim/transport/FrameLink.h"

namespace etsim::cosim {

FrameLink::FrameLink(std::unique_ptr<Transport> transport, Limits limits, std::string peerName)
    : transport(std::move(transport)), limits(limits), name(std::move(peerName))
{
    reader = std::thread([this] { readLoop(); });
}

FrameLink::~FrameLink()
{
    close();
}

void FrameLink::close()
{
    transport->shutdown();
    if (reader.joinable())
        reader.join();
}

bool FrameLink::readExactly(std::uint8_t* data, std::size_t size, std::string& problem, bool& eof)
{
    std::size_t done = 0;
    while (done < size) {
        const IoResult result = transport->read(data + done, size - done);
        if (result.endOfStream) {
            eof = true;
            problem = done == 0 ? "" : "stream ended inside a frame";
            return false;
        }
        if (!result.error.empty()) {
            problem = result.error;
            return false;
        }
        done += result.bytes;
    }
    return true;
}

void FrameLink::readLoop()
{
    std::string problem;
    std::uint8_t header[headerSize];
    while (true) {
        bool eof = false;
        if (!readExactly(header, headerSize, problem, eof)) {
            if (eof && problem.empty())
                problem = "the peer closed the connection (end of stream or reset)";
            else if (eof)
                problem = "the peer closed the connection inside a frame header (truncated frame)";
            break;
        }
        Frame frame;
        try {
            frame.header = decodeHeader(header, limits, "malformed frame");
        } catch (const CosimError& error) {
            problem = error.what();
            break;
        }
        // The length was checked against the limit before this allocation.
        frame.payload.resize(frame.header.payloadLength);
        if (!readExactly(frame.payload.data(), frame.payload.size(), problem, eof)) {
            if (eof)
                problem = std::string("the peer closed the connection inside a ") +
                          toString(frame.header.type) +
                          " frame (truncated frame: " + std::to_string(frame.header.payloadLength) +
                          " payload bytes announced)";
            break;
        }
        std::lock_guard<std::mutex> lock(mutex);
        queue.push_back(std::move(frame));
        arrived.notify_one();
    }
    std::lock_guard<std::mutex> lock(mutex);
    failure = problem;
    failed = true;
    arrived.notify_all();
}

void FrameLink::send(const Frame& frame)
{
    std::lock_guard<std::mutex> lock(writeMutex);
    writeBuffer.clear();
    appendFrame(frame, writeBuffer);
    const IoResult result = transport->write(writeBuffer.data(), writeBuffer.size());
    if (!result.ok())
        throw CosimError("cannot send " + std::string(toString(frame.header.type)) + ": " +
                         (result.error.empty() ? "the stream is closed" : result.error));
}

void FrameLink::sendEncoded(const std::vector<std::uint8_t>& bytes)
{
    std::lock_guard<std::mutex> lock(writeMutex);
    const IoResult result = transport->write(bytes.data(), bytes.size());
    if (!result.ok())
        throw CosimError("cannot send: " +
                         (result.error.empty() ? "the stream is closed" : result.error));
}

std::optional<Frame> FrameLink::poll()
{
    std::lock_guard<std::mutex> lock(mutex);
    if (!queue.empty()) {
        Frame frame = std::move(queue.front());
        queue.pop_front();
        return frame;
    }
    if (failed)
        throw CosimError(failure);
    return std::nullopt;
}

std::optional<Frame> FrameLink::wait(std::chrono::microseconds timeout)
{
    // A short spin catches the answer of a peer on another core without a sleep/wake-up
    // round trip; it is bounded so two processes on two cores do not starve each other.
    constexpr auto spin = std::chrono::microseconds(20);
    const auto start = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() - start < spin) {
        if (std::optional<Frame> frame = poll())
            return frame;
        std::this_thread::yield();
    }
    std::unique_lock<std::mutex> lock(mutex);
    if (!arrived.wait_until(lock, start + timeout, [&] { return !queue.empty() || failed; }))
        return std::nullopt;
    if (!queue.empty()) {
        Frame frame = std::move(queue.front());
        queue.pop_front();
        return frame;
    }
    throw CosimError(failure);
}

} // namespace etsim::cosim
