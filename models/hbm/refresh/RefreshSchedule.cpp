#include "models/hbm/refresh/RefreshSchedule.h"

namespace etsim::hbm {

RefreshSchedule::RefreshSchedule(std::uint64_t interval,
                                 std::uint32_t maxPostponed,
                                 std::uint32_t maxPulledIn,
                                 std::uint64_t firstDue)
    : period(interval)
    , maxOwed(maxPostponed)
    , maxAhead(-static_cast<std::int64_t>(maxPulledIn))
    , trigger(firstDue)
{
}

void RefreshSchedule::catchUp(std::uint64_t now)
{
    if (now >= trigger + period) {
        trigger += period;
        state = State::Regular;
    }
}

void RefreshSchedule::postpone()
{
    ++counter;
    trigger += period;
}

void RefreshSchedule::endPullIn()
{
    state = State::Regular;
    trigger += period;
}

void RefreshSchedule::refreshed()
{
    if (state == State::PulledIn)
        --counter;
    else
        state = State::PulledIn;
    if (counter == maxAhead) {
        state = State::Regular;
        trigger += period;
    }
}

} // namespace etsim::hbm
