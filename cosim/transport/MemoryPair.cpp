#include "cosim/transport/MemoryPair.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>

namespace etsim::cosim {

namespace {

// One direction of the stream (unbounded: a write never waits).
struct Pipe {
    std::mutex mutex;
    std::condition_variable readable;
    std::deque<std::uint8_t> bytes;
    bool closed = false;
};

class MemoryTransport final : public Transport {
public:
    MemoryTransport(std::shared_ptr<Pipe> in, std::shared_ptr<Pipe> out)
        : in(std::move(in)), out(std::move(out))
    {
    }
    ~MemoryTransport() override { shutdown(); }

    IoResult writeSome(const std::uint8_t* data, std::size_t size) override
    {
        std::lock_guard<std::mutex> lock(out->mutex);
        if (out->closed)
            return IoResult{0, false, "memory transport: the other end is closed"};
        out->bytes.insert(out->bytes.end(), data, data + size);
        out->readable.notify_all();
        return IoResult{size, false, {}};
    }

    IoResult readSome(std::uint8_t* data, std::size_t size) override
    {
        std::lock_guard<std::mutex> lock(in->mutex);
        if (in->bytes.empty())
            return IoResult{0, in->closed, {}};
        const std::size_t count = std::min(size, in->bytes.size());
        std::copy_n(in->bytes.begin(), count, data);
        in->bytes.erase(in->bytes.begin(), in->bytes.begin() + static_cast<long>(count));
        return IoResult{count, false, {}};
    }

    bool waitIo(bool wantWrite, Deadline deadline) override
    {
        if (wantWrite)
            return true;
        std::unique_lock<std::mutex> lock(in->mutex);
        return in->readable.wait_until(
            lock, deadline, [&] { return !in->bytes.empty() || in->closed; });
    }

    bool waitWritable(Deadline) override { return true; }

    void shutdown() override
    {
        for (Pipe* pipe : {in.get(), out.get()}) {
            std::lock_guard<std::mutex> lock(pipe->mutex);
            pipe->closed = true;
            pipe->readable.notify_all();
        }
    }

    std::string describe() const override { return "memory"; }

private:
    std::shared_ptr<Pipe> in;
    std::shared_ptr<Pipe> out;
};

} // namespace

std::pair<std::unique_ptr<Transport>, std::unique_ptr<Transport>> makeMemoryPair()
{
    auto forward = std::make_shared<Pipe>();
    auto backward = std::make_shared<Pipe>();
    return {std::make_unique<MemoryTransport>(backward, forward),
            std::make_unique<MemoryTransport>(forward, backward)};
}

} // namespace etsim::cosim
