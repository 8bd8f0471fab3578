// The CommEngine's side of partitioned runs (docs/partitioned-runs.md): messages that leave
// for ranks of other processes, and those that come in from them.

#include "kernel/Error.h"
#include "models/net/CommEngine.h"

#include <string>

namespace etsim::net {

void CommEngine::setPartition(PartitionLink* link)
{
    core->setCrossing(link != nullptr ? this : nullptr);
    partition = link;
}

bool CommEngine::crosses(std::uint32_t dst) const
{
    return partition != nullptr && !partition->isLocal(dst);
}

void CommEngine::crossed(std::uint64_t cookie, std::uint64_t arrivalPs)
{
    const auto tagIndex = static_cast<std::uint32_t>(cookie);
    const Tag tag = tags[tagIndex];
    freeTags.push_back(tagIndex);
    CrossMessage message;
    message.arrivalPs = arrivalPs;
    if (tag.pointToPoint) {
        // The send completes here when its message arrives there.
        const PointToPoint::SendInfo send = pointToPoint.sendInfo(tag.member);
        message.pointToPoint = true;
        message.src = send.src;
        message.dst = send.dst;
        message.bytes = send.bytes;
        message.tag = startingTag;
        message.node = toUnderlying(startingNode);
        Tag completion = tag;
        completion.crossed = true;
        calendar.schedule(arrivalPs, EventKind::EngineTask, allocateTag(completion), 0);
    } else {
        const Instance& instance = instances[tag.instance];
        message.collective = instance.key;
        message.member = tag.member;
        message.chunk = tag.chunk;
        message.step = tag.step;
        message.dst = rankOf(instance, tag.member);
    }
    partition->depart(message);
}

void CommEngine::receive(const CrossMessage& message)
{
    if (message.arrivalPs < calendar.now())
        throw Error("fabric: a message from rank " + std::to_string(message.src) + " to rank " +
                    std::to_string(message.dst) + " arrived for " +
                    std::to_string(message.arrivalPs) + " ps, after this process reached " +
                    std::to_string(calendar.now()) +
                    " ps (the partitions' synchronisation broke its lookahead)");
    Tag tag;
    tag.crossed = true;
    if (message.pointToPoint) {
        tag.pointToPoint = true;
        tag.member = pointToPoint.postForeignSend(
            NodeId{message.node}, message.src, message.dst, message.bytes, message.tag);
    } else {
        std::uint32_t slot;
        if (!freeCrossArrivals.empty()) {
            slot = freeCrossArrivals.back();
            freeCrossArrivals.pop_back();
        } else {
            slot = static_cast<std::uint32_t>(crossArrivals.size());
            crossArrivals.emplace_back();
        }
        crossArrivals[slot] =
            CrossArrival{message.collective, message.member, message.chunk, message.step};
        tag.instance = slot;
    }
    calendar.schedule(message.arrivalPs, EventKind::EngineTask, allocateTag(tag), 0);
}

void CommEngine::crossArrived(const Tag& tag)
{
    if (tag.pointToPoint) {
        // A foreign send's message reaching its recv (counted as delivered here), or a remote
        // send's own completion.
        if (partition->isLocal(pointToPoint.sendInfo(tag.member).dst))
            ++p2pCount;
        pointToPoint.arrived(tag.member);
        return;
    }
    const CrossArrival arrival = crossArrivals[tag.instance];
    freeCrossArrivals.push_back(tag.instance);
    auto found = instanceByKey.find(arrival.collective);
    if (found == instanceByKey.end()) {
        earlyCollectives[arrival.collective].push_back(arrival);
        return;
    }
    arrive(found->second, arrival.member, arrival.chunk, arrival.step);
}

} // namespace etsim::net
