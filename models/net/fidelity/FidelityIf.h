#pragma once
// How a fabric times its messages: one policy per `fidelity` of docs/network.md, one file pair
// each. The network core builds a message's route, counts its bytes on every link and sets its
// wire bytes and latency; the policy decides when its last byte leaves and when it arrives
// (by scheduling a Deliver event for it), keeps whatever link state it needs, and handles the
// calendar events of its own (FlowFinish, Hop). The core delivers. What each policy can time
// beyond messages (streams, shared links) is stated once, in NetConfig.h (fidelityAbilities),
// where the configuration checks it.
//
//   flow           flows share links max-min fairly (FlowFidelity.h)
//   analytical     latency + size / bottleneck, no link state (AnalyticalFidelity.h)
//   astra_aware    ASTRA-sim's congestion-aware backend (AstraAwareFidelity.h)
//   astra_unaware  ASTRA-sim's congestion-unaware backend (AstraUnawareFidelity.h)

#include "kernel/Units.h"
#include "models/net/NetConfig.h"
#include "models/net/flow/NetworkState.h"

#include <cstdint>
#include <memory>
#include <string>

namespace etsim::net {

class FidelityIf {
public:
    virtual ~FidelityIf() = default;

    /// The configuration name ("flow").
    virtual const char* name() const = 0;
    /// Times flow record `index` from the calendar's now(): its route (not empty), wire bytes
    /// and latency are set, and its bytes are counted on its links. The policy accounts the
    /// links' busy time (and the timeline) and schedules the record's Deliver event.
    virtual void start(std::uint32_t index) = 0;
    /// Handles a FlowFinish or Hop event the policy scheduled.
    virtual void handle(const CalendarEvent& event) = 0;
    /// Called once every event of the current instant was handled.
    virtual void settle() {}
    /// True when messages started or ended since the last settle() and it has work to do.
    virtual bool settlePending() const { return false; }
    /// Time to reduce `bytes` at an endpoint whose memory moves `localMemory` (three accesses
    /// per reduced byte: two reads, one write), ps.
    virtual std::uint64_t reductionPs(std::uint64_t bytes, Bandwidth localMemory) const = 0;
    /// Rate re-evaluations, and flows whose rate they set (the flow policy; 0 otherwise).
    virtual std::uint64_t rateUpdates() const { return 0; }
    virtual std::uint64_t flowRateChanges() const { return 0; }
};

/// ASTRA-sim's backends count whole ns.
inline constexpr std::uint64_t psPerNs = 1000;

/// The policy of `kind`, working on `state` (which must outlive it). The one place that
/// chooses by fidelity.
std::unique_ptr<FidelityIf> makeFidelity(Fidelity kind, NetworkState& state);

/// Throws etsim::Error naming `what` ("fabric: a transfer", "a message of ...") when `ps`, a
/// duration, reaches the end of the simulated clock (2^64 ps).
void requireWithinClock(double ps, const std::string& what);

/// roundPs beyond the range where adding one half is exact (and for ps <= 0).
std::uint64_t roundPsWide(double ps);

/// `ps` rounded to the nearest whole ps (half away from zero). Throws etsim::Error for a
/// duration beyond the simulated clock (2^64 ps). Inline: every flow rate change rounds.
inline std::uint64_t roundPs(double ps)
{
    // Below 2^51, ps + 0.5 is exact, so truncating it rounds half away from zero like llround.
    if (ps > 0.0 && ps < 2251799813685248.0)
        return static_cast<std::uint64_t>(ps + 0.5);
    return roundPsWide(ps);
}

/// The reduction time rounded to the ps: 3 * bytes / bandwidth.
std::uint64_t reductionPsExact(std::uint64_t bytes, Bandwidth localMemory);
/// The reduction time as ASTRA-sim computes it: 3 * floor(bytes / (bandwidth in B/ns)) ns.
std::uint64_t reductionPsWholeNs(std::uint64_t bytes, Bandwidth localMemory);

/// Accounts `flow` as holding each link of its route for its serialisation time there
/// (rounded to the ps), from `now`: busy time and timeline. Returns the serialisation time on
/// the slowest link, ps.
std::uint64_t holdLinksPs(NetworkState& state, const Flow& flow, std::uint64_t now);

} // namespace etsim::net
