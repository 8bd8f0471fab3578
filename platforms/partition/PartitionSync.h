#pragma once
// Conservative synchronisation between the processes of a partitioned run
// (docs/partitioned-runs.md), as plain C++: no MPI, no SystemC. The transport moves the
// bytes; this class decides how far the process may run.
//
// The processes advance in rounds. In each, every process sends every other one ROUND: the
// messages produced since the last round for that peer (timestamped with their arrival) and
// a lower bound on the time of anything it will still do: the earlier of its next event and
// the arrival of every message it sends in this round (those become events of their
// receivers). The smallest bound over all processes, T, is then known to every process: no
// event anywhere is earlier. An event at t >= T can reach another process at t + lookahead at
// the earliest, so every process may run every event strictly before T + lookahead, and
// every message produced meanwhile arrives at or after that: it is in time for the next
// round. The run is over in the round in which T is "never" (no events and nothing in
// flight anywhere); every process sees the same bounds, so all end in the same round.
//
// This is a global lower bound, not the co-simulation bridge's pairwise grants
// (cosim/sync/SyncState): with three or more processes a process that granted "never" can be
// woken by a third one, and a pairwise grant cannot say so.

#include "models/net/CommEngine.h"

#include <cstdint>
#include <string>
#include <vector>

namespace etsim::platform {

/// "Never": a grant of a process with no event left.
inline constexpr std::uint64_t neverPs = ~std::uint64_t{0};

/// One process's ROUND to one peer.
struct PartitionRound {
    /// The sender's lower bound (see the top of this file); neverPs: nothing left.
    std::uint64_t lowerBoundPs = neverPs;
    /// Messages the sender sent to anyone in this round.
    std::uint64_t sentThisRound = 0;
    /// The sender's simulated time (for error messages).
    std::uint64_t nowPs = 0;
    std::vector<net::CrossMessage> messages;
};

/// ROUND as bytes (little-endian, field by field) and back. decodeRound throws etsim::Error
/// naming the peer for a truncated or oversized round.
std::vector<std::uint8_t> encodeRound(const PartitionRound& round);
PartitionRound decodeRound(const std::vector<std::uint8_t>& bytes, std::uint32_t from);

class PartitionSync {
public:
    /// `self` of `partitions` processes; `lookaheadPs` > 0 (PartitionPlan::lookaheadPs).
    PartitionSync(std::uint32_t partitions, std::uint32_t self, std::uint64_t lookaheadPs);

    /// A message leaves for `peer` (queued for the next round).
    void depart(std::uint32_t peer, const net::CrossMessage& message);
    /// The rounds to send, one per partition (empty for self), given this process's next
    /// event time (neverPs: none) and simulated time; empties the queues.
    std::vector<PartitionRound> takeRounds(std::uint64_t nextEventPs, std::uint64_t nowPs);
    /// The rounds received, one per partition (ignored for self). Throws etsim::Error naming
    /// the peer for a round whose messages arrive before its own lower bound.
    void receiveRounds(const std::vector<PartitionRound>& rounds);
    /// No process has an event left and no message is in flight.
    bool finished() const { return lowest == neverPs; }
    /// Events strictly before this time may run (neverPs: any).
    std::uint64_t bound() const;
    /// Messages sent and received over the run.
    std::uint64_t messagesSent() const { return sentTotal; }
    std::uint64_t messagesReceived() const { return receivedTotal; }

private:
    std::uint32_t self;
    std::uint64_t lookahead;
    std::vector<std::vector<net::CrossMessage>> outbox;
    std::uint64_t ownBound = neverPs;
    // The smallest lower bound of the last round (0 before the first: nothing may run).
    std::uint64_t lowest = 0;
    std::uint64_t sentTotal = 0;
    std::uint64_t receivedTotal = 0;
};

} // namespace etsim::platform
