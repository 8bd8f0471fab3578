// The collective state machine of CommEngine: an instance per (group, sequence), each member's
// chunks through the phases of HierarchicalPlan, per-dimension admission queues, steps that
// wait for exactly the messages their algorithm names, and in-switch contributions, whose
// streams the algorithm describes (CollectiveAlgorithmIf::switchStreams).
#include "kernel/Error.h"
#include "kernel/FreeSlots.h"
#include "models/net/CommEngine.h"
#include "models/net/collectives/PipelineDepth.h"

#include <algorithm>
#include <limits>
#include <string>
#include <string_view>

namespace etsim::net {

namespace {

constexpr std::uint64_t maxSequence = (1ULL << 40) - 1;
constexpr std::uint64_t maxGroup = (1ULL << 24) - 1;

} // namespace

std::uint32_t CommEngine::createInstance(const EtNodeInfo& info, std::uint64_t key)
{
    const std::uint32_t index = takeSlot(freeInstances, instances);
    // Built in its slot, over the buffers of the instance that used it before; marked live
    // once complete (a refused collective leaves the slot free).
    Instance& fresh = instances[index];
    recycle(fresh);
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
        for (std::size_t type = 0; type < configurableCollectives.size(); ++type)
            if (configurableCollectives[type] == info.collective &&
                !settings.missingAlgorithm[type].empty() &&
                settings.nodeProgram(info.collective, toUnderlying(info.node)) == nullptr)
                throw Error(settings.missingAlgorithm[type]);
        const CollectiveAlgorithmIf* whole =
            identity ? settings.wholeGroupAlgorithm(info.collective) : nullptr;
        if (whole) {
            // One phase over every rank, in rank order, whatever the dimensions.
            for (std::uint32_t dim = 0; dim < settings.dimCount(); ++dim)
                if (info.involvedDims != 0 && (info.involvedDims >> dim & 1U) == 0 &&
                    settings.dimSize(dim) > 1)
                    throw Error("the " + std::string(toString(info.collective)) +
                                " algorithm spans all dimensions (span: all), but this "
                                "collective leaves dimension " +
                                std::to_string(dim) +
                                " out (involved_dims); list an algorithm per dimension instead");
            PlanDim planDim{0, rankCount, whole};
            planDim.flat = true;
            dims.push_back(planDim);
        } else if (identity) {
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
        priceLatency(fresh);
        choosePipelineDepth(fresh, dims);
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
    resetMembers(fresh, memberCount, queueCount, fresh.split.count);
    fresh.localMembers = memberCount;
    if (partition != nullptr) {
        fresh.localMembers = 0;
        for (std::uint32_t member = 0; member < memberCount; ++member)
            fresh.localMembers += partition->isLocal(rankOf(fresh, member)) ? 1 : 0;
    }
    fresh.live = true;
    instanceByKey.emplace(key, index);
    // Messages from other processes that came before any local member posted.
    if (auto early = earlyCollectives.find(key); early != earlyCollectives.end()) {
        const std::vector<CrossArrival> arrivals = std::move(early->second);
        earlyCollectives.erase(early);
        for (const CrossArrival& arrival : arrivals)
            arriveFromAnotherProcess(index, arrival);
    }
    return index;
}

// A collective over every rank has a queue per member and dimension, each a deque that
// allocates when constructed: building each instance anew allocated thousands of them at 1,024
// ranks (most of the fabric's allocations). A slot's vectors therefore outlive the instance;
// everything else starts from its default.
void CommEngine::recycle(Instance& instance)
{
    Instance fresh;
    fresh.ranks = std::move(instance.ranks);
    fresh.ranks.clear();
    fresh.phases = std::move(instance.phases);
    fresh.phases.clear();
    fresh.members = std::move(instance.members);
    fresh.chunks = std::move(instance.chunks);
    fresh.stepLatencyPs = std::move(instance.stepLatencyPs);
    fresh.stepLatencyPs.clear();
    instance = std::move(fresh);
}

void CommEngine::resetMembers(Instance& instance,
                              std::uint32_t memberCount,
                              std::uint32_t queueCount,
                              std::uint32_t chunkCount)
{
    instance.members.resize(memberCount);
    for (MemberState& member : instance.members) {
        std::vector<DimQueue> queues = std::move(member.queues);
        member = MemberState();
        queues.resize(queueCount);
        for (DimQueue& queue : queues) {
            queue.active = 0;
            queue.waiting.clear();
        }
        member.queues = std::move(queues);
    }
    instance.chunks.resize(static_cast<std::size_t>(memberCount) * chunkCount);
    for (ChunkState& chunk : instance.chunks) {
        std::vector<std::pair<std::uint32_t, std::uint32_t>> early = std::move(chunk.early);
        early.clear();
        chunk = ChunkState();
        chunk.early = std::move(early);
    }
}

void CommEngine::priceLatency(Instance& instance) const
{
    if (!abilitiesOf(settings.fidelity).chargesLatency)
        return;
    bool any = false;
    for (const Phase& phase : instance.phases) {
        std::uint64_t step = 0;
        // Built-in algorithms only: a program's steps are its own (docs/network.md).
        if (AlgorithmKind kind = phase.algorithm->kind(); kind != AlgorithmKind::Custom) {
            auto index = static_cast<std::size_t>(kind);
            step = settings.stepLatency[index].ps();
            instance.baseLatencyPs =
                std::max(instance.baseLatencyPs, settings.baseLatency[index].ps());
        }
        instance.stepLatencyPs.push_back(step);
        any = any || step > 0;
    }
    if (!any)
        instance.stepLatencyPs.clear();
}

void CommEngine::choosePipelineDepth(Instance& instance, const std::vector<PlanDim>& dims) const
{
    if (settings.pipelineDepth != PipelineDepthMode::Auto ||
        !abilitiesOf(settings.fidelity).choosesPipelineDepth || !instance.global ||
        instance.phases.size() < 2)
        return;
    std::vector<PhaseCost> costs;
    StepPlan plan;
    for (std::size_t index = 0; index < instance.phases.size(); ++index) {
        const Phase& phase = instance.phases[index];
        if (phase.flat || phase.dim >= settings.dims.size())
            return;
        const DimConfig& dim = settings.dims[phase.dim];
        // What one member sends in the phase (members are alike in built-in algorithms; a
        // program's member 0 stands for the rest), per chunk.
        std::uint64_t sent = 0;
        for (std::uint32_t step = 0; step < phase.steps; ++step) {
            plan.clear();
            phase.algorithm->plan(phase.shape, 0, step, plan);
            for (const StepSend& send : plan.sends)
                sent += send.bytes;
            sent += plan.switchBytes;
        }
        const double rate = dim.effectiveBandwidth().bytesPerSecond();
        if (rate <= 0)
            return;
        // A step's messages cross two links through a switch, one elsewhere.
        const double route = (dim.kind == DimKind::Switch ? 2.0 : 1.0) * dim.latency.seconds();
        const double stepPs = instance.stepLatencyPs.empty()
                                  ? 0.0
                                  : static_cast<double>(instance.stepLatencyPs[index]);
        const double step =
            route + dim.nicLatency.seconds() + settings.endpointDelay.seconds() + stepPs * 1e-12;
        costs.push_back(PhaseCost{phase.dim,
                                  static_cast<double>(sent) * instance.split.count / rate,
                                  phase.steps * step});
    }
    const std::uint32_t depth =
        pipelineDepth(costs, settings.chunks, settings.activeChunks, maxChunks);
    if (depth == settings.chunks)
        return;
    instance.split = splitIntoChunks(instance.type, instance.bytes, depth, rankCount);
    instance.phases = planPhases(instance.type, instance.split.bytes, dims, settings.optimization);
    instance.stepLatencyPs.clear();
    instance.baseLatencyPs = 0;
    priceLatency(instance);
}

std::uint32_t CommEngine::memberIndex(const Instance& instance, std::uint32_t rank)
{
    if (instance.global)
        return rank;
    for (std::uint32_t member = 0; member < instance.ranks.size(); ++member)
        if (instance.ranks[member] == rank)
            return member;
    return std::numeric_limits<std::uint32_t>::max();
}

std::uint32_t CommEngine::rankOf(const Instance& instance, std::uint32_t member)
{
    return instance.global ? member : instance.ranks[member];
}

std::uint32_t
CommEngine::phaseIndex(const Instance& instance, const Phase& phase, std::uint32_t member) const
{
    if (!instance.global || phase.flat || settings.topologyKind == TopologyKind::FatTree ||
        spansAllRanks[phase.dim])
        return member;
    return (member / strides[phase.dim]) % settings.dims[phase.dim].size;
}

std::uint32_t CommEngine::phasePeer(const Instance& instance,
                                    const Phase& phase,
                                    std::uint32_t member,
                                    std::uint32_t peer) const
{
    if (!instance.global || phase.flat || settings.topologyKind == TopologyKind::FatTree ||
        spansAllRanks[phase.dim])
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
    if (const NodeProgram* program =
            settings.nodeProgram(info.collective, toUnderlying(info.node))) {
        try {
            startProgram(index, member, *program);
        } catch (const Error& error) {
            throw Error("fabric: " + where(info) + ": " + toString(info.collective) + ": " +
                        error.what());
        }
        return;
    }
    if (instance.phases.empty()) {
        finishMember(index, member);
        return;
    }
    if (instance.baseLatencyPs > 0) {
        Tag tag;
        tag.instance = index;
        tag.member = member;
        tag.collectiveStart = true;
        schedule(instance.baseLatencyPs, tag);
        return;
    }
    startChunks(index, member);
}

void CommEngine::startChunks(std::uint32_t index, std::uint32_t member)
{
    std::uint32_t chunkCount = instances[index].split.count;
    for (std::uint32_t chunk = 0; chunk < chunkCount; ++chunk)
        enterPhase(index, member, chunk);
}

std::uint32_t CommEngine::queueOf(const Instance& instance, const Phase& phase) const
{
    if (!instance.global)
        return 0;
    if (phase.algorithm->ownQueue(phase.shape))
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
        try {
            const MessageOrder order{instance.key, std::uint64_t{chunk} << 32 | tag.step};
            core->send(src, rankOf(instance, peer), send.bytes, allocateTag(tag), order);
        } catch (const Error& error) {
            throw Error("fabric: " + where(src, instance.members[member].node) + ": " +
                        toString(instance.type) + " of " + std::to_string(instance.bytes) +
                        " B: " + error.what());
        }
    }
    state.expected = scratch.receives;
    state.reduced = scratch.reducedBytes;
    state.waiting = true;
    if (scratch.inSwitch)
        contribute(index, member, chunk, scratch.switchBytes, scratch.waitForLine);
    checkStep(index, member, chunk);
}

void CommEngine::contribute(std::uint32_t index,
                            std::uint32_t member,
                            std::uint32_t chunk,
                            std::uint64_t bytes,
                            bool waitForLine)
{
    Instance& instance = instances[index];
    const ChunkState& state = instance.chunks[member * instance.split.count + chunk];
    const Phase& phase = instance.phases[state.phase];
    std::uint32_t base = phasePeer(instance, phase, member, 0);
    std::uint32_t step = phase.firstStep + state.step;
    std::uint32_t size = phase.shape.size;
    if (waitForLine) {
        SwitchKey key{index, chunk, step, base};
        std::uint32_t& count = switchContributions[key];
        if (++count < size)
            return;
        switchContributions.erase(key);
    }
    // What streams through the switch now is the algorithm's; the engine maps positions in the
    // line to ranks and starts the streams.
    std::vector<std::uint32_t> line;
    for (std::uint32_t position = 0; position < size; ++position)
        line.push_back(rankOf(instance, phasePeer(instance, phase, member, position)));
    switchScratch.clear();
    phase.algorithm->switchStreams(
        phase.shape, phaseIndex(instance, phase, member), bytes, switchScratch);
    Tag tag;
    tag.instance = index;
    tag.chunk = chunk;
    tag.step = step;
    std::vector<std::uint32_t> sources;
    std::vector<std::uint32_t> destinations;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs;
    for (const SwitchStream& stream : switchScratch) {
        tag.multicast = stream.multicast;
        tag.member = stream.multicast ? base : phasePeer(instance, phase, member, stream.receiver);
        if (!stream.pairs.empty()) {
            pairs.clear();
            for (const auto& [from, to] : stream.pairs)
                pairs.emplace_back(line[from], line[to]);
            core->sendStream(pairs, stream.bytes, allocateTag(tag));
            continue;
        }
        sources.clear();
        destinations.clear();
        for (std::uint32_t position : stream.sources)
            sources.push_back(line[position]);
        for (std::uint32_t position : stream.destinations)
            destinations.push_back(line[position]);
        core->sendSwitchStream(sources, destinations, stream.bytes, allocateTag(tag));
    }
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
    if (!instance.stepLatencyPs.empty())
        delay += instance.stepLatencyPs[state.phase];
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
        instance.live = false;
        freeInstances.push_back(index);
    }
    complete(token);
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

} // namespace etsim::net
