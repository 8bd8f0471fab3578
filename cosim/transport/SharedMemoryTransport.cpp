#include "cosim/transport/SharedMemoryTransport.h"

#include "cosim/transport/PollUntil.h"
#include "cosim/wire/Bytes.h"
#include "cosim/wire/Frame.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <new>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

namespace etsim::cosim {

namespace {

// "ETSM" read as a little-endian u32: the hand-over message.
constexpr std::uint32_t handoverMagic = 0x4D535445;
constexpr std::uint32_t handoverVersion = 1;
constexpr std::size_t handoverBytes = 16;
constexpr int handoverFds = 5; // memfd, then data and space eventfds of ring 0, then ring 1

// Each index on its own cache line: producer and consumer write different lines.
struct alignas(64) Slot {
    std::atomic<std::uint64_t> value{0};
};
struct RingControl {
    Slot head;          // bytes written so far, by the producer
    Slot tail;          // bytes read so far, by the consumer
    Slot readerWaiting; // 1 while the consumer is (about to be) blocked in poll
    Slot writerWaiting; // 1 while the producer waits for space
};
static_assert(sizeof(RingControl) == 256, "ring control block layout");
static_assert(std::atomic<std::uint64_t>::is_always_lock_free,
              "ring indices must be lock-free to be shared between processes");

std::size_t regionBytes(std::size_t ringBytes)
{
    return 2 * (sizeof(RingControl) + ringBytes);
}

std::string systemError(const std::string& what)
{
    return what + ": " + std::strerror(errno);
}

// Descriptors closed on scope exit unless released.
struct Descriptors {
    std::array<int, handoverFds> fds{-1, -1, -1, -1, -1};
    ~Descriptors()
    {
        for (int fd : fds)
            if (fd >= 0)
                ::close(fd);
    }
};

void signal(int eventFd)
{
    const std::uint64_t one = 1;
    [[maybe_unused]] const ssize_t ignored = ::write(eventFd, &one, sizeof one);
}

void drain(int eventFd)
{
    std::uint64_t count = 0;
    [[maybe_unused]] const ssize_t ignored = ::read(eventFd, &count, sizeof count);
}

class SharedMemoryTransport final : public Transport {
public:
    // `side` 0 is the host (writes ring 0), 1 the peer (writes ring 1).
    SharedMemoryTransport(std::unique_ptr<Transport> socket,
                          Descriptors& descriptors,
                          void* region,
                          std::size_t ringBytes,
                          int side)
        : socket(std::move(socket))
        , region(region)
        , ringBytes(ringBytes)
        , name(this->socket->describe())
        , wake(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC))
    {
        std::swap(fds, descriptors.fds);
        auto* bytes = static_cast<std::uint8_t*>(region);
        RingControl* control[2] = {
            reinterpret_cast<RingControl*>(bytes),
            reinterpret_cast<RingControl*>(bytes + sizeof(RingControl) + ringBytes)};
        const int out = side;
        const int in = 1 - side;
        tx = control[out];
        rx = control[in];
        txData = reinterpret_cast<std::uint8_t*>(tx) + sizeof(RingControl);
        rxData = reinterpret_cast<std::uint8_t*>(rx) + sizeof(RingControl);
        txDataEvent = fds[1 + 2 * out];
        txSpaceEvent = fds[2 + 2 * out];
        rxDataEvent = fds[1 + 2 * in];
        rxSpaceEvent = fds[2 + 2 * in];
        if (name.rfind("unix:", 0) == 0)
            name = "shm:" + name.substr(5);
    }

    ~SharedMemoryTransport() override
    {
        shutdown();
        ::munmap(region, regionBytes(ringBytes));
        if (wake >= 0)
            ::close(wake);
        for (int fd : fds)
            if (fd >= 0)
                ::close(fd);
    }

    IoResult writeSome(const std::uint8_t* data, std::size_t size) override
    {
        if (closed.load())
            return IoResult{0, true, {}};
        if (peerGone.load())
            return IoResult{0, false, name + ": write failed: the peer closed the connection"};
        const std::uint64_t head = txHead; // this side alone writes it
        // The consumer's index is read only when the last view of it shows too little room:
        // each read of it pulls a cache line the other core keeps writing.
        if (ringBytes - static_cast<std::size_t>(head - txTail) < size)
            txTail = tx->tail.value.load(std::memory_order_acquire);
        const std::size_t count =
            std::min<std::size_t>(size, ringBytes - static_cast<std::size_t>(head - txTail));
        if (count == 0)
            return IoResult{0, false, {}};
        const std::size_t at = static_cast<std::size_t>(head % ringBytes);
        const std::size_t first = std::min(count, ringBytes - at);
        std::memcpy(txData + at, data, first);
        std::memcpy(txData, data + first, count - first);
        txHead = head + count;
        tx->head.value.store(txHead, std::memory_order_release);
        // Pairs with the fence in waitIo: either the reader sees the new head before it
        // blocks, or we see its flag and wake it.
        std::atomic_thread_fence(std::memory_order_seq_cst);
        if (tx->readerWaiting.value.load(std::memory_order_relaxed) != 0)
            signal(txDataEvent);
        return IoResult{count, false, {}};
    }

    IoResult readSome(std::uint8_t* data, std::size_t size) override
    {
        if (closed.load())
            return IoResult{0, true, {}};
        const std::uint64_t tail = rxTail; // this side alone writes it
        // Likewise the producer's index is read only once everything known is consumed.
        if (rxHead == tail)
            rxHead = rx->head.value.load(std::memory_order_acquire);
        const std::size_t count =
            std::min<std::size_t>(size, static_cast<std::size_t>(rxHead - tail));
        if (count == 0)
            // Whatever the peer wrote before it went is delivered first.
            return IoResult{0, peerGone.load(), {}};
        const std::size_t at = static_cast<std::size_t>(tail % ringBytes);
        const std::size_t first = std::min(count, ringBytes - at);
        std::memcpy(data, rxData + at, first);
        std::memcpy(data + first, rxData, count - first);
        rxTail = tail + count;
        rx->tail.value.store(rxTail, std::memory_order_release);
        std::atomic_thread_fence(std::memory_order_seq_cst);
        if (rx->writerWaiting.value.load(std::memory_order_relaxed) != 0)
            signal(rxSpaceEvent);
        return IoResult{count, false, {}};
    }

    bool waitIo(bool wantWrite, Deadline deadline) override
    {
        if (closed.load() || peerGone.load())
            return true;
        rx->readerWaiting.value.store(1, std::memory_order_relaxed);
        if (wantWrite)
            tx->writerWaiting.value.store(1, std::memory_order_relaxed);
        std::atomic_thread_fence(std::memory_order_seq_cst);
        const bool readable = rx->head.value.load(std::memory_order_relaxed) !=
                              rx->tail.value.load(std::memory_order_relaxed);
        const bool writable = wantWrite && tx->head.value.load(std::memory_order_relaxed) -
                                                   tx->tail.value.load(std::memory_order_relaxed) <
                                               ringBytes;
        bool woken = readable || writable;
        pollfd wanted[4] = {{rxDataEvent, POLLIN, 0},
                            {wantWrite ? txSpaceEvent : -1, POLLIN, 0},
                            {socket->descriptor(), POLLIN, 0},
                            {wake, POLLIN, 0}};
        if (!woken)
            woken = pollUntil(wanted, 4, deadline);
        rx->readerWaiting.value.store(0, std::memory_order_relaxed);
        if (wantWrite)
            tx->writerWaiting.value.store(0, std::memory_order_relaxed);
        if (wanted[0].revents != 0)
            drain(rxDataEvent);
        if (wanted[1].revents != 0)
            drain(txSpaceEvent);
        if (wanted[2].revents != 0)
            checkPeer();
        return woken || closed.load();
    }

    bool waitWritable(Deadline deadline) override
    {
        if (closed.load() || peerGone.load())
            return true;
        tx->writerWaiting.value.store(1, std::memory_order_relaxed);
        std::atomic_thread_fence(std::memory_order_seq_cst);
        bool writable = tx->head.value.load(std::memory_order_relaxed) -
                            tx->tail.value.load(std::memory_order_relaxed) <
                        ringBytes;
        pollfd wanted[3] = {
            {txSpaceEvent, POLLIN, 0}, {socket->descriptor(), POLLIN, 0}, {wake, POLLIN, 0}};
        if (!writable)
            writable = pollUntil(wanted, 3, deadline);
        tx->writerWaiting.value.store(0, std::memory_order_relaxed);
        if (wanted[0].revents != 0)
            drain(txSpaceEvent);
        if (wanted[1].revents != 0)
            checkPeer();
        return writable || closed.load();
    }

    void shutdown() override
    {
        if (!closed.exchange(true)) {
            signal(wake);
            socket->shutdown();
        }
    }

    std::string describe() const override { return name; }
    int descriptor() const override { return socket->descriptor(); }

private:
    // Nothing follows the hand-over on the socket: readable means closed.
    void checkPeer()
    {
        std::uint8_t byte = 0;
        const ssize_t count = ::recv(socket->descriptor(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
        if (count >= 0 || (errno != EAGAIN && errno != EINTR))
            peerGone.store(true);
    }

    std::unique_ptr<Transport> socket;
    void* region;
    std::size_t ringBytes;
    std::string name;
    int wake;
    std::array<int, handoverFds> fds{-1, -1, -1, -1, -1};
    RingControl* tx = nullptr;
    RingControl* rx = nullptr;
    std::uint8_t* txData = nullptr;
    std::uint8_t* rxData = nullptr;
    int txDataEvent = -1;
    int txSpaceEvent = -1;
    int rxDataEvent = -1;
    int rxSpaceEvent = -1;
    std::atomic<bool> closed{false};
    std::atomic<bool> peerGone{false};
    // Local copies of the ring indices: the own ones (each written by this side only) and the
    // other side's as last read.
    std::uint64_t txHead = 0;
    std::uint64_t txTail = 0;
    std::uint64_t rxHead = 0;
    std::uint64_t rxTail = 0;
};

bool validRingBytes(std::size_t ringBytes)
{
    return ringBytes >= 4096 && ringBytes <= (std::size_t{1} << 30) &&
           (ringBytes & (ringBytes - 1)) == 0;
}

} // namespace

std::unique_ptr<Transport> offerSharedMemory(std::unique_ptr<Transport> socket,
                                             std::size_t ringBytes)
{
    const std::string where = "cosim: shared-memory hand-over on " + socket->describe();
    if (!validRingBytes(ringBytes))
        throw CosimError(where + ": ring size " + std::to_string(ringBytes) +
                         " bytes is not a power of two from 4096 to 2^30");
    if (socket->descriptor() < 0)
        throw CosimError(where + ": the transport has no socket to pass descriptors on");
    Descriptors descriptors;
    descriptors.fds[0] = ::memfd_create("etsim-cosim-rings", MFD_CLOEXEC);
    if (descriptors.fds[0] < 0)
        throw CosimError(where + ": " + systemError("memfd_create"));
    if (::ftruncate(descriptors.fds[0], static_cast<off_t>(regionBytes(ringBytes))) != 0)
        throw CosimError(where + ": " + systemError("ftruncate"));
    for (int index = 1; index < handoverFds; ++index) {
        descriptors.fds[index] = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        if (descriptors.fds[index] < 0)
            throw CosimError(where + ": " + systemError("eventfd"));
    }
    void* region = ::mmap(
        nullptr, regionBytes(ringBytes), PROT_READ | PROT_WRITE, MAP_SHARED, descriptors.fds[0], 0);
    if (region == MAP_FAILED)
        throw CosimError(where + ": " + systemError("mmap"));
    auto* bytes = static_cast<std::uint8_t*>(region);
    new (bytes) RingControl();
    new (bytes + sizeof(RingControl) + ringBytes) RingControl();

    std::uint8_t message[handoverBytes] = {};
    wire::putU32(message, handoverMagic);
    wire::putU32(message + 4, handoverVersion);
    wire::putU32(message + 8, static_cast<std::uint32_t>(ringBytes));
    iovec part{message, sizeof message};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * handoverFds)] = {};
    msghdr header{};
    header.msg_iov = &part;
    header.msg_iovlen = 1;
    header.msg_control = control;
    header.msg_controllen = sizeof control;
    cmsghdr* rights = CMSG_FIRSTHDR(&header);
    rights->cmsg_level = SOL_SOCKET;
    rights->cmsg_type = SCM_RIGHTS;
    rights->cmsg_len = CMSG_LEN(sizeof(int) * handoverFds);
    std::memcpy(CMSG_DATA(rights), descriptors.fds.data(), sizeof(int) * handoverFds);
    if (::sendmsg(socket->descriptor(), &header, MSG_NOSIGNAL) !=
        static_cast<ssize_t>(handoverBytes)) {
        const std::string problem = systemError("sendmsg");
        ::munmap(region, regionBytes(ringBytes));
        throw CosimError(where + ": " + problem);
    }
    return std::make_unique<SharedMemoryTransport>(
        std::move(socket), descriptors, region, ringBytes, 0);
}

std::unique_ptr<Transport> acceptSharedMemory(std::unique_ptr<Transport> socket,
                                              std::chrono::milliseconds timeout)
{
    const std::string where = "cosim: shared-memory hand-over on " + socket->describe();
    if (socket->descriptor() < 0)
        throw CosimError(where + ": the transport has no socket to receive descriptors on");
    pollfd readable{socket->descriptor(), POLLIN, 0};
    if (!pollUntil(&readable, 1, std::chrono::steady_clock::now() + timeout))
        throw CosimError(where + ": nothing received within " + std::to_string(timeout.count()) +
                         " ms");
    std::uint8_t message[handoverBytes] = {};
    iovec part{message, sizeof message};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * handoverFds)] = {};
    msghdr header{};
    header.msg_iov = &part;
    header.msg_iovlen = 1;
    header.msg_control = control;
    header.msg_controllen = sizeof control;
    const ssize_t received = ::recvmsg(socket->descriptor(), &header, MSG_CMSG_CLOEXEC);
    Descriptors descriptors;
    int count = 0;
    for (cmsghdr* item = CMSG_FIRSTHDR(&header); item != nullptr;
         item = CMSG_NXTHDR(&header, item)) {
        if (item->cmsg_level != SOL_SOCKET || item->cmsg_type != SCM_RIGHTS)
            continue;
        const int here = static_cast<int>((item->cmsg_len - CMSG_LEN(0)) / sizeof(int));
        for (int index = 0; index < here; ++index) {
            int fd = -1;
            std::memcpy(&fd, CMSG_DATA(item) + index * sizeof(int), sizeof fd);
            if (count < handoverFds)
                descriptors.fds[count] = fd;
            else
                ::close(fd);
            ++count;
        }
    }
    if (received < 0)
        throw CosimError(where + ": " + systemError("recvmsg"));
    if (received != static_cast<ssize_t>(handoverBytes) || wire::getU32(message) != handoverMagic)
        throw CosimError(where + ": expected the 16-byte hand-over starting with \"ETSM\", got " +
                         std::to_string(received) + " other bytes (is the host using \"shm\"?)");
    if (wire::getU32(message + 4) != handoverVersion)
        throw CosimError(where + ": hand-over version " +
                         std::to_string(wire::getU32(message + 4)) + " is not 1");
    const std::size_t ringBytes = wire::getU32(message + 8);
    if (!validRingBytes(ringBytes))
        throw CosimError(where + ": ring size " + std::to_string(ringBytes) +
                         " bytes is not a power of two from 4096 to 2^30");
    if (count != handoverFds || (header.msg_flags & MSG_CTRUNC) != 0)
        throw CosimError(where + ": expected " + std::to_string(handoverFds) +
                         " descriptors, got " + std::to_string(count));
    struct stat info {};
    if (::fstat(descriptors.fds[0], &info) != 0 ||
        static_cast<std::size_t>(info.st_size) != regionBytes(ringBytes))
        throw CosimError(where + ": the shared memory is not " +
                         std::to_string(regionBytes(ringBytes)) + " bytes long");
    void* region = ::mmap(
        nullptr, regionBytes(ringBytes), PROT_READ | PROT_WRITE, MAP_SHARED, descriptors.fds[0], 0);
    if (region == MAP_FAILED)
        throw CosimError(where + ": " + systemError("mmap"));
    return std::make_unique<SharedMemoryTransport>(
        std::move(socket), descriptors, region, ringBytes, 1);
}

} // namespace etsim::cosim
