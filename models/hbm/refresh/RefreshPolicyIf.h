#pragma once
// When a pseudo-channel refreshes, which banks a refresh holds back and which commands it
// needs. The controller evaluates the policy whenever it looks for a command to issue, at the
// latest at nextDue(), so nothing runs per cycle. A due refresh that must go now ("forced")
// holds back the requests of its banks; the controller then issues the commands the policy
// lists (precharges of its open banks, then the refresh) with priority over requests.

#include "models/hbm/PcTiming.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace etsim::hbm {

/// One command a refresh needs: a PRE or PREA closing rows, or the refresh itself.
struct RefreshCommand {
    Command command = Command::RefAb;
    std::uint32_t bank = 0;
};

/// What the policy sees of its PC when it decides.
struct RefreshView {
    const PcTiming& device;
    /// Requests queued per bank (PcTiming bank index); a bank with none is idle.
    const std::vector<std::uint32_t>& queued;
    /// Sum of `queued`.
    std::size_t total = 0;
};

class RefreshPolicyIf {
public:
    virtual ~RefreshPolicyIf() = default;
    /// The name used in configs ("all_bank").
    virtual const char* name() const = 0;
    /// The next cycle at which an evaluation may change the policy's decision: the next
    /// refresh falls due (a pulled-in refresh is due at once, so this may lie in the past).
    virtual std::uint64_t nextDue() const = 0;
    /// Decides, at `now`, whether a refresh is wanted; may postpone a due refresh or end a
    /// run of pulled-in ones (the schedule moves on by one interval).
    virtual void evaluate(std::uint64_t now, const RefreshView& view) = 0;
    /// Appends the commands the last decision wants now, given the rows open in `device`.
    virtual void commands(const PcTiming& device, std::vector<RefreshCommand>& out) const = 0;
    /// Per bank, whether the last decision holds requests to it back (nullptr: none held).
    virtual const std::vector<std::uint8_t>* held() const = 0;
    /// Whether held() (when not nullptr) holds every bank, so no request needs looking at.
    virtual bool holdsAll() const = 0;
    /// One of the listed commands issued at `cycle`.
    virtual void issued(Command command, std::uint64_t cycle) = 0;
    /// Cycles one refresh command keeps its banks busy (tRFC, tRFCpb, ...).
    virtual std::uint32_t duration() const = 0;
    /// Accounts the refreshes an idle PC would have issued and finished by `cycle` (no
    /// events are spent on an idle device); returns how many.
    virtual std::uint64_t skipIdle(std::uint64_t cycle) = 0;
};

/// The policy of config.controller.refresh for PC `pcInChannel` of its channel (the start
/// of its schedule depends on it with refresh_start: staggered); nullptr for
/// RefreshKind::None.
std::unique_ptr<RefreshPolicyIf> makeRefreshPolicy(const HbmConfig& config,
                                                   std::uint32_t pcInChannel);

/// The first due cycle of PC `index` of `count` for a schedule of `interval` cycles: the
/// interval, or with refresh_start: staggered interval - reverse(index) x interval / count
/// (reverse: index's log2(count) bits reversed), rounded up to a cycle.
std::uint64_t firstRefreshDue(const HbmConfig& config,
                              std::uint64_t interval,
                              std::uint32_t index,
                              std::uint32_t count);

} // namespace etsim::hbm
