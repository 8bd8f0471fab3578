#pragma once
// Conservative synchronisation bookkeeping of one side of a link (cosim/PROTOCOL.md, section
// 5). Plain C++, no SystemC, no I/O: the host's Proxy and the peer library share it.
//
// A side may run up to bound() = min(last grant received, timestamp + reaction lookahead of
// every REQUEST/RESPONSE it sent that the other side had not acknowledged in that grant).

#include <cstdint>
#include <deque>
#include <optional>
#include <string>

namespace etsim::cosim {

class SyncState {
public:
    /// `reactionLookaheadPs`: how long after receiving a frame the other side can answer at
    /// the earliest (the link lookahead for the peer; 0 for the host).
    explicit SyncState(std::uint64_t reactionLookaheadPs) : reaction(reactionLookaheadPs) {}

    /// A REQUEST/RESPONSE with `timestampPs` was sent.
    void sent(std::uint64_t timestampPs);
    /// A REQUEST/RESPONSE arrived (counts for our acknowledgement).
    void received() { ++receivedFrames; }
    /// A GRANT arrived: the other side sends nothing earlier than grantPs, having received
    /// `acknowledged` of our frames.
    void granted(std::uint64_t grantPs, std::uint64_t acknowledged);
    /// Why a GRANT breaks section 5, or nullopt: an acknowledgement that counts back or past
    /// the frames sent, or a grant time below the previous grant's while acknowledging no new
    /// frame (a promise taken back).
    std::optional<std::string> checkGrant(std::uint64_t grantPs, std::uint64_t acknowledged) const;

    /// How far this side may run, ps; ~0 = unlimited.
    std::uint64_t bound() const;
    std::uint64_t receivedCount() const { return receivedFrames; }
    std::uint64_t grantsReceived() const { return grantCount; }

    /// True when a GRANT of `nextEventPs` would tell the other side something new; then
    /// records it as sent.
    bool takeGrant(std::uint64_t nextEventPs);

private:
    struct Unacked {
        std::uint64_t sequence;
        std::uint64_t timestampPs;
    };
    std::uint64_t reaction;
    std::uint64_t lastGrant = 0; // nothing may run before the first grant
    std::uint64_t lastAcknowledged = 0;
    std::uint64_t sentFrames = 0;
    std::uint64_t receivedFrames = 0;
    std::uint64_t grantCount = 0;
    std::deque<Unacked> unacked;
    bool grantedOnce = false;
    std::uint64_t lastSentGrant = 0;
    std::uint64_t lastSentAck = 0;
};

} // namespace etsim::cosim
