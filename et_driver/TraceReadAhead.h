#pragma once
// A trace set's nodes, decoded ahead on a thread of their own. Reading a node (the file, its
// record's fields, the classification of its attributes) is about a sixth of a large run's
// wall time, and the simulation runs on one thread, so a second core can do it meanwhile.
// Each rank read has two batches of decoded nodes, packed (PackedNodes.h): next() hands out one
// while the thread fills the other, and taking the last node of one asks for the next. The
// thread fills batches in the order they are asked for, which is the order the simulation
// reads its ranks in. When the simulation reads faster than the thread decodes (a burst, such
// as every driver filling its window at a run's start), next() reads the batch the thread has
// not started itself rather than wait (a wait costs two thread wake-ups), straight from the set
// into the caller's node: packing a node only to unpack it on the same thread is pure cost.
//
// next() gives exactly what TraceSet::next would: the same nodes in the same order, the same
// end, and the same error (a TraceError naming the file, the record and the fix), raised by
// the call that would have met it, after the nodes before it. A node the thread decoded also
// carries its tensor lists (TraceNode::tensorsAhead), which lowering would otherwise work out
// on the simulation's thread.
//
// Memory: two batches of `batchNodes` nodes per rank read, released at the rank's end;
// batchNodesFor keeps that to a few hundred thousand nodes whatever the rank count.

#include "et_driver/PackedNodes.h"
#include "et_driver/TraceNode.h"

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace etsim::et {

class TraceSet;

class TraceReadAhead {
public:
    /// Reads through `set`, which must outlive this object and, from now on, be read only
    /// through it. `batchNodes` 0 takes batchNodesFor(the set's rank count). The ranks marked
    /// in `readRanks` (empty: all) start being read at once, in rank order, each with a first
    /// batch of at most firstBatchNodes, so that a run's start (each driver reading its rank's
    /// first nodes in turn) seldom waits; any other rank is read from its first next().
    explicit TraceReadAhead(TraceSet& set,
                            std::size_t batchNodes = 0,
                            const std::vector<bool>& readRanks = {});
    /// Stops the thread after the batch it is filling, and waits for it.
    ~TraceReadAhead();
    TraceReadAhead(const TraceReadAhead&) = delete;
    TraceReadAhead& operator=(const TraceReadAhead&) = delete;

    /// The rank's next node into `node` (whose buffers are recycled); false at its end. Throws
    /// the error the rank's reader raised, once; the rank then ends. Call from one thread.
    bool next(std::uint32_t rank, TraceNode& node);

    /// Nodes per batch for a set of `ranks` ranks: 256, fewer past 256 ranks (never below 16).
    static std::size_t batchNodesFor(std::size_t ranks);
    std::size_t batchSize() const { return batchNodes; }
    static constexpr std::size_t firstBatchNodes = 16;
    /// Times next() found the rank's next batch being decoded, and waited for it.
    std::uint64_t waits() const { return waitCount; }
    /// Times next() found the rank's next batch not started, and read it itself.
    std::uint64_t readsByCaller() const { return selfCount; }
    /// Batches the thread has filled so far (any thread may ask).
    std::uint64_t batchesFilled();
    /// Bytes held by the packed batches of every rank (the buffers' capacity). Only while no
    /// batch is being filled: every rank read to its end, or the thread never asked.
    std::size_t bufferedBytes() const;

private:
    struct Batch {
        PackedNodes nodes;
        bool ended = false;         // the rank's last node is in this batch (or before it)
        std::exception_ptr failure; // raised after the batch's nodes
    };
    // Idle: no batch asked for; Asked: queued for the thread; Filling: the thread decodes it;
    // Filled: decoded, the caller's to take.
    enum class State : std::uint8_t { Idle, Asked, Filling, Filled };
    struct Rank {
        Batch front;               // the caller's: nodes handed out by next()
        Batch back;                // the thread's while Filling, the caller's once Filled
        State state = State::Idle; // guarded by the mutex
        bool started = false;      // a batch was filled before (by whoever fills the next)
        std::size_t direct = 0;    // nodes the caller still reads itself before asking again
    };

    // Queues the rank's back batch for filling; with the mutex held.
    void ask(std::uint32_t rank);
    void work();
    // Decodes up to `nodes` of the rank's next nodes into `batch` (the thread's work).
    void fill(std::uint32_t rank, Batch& batch, std::size_t nodes);
    // Works out the tensor lists of a node whose lowering reads them (TraceNode::tensorsAhead),
    // so that the simulation's thread does not.
    static void readTensorsAhead(TraceNode& node);
    // One of the batch the caller reads itself, from the set into `node`; false at the end.
    bool readDirect(std::uint32_t rank, Rank& own, TraceNode& node);
    // Marks the rank ended and frees its batches (nothing refills them).
    static void end(Rank& own);
    // The size of the rank's next batch (its first is smaller); marks it started.
    std::size_t batchFor(Rank& rank) const;

    // Each node the thread reads is decoded here, then packed into its batch.
    TraceNode decoded;

    TraceSet& set;
    std::size_t batchNodes;
    std::vector<Rank> ranks;
    std::uint64_t waitCount = 0;
    std::uint64_t selfCount = 0;
    std::uint64_t filledCount = 0; // guarded by the mutex
    std::mutex mutex;
    // Held around each read of the set, which both threads read (different ranks).
    std::mutex setMutex;
    std::condition_variable asked;  // the thread waits for work
    std::condition_variable filled; // next() waits for a batch
    std::deque<std::uint32_t> queue;
    bool stopping = false;
    // Started at the end of the constructor, once the members it uses exist.
    std::thread worker;
};

} // namespace etsim::et
