// The CommEngine's side of partitioned runs (docs/partitioned-runs.md): messages that leave
// for ranks of other processes, and those that come in from them. With
// Partitioning::LinkOwners (astra_aware) a message also goes on in another process at the
// first link that process times, and a point-to-point send whose message arrives in another
// process hears of its completion from there.

#include "kernel/Error.h"
#include "models/net/CommEngine.h"

#include <string>
#include <vector>

namespace etsim::net {

namespace {

// A free slot of `slots` (from `free`, else a new one).
template <typename Slot>
std::uint32_t takeSlot(std::vector<Slot>& slots, std::vector<std::uint32_t>& free)
{
    if (!free.empty()) {
        const std::uint32_t slot = free.back();
        free.pop_back();
        return slot;
    }
    slots.emplace_back();
    return static_cast<std::uint32_t>(slots.size() - 1);
}

} // namespace

void CommEngine::setPartition(PartitionLink* link)
{
    // First: the core asks crosses() which links are this process's.
    partition = link;
    core->setCrossing(link != nullptr ? this : nullptr);
}

bool CommEngine::crosses(std::uint32_t dst) const
{
    return partition != nullptr && !partition->isLocal(dst);
}

CrossMessage CommEngine::describe(const Tag& tag)
{
    if (tag.transit) {
        CrossMessage message = transits[tag.instance];
        freeTransits.push_back(tag.instance);
        return message;
    }
    CrossMessage message;
    if (tag.pointToPoint) {
        const PointToPoint::SendInfo send = pointToPoint.sendInfo(tag.member);
        message.pointToPoint = true;
        message.src = send.src;
        message.dst = send.dst;
        message.bytes = send.bytes;
        message.tag = send.tag;
        message.node = toUnderlying(send.node);
        message.sendId = tag.member;
    } else {
        const Instance& instance = instances[tag.instance];
        message.collective = instance.key;
        message.member = tag.member;
        message.chunk = tag.chunk;
        message.step = tag.step;
        message.dst = rankOf(instance, tag.member);
    }
    return message;
}

void CommEngine::sendDone(const CrossMessage& message, std::uint64_t arrivalPs, bool viaDestination)
{
    if (partition->isLocal(message.src)) {
        // The send completes here when its message arrives there.
        Tag completion;
        completion.pointToPoint = true;
        completion.crossed = true;
        completion.member = message.sendId;
        calendar.schedule(arrivalPs, EventKind::EngineTask, allocateTag(completion), 0);
        return;
    }
    if (viaDestination && partition->together(message.src, message.dst))
        return;
    CrossMessage done = message;
    done.kind = CrossKind::SendDone;
    done.arrivalPs = arrivalPs;
    done.via = message.src;
    partition->depart(done);
}

void CommEngine::crossed(std::uint64_t cookie, std::uint64_t arrivalPs)
{
    CrossMessage message = describe(takeTag(cookie));
    message.kind = CrossKind::Arrival;
    message.arrivalPs = arrivalPs;
    message.via = message.dst;
    if (message.pointToPoint)
        sendDone(message, arrivalPs, true);
    partition->depart(message);
}

void CommEngine::handedOver(std::uint64_t cookie, std::uint64_t atPs, const HandOver& handOver)
{
    CrossMessage message = describe(takeTag(cookie));
    message.kind = CrossKind::HandOver;
    message.arrivalPs = atPs;
    message.src = handOver.src;
    message.dst = handOver.dst;
    message.via = handOver.via;
    message.next = handOver;
    partition->depart(message);
}

void CommEngine::arriving(std::uint64_t cookie, std::uint64_t arrivalPs)
{
    // A local rank's own send completes with its arrival (transitDelivered).
    const Tag& tag = tags[static_cast<std::uint32_t>(cookie)];
    if (tag.transit && transits[tag.instance].pointToPoint &&
        !partition->isLocal(transits[tag.instance].src))
        sendDone(transits[tag.instance], arrivalPs, false);
}

void CommEngine::announceSend(const EtNodeInfo& info, std::uint32_t sendId)
{
    if (abilitiesOf(settings.fidelity).partitioning != Partitioning::LinkOwners)
        return;
    CrossMessage posted;
    posted.kind = CrossKind::Posted;
    posted.pointToPoint = true;
    posted.arrivalPs = calendar.now();
    posted.src = toUnderlying(info.rank);
    posted.dst = toUnderlying(*info.peer);
    posted.via = posted.dst;
    posted.tag = info.tag;
    posted.bytes = info.bytes;
    posted.node = toUnderlying(info.node);
    posted.sendId = sendId;
    partition->depart(posted);
}

std::uint32_t CommEngine::announcedSend(const CrossMessage& message)
{
    const std::uint64_t key = std::uint64_t{message.src} << 32 | message.sendId;
    auto found = announcedSends.find(key);
    if (found == announcedSends.end())
        throw Error("fabric: the message of rank " + std::to_string(message.src) + " node " +
                    std::to_string(message.node) + " to rank " + std::to_string(message.dst) +
                    " arrived, but its send was never announced (a broken partition)");
    const std::uint32_t record = found->second;
    announcedSends.erase(found);
    return record;
}

std::uint32_t CommEngine::localSendOf(const CrossMessage& message)
{
    // A local rank's send that crossed other processes' links has its record here.
    if (partition->isLocal(message.src))
        return message.sendId;
    if (abilitiesOf(settings.fidelity).partitioning == Partitioning::LinkOwners)
        return announcedSend(message);
    return pointToPoint.postForeignSend(
        NodeId{message.node}, message.src, message.dst, message.bytes, message.tag);
}

void CommEngine::checkReceived(const CrossMessage& message) const
{
    auto broken = [&](const std::string& problem) {
        return Error("fabric: a message from another process " + problem + " (a broken partition)");
    };
    for (std::uint32_t rank : {message.src, message.dst, message.via})
        if (rank >= rankCount)
            throw broken("names rank " + std::to_string(rank) + " of " + std::to_string(rankCount));
    if (!partition->isLocal(message.via))
        throw broken("for rank " + std::to_string(message.via) + " came to another process");
    const bool needsSend = message.kind == CrossKind::SendDone ||
                           (message.kind != CrossKind::Posted && message.pointToPoint &&
                            partition->isLocal(message.src));
    if (needsSend && (!message.pointToPoint || !partition->isLocal(message.src) ||
                      !pointToPoint.knowsSend(message.sendId)))
        throw broken("names send " + std::to_string(message.sendId) + " of rank " +
                     std::to_string(message.src) + ", which this process does not hold");
    if ((message.kind == CrossKind::Arrival || message.kind == CrossKind::Posted) &&
        !partition->isLocal(message.dst))
        throw broken("arrives at rank " + std::to_string(message.dst) +
                     ", which this process does not simulate");
}

void CommEngine::receive(const CrossMessage& message)
{
    checkReceived(message);
    if (message.kind == CrossKind::Posted) {
        // Matched now, in posting order; its time only orders the synchronisation.
        announcedSends[std::uint64_t{message.src} << 32 | message.sendId] =
            pointToPoint.postForeignSend(
                NodeId{message.node}, message.src, message.dst, message.bytes, message.tag);
        return;
    }
    if (message.arrivalPs < calendar.now())
        throw Error("fabric: a message from rank " + std::to_string(message.src) + " to rank " +
                    std::to_string(message.dst) + " arrived for " +
                    std::to_string(message.arrivalPs) + " ps, after this process reached " +
                    std::to_string(calendar.now()) +
                    " ps (the partitions' synchronisation broke its lookahead)");
    Tag tag;
    switch (message.kind) {
    case CrossKind::SendDone:
        sendDone(message, message.arrivalPs, false);
        return;
    case CrossKind::HandOver:
        tag.transit = true;
        tag.instance = takeSlot(transits, freeTransits);
        transits[tag.instance] = message;
        core->continueMessage(message.arrivalPs, message.next, allocateTag(tag));
        return;
    case CrossKind::Posted:
    case CrossKind::Arrival:
        break;
    }
    tag.crossed = true;
    if (message.pointToPoint) {
        tag.pointToPoint = true;
        tag.member = localSendOf(message);
    } else {
        tag.instance = takeSlot(crossArrivals, freeCrossArrivals);
        crossArrivals[tag.instance] =
            CrossArrival{message.collective, message.member, message.chunk, message.step};
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
    collectiveArrived(arrival);
}

void CommEngine::collectiveArrived(const CrossArrival& arrival)
{
    auto found = instanceByKey.find(arrival.collective);
    if (found == instanceByKey.end()) {
        earlyCollectives[arrival.collective].push_back(arrival);
        return;
    }
    arriveFromAnotherProcess(found->second, arrival);
}

void CommEngine::arriveFromAnotherProcess(std::uint32_t index, const CrossArrival& arrival)
{
    const Instance& instance = instances[index];
    if (arrival.member >= instance.members.size() || arrival.chunk >= instance.split.count)
        throw Error("fabric: a message from another process names member " +
                    std::to_string(arrival.member) + " and chunk " + std::to_string(arrival.chunk) +
                    " of a collective of " + std::to_string(instance.members.size()) +
                    " members and " + std::to_string(instance.split.count) +
                    " chunks (a broken partition)");
    arrive(index, arrival.member, arrival.chunk, arrival.step);
}

void CommEngine::transitDelivered(const Tag& tag)
{
    const CrossMessage message = transits[tag.instance];
    freeTransits.push_back(tag.instance);
    if (!message.pointToPoint) {
        collectiveArrived(
            CrossArrival{message.collective, message.member, message.chunk, message.step});
        return;
    }
    const std::uint32_t send = localSendOf(message);
    ++p2pCount;
    pointToPoint.arrived(send);
}

} // namespace etsim::net
