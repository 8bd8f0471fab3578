#pragma once
// The controller of one pseudo-channel as plain data: its queues (organised as the channel's
// request buffer says), the scheduler, page and refresh policies and the device timing. The owner
// asks nextCycle() when something can happen and calls step() then; nothing runs per cycle.

#include "kernel/Stats.h"
#include "models/hbm/PcTiming.h"
#include "models/hbm/buffer/RequestBufferIf.h"
#include "models/hbm/page/PagePolicyIf.h"
#include "models/hbm/refresh/RefreshPolicyIf.h"
#include "models/hbm/scheduler/CommandMuxIf.h"
#include "models/hbm/scheduler/SchedulerIf.h"

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <vector>

namespace etsim::hbm {

/// Converts between CK cycles and picoseconds of simulated time.
class CycleClock {
public:
    explicit CycleClock(Frequency clock);
    /// Time of the start of `cycle`, ps (rounded to the nearest ps).
    std::uint64_t ps(std::uint64_t cycle) const;
    /// The first cycle that starts at or after `ps`.
    std::uint64_t cycleAtOrAfter(std::uint64_t ps) const;
    /// The last cycle that starts at or before `ps`.
    std::uint64_t cycleAtOrBefore(std::uint64_t ps) const;
    double periodSeconds() const { return 1.0 / hz; }

private:
    double hz;
    std::uint64_t wholePeriodPs; // the period when it is a whole number of ps, else 0
};

/// One burst-sized access queued at a PC.
struct BurstRequest {
    std::uint32_t transaction = 0; ///< the owner's handle
    std::uint32_t bank = 0;        ///< PcTiming bank index
    std::uint32_t row = 0;
    bool write = false;
    /// Arrival order over the device (the command mux compares requests of several PCs);
    /// unsetSequence: the PC numbers its requests itself.
    std::uint64_t sequence = std::numeric_limits<std::uint64_t>::max();
};
constexpr std::uint64_t unsetSequence = std::numeric_limits<std::uint64_t>::max();

/// A column access that issued: its data has moved by `doneCycle`.
struct BurstDone {
    std::uint32_t transaction = 0;
    std::uint64_t doneCycle = 0;
};

/// What a step issued, for tests and traces.
using CommandObserver = std::function<void(
    std::uint64_t cycle, Command command, std::uint32_t bank, std::uint32_t row)>;

class PseudoChannel {
public:
    /// `config` must be validated and outlive the channel; `stats` is this PC's group;
    /// `refresh` is this PC's refresh policy (nullptr: no refresh); `buffer` is its channel's
    /// request buffer, in which this PC is number `pcInChannel`.
    PseudoChannel(const HbmConfig& config,
                  RequestBufferIf& buffer,
                  std::uint32_t pcInChannel,
                  const SchedulerIf& scheduler,
                  const PagePolicyIf& pagePolicy,
                  const CommandMuxIf& mux,
                  std::unique_ptr<RefreshPolicyIf> refresh,
                  const CycleClock& clock,
                  StatGroup& stats);
    PseudoChannel(const PseudoChannel&) = delete;
    PseudoChannel& operator=(const PseudoChannel&) = delete;

    /// Whether the queue of that direction has room.
    bool canAccept(bool write) const;
    /// Queues a request arriving at `cycle` (canAccept must hold).
    void enqueue(const BurstRequest& request, std::uint64_t cycle);
    /// The first cycle >= now at which step() may issue a command; neverCycle when idle.
    /// Evaluates the refresh policy at `now` (it may postpone a due refresh).
    std::uint64_t nextCycle(std::uint64_t now);
    /// Issues at most one command at `cycle`. Returns true if it did; a column access that
    /// issued is written to `done` (and its request leaves the queue, `completed` is set).
    /// When nothing was legal, `next` is the first later cycle at which something may be
    /// (neverCycle when idle): one scan of the queue serves both purposes.
    bool step(std::uint64_t cycle, BurstDone& done, bool& completed, std::uint64_t& next);
    /// The first half of step(): what this PC's command mux offers at `cycle` (nothing when
    /// idle).
    void offer(std::uint64_t cycle, Offer& out);
    /// The second half: issues `chosen` (one of the last offer's candidates, legal now).
    void commit(std::uint64_t cycle, const Candidate& chosen, BurstDone& done, bool& completed);
    /// Shares the channel's command buses (CommandBus::PerChannel).
    void shareBus(BusState* shared) { device.shareBus(shared); }

    bool idle() const { return reads.empty() && writes.empty(); }
    std::size_t queued() const { return reads.size() + writes.size(); }
    const PcTiming& timing() const { return device; }
    void setObserver(CommandObserver observer) { observe = std::move(observer); }

private:
    struct Entry {
        BurstRequest request;
        std::uint64_t sequence = 0;
        bool classified = false;
    };

    // Which queue the scheduler serves now (true = writes), after the watermark rules.
    bool serveWrites() const;
    // Evaluates the refresh policy at `now`, then fills `candidates` with the refresh
    // commands it wants (flagged by slot == refreshSlot) and the next command of each request
    // the scheduler considers whose bank the refresh does not hold back.
    void collect(std::uint64_t now, bool writesActive);
    void classify(Entry& entry, Command command);
    // A per-bank buffer: one candidate per bank, its first row hit, else its oldest request.
    void considerPerBank(const std::vector<Entry>& queue, const std::vector<std::uint8_t>* held);
    void updateQueueStats(std::uint64_t cycle);

    const HbmConfig& config;
    RequestBufferIf& buffer;
    std::uint32_t pcInChannel;
    const SchedulerIf& scheduler;
    const PagePolicyIf& pagePolicy;
    const CommandMuxIf& mux;
    const CycleClock& clock;
    std::unique_ptr<RefreshPolicyIf> refresh;
    PcTiming device;
    std::vector<Entry> reads;
    std::vector<Entry> writes;
    std::uint64_t nextSequence = 0;
    bool writeMode = false;
    int lastCasWrite = -1; // direction of the last column access: -1 none, 0 read, 1 write
    std::uint32_t highWatermark;
    std::uint32_t lowWatermark;
    std::uint64_t burstBytes;
    CommandObserver observe;
    std::vector<Candidate> candidates;
    std::vector<Candidate> ready;
    std::vector<RefreshCommand> refreshCommands;
    std::vector<std::uint32_t> bankChoice; // considerPerBank's scratch, per bank
    std::vector<std::uint32_t> perBank;    // queued requests per bank
    bool perBankBuffer;                    // buffer.perBank(), asked once

    Counter& readBursts;
    Counter& writeBursts;
    Counter& bytes;
    Counter& rowHits;
    Counter& rowMisses;
    Counter& rowConflicts;
    Counter& activates;
    Counter& switches;
    Counter& refreshes;
    Scalar& refreshTime;
    TimeWeightedAverage& readOccupancy;
    TimeWeightedAverage& writeOccupancy;
};

} // namespace etsim::hbm
