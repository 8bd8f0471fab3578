// The engine's construction, posting, point-to-point, delivery and run loop. The collective
// state machine (instances, phases, steps, in-switch contributions) is CommEngineCollectives.cpp.
#include "models/net/CommEngine.h"

#include "kernel/Error.h"
#include "models/net/topology/TopologyFactory.h"

#include <string>

namespace etsim::net {

std::string CommEngine::where(const EtNodeInfo& info)
{
    return where(toUnderlying(info.rank), info.node);
}

std::string CommEngine::where(std::uint32_t rank, NodeId node)
{
    return "rank " + std::to_string(rank) + " node " + std::to_string(toUnderlying(node));
}

double CollectiveRecord::algorithmBandwidth() const
{
    if (endPs <= startPs)
        return 0.0;
    double total = static_cast<double>(bytes);
    if (type == CollectiveType::AllGather)
        total *= ranks;
    return total / (static_cast<double>(endPs - startPs) * 1e-12);
}

double CollectiveRecord::busBandwidth() const
{
    double n = ranks;
    double factor = 0.0;
    switch (type) {
    case CollectiveType::AllReduce:
        factor = 2.0 * (n - 1.0) / n;
        break;
    case CollectiveType::ReduceScatter:
    case CollectiveType::AllGather:
    case CollectiveType::AllToAll:
        factor = (n - 1.0) / n;
        break;
    case CollectiveType::Broadcast:
    case CollectiveType::Reduce:
        factor = 1.0;
        break;
    default:
        break;
    }
    return algorithmBandwidth() * factor;
}

CommEngine::CommEngine(const NetConfig& config, std::uint32_t ranks)
    : settings(config)
    , rankCount(ranks)
    , pointToPoint(
          [this](std::uint64_t token) { pointToPointDone(token); },
          [this](std::uint32_t send, std::uint32_t src, std::uint32_t dst, std::uint64_t bytes) {
              Tag tag;
              tag.pointToPoint = true;
              tag.member = send;
              try {
                  // A send's node names it in every process (MessageOrder).
                  const MessageOrder order{toUnderlying(pointToPoint.sendInfo(send).node),
                                           std::uint64_t{1} << 63};
                  core->send(src, dst, bytes, allocateTag(tag), order);
              } catch (const Error& error) {
                  throw Error("fabric: " + where(src, pointToPoint.sendInfo(send).node) +
                              ": send of " + std::to_string(bytes) + " B to rank " +
                              std::to_string(dst) + ": " + error.what());
              }
          })
{
    if (ranks == 0)
        throw Error("CommEngine: the fabric needs at least one rank");
    if (settings.endpointCount() != ranks)
        settings.topologyLocation.fail(
            "the topology has " + std::to_string(settings.endpointCount()) +
            " endpoints but the run has " + std::to_string(ranks) +
            " ranks; make the product of the dimension sizes (or fat_tree.endpoints) equal "
            "the rank count");
    net = makeTopology(settings);
    MessageSink& sink = *this;
    core = std::make_unique<NetworkCore>(*net, settings, calendar, sink);
    std::uint32_t stride = 1;
    for (const DimConfig& dim : settings.dims) {
        strides.push_back(stride);
        spansAllRanks.push_back(stride == 1 && dim.size == ranks);
        stride *= dim.size;
    }
}

CommEngine::~CommEngine() = default;

void CommEngine::complete(std::uint64_t token)
{
    --pendingNodes;
    if (onComplete)
        onComplete(token);
}

void CommEngine::post(const EtNodeInfo& info, std::uint64_t token)
{
    if (toUnderlying(info.rank) >= rankCount)
        throw Error("fabric: " + where(info) + ": the rank is out of range (the fabric has " +
                    std::to_string(rankCount) + " ranks)");
    switch (info.kind) {
    case NodeKind::Collective:
        postCollective(info, token);
        break;
    case NodeKind::Send:
        postSend(info, token);
        break;
    case NodeKind::Recv:
        postRecv(info, token);
        break;
    default:
        throw Error("fabric: " + where(info) + ": a " + toString(info.kind) +
                    " node reached the fabric, which runs only send, recv and collective nodes");
    }
    drainReady();
}

void CommEngine::settle()
{
    drainReady();
    core->settle();
}

// ---------------------------------------------------------------------------------------------
// Point-to-point.

void CommEngine::postSend(const EtNodeInfo& info, std::uint64_t token)
{
    if (!info.peer || toUnderlying(*info.peer) >= rankCount)
        throw Error("fabric: " + where(info) + ": send needs a destination rank below " +
                    std::to_string(rankCount));
    std::uint32_t src = toUnderlying(info.rank);
    std::uint32_t dst = toUnderlying(*info.peer);
    const NodeAttribute::Value* eager = info.findAttribute(eagerAttribute);
    const bool rendezvous = eager != nullptr && std::holds_alternative<std::int64_t>(*eager) &&
                            std::get<std::int64_t>(*eager) == 0;
    if (partition != nullptr && !partition->isLocal(dst)) {
        if (rendezvous)
            throw Error("fabric: " + where(info) +
                        ": a rendezvous send (attribute eager 0) to "
                        "rank " +
                        std::to_string(dst) +
                        ", which another process simulates, "
                        "cannot run partitioned: it starts when the recv is posted, with no "
                        "latency to synchronise on; make the send eager or run in one process");
        ++pendingNodes;
        announceSend(info,
                     pointToPoint.postRemoteSend(token, info.node, src, dst, info.bytes, info.tag));
        return;
    }
    ++pendingNodes;
    pointToPoint.postSend(token, info.node, src, dst, info.bytes, info.tag, rendezvous);
}

void CommEngine::postRecv(const EtNodeInfo& info, std::uint64_t token)
{
    if (!info.peer || toUnderlying(*info.peer) >= rankCount)
        throw Error("fabric: " + where(info) + ": recv needs a source rank below " +
                    std::to_string(rankCount));
    ++pendingNodes;
    pointToPoint.postRecv(
        token, info.node, toUnderlying(*info.peer), toUnderlying(info.rank), info.bytes, info.tag);
}

std::uint64_t CommEngine::delayPs(std::uint64_t reducedBytes)
{
    // Every step of a phase reduces the same size: the delay is priced once per size change.
    if (reducedBytes == lastDelay.reducedBytes)
        return lastDelay.delayPs;
    std::uint64_t delay = settings.endpointDelay.ps();
    double memory = settings.localMemoryBandwidth.bytesPerSecond();
    if (reducedBytes != 0 && memory > 0.0)
        delay += core->fidelity().reductionPs(reducedBytes, settings.localMemoryBandwidth);
    lastDelay = StepDelay{reducedBytes, delay};
    return delay;
}

void CommEngine::delivered(std::uint64_t cookie)
{
    const Tag tag = takeTag(cookie);
    if (tag.transit) {
        transitDelivered(tag);
        return;
    }
    if (tag.pointToPoint) {
        ++p2pCount;
        pointToPoint.arrived(tag.member);
        return;
    }
    if (!tag.multicast) {
        arrive(tag.instance, tag.member, tag.chunk, tag.step);
        return;
    }
    const Instance& instance = instances[tag.instance];
    for (const Phase& phase : instance.phases)
        if (tag.step >= phase.firstStep && tag.step < phase.firstStep + phase.steps) {
            for (std::uint32_t position = 0; position < phase.shape.size; ++position)
                arrive(tag.instance,
                       phasePeer(instance, phase, tag.member, position),
                       tag.chunk,
                       tag.step);
            return;
        }
    throw Error("fabric: internal: an in-switch result names no phase of its collective");
}

void CommEngine::drainReady()
{
    if (draining)
        return;
    draining = true;
    while (!ready.empty() || !programDone.empty()) {
        if (!ready.empty()) {
            ReadyStep step = ready.back();
            ready.pop_back();
            endStep(step.instance, step.member, step.chunk);
            continue;
        }
        auto [run, node] = programDone.front();
        programDone.pop_front();
        finishProgramNode(run, node);
    }
    draining = false;
}

void CommEngine::dispatch(const CalendarEvent& event)
{
    if (event.kind == EventKind::EngineTask) {
        Tag tag = tags[event.index];
        freeTags.push_back(event.index);
        if (tag.programNode)
            finishProgramNode(tag.instance, tag.member);
        else if (tag.crossed)
            crossArrived(tag);
        else if (tag.phaseStart)
            beginStep(tag.instance, tag.member, tag.chunk);
        else if (tag.collectiveStart)
            startChunks(tag.instance, tag.member);
        else
            endStep(tag.instance, tag.member, tag.chunk);
    } else {
        core->handle(event);
    }
    drainReady();
}

void CommEngine::runUntil(std::uint64_t limitPs)
{
    drainReady();
    // Rates must be set before an event runs or the clock moves; until then more posts of
    // this instant may come.
    if (limitPs > calendar.now() || (!calendar.empty() && calendar.nextTime() <= limitPs))
        core->settle();
    while (!calendar.empty() && calendar.nextTime() <= limitPs) {
        std::uint64_t instant = calendar.nextTime();
        while (!calendar.empty() && calendar.nextTime() == instant)
            dispatch(calendar.pop());
        core->settle();
    }
    calendar.advance(limitPs);
}

void CommEngine::run()
{
    drainReady();
    core->settle();
    while (!calendar.empty()) {
        std::uint64_t instant = calendar.nextTime();
        while (!calendar.empty() && calendar.nextTime() == instant)
            dispatch(calendar.pop());
        core->settle();
    }
}

} // namespace etsim::net
