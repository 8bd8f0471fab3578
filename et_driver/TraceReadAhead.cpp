#include "et_driver/TraceReadAhead.h"

#include "et_driver/TraceSet.h"
#include "kernel/Error.h"

#include <algorithm>
#include <string>
#include <utility>

namespace etsim::et {

TraceReadAhead::TraceReadAhead(TraceSet& set,
                               std::size_t batchNodes,
                               const std::vector<bool>& readRanks)
    : set(set)
    , batchNodes(batchNodes > 0 ? batchNodes : batchNodesFor(set.rankCount()))
    , ranks(set.rankCount())
{
    for (std::uint32_t rank = 0; rank < ranks.size(); ++rank)
        if (readRanks.empty() || (rank < readRanks.size() && readRanks[rank]))
            ask(rank);
    // Started last: the queue is filled, and nothing else is shared yet.
    worker = std::thread([this] { work(); });
}

TraceReadAhead::~TraceReadAhead()
{
    {
        std::lock_guard<std::mutex> lock(mutex);
        stopping = true;
    }
    asked.notify_one();
    worker.join();
}

std::size_t TraceReadAhead::batchNodesFor(std::size_t ranks)
{
    // About 64 Ki nodes decoded ahead in all (two batches a rank): a few tens of MiB.
    constexpr std::size_t total = std::size_t{1} << 16;
    return std::clamp<std::size_t>(total / std::max<std::size_t>(ranks, 1), 16, 256);
}

void TraceReadAhead::ask(std::uint32_t rank)
{
    ranks[rank].state = State::Asked;
    queue.push_back(rank);
}

bool TraceReadAhead::next(std::uint32_t rank, TraceNode& node)
{
    if (rank >= ranks.size())
        throw Error("rank " + std::to_string(rank) + " is out of range: the trace has " +
                    std::to_string(ranks.size()) + " ranks");
    Rank& own = ranks[rank];
    for (;;) {
        if (own.front.nodes.take(node))
            return true;
        if (own.front.failure) {
            std::exception_ptr failure = std::exchange(own.front.failure, nullptr);
            own.front.ended = true;
            std::rethrow_exception(failure);
        }
        if (own.front.ended)
            return false;
        bool notify = false;
        {
            std::unique_lock<std::mutex> lock(mutex);
            if (own.state == State::Idle) { // the rank's first read
                ask(rank);
                notify = true;
            }
            if (own.state != State::Filled) {
                ++waitCount;
                if (notify)
                    asked.notify_one();
                notify = false;
                filled.wait(lock, [&own] { return own.state == State::Filled; });
            }
            std::swap(own.front, own.back);
            own.state = State::Idle;
            if (!own.front.ended && !own.front.failure) {
                ask(rank);
                notify = true;
            }
        }
        if (notify)
            asked.notify_one();
    }
}

void TraceReadAhead::work()
{
    std::unique_lock<std::mutex> lock(mutex);
    for (;;) {
        asked.wait(lock, [this] { return stopping || !queue.empty(); });
        if (stopping)
            return;
        const std::uint32_t rank = queue.front();
        queue.pop_front();
        Rank& own = ranks[rank];
        lock.unlock();
        fill(rank, own.back, own.started ? batchNodes : std::min(batchNodes, firstBatchNodes));
        own.started = true;
        lock.lock();
        ranks[rank].state = State::Filled;
        filled.notify_one();
    }
}

void TraceReadAhead::fill(std::uint32_t rank, Batch& batch, std::size_t nodes)
{
    batch.nodes.clear();
    batch.ended = false;
    batch.failure = nullptr;
    try {
        while (batch.nodes.size() < nodes) {
            if (!set.next(rank, decoded)) {
                batch.ended = true;
                return;
            }
            batch.nodes.append(decoded);
        }
    } catch (...) {
        // Raised by next() once the nodes before it are handed out.
        batch.failure = std::current_exception();
    }
}

} // namespace etsim::et
