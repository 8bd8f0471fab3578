#pragma once
// Point-to-point matching of the fabric's sends and recvs, as plain C++ (CommEngine owns one).
//
// A send starts its message at once (eager) and completes when the message arrives; a recv
// completes when the matching message has arrived. Sends and recvs match by (source,
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

    explicit PointToPoint(Completion completion) : complete(std::move(completion)) {}

    /// Records a send of `bytes` from `src`; returns its id, which the caller's message carries
    /// back to arrived(). Call enqueueSend once the message is under way.
    std::uint32_t addSend(std::uint64_t token, NodeId node, std::uint32_t src, std::uint64_t bytes);
    /// Puts send `id` in the channel (src, dst, tag) and matches it.
    void enqueueSend(std::uint32_t id, std::uint32_t src, std::uint32_t dst, std::uint64_t tag);
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

private:
    struct SendRecord {
        std::uint64_t token = 0;
        NodeId node{};
        std::uint32_t rank = 0;
        std::uint64_t bytes = 0;
        bool arrived = false;
        bool matched = false;
        std::uint32_t recv = 0;
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

    void match(Channel& channel);
    void completeRecvOf(std::uint32_t send);

    Completion complete;
    std::vector<SendRecord> sends;
    std::vector<std::uint32_t> freeSends;
    std::vector<RecvRecord> recvs;
    std::vector<std::uint32_t> freeRecvs;
    std::unordered_map<ChannelKey, Channel, ChannelKeyHash> channels;
};

} // namespace etsim::net
