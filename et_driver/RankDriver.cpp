// Longer than most files (about 700 lines): the RankDriver is one state machine per rank
// (feed, admit, issue, complete, record) over shared slots and flights; its parts (node
// lowering, the dependency tracker, the reader) already live in their own files.
#include "et_driver/RankDriver.h"

#include "et_driver/TraceReader.h"
#include "kernel/Error.h"
#include "kernel/FreeSlots.h"
#include "kernel/Stats.h"
#include "kernel/Timeline.h"
#include "kernel/WallProfile.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <tuple>
#include <utility>

namespace etsim::et {
namespace {

constexpr double secondsPerPs = 1e-12;
constexpr std::size_t maxListedPerRank = 16;

std::string_view nameOf(const EtNodeInfo& info)
{
    const NodeAttribute::Value* value = info.findAttribute(nameAttribute);
    if (value == nullptr)
        return {};
    const std::string* text = std::get_if<std::string>(value);
    return text == nullptr ? std::string_view() : std::string_view(*text);
}

std::size_t socketIndex(Engine engine)
{
    switch (engine) {
    case Engine::Memory:
        return 1;
    case Engine::Communication:
        return 2;
    default:
        return 0;
    }
}

} // namespace

std::string_view NodeRecord::name() const
{
    return info == nullptr ? std::string_view() : nameOf(*info);
}

NodeSource readerSource(TraceReader& reader)
{
    return [&reader](TraceNode& node) { return reader.next(node); };
}

NodeSource vectorSource(std::vector<TraceNode> nodes)
{
    auto shared = std::make_shared<std::vector<TraceNode>>(std::move(nodes));
    auto next = std::make_shared<std::size_t>(0);
    return [shared, next](TraceNode& node) {
        if (*next >= shared->size())
            return false;
        node = (*shared)[(*next)++];
        return true;
    };
}

RankDriver::RankDriver(const sc_core::sc_module_name& name,
                       RankId rank,
                       NodeSource source,
                       LoweringContext& context,
                       Simulation& simulation,
                       RankDriverOptions options,
                       StatGroup* stats,
                       Timeline* timeline)
    : sc_core::sc_module(name)
    , computeSocket("compute")
    , memorySocket("memory")
    , communicationSocket("communication")
    , rankId(rank)
    , source(std::move(source))
    , options(std::move(options))
    , lowering(rank, this->options.lowering, context)
    , tracker(this->options.dependencies)
    , payloads(std::string(this->name()) + ".pool")
    , timeline(timeline)
{
    wall = stats != nullptr ? stats->wallProfile() : nullptr;
    if (this->options.window == 0)
        throw Error(std::string(this->name()) + ": the reader window must be at least 1 node");
    if (!this->source)
        throw Error(std::string(this->name()) + ": no node source given");
    if (this->options.lowering.profile == SchedulingProfile::Astra) {
        limits = {1, 1, 1, 1, 0};
    } else {
        limits = {this->options.computeLimit,
                  this->options.memoryLimit,
                  this->options.communicationLimit,
                  this->options.hostLimit,
                  0};
    }
    computeSocket.register_nb_transport_bw(this, &RankDriver::backward);
    memorySocket.register_nb_transport_bw(this, &RankDriver::backward);
    communicationSocket.register_nb_transport_bw(this, &RankDriver::backward);

    if (stats != nullptr) {
        StatGroup& group = stats->addGroup("rank" + std::to_string(toUnderlying(rank)));
        statGroup = &group;
        nodesStat = &group.addCounter("nodes", "", "trace nodes finished");
        finishStat = &group.addScalar("finish_time", "s", "time the rank's last node finished");
        fallbackStat = &group.addCounter(
            "fallbacks", "", "nodes lowered with a fallback (see the log's warnings)");
        for (std::size_t engine = 0; engine < engineCount; ++engine) {
            std::string engineText = engineName(static_cast<Engine>(engine));
            StatGroup& sub = group.addGroup(engineText);
            engineStats[engine].nodes =
                &sub.addCounter("nodes", "", "nodes finished on the " + engineText + " engine");
            engineStats[engine].busySeconds = &sub.addScalar(
                "node_time", "s", "sum of the durations (accept to finish) of those nodes");
        }
    }
    if (timeline != nullptr) {
        std::uint32_t process = toUnderlying(rank);
        timeline->processName(process, "rank " + std::to_string(process), process);
        for (std::size_t engine = 0; engine < engineCount; ++engine)
            timeline->threadName(process,
                                 static_cast<std::uint32_t>(engine),
                                 engineName(static_cast<Engine>(engine)),
                                 static_cast<std::int64_t>(engine));
    }

    activity = simulation.enroll(this->name());
    activity.busy();

    SC_HAS_PROCESS(RankDriver);
    SC_METHOD(step);
    sensitive << wake;
}

RankDriver::~RankDriver()
{
    // Payloads a target still holds (a run that ended early) are detached by the pool.
    for (Flight& flight : flights)
        if (flight.payload != nullptr)
            flight.payload->release();
}

void RankDriver::onRecord(std::function<void(const NodeRecord&)> callback)
{
    recordCallback = std::move(callback);
}

void RankDriver::end_of_elaboration()
{
    double resolutionPs = sc_core::sc_get_time_resolution().to_seconds() * 1e12;
    if (resolutionPs < 1.0)
        throw Error(
            std::string(name()) +
            ": the SystemC time resolution must be 1 ps or coarser (sc_set_time_resolution)");
    psPerStep = static_cast<std::uint64_t>(std::llround(resolutionPs));
}

std::uint64_t RankDriver::toPs(const sc_core::sc_time& time) const
{
    return time.value() * psPerStep;
}

std::uint64_t RankDriver::nowPs() const
{
    return toPs(sc_core::sc_time_stamp());
}

void RankDriver::fail(const std::string& message) const
{
    std::string text =
        std::string(name()) + " at " + sc_core::sc_time_stamp().to_string() + ": " + message;
    SC_REPORT_ERROR(reportType, text.c_str());
}

RankDriver::Slot RankDriver::slotOf(NodeKind kind, Engine engine) const
{
    if (kind == NodeKind::Recv && engine == Engine::Communication)
        return RecvSlot;
    switch (engine) {
    case Engine::Compute:
        return ComputeSlot;
    case Engine::Memory:
        // ASTRA-sim: memory nodes share the communication slot.
        return options.lowering.profile == SchedulingProfile::Astra ? CommSlot : MemorySlot;
    case Engine::Communication:
        return CommSlot;
    case Engine::Host:
    case Engine::Instant:
        break;
    }
    return HostSlot;
}

tlm_utils::simple_initiator_socket<RankDriver>& RankDriver::socketOf(Engine engine)
{
    switch (engine) {
    case Engine::Memory:
        return memorySocket;
    case Engine::Communication:
        return communicationSocket;
    default:
        return computeSocket;
    }
}

void RankDriver::step()
{
    WallScope wallScope(wall, WallPart::Driver);
    try {
        std::uint64_t now = nowPs();
        while (!completions.empty() && completions.top().timePs <= now) {
            std::uint32_t flight = completions.top().flight;
            completions.pop();
            complete(flight);
        }
        do {
            feed();
            admitReady();
        } while (!sourceEnded && tracker.wantsInput(options.window));
        issueHeld();
    } catch (const Error& error) {
        fail(error.what());
        return;
    }
    if (done())
        activity.idle();
    if (!completions.empty())
        wake.notify(sc_core::sc_time::from_value((completions.top().timePs - nowPs()) / psPerStep));
}

void RankDriver::feed()
{
    while (!sourceEnded && tracker.wantsInput(options.window)) {
        if (!source(scratch)) {
            sourceEnded = true;
            tracker.finishFeeding();
            break;
        }
        // Lowered into the extension that will carry it, over the buffers of a spent node.
        const auto slot = static_cast<std::uint32_t>(pending.acquire());
        PendingNode& entry = pending.at(slot);
        try {
            entry.id = scratch.id;
            if (!entry.extension)
                entry.extension = spareExtension();
            EtNodeInfo& info = entry.extension->info;
            entry.placement = lowering.lower(scratch, info);
            entry.slot = slotOf(info.kind, entry.placement.engine);
            entry.kind = info.kind;
            entry.bytes = info.bytes;
            tracker.add(scratch.id, scratch.dataDeps, scratch.ctrlDeps, slot);
        } catch (...) {
            pending.remove(slot);
            throw;
        }
        if (timeline != nullptr) {
            std::vector<std::uint64_t> deps;
            DependencyPolicy policy = options.dependencies.policy;
            if (policy != DependencyPolicy::CtrlOnly)
                deps.insert(deps.end(), scratch.dataDeps.begin(), scratch.dataDeps.end());
            if (policy != DependencyPolicy::DataOnly)
                deps.insert(deps.end(), scratch.ctrlDeps.begin(), scratch.ctrlDeps.end());
            if (!deps.empty())
                pendingDeps[scratch.id] = std::move(deps);
        }
    }
}

void RankDriver::admitReady()
{
    while (tracker.hasReady()) {
        const DependencyTracker::ReadyNode ready = tracker.popReadyNode();
        const std::uint64_t id = ready.id;
        const std::uint32_t found = ready.tag;
        const PendingNode& entry = pending.at(found);
        if (entry.placement.engine != Engine::Instant) {
            held[entry.slot].push(HeldNode{id, found});
            continue;
        }
        // Nothing to do: finish now, so its dependents are released in this same step. The
        // slot keeps its extension for the next node read.
        tracker.finish(id);
        NodeRecord record;
        record.issuePs = record.startPs = record.finishPs = nowPs();
        record.kind = entry.kind;
        record.bytes = entry.bytes;
        finishNode(id, entry.placement.engine, entry.extension->info, record);
        pending.remove(found);
    }
}

bool RankDriver::issueHeld()
{
    bool issued = false;
    for (std::size_t slot = 0; slot < slotCount; ++slot) {
        auto& queue = held[slot];
        while (!queue.empty() && (limits[slot] == 0 || busy[slot] < limits[slot])) {
            const std::uint32_t pendingSlot = queue.top().pendingSlot;
            const NodePlacement& next = pending.at(pendingSlot).placement;
            if (!next.local && awaitingEndRequest[socketIndex(next.engine)])
                break;
            queue.pop();
            issue(static_cast<Slot>(slot), pendingSlot);
            issued = true;
        }
    }
    return issued;
}

void RankDriver::issue(Slot slot, std::uint32_t pendingSlot)
{
    PendingNode& entry = pending.at(pendingSlot);
    const std::uint64_t id = entry.id;
    const NodePlacement placement = entry.placement;
    const NodeKind kind = entry.kind;
    const std::uint32_t index = takeSlot(freeFlights, flights);
    std::uint64_t now = nowPs();
    Flight& flight = flights[index];
    flight.id = id;
    flight.engine = placement.engine;
    flight.slot = slot;
    flight.issuePs = now;
    flight.startPs = now;
    flight.kind = kind;
    flight.bytes = entry.bytes;
    flight.used = true;
    std::unique_ptr<EtNodeExtension> extension = std::move(entry.extension);
    pending.remove(pendingSlot);
    ++busy[slot];
    if (kind == NodeKind::Collective && placement.engine == Engine::Communication) {
        EtNodeInfo& info = extension->info;
        info.groupSequence = lowering.nextSequence(info.group);
    }
    if (placement.local) {
        // Local work keeps its node in the flight; a transaction's node lives in its payload.
        flight.localNode = std::move(extension);
        flight.localPs = placement.localPs;
        schedule(index, endOf(flight, now, flight.localPs));
        return;
    }

    tlm::tlm_generic_payload& payload = payloads.acquire();
    const bool write = kind == NodeKind::MemStore || kind == NodeKind::Send;
    payload.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
    payload.set_address(0);
    payload.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    payload.set_extension(extension.release());
    flight.payload = &payload;
    const std::uint32_t number = payloads.indexOf(payload);
    if (number >= flightOfPayload.size())
        flightOfPayload.resize(number + 1, noFlight);
    flightOfPayload[number] = index;

    tlm::tlm_phase phase = tlm::BEGIN_REQ;
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    Engine engine = flight.engine;
    // Cleared by END_REQ (returned here or sent on the backward path, possibly during the call).
    awaitingEndRequest[socketIndex(engine)] = true;
    tlm::tlm_sync_enum status = socketOf(engine)->nb_transport_fw(payload, phase, delay);
    // The target may have answered on the backward path already; look the flight up again.
    Flight& after = flights[index];
    switch (status) {
    case tlm::TLM_ACCEPTED:
        break;
    case tlm::TLM_UPDATED:
        awaitingEndRequest[socketIndex(engine)] = false;
        if (phase == tlm::END_REQ) {
            after.startPs = now + toPs(delay);
        } else if (phase == tlm::BEGIN_RESP) {
            if (payload.get_response_status() != tlm::TLM_OK_RESPONSE)
                throw Error("node " + std::to_string(id) + ": the " + engineName(engine) +
                            " target answered " + payload.get_response_string());
            schedule(index, endOf(after, now, toPs(delay)));
        } else {
            throw Error("node " + std::to_string(id) + ": the " + engineName(engine) +
                        " target answered BEGIN_REQ with phase " + phase.get_name() +
                        "; expected END_REQ (docs/execution-protocol.md)");
        }
        break;
    case tlm::TLM_COMPLETED:
        throw Error("node " + std::to_string(id) + ": the " + engineName(engine) +
                    " target returned TLM_COMPLETED to BEGIN_REQ; completion must come as "
                    "BEGIN_RESP on the backward path (docs/execution-protocol.md)");
    }
}

tlm::tlm_sync_enum RankDriver::backward(tlm::tlm_generic_payload& payload,
                                        tlm::tlm_phase& phase,
                                        sc_core::sc_time& delay)
{
    WallScope wallScope(wall, WallPart::Driver);
    std::uint32_t flightIndex = noFlight;
    try {
        const std::uint32_t number = payloads.indexOf(payload);
        if (number < flightOfPayload.size())
            flightIndex = flightOfPayload[number];
    } catch (const Error&) {
        // Not one of this driver's payloads: reported below.
    }
    if (flightIndex == noFlight) {
        fail("a target answered with a payload that is not in flight");
        return tlm::TLM_COMPLETED;
    }
    Flight& flight = flights[flightIndex];
    std::uint64_t when = nowPs() + toPs(delay);
    if (phase == tlm::END_REQ) {
        flight.startPs = when;
        awaitingEndRequest[socketIndex(flight.engine)] = false;
        wake.notify(delay);
        return tlm::TLM_ACCEPTED;
    }
    if (phase == tlm::BEGIN_RESP) {
        awaitingEndRequest[socketIndex(flight.engine)] = false;
        if (payload.get_response_status() != tlm::TLM_OK_RESPONSE) {
            fail("node " + std::to_string(flight.id) + ": the " + engineName(flight.engine) +
                 " target answered " + payload.get_response_string());
            return tlm::TLM_COMPLETED;
        }
        schedule(flightIndex, endOf(flight, nowPs(), toPs(delay)));
        return tlm::TLM_COMPLETED;
    }
    return tlm::TLM_ACCEPTED;
}

std::uint64_t
RankDriver::endOf(const Flight& flight, std::uint64_t startPs, std::uint64_t durationPs) const
{
    // A start before the node's issue can only be SystemC's own clock wrapped past 2^64 ps
    // (a target's delay added to it); a sum that overflows is the same, one step earlier.
    std::uint64_t end = 0;
    if (startPs >= flight.issuePs && !__builtin_add_overflow(startPs, durationPs, &end))
        return end;
    const std::string node = std::string(name()) + ": node " + std::to_string(flight.id);
    if (startPs < flight.issuePs)
        throw Error(node + " (issued at " + std::to_string(flight.issuePs) +
                    " ps) would end past the end of the simulated clock (2^64 ps, about 213 "
                    "days): its target's delay made the clock wrap; check its duration_micros, "
                    "sizes and the platform's rates");
    throw Error(node +
                " would end past the end of the simulated clock (2^64 ps, about 213 days): "
                "it starts at " +
                std::to_string(startPs) + " ps and lasts " + std::to_string(durationPs) +
                " ps; check its duration_micros, sizes and the platform's rates");
}

void RankDriver::schedule(std::uint32_t flight, std::uint64_t timePs)
{
    completions.push(Completion{timePs, completionOrder++, flight});
    std::uint64_t now = nowPs();
    wake.notify(sc_core::sc_time::from_value((timePs > now ? timePs - now : 0) / psPerStep));
}

void RankDriver::complete(std::uint32_t index)
{
    Flight& flight = flights[index];
    NodeRecord record;
    record.engine = flight.engine;
    record.issuePs = flight.issuePs;
    record.startPs = flight.startPs;
    record.finishPs = nowPs();
    record.kind = flight.kind;
    record.bytes = flight.bytes;
    --busy[flight.slot];
    tracker.finish(flight.id);
    if (flight.payload != nullptr) {
        tlm::tlm_generic_payload& payload = *flight.payload;
        finishNode(flight.id, flight.engine, EtNodeExtension::get(payload).info, record);
        flightOfPayload[payloads.indexOf(payload)] = noFlight;
        flight.payload = nullptr;
        recycleExtension(payload);
        payload.release();
    } else {
        finishNode(flight.id, flight.engine, flight.localNode->info, record);
        spareExtensions.push_back(std::move(flight.localNode));
    }
    flight.used = false;
    freeFlights.push_back(index);
}

std::unique_ptr<EtNodeExtension> RankDriver::spareExtension()
{
    if (spareExtensions.empty())
        return std::make_unique<EtNodeExtension>();
    std::unique_ptr<EtNodeExtension> spare = std::move(spareExtensions.back());
    spareExtensions.pop_back();
    return spare;
}

void RankDriver::recycleExtension(tlm::tlm_generic_payload& payload)
{
    if (payload.get_ref_count() != 1)
        return; // a target still holds the payload and may read its extension
    EtNodeExtension* extension = EtNodeExtension::find(payload);
    if (extension == nullptr)
        return;
    payload.clear_extension(extension);
    spareExtensions.emplace_back(extension);
}

void RankDriver::finishNode(std::uint64_t id,
                            Engine engine,
                            const EtNodeInfo& info,
                            NodeRecord record)
{
    record.rank = rankId;
    record.node = static_cast<NodeId>(id);
    record.info = &info;
    record.engine = engine;
    ++finishedCount;
    lastFinishPs = std::max(lastFinishPs, record.finishPs);

    const auto engineIndex = static_cast<std::size_t>(engine);
    if (statGroup != nullptr) {
        ++*nodesStat;
        finishStat->set(static_cast<double>(lastFinishPs) * secondsPerPs);
        fallbackStat->set(lowering.fallbacks().total());
        ++*engineStats[engineIndex].nodes;
        *engineStats[engineIndex].busySeconds +=
            static_cast<double>(record.finishPs - record.startPs) * secondsPerPs;
    }
    if (timeline != nullptr && engine != Engine::Instant) {
        std::uint32_t process = toUnderlying(rankId);
        auto thread = static_cast<std::uint32_t>(engineIndex);
        timeline->complete(process,
                           thread,
                           nameOf(info),
                           toString(record.kind),
                           record.startPs,
                           record.finishPs - record.startPs,
                           {{"node", id}, {"bytes", record.bytes}, {"issue_ps", record.issuePs}});
        auto deps = pendingDeps.find(id);
        if (deps != pendingDeps.end()) {
            for (std::uint64_t dep : deps->second) {
                auto ran = ranAt.find(dep);
                if (ran == ranAt.end())
                    continue;
                std::uint64_t flow = (std::uint64_t{process} << 40) | flowCount++;
                timeline->flowStart(process,
                                    static_cast<std::uint32_t>(ran->second.first),
                                    "dependency",
                                    "dependency",
                                    flow,
                                    ran->second.second);
                timeline->flowEnd(
                    process, thread, "dependency", "dependency", flow, record.startPs);
            }
            pendingDeps.erase(deps);
        }
        ranAt[id] = {engine, record.startPs};
    } else if (timeline != nullptr) {
        pendingDeps.erase(id);
    }
    if (recordCallback)
        recordCallback(record);
}

std::uint64_t RankDriver::openNodes(std::vector<OpenNode>& out) const
{
    out.clear();
    for (const Flight& flight : flights)
        if (flight.used)
            out.push_back(OpenNode{NodeId{flight.id}, flight.issuePs, flight.engine});
    return nowPs();
}

RankStuckState RankDriver::stuckState() const
{
    RankStuckState state;
    state.rank = rankId;
    state.unfinished = tracker.pendingCount();
    state.waiting = tracker.waitingCount();
    for (const Flight& flight : flights) {
        if (!flight.used)
            continue;
        UnfinishedNode entry;
        entry.id = flight.id;
        entry.state = UnfinishedNode::State::InFlight;
        entry.engine = flight.engine;
        entry.info = flight.payload != nullptr ? EtNodeExtension::get(*flight.payload).info
                                               : flight.localNode->info;
        entry.name = std::string(nameOf(entry.info));
        state.issued.push_back(std::move(entry));
    }
    for (const auto& slotQueue : held) {
        auto copy = slotQueue;
        while (!copy.empty()) {
            const PendingNode& node = pending.at(copy.top().pendingSlot);
            UnfinishedNode entry;
            entry.id = copy.top().id;
            entry.state = UnfinishedNode::State::Held;
            entry.engine = node.placement.engine;
            entry.info = node.extension->info;
            entry.name = std::string(nameOf(node.extension->info));
            state.issued.push_back(std::move(entry));
            copy.pop();
        }
    }
    std::sort(state.issued.begin(),
              state.issued.end(),
              [](const UnfinishedNode& a, const UnfinishedNode& b) { return a.id < b.id; });
    if (tracker.deadlocked())
        state.dependencies = tracker.stuckReport();
    return state;
}

std::string deadlockReport(const std::vector<const RankDriver*>& drivers,
                           const DeadlockScope& scope)
{
    auto elsewhere = [&scope](std::uint32_t rank) {
        return scope.elsewhere ? scope.elsewhere(rank) : std::string();
    };
    std::vector<RankStuckState> states;
    for (const RankDriver* driver : drivers)
        if (!driver->done())
            states.push_back(driver->stuckState());
    if (states.empty())
        return {};

    using P2pKey = std::tuple<std::uint32_t, std::uint32_t, std::uint64_t>; // src, dst, tag
    std::map<P2pKey, std::size_t> sends;
    std::map<P2pKey, std::size_t> recvs;
    using CollKey = std::pair<std::int64_t, std::uint64_t>; // group (-1 = all), sequence
    std::map<CollKey, std::set<std::uint32_t>> joined;
    auto groupKey = [](const EtNodeInfo& info) {
        return info.group ? static_cast<std::int64_t>(toUnderlying(*info.group)) : -1;
    };
    for (const RankStuckState& state : states) {
        std::uint32_t rank = toUnderlying(state.rank);
        for (const UnfinishedNode& node : state.issued) {
            if (node.state != UnfinishedNode::State::InFlight ||
                node.engine != Engine::Communication)
                continue;
            const EtNodeInfo& info = node.info;
            if (info.kind == NodeKind::Send && info.peer)
                ++sends[{rank, toUnderlying(*info.peer), info.tag}];
            else if (info.kind == NodeKind::Recv && info.peer)
                ++recvs[{toUnderlying(*info.peer), rank, info.tag}];
            else if (info.kind == NodeKind::Collective)
                joined[{groupKey(info), info.groupSequence}].insert(rank);
        }
    }

    std::ostringstream out;
    out << "deadlock: " << states.size() << " of " << drivers.size()
        << " ranks cannot finish; stuck nodes per rank:";
    for (const RankStuckState& state : states) {
        std::uint32_t rank = toUnderlying(state.rank);
        out << "\n"
            << toString(state.rank) << ": " << state.unfinished << " nodes unfinished ("
            << state.waiting << " waiting on dependencies)";
        std::size_t listed = 0;
        for (const UnfinishedNode& node : state.issued) {
            if (listed++ == maxListedPerRank) {
                out << "\n  ... " << state.issued.size() - maxListedPerRank << " more";
                break;
            }
            const EtNodeInfo& info = node.info;
            out << "\n  node " << node.id << " \"" << node.name << "\": ";
            if (node.state == UnfinishedNode::State::Held) {
                out << "ready, waiting for a free " << engineName(node.engine) << " slot";
                continue;
            }
            if (node.engine != Engine::Communication) {
                out << "in flight on the " << engineName(node.engine) << " engine";
                continue;
            }
            if (info.kind == NodeKind::Recv && info.peer) {
                std::uint32_t peer = toUnderlying(*info.peer);
                out << "recv of " << info.bytes << " B from rank " << peer << " tag " << info.tag
                    << ": ";
                if (const std::string where = elsewhere(peer); !where.empty())
                    out << "no matching send from rank " << peer << " (simulated by " << where
                        << ") arrived";
                else if (sends.count({peer, rank, info.tag}) != 0)
                    out << "rank " << peer
                        << " posted a send with this tag that did not match "
                           "(size or order differs)";
                else
                    out << "no matching send posted by rank " << peer;
            } else if (info.kind == NodeKind::Send && info.peer) {
                std::uint32_t peer = toUnderlying(*info.peer);
                out << "send of " << info.bytes << " B to rank " << peer << " tag " << info.tag
                    << ": ";
                if (const std::string where = elsewhere(peer); !where.empty())
                    out << "its message to rank " << peer << " (simulated by " << where
                        << ") has not arrived";
                else if (recvs.count({rank, peer, info.tag}) != 0)
                    out << "rank " << peer
                        << " posted a recv with this tag that did not match "
                           "(size or order differs)";
                else
                    out << "no matching recv posted by rank " << peer;
            } else if (info.kind == NodeKind::Collective) {
                out << toString(info.collective) << " of " << info.bytes << " B, "
                    << (info.group ? toString(*info.group) : std::string("all ranks"))
                    << ", sequence " << info.groupSequence << ": ";
                const std::set<std::uint32_t>& in = joined[{groupKey(info), info.groupSequence}];
                std::vector<std::uint32_t> missing;
                std::set<std::string> remote; // where members simulated elsewhere are
                auto check = [&](std::uint32_t member) {
                    if (const std::string where = elsewhere(member); !where.empty())
                        remote.insert(where);
                    else if (in.count(member) == 0)
                        missing.push_back(member);
                };
                if (info.groupRanks) {
                    for (RankId member : *info.groupRanks)
                        check(toUnderlying(member));
                } else {
                    const std::uint32_t ranks =
                        scope.ranks != 0 ? scope.ranks : static_cast<std::uint32_t>(drivers.size());
                    for (std::uint32_t member = 0; member < ranks; ++member)
                        check(member);
                }
                if (missing.empty() && !remote.empty()) {
                    out << "every member here joined; the others are simulated by";
                    for (const std::string& where : remote)
                        out << (where == *remote.begin() ? " " : ", ") << where;
                    out << " (see their lines)";
                } else if (missing.empty()) {
                    out << "every member joined, the communication target did not complete it";
                } else {
                    out << "never joined by rank";
                    if (missing.size() > 1)
                        out << "s";
                    for (std::size_t i = 0; i < missing.size() && i < maxListedPerRank; ++i)
                        out << (i == 0 ? " " : ", ") << missing[i];
                    if (missing.size() > maxListedPerRank)
                        out << ", ...";
                }
            } else {
                out << "in flight on the communication engine";
            }
        }
        if (state.dependencies)
            out << "\n  " << state.dependencies->message();
    }
    return out.str();
}

void checkFinished(const std::vector<const RankDriver*>& drivers)
{
    std::string report = deadlockReport(drivers);
    if (!report.empty())
        throw DeadlockError(report);
}

} // namespace etsim::et
