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
    lastAcknowledged = acknowledged;
    ++grantCount;
    while (!unacked.empty() && unacked.front().sequence < acknowledged)
        unacked.pop_front();
}

std::optional<std::string> SyncState::checkGrant(std::uint64_t grantPs,
                                                 std::uint64_t acknowledged) const
{
    if (acknowledged < lastAcknowledged)
        return "GRANT acknowledges " + std::to_string(acknowledged) +
               " frames after an earlier GRANT acknowledged " + std::to_string(lastAcknowledged) +
               " (PROTOCOL.md section 5: the count of frames received only grows)";
    if (acknowledged > sentFrames)
        return "GRANT acknowledges " + std::to_string(acknowledged) + " frames, but only " +
               std::to_string(sentFrames) +
               " were sent (PROTOCOL.md section 5: the count is of frames received)";
    if (grantCount > 0 && grantPs < lastGrant && acknowledged == lastAcknowledged)
        return "GRANT time " + std::to_string(grantPs) + " ps is below the previous GRANT's " +
               std::to_string(lastGrant) +
               " ps with no new frame acknowledged (PROTOCOL.md section 5: grant times never "
               "decrease unless the grant acknowledges frames the peer had not seen)";
    return std::nullopt;
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
