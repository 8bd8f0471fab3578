#include "platforms/partition/PartitionSync.h"

#include "cosim/wire/Bytes.h"
#include "kernel/Error.h"

#include <algorithm>
#include <exception>

namespace etsim::platform {

namespace {

// A round carries at most this many messages (about 1.5 GiB, under MPI's 2 GiB per message).
constexpr std::uint64_t maxRoundMessages = 1U << 24;
// The fewest bytes a message takes on the wire (kind, arrival, src, dst, via, a collective's
// four fields): a count the remaining bytes cannot hold is refused before anything is
// allocated for it.
constexpr std::uint64_t smallestMessageBytes = 1 + 8 + 3 * 4 + 8 + 3 * 4;

// A message's first byte: bit 0 = point-to-point, bits 1-2 = its net::CrossKind.
enum : std::uint8_t { pointToPointBit = 1, kindShift = 1, largestKind = 3 };

std::uint64_t saturatingAdd(std::uint64_t a, std::uint64_t b)
{
    return a > neverPs - b ? neverPs : a + b;
}

} // namespace

std::vector<std::uint8_t> encodeRound(const PartitionRound& round)
{
    if (round.messages.size() > maxRoundMessages)
        throw Error("partitions: one round would carry " + std::to_string(round.messages.size()) +
                    " messages to one process, more than the " + std::to_string(maxRoundMessages) +
                    " a ROUND holds; split the run over more processes or run it in one");
    std::vector<std::uint8_t> bytes;
    bytes.reserve(40 + round.messages.size() * 57);
    cosim::ByteWriter out(bytes);
    out.u64(round.lowerBoundPs);
    out.u64(round.sentThisRound);
    out.u64(round.nowPs);
    out.u64(round.messages.size());
    for (const net::CrossMessage& message : round.messages) {
        out.u8(static_cast<std::uint8_t>((message.pointToPoint ? pointToPointBit : 0) |
                                         static_cast<unsigned>(message.kind) << kindShift));
        out.u64(message.arrivalPs);
        out.u32(message.src);
        out.u32(message.dst);
        out.u32(message.via);
        if (message.pointToPoint) {
            out.u64(message.tag);
            out.u64(message.bytes);
            out.u64(message.node);
            out.u32(message.sendId);
        } else {
            out.u64(message.collective);
            out.u32(message.member);
            out.u32(message.chunk);
            out.u32(message.step);
        }
        if (message.kind == net::CrossKind::HandOver) {
            out.u32(message.next.hop);
            out.u64(message.next.requestedPs);
            out.u64(message.next.wireBytes);
            out.u64(message.next.order.key);
            out.u64(message.next.order.sub);
        }
    }
    return bytes;
}

PartitionRound decodeRound(const std::vector<std::uint8_t>& bytes, std::uint32_t from)
{
    try {
        cosim::ByteReader in(bytes.data(), bytes.size(), "partition ROUND");
        PartitionRound round;
        round.lowerBoundPs = in.u64("lower bound");
        round.sentThisRound = in.u64("sent");
        round.nowPs = in.u64("now");
        const std::uint64_t count = in.u64("message count");
        if (count > maxRoundMessages)
            throw Error("it announces " + std::to_string(count) + " messages (at most " +
                        std::to_string(maxRoundMessages) + ")");
        if (count > in.remaining() / smallestMessageBytes)
            throw Error("it announces " + std::to_string(count) + " messages in " +
                        std::to_string(in.remaining()) + " bytes");
        round.messages.resize(count);
        for (net::CrossMessage& message : round.messages) {
            const std::uint8_t kind = in.u8("kind");
            const unsigned crossKind = kind >> kindShift;
            if (crossKind > largestKind)
                throw Error("a message of unknown kind " + std::to_string(kind));
            message.pointToPoint = (kind & pointToPointBit) != 0;
            message.kind = static_cast<net::CrossKind>(crossKind);
            message.arrivalPs = in.u64("arrival");
            message.src = in.u32("src");
            message.dst = in.u32("dst");
            message.via = in.u32("via");
            if (message.pointToPoint) {
                message.tag = in.u64("tag");
                message.bytes = in.u64("bytes");
                message.node = in.u64("node");
                message.sendId = in.u32("send id");
            } else {
                message.collective = in.u64("collective");
                message.member = in.u32("member");
                message.chunk = in.u32("chunk");
                message.step = in.u32("step");
            }
            if (message.kind == net::CrossKind::HandOver) {
                message.next.src = message.src;
                message.next.dst = message.dst;
                message.next.via = message.via;
                message.next.hop = in.u32("hop");
                message.next.requestedPs = in.u64("requested");
                message.next.wireBytes = in.u64("wire bytes");
                message.next.order.key = in.u64("order key");
                message.next.order.sub = in.u64("order");
            }
        }
        in.expectEnd();
        return round;
    } catch (const std::exception& error) {
        throw Error("partition " + std::to_string(from) + " sent a broken ROUND: " + error.what());
    }
}

PartitionSync::PartitionSync(std::uint32_t partitions,
                             std::uint32_t self,
                             std::uint64_t lookaheadPs)
    : self(self), lookahead(lookaheadPs), outbox(partitions)
{
    if (lookaheadPs == 0)
        throw Error("partitions: the lookahead must be > 0 (PartitionPlan refuses a cut "
                    "without latency)");
    if (self >= partitions)
        throw Error("partitions: process " + std::to_string(self) + " of " +
                    std::to_string(partitions));
}

void PartitionSync::depart(std::uint32_t peer, const net::CrossMessage& message)
{
    outbox.at(peer).push_back(message);
    ++sentTotal;
}

std::vector<PartitionRound> PartitionSync::takeRounds(std::uint64_t nextEventPs,
                                                      std::uint64_t nowPs)
{
    std::uint64_t sent = 0;
    ownBound = nextEventPs;
    for (const std::vector<net::CrossMessage>& messages : outbox) {
        sent += messages.size();
        for (const net::CrossMessage& message : messages)
            ownBound = std::min(ownBound, message.arrivalPs);
    }
    std::vector<PartitionRound> rounds(outbox.size());
    for (std::uint32_t peer = 0; peer < outbox.size(); ++peer) {
        if (peer == self)
            continue;
        PartitionRound& round = rounds[peer];
        round.lowerBoundPs = ownBound;
        round.sentThisRound = sent;
        round.nowPs = nowPs;
        round.messages.swap(outbox[peer]);
    }
    return rounds;
}

void PartitionSync::receiveRounds(const std::vector<PartitionRound>& rounds)
{
    std::uint64_t result = ownBound;
    for (std::uint32_t peer = 0; peer < rounds.size(); ++peer) {
        if (peer == self)
            continue;
        const PartitionRound& round = rounds[peer];
        for (const net::CrossMessage& message : round.messages)
            if (message.arrivalPs < round.lowerBoundPs)
                throw Error("partition " + std::to_string(peer) + " sent a message arriving at " +
                            std::to_string(message.arrivalPs) + " ps, before its own lower " +
                            "bound of " + std::to_string(round.lowerBoundPs) + " ps");
        receivedTotal += round.messages.size();
        result = std::min(result, round.lowerBoundPs);
    }
    lowest = result;
}

std::uint64_t PartitionSync::bound() const
{
    return saturatingAdd(lowest, lookahead);
}

} // namespace etsim::platform
