#include "models/net/CommEngine.h"

#include "kernel/Error.h"
#include "models/net/topology/TopologyFactory.h"

#include <cmath>
#include <limits>
#include <string>

namespace etsim::net {

namespace {

constexpr std::uint64_t maxSequence = (1ULL << 40) - 1;
constexpr std::uint64_t maxGroup = (1ULL << 24) - 1;

std::string where(const EtNodeInfo& info)
{
    return "rank " + std::to_string(toUnderlying(info.rank)) + " node " +
           std::to_string(toUnderlying(info.node));
}

} // namespace

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
          [this](std::uint64_t token) { complete(token); },
          [this](std::uint32_t send, std::uint32_t src, std::uint32_t dst, std::uint64_t bytes) {
              Tag tag;
              tag.pointToPoint = true;
              tag.member = send;
              core->send(src, dst, bytes, allocateTag(tag));
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
        stride *= dim.size;
    }
}

CommEngine::~CommEngine() = default;

std::uint32_t CommEngine::allocateTag(const Tag& tag)
{
    if (!freeTags.empty()) {
        std::uint32_t index = freeTags.back();
        freeTags.pop_back();
        tags[index] = tag;
        return index;
    }
    tags.push_back(tag);
    return static_cast<std::uint32_t>(tags.size() - 1);
}

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
        startingTag = info.tag;
        startingNode = info.node;
        pointToPoint.postRemoteSend(token, info.node, src, dst, info.bytes);
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

// ---------------------------------------------------------------------------------------------
// Collectives.

std::uint32_t CommEngine::createInstance(const EtNodeInfo& info, std::uint64_t key)
{
    std::uint32_t index;
    if (!freeInstances.empty()) {
        index = freeInstances.back();
        freeInstances.pop_back();
    } else {
        index = static_cast<std::uint32_t>(instances.size());
        instances.emplace_back();
    }
    Instance fresh;
    fresh.live = true;
    fresh.key = key;
    fresh.group = info.group ? toUnderlying(*info.group) : 0;
    fresh.sequence = info.groupSequence;
    fresh.type = info.collective;
    fresh.bytes = info.bytes;
    fresh.startPs = calendar.now();
    fresh.firstNode = info.node;
    fresh.firstRank = toUnderlying(info.rank);

    const std::vector<RankId>* members = info.groupRanks.get();
    bool identity = members == nullptr;
    if (members && members->size() == rankCount) {
        identity = true;
        for (std::uint32_t position = 0; position < rankCount; ++position)
            if (toUnderlying((*members)[position]) != position) {
                identity = false;
                break;
            }
    }
    fresh.global = identity;
    std::vector<PlanDim> dims;
    try {
        if (identity) {
            for (std::uint32_t dim = 0; dim < settings.dimCount(); ++dim) {
                bool involved = info.involvedDims == 0 || (info.involvedDims >> dim & 1U) != 0;
                std::uint32_t size = settings.dimSize(dim);
                if (!involved || size <= 1)
                    continue;
                const CollectiveAlgorithmIf* custom =
                    settings.customAlgorithm(info.collective, dim);
                PlanDim planDim{dim,
                                size,
                                custom ? custom
                                       : &algorithms.get(settings.algorithm(info.collective, dim),
                                                         info.collective)};
                if (info.collective == CollectiveType::AllReduce &&
                    !settings.allReducePhases.empty())
                    planDim.scatterGather = &algorithms.get(settings.allReducePhases.at(dim),
                                                            CollectiveType::ReduceScatter);
                dims.push_back(planDim);
            }
        } else {
            if (members->empty())
                throw Error("the group has no members");
            for (RankId rank : *members)
                if (toUnderlying(rank) >= rankCount)
                    throw Error("group member rank " + std::to_string(toUnderlying(rank)) +
                                " is out of range (the fabric has " + std::to_string(rankCount) +
                                " ranks)");
            for (RankId rank : *members)
                fresh.ranks.push_back(toUnderlying(rank));
            settings.algorithm(info.collective, 0); // rejects unsupported types
            if (members->size() > 1)
                dims.push_back(PlanDim{0,
                                       static_cast<std::uint32_t>(members->size()),
                                       &algorithms.get(settings.groupAlgorithm)});
        }
        fresh.split = splitIntoChunks(info.collective, info.bytes, settings.chunks, rankCount);
        fresh.phases = planPhases(info.collective, fresh.split.bytes, dims, settings.optimization);
    } catch (const Error& error) {
        freeInstances.push_back(index);
        throw Error("fabric: " + where(info) + ": " + toString(info.collective) + " of " +
                    std::to_string(info.bytes) + " B: " + error.what());
    }
    std::uint32_t memberCount =
        identity ? rankCount : static_cast<std::uint32_t>(fresh.ranks.size());
    // Global instances: one queue per dimension, and one per dimension for in-switch
    // all-gathers (queueOf).
    std::uint32_t queueCount = identity ? 2 * settings.dimCount() : 1;
    fresh.members.resize(memberCount);
    for (MemberState& member : fresh.members)
        member.queues.resize(queueCount);
    fresh.chunks.resize(static_cast<std::size_t>(memberCount) * fresh.split.count);
    fresh.localMembers = memberCount;
    if (partition != nullptr) {
        fresh.localMembers = 0;
        for (std::uint32_t member = 0; member < memberCount; ++member)
            fresh.localMembers += partition->isLocal(rankOf(fresh, member)) ? 1 : 0;
    }
    instances[index] = std::move(fresh);
    instanceByKey.emplace(key, index);
    // Messages from other processes that came before any local member posted.
    if (auto early = earlyCollectives.find(key); early != earlyCollectives.end()) {
        const std::vector<CrossArrival> arrivals = std::move(early->second);
        earlyCollectives.erase(early);
        for (const CrossArrival& arrival : arrivals)
            arrive(index, arrival.member, arrival.chunk, arrival.step);
    }
    return index;
}

std::uint32_t CommEngine::memberIndex(const Instance& instance, std::uint32_t rank) const
{
    if (instance.global)
        return rank;
    for (std::uint32_t member = 0; member < instance.ranks.size(); ++member)
        if (instance.ranks[member] == rank)
            return member;
    return std::numeric_limits<std::uint32_t>::max();
}

std::uint32_t CommEngine::rankOf(const Instance& instance, std::uint32_t member) const
{
    return instance.global ? member : instance.ranks[member];
}

std::uint32_t
CommEngine::phaseIndex(const Instance& instance, const Phase& phase, std::uint32_t member) const
{
    if (!instance.global || settings.topologyKind == TopologyKind::FatTree)
        return member;
    return (member / strides[phase.dim]) % settings.dims[phase.dim].size;
}

std::uint32_t CommEngine::phasePeer(const Instance& instance,
                                    const Phase& phase,
                                    std::uint32_t member,
                                    std::uint32_t peer) const
{
    if (!instance.global || settings.topologyKind == TopologyKind::FatTree)
        return peer;
    std::uint32_t stride = strides[phase.dim];
    std::uint32_t coordinate = (member / stride) % settings.dims[phase.dim].size;
    return member - coordinate * stride + peer * stride;
}

void CommEngine::postCollective(const EtNodeInfo& info, std::uint64_t token)
{
    std::uint64_t group = info.group ? toUnderlying(*info.group) + 1ULL : 0;
    if (group > maxGroup || info.groupSequence > maxSequence)
        throw Error("fabric: " + where(info) + ": group id or sequence number too large");
    std::uint64_t key = group << 40 | info.groupSequence;
    auto found = instanceByKey.find(key);
    std::uint32_t index = found != instanceByKey.end() ? found->second : createInstance(info, key);
    Instance& instance = instances[index];
    if (instance.type != info.collective || instance.bytes != info.bytes)
        throw Error("fabric: " + where(info) + ": collective sequence " +
                    std::to_string(info.groupSequence) + " of its group is " +
                    toString(info.collective) + " of " + std::to_string(info.bytes) +
                    " B here, but rank " + std::to_string(instance.firstRank) + " node " +
                    std::to_string(toUnderlying(instance.firstNode)) + " posted " +
                    toString(instance.type) + " of " + std::to_string(instance.bytes) +
                    " B; every member must issue the same collectives in the same order");
    std::uint32_t member = memberIndex(instance, toUnderlying(info.rank));
    if (member >= instance.members.size())
        throw Error("fabric: " + where(info) + ": the rank is not a member of the group of its " +
                    toString(info.collective) + " (sequence " + std::to_string(info.groupSequence) +
                    ")");
    MemberState& state = instance.members[member];
    if (state.posted)
        throw Error("fabric: " + where(info) + ": the rank posted collective sequence " +
                    std::to_string(info.groupSequence) +
                    " of its group twice; groupSequence must count up per group");
    state.posted = true;
    state.token = token;
    state.node = info.node;
    ++instance.posted;
    ++pendingNodes;
    if (instance.phases.empty()) {
        finishMember(index, member);
        return;
    }
    std::uint32_t chunkCount = instance.split.count;
    for (std::uint32_t chunk = 0; chunk < chunkCount; ++chunk)
        enterPhase(index, member, chunk);
}

std::uint32_t CommEngine::queueOf(const Instance& instance, const Phase& phase) const
{
    if (!instance.global)
        return 0;
    // NCCL's NVLS kernels multicast one slice while other warps reduce-scatter the next, and the
    // two use opposite link directions: an in-switch all-gather is admitted by its own queue, so
    // a chunk's multicast runs beside later chunks' in-switch reduce-scatters.
    if (phase.shape.type == CollectiveType::AllGather &&
        phase.algorithm == &algorithms.get(AlgorithmKind::InSwitch, CollectiveType::AllGather))
        return settings.dimCount() + phase.dim;
    return phase.dim;
}

void CommEngine::enterPhase(std::uint32_t index, std::uint32_t member, std::uint32_t chunk)
{
    Instance& instance = instances[index];
    ChunkState& state = instance.chunks[member * instance.split.count + chunk];
    const Phase& phase = instance.phases[state.phase];
    DimQueue& queue = instance.members[member].queues[queueOf(instance, phase)];
    if (queue.active < settings.activeChunks) {
        ++queue.active;
        startPhase(index, member, chunk);
    } else {
        queue.waiting.push_back(chunk);
    }
}

void CommEngine::startPhase(std::uint32_t index, std::uint32_t member, std::uint32_t chunk)
{
    std::uint64_t delay = settings.endpointDelay.ps();
    if (delay > 0) {
        Tag tag;
        tag.instance = index;
        tag.member = member;
        tag.chunk = chunk;
        tag.phaseStart = true;
        schedule(delay, tag);
    } else {
        beginStep(index, member, chunk);
    }
}

void CommEngine::beginStep(std::uint32_t index, std::uint32_t member, std::uint32_t chunk)
{
    Instance& instance = instances[index];
    ChunkState& state = instance.chunks[member * instance.split.count + chunk];
    const Phase& phase = instance.phases[state.phase];
    PhaseShape shape = phase.shape;
    shape.variant = chunk;
    scratch.clear();
    phase.algorithm->plan(shape, phaseIndex(instance, phase, member), state.step, scratch);
    std::uint32_t src = rankOf(instance, member);
    for (const StepSend& send : scratch.sends) {
        std::uint32_t peer = phasePeer(instance, phase, member, send.peer);
        Tag tag;
        tag.instance = index;
        tag.member = peer;
        tag.chunk = chunk;
        tag.step = phase.firstStep + send.peerStep;
        core->send(src, rankOf(instance, peer), send.bytes, allocateTag(tag));
    }
    state.expected = scratch.receives;
    state.reduced = scratch.reducedBytes;
    state.waiting = true;
    if (scratch.inSwitch)
        contribute(index, member, chunk, scratch.switchBytes);
    checkStep(index, member, chunk);
}

void CommEngine::contribute(std::uint32_t index,
                            std::uint32_t member,
                            std::uint32_t chunk,
                            std::uint64_t bytes)
{
    Instance& instance = instances[index];
    const ChunkState& state = instance.chunks[member * instance.split.count + chunk];
    const Phase& phase = instance.phases[state.phase];
    std::uint32_t base = phasePeer(instance, phase, member, 0);
    std::uint32_t step = phase.firstStep + state.step;
    std::uint32_t size = phase.shape.size;
    std::vector<std::uint32_t> line;
    for (std::uint32_t position = 0; position < size; ++position)
        line.push_back(rankOf(instance, phasePeer(instance, phase, member, position)));
    Tag tag;
    tag.instance = index;
    tag.chunk = chunk;
    tag.step = step;
    if (phase.shape.type == CollectiveType::AllGather) {
        // A multicast needs only its sender's data: it starts at once, to every member.
        tag.member = base;
        tag.multicast = true;
        core->sendSwitchStream({rankOf(instance, member)}, line, bytes, allocateTag(tag));
        return;
    }
    SwitchKey key{index, chunk, step, base};
    std::uint32_t& count = switchContributions[key];
    if (++count < size)
        return;
    // The last member of the switch line has arrived: the reduction streams through the
    // switch.
    switchContributions.erase(key);
    if (phase.shape.type == CollectiveType::ReduceScatter) {
        // One stream per shard, up every member's uplink and down to the shard's owner.
        for (std::uint32_t position = 0; position < size; ++position) {
            tag.member = phasePeer(instance, phase, member, position);
            core->sendSwitchStream(line, {line[position]}, bytes, allocateTag(tag));
        }
        return;
    }
    // Whole all-reduce: up every member's uplink and down every member's downlink at once.
    std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs;
    for (std::uint32_t position = 0; position < size; ++position)
        pairs.emplace_back(line[position], line[(position + 1) % size]);
    tag.member = base;
    tag.multicast = true;
    core->sendStream(pairs, bytes, allocateTag(tag));
}

void CommEngine::checkStep(std::uint32_t index, std::uint32_t member, std::uint32_t chunk)
{
    Instance& instance = instances[index];
    ChunkState& state = instance.chunks[member * instance.split.count + chunk];
    if (!state.waiting || state.received < state.expected)
        return;
    state.waiting = false;
    state.received -= state.expected;
    std::uint64_t delay = delayPs(state.reduced);
    if (delay > 0) {
        Tag tag;
        tag.instance = index;
        tag.member = member;
        tag.chunk = chunk;
        schedule(delay, tag);
    } else {
        ready.push_back(ReadyStep{index, member, chunk});
    }
}

void CommEngine::pullEarly(ChunkState& state, std::uint32_t globalStep)
{
    for (std::size_t at = 0; at < state.early.size(); ++at)
        if (state.early[at].first == globalStep) {
            state.received += state.early[at].second;
            state.early[at] = state.early.back();
            state.early.pop_back();
            return;
        }
}

void CommEngine::endStep(std::uint32_t index, std::uint32_t member, std::uint32_t chunk)
{
    Instance& instance = instances[index];
    ChunkState& state = instance.chunks[member * instance.split.count + chunk];
    const Phase& phase = instance.phases[state.phase];
    ++state.step;
    if (state.step < phase.steps) {
        pullEarly(state, phase.firstStep + state.step);
        beginStep(index, member, chunk);
        return;
    }
    DimQueue& queue = instance.members[member].queues[queueOf(instance, phase)];
    --queue.active;
    ++state.phase;
    state.step = 0;
    bool chunkDone = state.phase == instance.phases.size();
    if (!chunkDone)
        pullEarly(state, instance.phases[state.phase].firstStep);
    if (!queue.waiting.empty()) {
        std::uint32_t next = queue.waiting.front();
        queue.waiting.pop_front();
        ++queue.active;
        startPhase(index, member, next);
    }
    if (!chunkDone) {
        enterPhase(index, member, chunk);
        return;
    }
    MemberState& owner = instances[index].members[member];
    ++owner.chunksDone;
    if (owner.chunksDone == instances[index].split.count)
        finishMember(index, member);
}

void CommEngine::finishMember(std::uint32_t index, std::uint32_t member)
{
    Instance& instance = instances[index];
    std::uint64_t token = instance.members[member].token;
    ++instance.done;
    // A partitioned run records each process's share (its members' first post and last
    // completion); the shares are merged into one record per collective at the end.
    if (instance.done == instance.localMembers) {
        CollectiveRecord record;
        record.type = instance.type;
        record.bytes = instance.bytes;
        record.ranks = static_cast<std::uint32_t>(instance.members.size());
        record.group = instance.group;
        record.sequence = instance.sequence;
        record.startPs = instance.startPs;
        record.endPs = calendar.now();
        finished.push_back(record);
        ++collectiveCount;
        instanceByKey.erase(instance.key);
        instances[index] = Instance();
        freeInstances.push_back(index);
    }
    complete(token);
}

std::uint64_t CommEngine::delayPs(std::uint64_t reducedBytes) const
{
    std::uint64_t delay = settings.endpointDelay.ps();
    double memory = settings.localMemoryBandwidth.bytesPerSecond();
    if (reducedBytes == 0 || memory <= 0.0)
        return delay;
    double bytes = static_cast<double>(reducedBytes);
    if (settings.fidelity == Fidelity::AstraAware || settings.fidelity == Fidelity::AstraUnaware)
        // ASTRA-sim: 3 * floor(m / local_mem_bw) ns, the bandwidth in bytes per ns.
        return delay + 3000 * static_cast<std::uint64_t>(std::floor(bytes / (memory / 1e9)));
    return delay + static_cast<std::uint64_t>(std::llround(3.0 * bytes / (memory * 1e-12)));
}

void CommEngine::schedule(std::uint64_t delay, const Tag& tag)
{
    calendar.schedule(calendar.now() + delay, EventKind::EngineTask, allocateTag(tag), 0);
}

void CommEngine::delivered(std::uint64_t cookie)
{
    auto tagIndex = static_cast<std::uint32_t>(cookie);
    Tag tag = tags[tagIndex];
    freeTags.push_back(tagIndex);
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

void CommEngine::arrive(std::uint32_t index,
                        std::uint32_t member,
                        std::uint32_t chunk,
                        std::uint32_t step)
{
    Instance& instance = instances[index];
    ChunkState& state = instance.chunks[member * instance.split.count + chunk];
    if (state.phase >= instance.phases.size())
        throw Error("fabric: internal: a collective message reached a finished chunk");
    std::uint32_t current = instance.phases[state.phase].firstStep + state.step;
    if (step == current) {
        ++state.received;
        checkStep(index, member, chunk);
        return;
    }
    if (step < current)
        throw Error("fabric: internal: a collective message arrived for a finished step");
    for (auto& entry : state.early)
        if (entry.first == step) {
            ++entry.second;
            return;
        }
    state.early.emplace_back(step, 1);
}

void CommEngine::drainReady()
{
    if (draining)
        return;
    draining = true;
    while (!ready.empty()) {
        ReadyStep step = ready.back();
        ready.pop_back();
        endStep(step.instance, step.member, step.chunk);
    }
    draining = false;
}

void CommEngine::dispatch(const CalendarEvent& event)
{
    if (event.kind == EventKind::EngineTask) {
        Tag tag = tags[event.index];
        freeTags.push_back(event.index);
        if (tag.crossed)
            crossArrived(tag);
        else if (tag.phaseStart)
            beginStep(tag.instance, tag.member, tag.chunk);
        else
            endStep(tag.instance, tag.member, tag.chunk);
    } else {
        core->handle(event);
    }
    drainReady();
}

// ---------------------------------------------------------------------------------------------
// Partitioned runs.

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

void CommEngine::runUntil(std::uint64_t limitPs)
{
    drainReady();
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
