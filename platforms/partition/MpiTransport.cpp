#include "platforms/partition/MpiTransport.h"

#include "kernel/Units.h"

#include <cstdlib>
#include <mpi.h>
#include <thread>

namespace etsim::platform {

namespace {

constexpr int roundTag = 1;
constexpr int shareTag = 2;

// A wait first spins, yielding the core to whatever else is runnable on it, then sleeps
// between tests. Partitions on cores of their own answer within microseconds, while one sleep
// costs 60-100 us of timer slack and wake-up: over a run's thousands of rounds, sleeping at
// once took a fifth of the wall time (bench/README.md). A long wait (a slow peer, or more
// partitions than cores) sleeps, so it does not burn a core another partition needs.
constexpr std::chrono::microseconds spinPhase{2000};
constexpr std::chrono::microseconds pollPause{20};

class PollPacer {
public:
    void pause()
    {
        if (std::chrono::steady_clock::now() - started < spinPhase)
            std::this_thread::yield();
        else
            std::this_thread::sleep_for(pollPause);
    }

private:
    std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
};

std::string seconds(std::chrono::milliseconds timeout)
{
    return toString(Time::fromPs(static_cast<std::uint64_t>(timeout.count()) * 1'000'000'000ULL));
}

std::string silentFor(std::uint32_t peer,
                      std::chrono::milliseconds timeout,
                      std::uint32_t self,
                      std::uint64_t nowPs,
                      const char* verb,
                      const char* what)
{
    return "partition " + std::to_string(peer) + " " + verb + " no " + what + " for " +
           seconds(timeout) + ": it died or stalled (partition " + std::to_string(self) +
           " waited at simulated time " + toString(Time::fromPs(nowPs)) + "); the run is abandoned";
}

// Partition `self` waits, by the deadline, until `peer` has taken what `request` sent.
void awaitSent(MPI_Request& request,
               std::uint32_t peer,
               std::chrono::steady_clock::time_point deadline,
               std::chrono::milliseconds timeout,
               std::uint32_t self,
               std::uint64_t nowPs,
               const char* what)
{
    PollPacer pacer;
    while (true) {
        int done = 0;
        MPI_Test(&request, &done, MPI_STATUS_IGNORE);
        if (done != 0)
            return;
        if (std::chrono::steady_clock::now() > deadline)
            throw PartitionFailure(silentFor(peer, timeout, self, nowPs, "took", what));
        pacer.pause();
    }
}

} // namespace

MpiTransport::MpiTransport(std::chrono::milliseconds timeout) : timeout(timeout)
{
    int initialised = 0;
    MPI_Initialized(&initialised);
    if (initialised == 0)
        MPI_Init(nullptr, nullptr);
    // Errors come back as codes (and a dead peer is noticed by the deadline), not as aborts.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int value = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &value);
    rank = static_cast<std::uint32_t>(value);
    MPI_Comm_size(MPI_COMM_WORLD, &value);
    size = static_cast<std::uint32_t>(value);
}

MpiTransport::~MpiTransport()
{
    int finalised = 0;
    MPI_Finalized(&finalised);
    if (finalised == 0)
        MPI_Finalize();
}

std::vector<std::uint8_t> MpiTransport::receive(std::uint32_t peer,
                                                int tag,
                                                std::chrono::steady_clock::time_point deadline,
                                                std::uint64_t nowPs,
                                                const char* what)
{
    PollPacer pacer;
    while (true) {
        int found = 0;
        MPI_Status status;
        if (MPI_Iprobe(static_cast<int>(peer), tag, MPI_COMM_WORLD, &found, &status) != MPI_SUCCESS)
            throw PartitionFailure("partition " + std::to_string(peer) +
                                   " cannot be reached (MPI_Iprobe failed)");
        if (found != 0) {
            int count = 0;
            MPI_Get_count(&status, MPI_BYTE, &count);
            std::vector<std::uint8_t> bytes(static_cast<std::size_t>(count));
            if (MPI_Recv(bytes.data(),
                         count,
                         MPI_BYTE,
                         static_cast<int>(peer),
                         tag,
                         MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE) != MPI_SUCCESS)
                throw PartitionFailure("partition " + std::to_string(peer) +
                                       " cannot be reached (MPI_Recv failed)");
            return bytes;
        }
        if (std::chrono::steady_clock::now() > deadline)
            throw PartitionFailure(silentFor(peer, timeout, rank, nowPs, "sent", what));
        pacer.pause();
    }
}

std::vector<std::vector<std::uint8_t>>
MpiTransport::exchange(const std::vector<std::vector<std::uint8_t>>& outgoing, std::uint64_t nowPs)
{
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::vector<MPI_Request> requests;
    requests.reserve(size);
    for (std::uint32_t peer = 0; peer < size; ++peer) {
        if (peer == rank)
            continue;
        requests.emplace_back();
        // Isend never waits for the peer: two partitions sending at once cannot deadlock.
        if (MPI_Isend(outgoing[peer].data(),
                      static_cast<int>(outgoing[peer].size()),
                      MPI_BYTE,
                      static_cast<int>(peer),
                      roundTag,
                      MPI_COMM_WORLD,
                      &requests.back()) != MPI_SUCCESS)
            throw PartitionFailure("partition " + std::to_string(peer) +
                                   " cannot be reached (MPI_Isend failed)");
    }
    std::vector<std::vector<std::uint8_t>> incoming(size);
    for (std::uint32_t peer = 0; peer < size; ++peer)
        if (peer != rank)
            incoming[peer] = receive(peer, roundTag, deadline, nowPs, "ROUND");
    // Our ROUNDs must be taken too: a large one waits for its receiver.
    std::size_t at = 0;
    for (std::uint32_t peer = 0; peer < size; ++peer)
        if (peer != rank)
            awaitSent(requests[at++], peer, deadline, timeout, rank, nowPs, "ROUND");
    return incoming;
}

std::vector<std::vector<std::uint8_t>> MpiTransport::gather(const std::vector<std::uint8_t>& share,
                                                            std::uint64_t nowPs)
{
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::vector<std::vector<std::uint8_t>> shares;
    if (rank != 0) {
        MPI_Request request = MPI_REQUEST_NULL;
        MPI_Isend(share.data(),
                  static_cast<int>(share.size()),
                  MPI_BYTE,
                  0,
                  shareTag,
                  MPI_COMM_WORLD,
                  &request);
        awaitSent(request, 0, deadline, timeout, rank, nowPs, "share of the report");
        return shares;
    }
    shares.resize(size);
    shares[0] = share;
    for (std::uint32_t peer = 1; peer < size; ++peer)
        shares[peer] = receive(peer, shareTag, deadline, nowPs, "share of the report");
    return shares;
}

void MpiTransport::abortAll(int code)
{
    MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code); // MPI_Abort does not return; its declaration does not say so
}

} // namespace etsim::platform
