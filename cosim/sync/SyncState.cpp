#include "cosim/sync/SyncState.h"

#include <algorithm>

namespace etsim::cosim {

namespace {
constexpr std::uint64_t unlimited = ~std::uint64_t{0};

std::uint64_t saturatingAdd(std::uint64_t a, std::uint64_t b)
{
    return a > unlimited - b ? unlimited : a + b;
}
} // namespace

void SyncState::sent(std::uint64_t timestampPs)
{
    unacked.push_back(Unacked{sentFrames, timestampPs});
    ++sentFrames;
}

void SyncState::granted(std::uint64_t grantPs, std::uint64_t acknowledged)
{
    lastGrant = grantPs;
    ++grantCount;
    while (!unacked.empty() && unacked.front().sequence < acknowledged)
        unacked.pop_front();
}

std::uint64_t SyncState::bound() const
{
    std::uint64_t result = lastGrant;
    for (const Unacked& frame : unacked)
        result = std::min(result, saturatingAdd(frame.timestampPs, reaction));
    return result;
}

bool SyncState::takeGrant(std::uint64_t nextEventPs)
{
    if (grantedOnce && nextEventPs == lastSentGrant && receivedFrames == lastSentAck)
        return false;
    grantedOnce = true;
    lastSentGrant = nextEventPs;
    lastSentAck = receivedFrames;
    return true;
}

} // namespace etsim::cosim
