#pragma once
// The detailed HBM model as plain C++: the address map, one PseudoChannel per pseudo-channel
// and a calendar of the cycles at which each of them can issue its next command. Transactions
// of any size are cut into bursts lazily, in address order, as PC queues have room (a DMA
// stream of 1 GB never holds more than the queues' worth of bursts), and complete when their
// last burst's data has moved. HbmController drives it from SystemC; tests drive it directly.

#include "kernel/Stats.h"
#include "models/hbm/AddressMap.h"
#include "models/hbm/PseudoChannel.h"

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <queue>
#include <vector>

namespace etsim::hbm {

/// "Nothing scheduled", in ps.
constexpr std::uint64_t neverPs = std::numeric_limits<std::uint64_t>::max();

class HbmDevice {
public:
    /// Called when a transaction completes: its token and the time its last data beat moved,
    /// ps (not earlier than the time of the call).
    using Completion = std::function<void(std::uint64_t token, std::uint64_t donePs)>;
    /// A command that issued: PC index (over the device), cycle, command, bank within the PC,
    /// row (0 for commands without one).
    using Observer = std::function<void(std::uint32_t pc,
                                        std::uint64_t cycle,
                                        Command command,
                                        std::uint32_t bank,
                                        std::uint32_t row)>;

    /// `config` must be validated; stats go into `stats` (one group per channel and PC).
    HbmDevice(const HbmConfig& config, StatGroup& stats, Completion onComplete);
    HbmDevice(const HbmDevice&) = delete;
    HbmDevice& operator=(const HbmDevice&) = delete;

    /// A transaction of `bytes` from `address` arriving at `nowPs` (ps); it enters the PC
    /// queues after the controller latency.
    void submit(std::uint64_t token,
                std::uint64_t address,
                std::uint64_t bytes,
                bool write,
                std::uint64_t nowPs);
    /// Time of the next thing to do, ps; neverPs when idle.
    std::uint64_t nextEventPs() const;
    /// Does everything due at or before `ps`.
    void runUntil(std::uint64_t ps);
    /// Runs until every submitted transaction has completed (tests, tools).
    void drain();
    /// No transaction in flight.
    bool idle() const { return inFlight == 0; }

    const AddressMap& addressMap() const { return map; }
    const CycleClock& cycleClock() const { return clock; }
    const HbmConfig& config() const { return cfg; }
    void setObserver(Observer observer);

private:
    struct Transaction {
        std::uint64_t token = 0;
        std::uint64_t firstBurst = 0; // address of the first burst, aligned down
        std::uint64_t bursts = 0;
        std::uint64_t generated = 0;
        std::uint64_t outstanding = 0;
        std::uint64_t arrivalPs = 0;
        std::uint64_t doneCycle = 0;
        bool write = false;
    };
    struct Arrival {
        std::uint64_t cycle;
        std::uint32_t transaction;
    };
    using Wake = std::pair<std::uint64_t, std::uint32_t>; // cycle, PC

    void start(std::uint32_t index, std::uint64_t cycle);
    // Admits queued transactions in order as the buffer rules and the one-per-cycle front end
    // allow; `afterRoom`: called because a column command made room.
    void admit(std::uint64_t cycle, bool afterRoom);
    bool hasRoom(std::uint32_t index) const;
    std::uint32_t channelOf(std::uint32_t pc) const;
    // A scheduling unit is a PC, or with shared command buses its channel (numbered by the
    // channel's first PC).
    std::uint32_t unitOf(std::uint32_t pc) const { return pc - pc % pcsPerUnit; }
    std::uint64_t unitNextCycle(std::uint32_t unit, std::uint64_t cycle);
    void serveChannel(std::uint32_t unit, std::uint64_t cycle);
    void markDirty(std::uint32_t unit);
    void roomMade(std::uint32_t pc, std::uint64_t cycle);
    void feed(std::uint32_t index, std::uint64_t cycle);
    void serve(std::uint32_t pc, std::uint64_t cycle);
    void burstDone(const BurstDone& done);
    void finish(std::uint32_t index);
    void schedule(std::uint32_t pc, std::uint64_t cycle);
    void reschedule(std::uint64_t cycle);

    HbmConfig cfg;
    AddressMap map;
    CycleClock clock;
    std::unique_ptr<SchedulerIf> scheduler;
    std::unique_ptr<PagePolicyIf> pagePolicy;
    std::unique_ptr<CommandMuxIf> mux;
    std::vector<std::unique_ptr<RequestBufferIf>> buffers; // per channel
    bool perBankBuffer = false;                            // buffers' perBank()
    std::vector<std::unique_ptr<PseudoChannel>> pcs;
    Completion onComplete;
    std::uint64_t burstBytes;
    std::uint64_t latencyPs;

    std::vector<Transaction> transactions;
    std::vector<std::uint32_t> freeSlots;
    std::deque<Arrival> arrivals;
    std::vector<std::deque<std::uint32_t>> waiters; // per PC and direction: blocked on it
    std::priority_queue<Wake, std::vector<Wake>, std::greater<>> calendar;
    std::vector<std::uint64_t> scheduled; // per PC: its live calendar entry
    std::vector<std::uint32_t> dirty;     // PCs whose next cycle must be recomputed
    std::vector<std::uint8_t> isDirty;
    std::uint64_t inFlight = 0;
    bool sharedBus = false;
    std::uint32_t pcsPerUnit = 1;
    std::vector<BusState> buses; // per channel, when shared
    std::vector<Offer> offers;   // per PC of a channel, serveChannel's scratch
    std::deque<std::uint32_t> admitQueue;
    std::uint64_t admitWake = neverCycle;
    std::uint64_t nextAdmit = 0;
    bool admitBlocked = false;
    std::uint64_t latencyCycles = 0;
    std::uint64_t nextSequence = 0;

    Counter& transactionCount;
    Counter& bytesRead;
    Counter& bytesWritten;
    Distribution& latency;
};

} // namespace etsim::hbm
