#pragma once
// The timetable every refresh policy shares: refreshes fall due once per interval, and a
// controller may postpone up to maxPostponed of them while its banks are busy and pull up to
// maxPulledIn in ahead while they are idle (JEDEC's refresh flexibility; DRAMSys's
// RefreshMaxPostponed / RefreshMaxPulledin). The counter of refreshes owed (positive) or
// done ahead (negative) follows DRAMSys's refresh managers:
// - at a due time in the regular state, a busy controller postpones (owed + 1, the next due
//   time one interval later) unless it owes maxPostponed already: then the refresh is forced;
// - after a refresh the controller is in the pulled-in state: while it stays idle it refreshes
//   again at once (owed - 1) until it is maxPulledIn ahead; the first busy evaluation ends the
//   run and moves the due time on by one interval;
// - an evaluation a whole interval after the due time moves it on by one interval.
// With both limits 0 every due refresh is forced, once per interval.

#include <cstdint>

namespace etsim::hbm {

class RefreshSchedule {
public:
    /// `interval` > 0 cycles; limits in refresh commands of the policy.
    RefreshSchedule(std::uint64_t interval,
                    std::uint32_t maxPostponed,
                    std::uint32_t maxPulledIn,
                    std::uint64_t firstDue);

    /// The next due time; in the pulled-in state it lies in the past (due at once).
    std::uint64_t due() const { return trigger; }
    std::uint64_t interval() const { return period; }
    bool pulledIn() const { return state == State::PulledIn; }
    /// Refreshes owed (positive) or done ahead (negative).
    std::int64_t owed() const { return counter; }
    /// Applies the "whole interval late" rule for an evaluation at `now` >= due().
    void catchUp(std::uint64_t now);
    /// Regular state: the refresh may not be postponed any more.
    bool forced() const { return counter == maxOwed; }
    /// Regular state, busy, not forced: the refresh waits for the next due time.
    void postpone();
    /// Pulled-in state, busy: no refresh ahead now; back to the regular timetable.
    void endPullIn();
    /// A refresh command issued.
    void refreshed();

private:
    enum class State { Regular, PulledIn };
    std::uint64_t period;
    std::int64_t maxOwed;
    std::int64_t maxAhead; // negative or 0
    std::uint64_t trigger;
    std::int64_t counter = 0;
    State state = State::Regular;
};

} // namespace etsim::hbm
