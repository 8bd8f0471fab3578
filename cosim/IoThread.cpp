#include "cosim/IoThread.h"

namespace etsim::cosim {

namespace {
// How long one read waits before the thread looks whether it should stop; closing the link
// wakes it at once, so this bounds only a missed wake-up.
constexpr std::chrono::milliseconds readSlice{100};
} // namespace

IoThread::IoThread(const char* name, FrameLink& link)
    : sc_core::sc_prim_channel(name)
    , link(link)
    , arrivedEvent((std::string(name) + "_arrived").c_str())
{
    link.setConcurrentReader(true);
    reader = std::thread([this] { read(); });
}

IoThread::~IoThread()
{
    {
        std::lock_guard<std::mutex> lock(mutex);
        stopping = true;
    }
    link.close();
    if (reader.joinable())
        reader.join();
}

void IoThread::read()
{
    while (true) {
        std::optional<Frame> frame;
        std::string problem;
        try {
            frame = link.wait(readSlice);
        } catch (const CosimError& error) {
            problem = error.what();
        }
        // The update is requested under the lock, so none is requested once the destructor
        // has begun.
        std::lock_guard<std::mutex> lock(mutex);
        if (stopping)
            return;
        if (!frame && problem.empty())
            continue;
        if (frame) {
            frames.push_back(std::move(*frame));
            ++readCount;
        } else {
            failed = true;
            failure = problem;
        }
        ready.notify_one();
        async_request_update();
        if (failed)
            return;
    }
}

void IoThread::update()
{
    arrivedEvent.notify(sc_core::SC_ZERO_TIME);
}

std::optional<Frame> IoThread::takeLocked()
{
    if (!frames.empty()) {
        std::optional<Frame> frame(std::move(frames.front()));
        frames.pop_front();
        return frame;
    }
    if (failed)
        throw CosimError(failure);
    return std::nullopt;
}

std::optional<Frame> IoThread::poll()
{
    std::lock_guard<std::mutex> lock(mutex);
    return takeLocked();
}

std::optional<Frame> IoThread::wait(std::chrono::microseconds timeout)
{
    std::unique_lock<std::mutex> lock(mutex);
    ready.wait_for(lock, timeout, [this] { return !frames.empty() || failed; });
    return takeLocked();
}

std::uint64_t IoThread::framesRead() const
{
    std::lock_guard<std::mutex> lock(mutex);
    return readCount;
}

} // namespace etsim::cosim
