#include "models/net/flow/NetworkCore.h"

#include "kernel/Error.h"

#include <algorithm>
#include <string>

namespace etsim::net {

namespace {

// Route cache bound: 2^18 pairs keep a 4,096-rank run's collectives cached at a few MiB.
constexpr std::size_t maxCachedRoutes = std::size_t{1} << 18;
constexpr unsigned initialRouteTableBits = 10;

} // namespace

NetworkCore::NetworkCore(const TopologyIf& topologyIn,
                         const NetConfig& configIn,
                         EventCalendar& calendarIn,
                         MessageSink& sinkIn)
    : topology(topologyIn)
    , config(configIn)
    , calendar(calendarIn)
    , sink(sinkIn)
    , fabric(topologyIn, configIn.nicBandwidth)
    , state(calendarIn, fabric, configIn.messageDelay.ps())
    , routeTable(std::size_t{1} << initialRouteTableBits)
    , routeTableBits(initialRouteTableBits)
{
    state.links.resize(fabric.size());
    for (std::size_t index = 0; index < fabric.size(); ++index) {
        LinkState& target = state.links[index];
        target.spec = fabric[index];
        double perSecond = target.spec.bandwidth.bytesPerSecond();
        if (perSecond <= 0.0)
            throw Error("NetworkCore: a link from device " + std::to_string(target.spec.from) +
                        " to " + std::to_string(target.spec.to) +
                        " has zero bandwidth; every link needs a bandwidth above 0 B/s");
        target.bytesPerPs = perSecond * 1e-12;
        target.bytesPerNs = perSecond / 1e9;
        slowestPsPerByte = std::max(slowestPsPerByte, 1.0 / target.bytesPerPs);
    }
    policy = makeFidelity(config.fidelity, state);
    if (abilitiesOf(config.fidelity).chargesLatency &&
        config.topologyKind == TopologyKind::MultiDim)
        for (const DimConfig& dim : config.dims)
            if (dim.nicLatency.ps() > 0) {
                for (const DimConfig& each : config.dims)
                    nicPsByDim.push_back(each.nicLatency.ps());
                break;
            }
}

std::uint64_t NetworkCore::nicLatencyOfDims(const std::vector<std::uint32_t>& route) const
{
    std::uint64_t crossed = 0; // a bit per dimension (at most 32)
    std::uint64_t total = 0;
    for (std::uint32_t link : route) {
        if (link >= fabric.nicBase()) // the `nic:` injection and ejection links
            continue;
        std::uint32_t dim = state.links[link].spec.dim;
        if ((crossed >> dim & 1U) != 0)
            continue;
        crossed |= std::uint64_t{1} << dim;
        total += nicPsByDim[dim];
    }
    return total;
}

NetworkCore::~NetworkCore() = default;

std::uint64_t NetworkCore::wireBytes(std::uint64_t bytes) const
{
    std::uint64_t payload = config.packetPayload.bytes();
    if (payload == 0)
        return bytes;
    std::uint64_t packets = (bytes + payload - 1) / payload;
    return bytes + packets * config.packetHeader.bytes();
}

std::uint64_t NetworkCore::linkBusyPs(std::size_t index) const
{
    // Only the flow fidelity keeps flows on links; the others account busy time as they go.
    const LinkState& target = state.links[index];
    if (!target.flows.empty())
        return target.busyPs + (calendar.now() - target.busySincePs);
    return target.busyPs;
}

std::uint32_t NetworkCore::allocateFlow()
{
    if (!freeFlows.empty()) {
        std::uint32_t index = freeFlows.back();
        freeFlows.pop_back();
        return index;
    }
    state.flows.emplace_back();
    return static_cast<std::uint32_t>(state.flows.size() - 1);
}

void NetworkCore::releaseFlow(std::uint32_t index)
{
    Flow& flow = state.flows[index];
    flow.transit = false;
    flow.route.clear();
    flow.slots.clear();
    ++flow.version;
    freeFlows.push_back(index);
}

std::uint64_t NetworkCore::buildRoute(std::uint32_t src, std::uint32_t dst, Flow& flow)
{
    // Collectives send between the same few pairs over and over: routes are remembered (up to
    // maxCachedRoutes pairs; beyond that they are computed each time).
    std::uint64_t key = (static_cast<std::uint64_t>(src) << 32 | dst) + 1;
    std::size_t mask = routeTable.size() - 1;
    std::size_t at = routeSlotOf(key);
    for (; routeTable[at].key != 0; at = (at + 1) & mask)
        if (routeTable[at].key == key) {
            const RouteSlot& found = routeTable[at];
            flow.route.assign(routeLinks.begin() + found.offset,
                              routeLinks.begin() + found.offset + found.length);
            return found.nicPs;
        }
    fabric.appendRoute(src, dst, routeScratch, flow.route);
    const std::uint64_t nicPs = nicLatencyPs(flow.route);
    if (routeCount >= maxCachedRoutes)
        return nicPs;
    routeTable[at] = RouteSlot{key,
                               static_cast<std::uint32_t>(routeLinks.size()),
                               static_cast<std::uint32_t>(flow.route.size()),
                               nicPs};
    routeLinks.insert(routeLinks.end(), flow.route.begin(), flow.route.end());
    ++routeCount;
    if (2 * routeCount > routeTable.size())
        growRouteTable();
    return nicPs;
}

std::size_t NetworkCore::routeSlotOf(std::uint64_t key) const
{
    return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ULL) >> (64 - routeTableBits));
}

void NetworkCore::growRouteTable()
{
    std::vector<RouteSlot> old(routeTable.size() * 2);
    old.swap(routeTable);
    ++routeTableBits;
    std::size_t mask = routeTable.size() - 1;
    for (const RouteSlot& entry : old) {
        if (entry.key == 0)
            continue;
        std::size_t at = routeSlotOf(entry.key);
        while (routeTable[at].key != 0)
            at = (at + 1) & mask;
        routeTable[at] = entry;
    }
}

void NetworkCore::send(std::uint32_t src,
                       std::uint32_t dst,
                       std::uint64_t bytes,
                       std::uint64_t cookie,
                       const MessageOrder& order)
{
    std::uint32_t endpoints = topology.endpointCount();
    if (src >= endpoints || dst >= endpoints)
        throw Error("NetworkCore::send: endpoint " + std::to_string(std::max(src, dst)) +
                    " out of range (the network has " + std::to_string(endpoints) + " endpoints)");
    std::uint32_t index = allocateFlow();
    Flow& flow = state.flows[index];
    flow.cookie = cookie;
    flow.bytes = wireBytes(bytes);
    flow.hop = 0;
    flow.src = src;
    flow.dst = dst;
    // Field by field: the caller wrote the two halves separately, and one 16-byte copy of
    // them would wait for both stores (a store-forwarding stall on every message).
    flow.order.key = order.key;
    flow.order.sub = order.sub;
    const std::uint64_t nicPs = buildRoute(src, dst, flow);
    ++sent;
    std::uint64_t latencyPs = 0;
    for (std::uint32_t link : flow.route) {
        state.links[link].bytes += static_cast<double>(flow.bytes);
        latencyPs += state.links[link].spec.latency.ps();
    }
    flow.latencyPs = latencyPs + config.messageDelay.ps() + nicPs;
    requireFitsTheClock(flow, src, dst, calendar.now());

    if (flow.route.empty()) {
        calendar.schedule(calendar.now() + config.messageDelay.ps(), EventKind::Deliver, index, 0);
        return;
    }
    if (remoteNetwork) {
        // The remote simulator packetises the payload itself: it gets the bytes, not
        // wireBytes(). The flow record keeps the cookie until remoteArrived().
        flow.remaining = 1.0;
        remoteNetwork->inject(src, dst, bytes, index);
        return;
    }
    policy->start(index);
}

void NetworkCore::requireFitsTheClock(const Flow& flow,
                                      std::uint32_t src,
                                      std::uint32_t dst,
                                      std::uint64_t fromPs) const
{
    // Alone on its route the message is as fast as it can be; sharing only delays it. So a
    // message that would outlast the clock even alone is refused here, where the caller still
    // knows which node sent it (later, under sharing, roundPs is the last guard). The bound
    // over the fabric's slowest link settles nearly every message with one multiplication.
    double latest = static_cast<double>(fromPs) + static_cast<double>(flow.latencyPs);
    if (latest + static_cast<double>(flow.bytes) * slowestPsPerByte < clockEndPsBound)
        return;
    double slowest = 0.0;
    for (std::uint32_t link : flow.route)
        slowest = std::max(slowest, static_cast<double>(flow.bytes) / state.links[link].bytesPerPs);
    requireWithinClock(latest + slowest,
                       "a message of " + std::to_string(flow.bytes) + " B from endpoint " +
                           std::to_string(src) + " to endpoint " + std::to_string(dst));
}

void NetworkCore::checkStreamAllowed(const char* what) const
{
    if (!abilitiesOf(config.fidelity).carriesStreams)
        throw Error(std::string("NetworkCore::") + what +
                    ": in-switch streams need the flow or analytical fidelity");
    if (crossing)
        throw Error(std::string("NetworkCore::") + what +
                    ": in-switch reductions join the traffic of a whole switch line in one "
                    "stream and cannot run partitioned; choose another all_reduce algorithm or "
                    "run in one process");
    if (remoteNetwork)
        throw Error(std::string("NetworkCore::") + what +
                    ": in-switch reductions cannot run on a co-simulated fabric (the remote "
                    "network carries point-to-point messages only); choose another all_reduce "
                    "algorithm than in_switch");
}

void NetworkCore::launchStream(std::uint32_t index, std::uint64_t latencyPs)
{
    Flow& flow = state.flows[index];
    ++sent;
    for (std::uint32_t link : flow.route)
        state.links[link].bytes += static_cast<double>(flow.bytes);
    flow.latencyPs = latencyPs + config.messageDelay.ps() + nicLatencyPs(flow.route);
    if (flow.route.empty()) {
        calendar.schedule(calendar.now() + config.messageDelay.ps(), EventKind::Deliver, index, 0);
        return;
    }
    policy->start(index);
}

void NetworkCore::sendStream(const std::vector<std::pair<std::uint32_t, std::uint32_t>>& pairs,
                             std::uint64_t bytes,
                             std::uint64_t cookie)
{
    checkStreamAllowed("sendStream");
    std::uint32_t endpoints = topology.endpointCount();
    std::uint32_t index = allocateFlow();
    Flow& flow = state.flows[index];
    flow.cookie = cookie;
    flow.bytes = wireBytes(bytes);
    flow.hop = 0;
    std::uint64_t latencyPs = 0;
    for (const auto& [src, dst] : pairs) {
        if (src >= endpoints || dst >= endpoints)
            throw Error("NetworkCore::sendStream: endpoint " + std::to_string(std::max(src, dst)) +
                        " out of range (the network has " + std::to_string(endpoints) +
                        " endpoints)");
        Flow scratchFlow;
        buildRoute(src, dst, scratchFlow);
        std::uint64_t pairLatency = 0;
        for (std::uint32_t link : scratchFlow.route) {
            pairLatency += state.links[link].spec.latency.ps();
            // A link two pairs share (not the case for a switch line) is crossed once.
            if (std::find(flow.route.begin(), flow.route.end(), link) == flow.route.end())
                flow.route.push_back(link);
        }
        latencyPs = std::max(latencyPs, pairLatency);
    }
    launchStream(index, latencyPs);
}

void NetworkCore::sendSwitchStream(const std::vector<std::uint32_t>& sources,
                                   const std::vector<std::uint32_t>& destinations,
                                   std::uint64_t bytes,
                                   std::uint64_t cookie)
{
    checkStreamAllowed("sendSwitchStream");
    std::uint32_t endpoints = topology.endpointCount();
    std::vector<std::uint32_t> members(sources);
    members.insert(members.end(), destinations.begin(), destinations.end());
    for (std::uint32_t member : members)
        if (member >= endpoints)
            throw Error("NetworkCore::sendSwitchStream: endpoint " + std::to_string(member) +
                        " out of range (the network has " + std::to_string(endpoints) +
                        " endpoints)");
    // The route between two members of a switch line is up to the switch, then down: its
    // first half is the sender's way up, its second half the receiver's way down.
    if (members.empty() || std::all_of(members.begin(), members.end(), [&](std::uint32_t member) {
            return member == members.front();
        }))
        throw Error("NetworkCore::sendSwitchStream: a switch stream needs at least two distinct "
                    "endpoints among its sources and destinations");
    auto partner = [&](std::uint32_t member) {
        for (std::uint32_t other : members)
            if (other != member)
                return other;
        return member;
    };
    std::uint32_t index = allocateFlow();
    Flow& flow = state.flows[index];
    flow.cookie = cookie;
    flow.bytes = wireBytes(bytes);
    flow.hop = 0;
    auto addHalf = [&](std::uint32_t src, std::uint32_t dst, bool upper) {
        Flow scratchFlow;
        buildRoute(src, dst, scratchFlow);
        std::size_t half = scratchFlow.route.size() / 2;
        std::size_t from = upper ? 0 : half;
        std::size_t to = upper ? half : scratchFlow.route.size();
        std::uint64_t latency = 0;
        for (std::size_t hop = from; hop < to; ++hop) {
            std::uint32_t link = scratchFlow.route[hop];
            latency += state.links[link].spec.latency.ps();
            if (std::find(flow.route.begin(), flow.route.end(), link) == flow.route.end())
                flow.route.push_back(link);
        }
        return latency;
    };
    std::uint64_t upPs = 0;
    std::uint64_t downPs = 0;
    for (std::uint32_t src : sources)
        upPs = std::max(upPs, addHalf(src, partner(src), true));
    for (std::uint32_t dst : destinations)
        downPs = std::max(downPs, addHalf(partner(dst), dst, false));
    launchStream(index, upPs + downPs);
}

void NetworkCore::remoteArrived(std::uint64_t message)
{
    if (!remoteNetwork || message >= state.flows.size() || state.flows[message].remaining != 1.0)
        throw Error("NetworkCore::remoteArrived: message " + std::to_string(message) +
                    " is not in flight on the remote network");
    Flow& flow = state.flows[message];
    flow.remaining = 0.0;
    // The remote simulator carries the links; the NIC stack's latency is the fabric's.
    calendar.schedule(calendar.now() + config.messageDelay.ps() + nicLatencyPs(flow.route),
                      EventKind::Deliver,
                      static_cast<std::uint32_t>(message),
                      0);
}

void NetworkCore::setCrossing(CrossingSink* sink)
{
    const Partitioning partitioning = abilitiesOf(config.fidelity).partitioning;
    crossing = sink;
    state.leave = nullptr;
    state.handOver = nullptr;
    state.foreignLinks.clear();
    if (sink == nullptr)
        return;
    const bool linkOwners = partitioning == Partitioning::LinkOwners;
    state.leave = [this, linkOwners](std::uint32_t index, std::uint64_t timePs) {
        const Flow& flow = state.flows[index];
        if (!crossing->crosses(flow.dst)) {
            if (linkOwners)
                crossing->arriving(flow.cookie, timePs);
            return false;
        }
        crossing->crossed(retireFlow(index), timePs);
        return true;
    };
    if (linkOwners)
        ownLinks();
}

std::uint32_t NetworkCore::ownerEndpoint(std::uint32_t link) const
{
    const Link& spec = state.links[link].spec;
    return spec.from < topology.endpointCount() ? spec.from : spec.to;
}

void NetworkCore::ownLinks()
{
    const std::uint32_t endpoints = topology.endpointCount();
    state.foreignLinks.assign(state.links.size(), false);
    for (std::uint32_t link = 0; link < state.links.size(); ++link) {
        const Link& spec = state.links[link].spec;
        if (spec.from >= endpoints && spec.to >= endpoints)
            throw Error("fabric: link " + std::to_string(link) + " joins two switches (devices " +
                        std::to_string(spec.from) + " and " + std::to_string(spec.to) +
                        "), which no rank owns; a partitioned " +
                        std::string(enumName(fidelityNames, config.fidelity)) +
                        " run needs every link to start or end at a rank (a multi_dim "
                        "topology without switch_bandwidth); run in one process");
        state.foreignLinks[link] = crossing->crosses(ownerEndpoint(link));
    }
    state.handOver = [this](std::uint32_t index, std::uint64_t timePs) {
        Flow& flow = state.flows[index];
        const HandOver handOver{flow.src,
                                flow.dst,
                                ownerEndpoint(flow.route[flow.hop]),
                                flow.hop,
                                flow.requestedPs,
                                flow.bytes,
                                flow.order};
        crossing->handedOver(retireFlow(index), timePs, handOver);
    };
}

void NetworkCore::continueMessage(std::uint64_t atPs,
                                  const HandOver& handOver,
                                  std::uint64_t cookie)
{
    const std::uint32_t src = handOver.src;
    const std::uint32_t dst = handOver.dst;
    std::uint32_t endpoints = topology.endpointCount();
    if (src >= endpoints || dst >= endpoints || !state.handOver)
        throw Error("NetworkCore::continueMessage: a message from endpoint " + std::to_string(src) +
                    " to " + std::to_string(dst) +
                    " cannot go on here (endpoints out of range, or not a run whose links have "
                    "owners)");
    std::uint32_t index = allocateFlow();
    Flow& flow = state.flows[index];
    flow.cookie = cookie;
    flow.bytes = handOver.wireBytes;
    flow.src = src;
    flow.dst = dst;
    flow.order = handOver.order;
    flow.transit = true;
    const std::uint64_t nicPs = buildRoute(src, dst, flow);
    if (handOver.hop >= flow.route.size() || state.foreignLinks[flow.route[handOver.hop]])
        throw Error("NetworkCore::continueMessage: the message from endpoint " +
                    std::to_string(src) + " to " + std::to_string(dst) +
                    " was handed over at hop " + std::to_string(handOver.hop) +
                    ", which this process does not time");
    flow.hop = handOver.hop;
    flow.requestedPs = handOver.requestedPs;
    // As send() sets it (there in the loop that also counts the route's bytes).
    std::uint64_t latencyPs = config.messageDelay.ps() + nicPs;
    for (std::uint32_t link : flow.route)
        latencyPs += state.links[link].spec.latency.ps();
    flow.latencyPs = latencyPs;
    // What send() checks at the start, from the hand-over (before anything is scheduled).
    requireFitsTheClock(flow, src, dst, atPs);
    calendar.schedule(atPs, EventKind::Hop, index, 0);
}

void NetworkCore::deliver(std::uint32_t index)
{
    sink.delivered(retireFlow(index));
}

std::uint64_t NetworkCore::retireFlow(std::uint32_t index)
{
    const Flow& flow = state.flows[index];
    const std::uint64_t cookie = flow.cookie;
    // A message another process started was counted as sent and delivered there.
    deliveredCount += flow.transit ? 0 : 1;
    releaseFlow(index);
    return cookie;
}

void NetworkCore::handle(const CalendarEvent& event)
{
    switch (event.kind) {
    case EventKind::FlowFinish:
    case EventKind::Hop:
        policy->handle(event);
        break;
    case EventKind::Deliver:
        deliver(event.index);
        break;
    case EventKind::EngineTask:
        throw Error("NetworkCore::handle: an engine event reached the network core");
    }
}

void NetworkCore::settle()
{
    policy->settle();
}

} // namespace etsim::net
