#pragma once
// Point-to-point matching of the fabric's sends and recvs, as plain C++ (CommEngine owns one).
//
// An eager send starts its message at once, a rendezvous send when its matching recv is posted
// (as MPI's rendezvous protocol and NCCL's send/recv do); a send completes when its message
// arrives, a recv when the matching message has arrived. Sends and recvs match by (source,
// destination, tag) in posting order; a size mismatch is an error naming both nodes. This class
// only keeps the records and the matching; the CommEngine sends the messages and tells it when
// one arrived.

#include "kernel/Ids.h"

#include <cstdint>
#include <deque>
#include <functional>
#include <unordered_map>
#include <vector>

namespace etsim::net {

class PointToPoint {
public:
    /// Called with the token of a send or recv that is complete.
    using Completion = std::function<void(std::uint64_t token)>;
    /// Called when send `id`'s message must start; the message carries `id` back to arrived().
    using StartMessage = std::function<void(
        std::uint32_t id, std::uint32_t src, std::uint32_t dst, std::uint64_t bytes)>;

    PointToPoint(Completion completion, StartMessage startMessage)
        : complete(std::move(completion)), start(std::move(startMessage))
    {
    }

    /// A send of `bytes` from `src` to `dst` with `tag`: its message starts now (eager) or
    /// when its recv is posted (rendezvous). Throws etsim::Error for a size mismatch.
    void postSend(std::uint64_t token,
                  NodeId node,
                  std::uint32_t src,
                  std::uint32_t dst,
                  std::uint64_t bytes,
                  std::uint64_t tag,
                  bool rendezvous);
    /// A recv on `dst` of `bytes` from `src` with `tag`; completes at once when its send's
    /// message is already there. Throws etsim::Error for a size mismatch.
    void postRecv(std::uint64_t token,
                  NodeId node,
                  std::uint32_t src,
                  std::uint32_t dst,
                  std::uint64_t bytes,
                  std::uint64_t tag);
    /// The message of send `id` arrived: completes the matched recv if there is one, then the
    /// send.
    void arrived(std::uint32_t id);
    /// (source, destination, tag) channels with a send or recv waiting to be matched.
    std::size_t openChannels() const { return channels.size(); }

    // Partitioned runs (docs/partitioned-runs.md): each process matches the recvs of its own
    // ranks, so a send to a rank of another process is split in two records.
    /// An eager send to a rank of another process: its message starts now and the send
    /// completes when it arrives (arrived()); the recv is matched where it is posted.
    std::uint32_t postRemoteSend(std::uint64_t token,
                                 NodeId node,
                                 std::uint32_t src,
                                 std::uint32_t dst,
                                 std::uint64_t bytes,
                                 std::uint64_t tag);
    /// The other half: a send posted by a rank of another process to local rank `dst`, in the
    /// order the sender posted them. Matched like a local send; its message is already under
    /// way (arrived() with the returned id when it arrives) and it completes nothing of its own.
    /// Throws etsim::Error for a size mismatch.
    struct SendInfo {
        std::uint32_t src = 0;
        std::uint32_t dst = 0;
        std::uint64_t bytes = 0;
        std::uint64_t tag = 0;
        NodeId node{};
    };
    /// Endpoints, size and node of send `id` (while it is in flight).
    SendInfo sendInfo(std::uint32_t id) const
    {
        return SendInfo{
            sends[id].rank, sends[id].dst, sends[id].bytes, sends[id].tag, sends[id].node};
    }
    /// True when `id` names a send record (in flight or free); ids from another process are
    /// checked with it before use.
    bool knowsSend(std::uint32_t id) const { return id < sends.size(); }
    std::uint32_t postForeignSend(
        NodeId node, std::uint32_t src, std::uint32_t dst, std::uint64_t bytes, std::uint64_t tag);

private:
    struct SendRecord {
        std::uint64_t token = 0;
        NodeId node{};
        std::uint32_t rank = 0;
        std::uint64_t bytes = 0;
        bool arrived = false;
        bool matched = false;
        std::uint32_t recv = 0;
        bool started = false;  // the message is under way (at once when eager)
        std::uint32_t dst = 0; // for a rendezvous send started at the match
        std::uint64_t tag = 0;
        bool remote = false;  // the recv is matched in another process
        bool foreign = false; // the send's node is in another process
    };
    struct RecvRecord {
        std::uint64_t token = 0;
        NodeId node{};
        std::uint32_t rank = 0;
        std::uint64_t bytes = 0;
    };
    struct Channel {
        std::deque<std::uint32_t> sends; // unmatched, in order
        std::deque<std::uint32_t> recvs; // unmatched, in order
    };
    struct ChannelKey {
        std::uint32_t src = 0;
        std::uint32_t dst = 0;
        std::uint64_t tag = 0;
        bool operator==(const ChannelKey& other) const
        {
            return src == other.src && dst == other.dst && tag == other.tag;
        }
    };
    struct ChannelKeyHash {
        std::size_t operator()(const ChannelKey& key) const
        {
            std::uint64_t mixed = (static_cast<std::uint64_t>(key.src) << 32 | key.dst) ^
                                  (key.tag * 0x9E3779B97F4A7C15ULL);
            return static_cast<std::size_t>(mixed ^ (mixed >> 29));
        }
    };

    // Appends send or recv `id` to its channel, matches, and drops the channel when empty.
    void enqueue(const ChannelKey& key, std::uint32_t id, bool send);
    void match(Channel& channel);
    void startSend(std::uint32_t send);
    std::uint32_t newSend(const SendRecord& record);
    void completeRecvOf(std::uint32_t send);

    Completion complete;
    StartMessage start;
    std::vector<SendRecord> sends;
    std::vector<std::uint32_t> freeSends;
    std::vector<RecvRecord> recvs;
    std::vector<std::uint32_t> freeRecvs;
    std::unordered_map<ChannelKey, Channel, ChannelKeyHash> channels;
};

} // namespace etsim::net
