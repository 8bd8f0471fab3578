#include "models/net/PointToPoint.h"

#include "kernel/Error.h"
#include "kernel/FreeSlots.h"

#include <string>

namespace etsim::net {

void PointToPoint::postSend(std::uint64_t token,
                            NodeId node,
                            std::uint32_t src,
                            std::uint32_t dst,
                            std::uint64_t bytes,
                            std::uint64_t tag,
                            bool rendezvous)
{
    const std::uint32_t id =
        newSend(SendRecord{token, node, src, bytes, false, false, 0, false, dst, tag});
    if (!rendezvous)
        startSend(id);
    enqueue(ChannelKey{src, dst, tag}, id, true);
}

std::uint32_t PointToPoint::newSend(const SendRecord& record)
{
    const std::uint32_t id = takeSlot(freeSends, sends);
    sends[id] = record;
    return id;
}

std::uint32_t PointToPoint::postRemoteSend(std::uint64_t token,
                                           NodeId node,
                                           std::uint32_t src,
                                           std::uint32_t dst,
                                           std::uint64_t bytes,
                                           std::uint64_t tag)
{
    SendRecord record{token, node, src, bytes, false, false, 0, false, dst, tag};
    record.remote = true;
    const std::uint32_t id = newSend(record);
    startSend(id);
    return id;
}

std::uint32_t PointToPoint::postForeignSend(
    NodeId node, std::uint32_t src, std::uint32_t dst, std::uint64_t bytes, std::uint64_t tag)
{
    SendRecord record{0, node, src, bytes, false, false, 0, true, dst, tag};
    record.foreign = true;
    const std::uint32_t id = newSend(record);
    enqueue(ChannelKey{src, dst, tag}, id, true);
    return id;
}

void PointToPoint::postRecv(std::uint64_t token,
                            NodeId node,
                            std::uint32_t src,
                            std::uint32_t dst,
                            std::uint64_t bytes,
                            std::uint64_t tag)
{
    const std::uint32_t id = takeSlot(freeRecvs, recvs);
    recvs[id] = RecvRecord{token, node, dst, bytes};
    enqueue(ChannelKey{src, dst, tag}, id, false);
}

void PointToPoint::enqueue(const ChannelKey& key, std::uint32_t id, bool send)
{
    Channel& channel = channels[key];
    (send ? channel.sends : channel.recvs).push_back(id);
    match(channel);
    // A channel lives only while something waits on it: pipelines use a new tag per
    // micro-batch, and kept empty channels (two deques each) grew with the trace.
    if (channel.sends.empty() && channel.recvs.empty())
        channels.erase(key);
}

void PointToPoint::match(Channel& channel)
{
    while (!channel.sends.empty() && !channel.recvs.empty()) {
        std::uint32_t sendId = channel.sends.front();
        std::uint32_t recvId = channel.recvs.front();
        SendRecord& send = sends[sendId];
        const RecvRecord& recv = recvs[recvId];
        if (send.bytes != recv.bytes)
            throw Error(
                "fabric: send rank " + std::to_string(send.rank) + " node " +
                std::to_string(toUnderlying(send.node)) + " (" + std::to_string(send.bytes) +
                " B) matches recv rank " + std::to_string(recv.rank) + " node " +
                std::to_string(toUnderlying(recv.node)) + " (" + std::to_string(recv.bytes) +
                " B), but the sizes differ; a send and its recv must agree on comm_size");
        channel.sends.pop_front();
        channel.recvs.pop_front();
        send.matched = true;
        send.recv = recvId;
        if (!send.started)
            startSend(sendId);
        if (send.arrived)
            completeRecvOf(sendId);
    }
}

void PointToPoint::startSend(std::uint32_t id)
{
    SendRecord& send = sends[id];
    send.started = true;
    start(id, send.rank, send.dst, send.bytes);
}

void PointToPoint::completeRecvOf(std::uint32_t sendId)
{
    std::uint32_t recvId = sends[sendId].recv;
    std::uint64_t token = recvs[recvId].token;
    freeSends.push_back(sendId);
    freeRecvs.push_back(recvId);
    complete(token);
}

void PointToPoint::arrived(std::uint32_t id)
{
    SendRecord& send = sends[id];
    send.arrived = true;
    const std::uint64_t token = send.token;
    const bool foreign = send.foreign;
    if (send.remote)
        freeSends.push_back(id);
    else if (send.matched)
        completeRecvOf(id);
    if (!foreign)
        complete(token);
}

} // namespace etsim::net
