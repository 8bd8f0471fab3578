#include "et_driver/TraceReadAhead.h"

#include "et_driver/NodeTensors.h"
#include "et_driver/TraceSet.h"
#include "kernel/Error.h"

#include <algorithm>
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
    // The set's own error (its files never change, so reading them here races with nothing).
    set.checkRank(rank);
    Rank& own = ranks[rank];
    for (;;) {
        if (own.front.nodes.take(node))
            return true;
        if (own.direct > 0)
            return readDirect(rank, own, node);
        if (own.front.failure) {
            std::exception_ptr failure = std::exchange(own.front.failure, nullptr);
            end(own);
            std::rethrow_exception(failure);
        }
        if (own.front.ended) {
            end(own);
            return false;
        }
        std::unique_lock<std::mutex> lock(mutex);
        if (own.state == State::Filling) {
            ++waitCount;
            filled.wait(lock, [&own] { return own.state == State::Filled; });
        }
        if (own.state != State::Filled) {
            // Not asked yet, or asked and not started: the thread is behind (a burst of reads,
            // such as every driver filling its window at the start). This thread reads the
            // batch itself: a wait would cost two thread wake-ups, far more than the decoding.
            // The thread skips the rank's queued request, as the rank is no longer Asked.
            own.state = State::Idle;
            ++selfCount;
            own.direct = batchFor(own);
            lock.unlock();
            continue;
        }
        std::swap(own.front, own.back);
        own.state = State::Idle;
        const bool more = !own.front.ended && !own.front.failure;
        if (more)
            ask(rank);
        lock.unlock();
        if (more)
            asked.notify_one();
    }
}

bool TraceReadAhead::readDirect(std::uint32_t rank, Rank& own, TraceNode& node)
{
    bool read = false;
    try {
        // The thread may be reading another rank: the set is shared.
        std::lock_guard<std::mutex> lock(setMutex);
        read = set.next(rank, node);
    } catch (...) {
        // Raised once, after the nodes before it; the rank then ends, as in TraceSet::next.
        end(own);
        throw;
    }
    if (!read) {
        end(own);
        return false;
    }
    if (--own.direct == 0) {
        // The thread decodes the batch after this one meanwhile.
        {
            std::lock_guard<std::mutex> lock(mutex);
            ask(rank);
        }
        asked.notify_one();
    }
    return true;
}

void TraceReadAhead::readTensorsAhead(TraceNode& node)
{
    // The node kinds whose lowering reads tensors (NodeLowering.cpp).
    if (node.type != NodeType::Comp && node.type != NodeType::MemLoad &&
        node.type != NodeType::MemStore)
        return;
    try {
        node.tensorsAhead = nodeTensors(node, node.tensorsRead) ? TraceNode::TensorsAhead::Read
                                                                : TraceNode::TensorsAhead::None;
    } catch (const Error&) {
        // Left Unknown: lowering scans the node again and reports the error, at its turn.
        node.tensorsAhead = TraceNode::TensorsAhead::Unknown;
    }
}

void TraceReadAhead::end(Rank& own)
{
    own.front.ended = true;
    own.direct = 0;
    own.front.nodes.release();
    own.back.nodes.release();
}

std::uint64_t TraceReadAhead::batchesFilled()
{
    std::lock_guard<std::mutex> lock(mutex);
    return filledCount;
}

std::size_t TraceReadAhead::bufferedBytes() const
{
    std::size_t bytes = 0;
    for (const Rank& own : ranks)
        bytes += own.front.nodes.capacity() + own.back.nodes.capacity();
    return bytes;
}

std::size_t TraceReadAhead::batchFor(Rank& rank) const
{
    const bool first = !rank.started;
    rank.started = true;
    return first ? std::min(batchNodes, firstBatchNodes) : batchNodes;
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
        if (own.state != State::Asked) // the caller read the batch itself (next())
            continue;
        own.state = State::Filling;
        lock.unlock();
        fill(rank, own.back, batchFor(own));
        lock.lock();
        own.state = State::Filled;
        ++filledCount;
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
            bool read = false;
            {
                // Either thread may be reading another rank: the set is shared.
                std::lock_guard<std::mutex> lock(setMutex);
                read = set.next(rank, decoded);
            }
            if (!read) {
                batch.ended = true;
                return;
            }
            readTensorsAhead(decoded);
            batch.nodes.append(decoded);
        }
    } catch (...) {
        // Raised by next() once the nodes before it are handed out.
        batch.failure = std::current_exception();
    }
}

} // namespace etsim::et
