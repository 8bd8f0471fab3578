#pragma once
// The command multiplexer: of the commands a PC's requests and refresh want (the
// candidates), which it offers for the next command-bus slot. One file pair per mux; the
// channel's PCs then pick among their offers with finishesFirst / readyFirst.

#include "models/hbm/scheduler/SchedulerIf.h"

#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

namespace etsim::hbm {

/// "Nothing to do": no cycle is scheduled.
constexpr std::uint64_t neverCycle = std::numeric_limits<std::uint64_t>::max();
/// Candidate::slot of a refresh command (PRE, PREA or the refresh itself).
constexpr std::uint32_t refreshSlot = std::numeric_limits<std::uint32_t>::max();

/// The commands a PC offers at a cycle: with the scheduler mux the scheduler's choice (legal
/// now) in `ras` or `cas`; with the oldest mux its best row and best column command (legal
/// now or later). A due refresh command legal now is offered alone, in `ras`, flagged.
struct Offer {
    bool hasRas = false;
    bool hasCas = false;
    bool refresh = false;
    Candidate ras;
    Candidate cas;
    /// When nothing is offered: the first later cycle something may be (neverCycle: idle).
    std::uint64_t next = neverCycle;
};

/// The DRAMSys "oldest" order: the command that finishes first (ready + length), then the
/// older request.
bool finishesFirst(const Candidate& a, const Candidate& b);
/// Of a row and a column command, the one to issue: the one ready first, then the older.
const Candidate& readyFirst(const Candidate& a, const Candidate& b);

class CommandMuxIf {
public:
    virtual ~CommandMuxIf() = default;
    /// The name used in configs ("oldest").
    virtual const char* name() const = 0;
    /// Fills `out` from `candidates` at `cycle`; `refreshWake` is the next cycle the refresh
    /// policy must be evaluated at when it is later than `cycle` (else neverCycle);
    /// `scratch` is the caller's buffer.
    virtual void offer(std::uint64_t cycle,
                       const std::vector<Candidate>& candidates,
                       const SchedulerIf& scheduler,
                       std::uint64_t refreshWake,
                       std::vector<Candidate>& scratch,
                       Offer& out) const = 0;
};

/// The mux of a kind.
std::unique_ptr<CommandMuxIf> makeCommandMux(CommandMux kind);

} // namespace etsim::hbm
