#include "models/net/flow/NetworkCore.h"

#include "kernel/Error.h"
#include "models/net/topology/TopologyFactory.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <limits>
#include <sstream>
#include <string>

namespace etsim::net {

namespace {

constexpr std::uint64_t psPerNs = 1000;

// Route cache bound: 2^18 pairs keep a 4,096-rank run's collectives cached at a few MiB.
constexpr std::size_t maxCachedRoutes = std::size_t{1} << 18;
constexpr unsigned initialRouteTableBits = 10;

// Rates within this relative distance of the smallest share are fixed together, so flows
// that are equal up to rounding finish at the same instant.
constexpr double shareTolerance = 1e-9;

// Below 2^51, x + 0.5 is exact, so truncating it rounds half away from zero like llround
// (without the library call on the hot path).
constexpr double exactHalfLimit = 2251799813685248.0;

// 2^64 as a double: the first duration the simulated clock cannot hold.
constexpr double clockEndPs = 18446744073709551616.0;

std::uint64_t roundPs(double ps)
{
    if (ps <= 0.0)
        return 0;
    if (ps < exactHalfLimit)
        return static_cast<std::uint64_t>(ps + 0.5);
    // llround of a value past 2^63 is undefined; past 2^64 the time does not exist.
    if (!(ps < clockEndPs))
        throw Error("fabric: a transfer would take " + std::to_string(ps * 1e-12) +
                    " s, beyond the end of the simulated clock (2^64 ps, about 213 days); a "
                    "size or a link bandwidth is far outside the range of real hardware: check "
                    "comm_size and the fabric's bandwidths");
    // Doubles past 2^63 are whole numbers already; below, llround as before.
    if (ps >= 9223372036854775808.0)
        return static_cast<std::uint64_t>(ps);
    return static_cast<std::uint64_t>(std::llround(ps));
}

} // namespace

NetworkCore::NetworkCore(const TopologyIf& topologyIn,
                         const NetConfig& configIn,
                         EventCalendar& calendarIn,
                         MessageSink& sinkIn)
    : topology(topologyIn)
    , config(configIn)
    , calendar(calendarIn)
    , sink(sinkIn)
    , routeTable(std::size_t{1} << initialRouteTableBits)
    , routeTableBits(initialRouteTableBits)
{
    const IdVector<LinkId, Link>& specs = topology.links();
    nicLinks = config.nicBandwidth.bytesPerSecond() > 0.0;
    links.resize(specs.size() + (nicLinks ? 2 * topology.endpointCount() : 0));
    for (LinkId id : specs.ids())
        links[toUnderlying(id)].spec = specs[id];
    nicBase = specs.size();
    if (nicLinks) {
        std::uint32_t endpoints = topology.endpointCount();
        for (std::uint32_t rank = 0; rank < endpoints; ++rank) {
            links[nicBase + rank].spec = Link{rank, rank, config.nicBandwidth, Time(), 0};
            links[nicBase + endpoints + rank].spec =
                Link{rank, rank, config.nicBandwidth, Time(), 0};
        }
    }
    for (LinkState& state : links) {
        double perSecond = state.spec.bandwidth.bytesPerSecond();
        if (perSecond <= 0.0)
            throw Error("NetworkCore: a link from device " + std::to_string(state.spec.from) +
                        " to " + std::to_string(state.spec.to) +
                        " has zero bandwidth; every link needs a bandwidth above 0 B/s");
        state.bytesPerPs = perSecond * 1e-12;
        state.bytesPerNs = perSecond / 1e9;
    }
}

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
    const LinkState& state = links[index];
    if (config.fidelity == Fidelity::Flow && !state.flows.empty())
        return state.busyPs + (calendar.now() - state.busySincePs);
    return state.busyPs;
}

std::uint32_t NetworkCore::allocateFlow()
{
    if (!freeFlows.empty()) {
        std::uint32_t index = freeFlows.back();
        freeFlows.pop_back();
        return index;
    }
    flows.emplace_back();
    return static_cast<std::uint32_t>(flows.size() - 1);
}

void NetworkCore::releaseFlow(std::uint32_t index)
{
    Flow& flow = flows[index];
    flow.route.clear();
    flow.slots.clear();
    ++flow.version;
    freeFlows.push_back(index);
}

void NetworkCore::buildRoute(std::uint32_t src, std::uint32_t dst, Flow& flow)
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
            return;
        }
    appendRoute(src, dst, routeScratch, flow.route);
    if (routeCount >= maxCachedRoutes)
        return;
    routeTable[at] = RouteSlot{key,
                               static_cast<std::uint32_t>(routeLinks.size()),
                               static_cast<std::uint32_t>(flow.route.size())};
    routeLinks.insert(routeLinks.end(), flow.route.begin(), flow.route.end());
    ++routeCount;
    if (2 * routeCount > routeTable.size())
        growRouteTable();
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
                       std::uint64_t cookie)
{
    std::uint32_t endpoints = topology.endpointCount();
    if (src >= endpoints || dst >= endpoints)
        throw Error("NetworkCore::send: endpoint " + std::to_string(std::max(src, dst)) +
                    " out of range (the network has " + std::to_string(endpoints) + " endpoints)");
    std::uint32_t index = allocateFlow();
    Flow& flow = flows[index];
    flow.cookie = cookie;
    flow.bytes = wireBytes(bytes);
    flow.hop = 0;
    buildRoute(src, dst, flow);
    ++sent;
    std::uint64_t now = calendar.now();
    std::uint64_t latencyPs = 0;
    double bottleneck = std::numeric_limits<double>::infinity();
    for (std::uint32_t link : flow.route) {
        links[link].bytes += static_cast<double>(flow.bytes);
        latencyPs += links[link].spec.latency.ps();
        bottleneck = std::min(bottleneck, links[link].bytesPerPs);
    }
    flow.latencyPs = latencyPs + config.messageDelay.ps();

    if (flow.route.empty()) {
        calendar.schedule(now + config.messageDelay.ps(), EventKind::Deliver, index, 0);
        return;
    }
    if (remoteNetwork) {
        // The remote simulator packetises the payload itself: it gets the bytes, not
        // wireBytes(). The flow record keeps the cookie until remoteArrived().
        flow.remaining = 1.0;
        remoteNetwork->inject(src, dst, bytes, index);
        return;
    }
    switch (config.fidelity) {
    case Fidelity::Flow:
        startFlow(index);
        break;
    case Fidelity::Analytical: {
        std::uint64_t serialPs = roundPs(static_cast<double>(flow.bytes) / bottleneck);
        for (std::uint32_t link : flow.route) {
            std::uint64_t busy = roundPs(static_cast<double>(flow.bytes) / links[link].bytesPerPs);
            links[link].busyPs += busy;
            recordBusy(link, now, now + busy, static_cast<double>(flow.bytes));
        }
        deliverAt(index, dst, now + flow.latencyPs + serialPs);
        break;
    }
    case Fidelity::AstraUnaware: {
        double latencyNs = static_cast<double>(latencyPs) / psPerNs;
        // Bytes per ns as ASTRA-sim derives them (GB/s / 1e9), not via bytes per ps: the
        // rounding differs and the delay is truncated to whole ns.
        double bottleneckNs = std::numeric_limits<double>::infinity();
        for (std::uint32_t link : flow.route)
            bottleneckNs = std::min(bottleneckNs, links[link].bytesPerNs);
        auto delayNs = static_cast<std::uint64_t>(
            std::floor(latencyNs + static_cast<double>(flow.bytes) / bottleneckNs));
        for (std::uint32_t link : flow.route) {
            std::uint64_t busy =
                psPerNs * static_cast<std::uint64_t>(
                              std::floor(static_cast<double>(flow.bytes) / links[link].bytesPerNs));
            links[link].busyPs += busy;
            recordBusy(link, now, now + busy, static_cast<double>(flow.bytes));
        }
        deliverAt(index, dst, now + delayNs * psPerNs + config.messageDelay.ps());
        break;
    }
    case Fidelity::AstraAware:
        forwardHop(index);
        break;
    }
}

void NetworkCore::checkStreamAllowed(const char* what) const
{
    if (config.fidelity != Fidelity::Flow && config.fidelity != Fidelity::Analytical)
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
    Flow& flow = flows[index];
    ++sent;
    std::uint64_t now = calendar.now();
    double bottleneck = std::numeric_limits<double>::infinity();
    for (std::uint32_t link : flow.route) {
        links[link].bytes += static_cast<double>(flow.bytes);
        bottleneck = std::min(bottleneck, links[link].bytesPerPs);
    }
    flow.latencyPs = latencyPs + config.messageDelay.ps();
    if (flow.route.empty()) {
        calendar.schedule(now + config.messageDelay.ps(), EventKind::Deliver, index, 0);
        return;
    }
    if (config.fidelity == Fidelity::Flow) {
        startFlow(index);
        return;
    }
    std::uint64_t serialPs = roundPs(static_cast<double>(flow.bytes) / bottleneck);
    for (std::uint32_t link : flow.route) {
        std::uint64_t busy = roundPs(static_cast<double>(flow.bytes) / links[link].bytesPerPs);
        links[link].busyPs += busy;
        recordBusy(link, now, now + busy, static_cast<double>(flow.bytes));
    }
    calendar.schedule(now + flow.latencyPs + serialPs, EventKind::Deliver, index, 0);
}

void NetworkCore::sendStream(const std::vector<std::pair<std::uint32_t, std::uint32_t>>& pairs,
                             std::uint64_t bytes,
                             std::uint64_t cookie)
{
    checkStreamAllowed("sendStream");
    std::uint32_t endpoints = topology.endpointCount();
    std::uint32_t index = allocateFlow();
    Flow& flow = flows[index];
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
            pairLatency += links[link].spec.latency.ps();
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
    Flow& flow = flows[index];
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
            latency += links[link].spec.latency.ps();
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

void NetworkCore::forwardHop(std::uint32_t index)
{
    Flow& flow = flows[index];
    LinkState& state = links[flow.route[flow.hop]];
    std::uint64_t now = calendar.now();
    std::uint64_t start = std::max(now, state.freeAtPs);
    double bytes = static_cast<double>(flow.bytes);
    auto serialNs = static_cast<std::uint64_t>(std::floor(bytes / state.bytesPerNs));
    auto hopNs = static_cast<std::uint64_t>(std::floor(
        static_cast<double>(state.spec.latency.ps()) / psPerNs + bytes / state.bytesPerNs));
    state.freeAtPs = start + serialNs * psPerNs;
    state.busyPs += serialNs * psPerNs;
    recordBusy(flow.route[flow.hop], start, state.freeAtPs, bytes);
    std::uint64_t arrive = start + hopNs * psPerNs;
    ++flow.hop;
    if (flow.hop == flow.route.size())
        calendar.schedule(arrive + config.messageDelay.ps(), EventKind::Deliver, index, 0);
    else
        calendar.schedule(arrive, EventKind::Hop, index, 0);
}

void NetworkCore::attachTimeline(Timeline& target, std::uint32_t processId)
{
    timeline = &target;
    timelineProcess = processId;
}

void NetworkCore::mergeBusy(std::uint32_t link,
                            std::uint64_t startPs,
                            std::uint64_t endPs,
                            double bytes)
{
    // Per link, intervals arrive in order of their start, so merging needs only the last one.
    LinkState& state = links[link];
    if (state.spanOpen && startPs <= state.spanEndPs) {
        state.spanEndPs = std::max(state.spanEndPs, endPs);
        state.spanBytes += bytes;
        return;
    }
    if (state.spanOpen)
        writeSpan(link);
    state.spanOpen = true;
    state.spanStartPs = startPs;
    state.spanEndPs = endPs;
    state.spanBytes = bytes;
}

void NetworkCore::writeSpan(std::uint32_t link)
{
    LinkState& state = links[link];
    state.spanOpen = false;
    if (state.spanEndPs == state.spanStartPs)
        return;
    if (!state.trackNamed) {
        state.trackNamed = true;
        std::uint32_t endpoints = topology.endpointCount();
        std::string label;
        if (link < nicBase)
            label = "link " + std::to_string(link) + ": device " + std::to_string(state.spec.from) +
                    " -> " + std::to_string(state.spec.to);
        else if (link < nicBase + endpoints)
            label = "nic " + std::to_string(link) + ": injection of rank " +
                    std::to_string(link - nicBase);
        else
            label = "nic " + std::to_string(link) + ": ejection of rank " +
                    std::to_string(link - nicBase - endpoints);
        timeline->threadName(timelineProcess, link, label, link);
    }
    timeline->complete(timelineProcess,
                       link,
                       "busy",
                       "link",
                       state.spanStartPs,
                       state.spanEndPs - state.spanStartPs,
                       {{"bytes", static_cast<std::uint64_t>(std::llround(state.spanBytes))}});
}

void NetworkCore::flushTimeline()
{
    if (timeline == nullptr)
        return;
    for (std::uint32_t link = 0; link < links.size(); ++link)
        if (links[link].spanOpen)
            writeSpan(link);
}

void NetworkCore::markDirty(std::uint32_t link)
{
    LinkState& state = links[link];
    if (state.mark == epoch + 1)
        return;
    state.mark = epoch + 1;
    dirtyLinks.push_back(link);
}

void NetworkCore::startFlow(std::uint32_t index)
{
    Flow& flow = flows[index];
    std::uint64_t now = calendar.now();
    flow.remaining = static_cast<double>(flow.bytes);
    flow.rate = 0.0;
    flow.lastPs = now;
    flow.slots.clear();
    for (std::size_t hop = 0; hop < flow.route.size(); ++hop) {
        LinkState& state = links[flow.route[hop]];
        if (state.flows.empty())
            state.busySincePs = now;
        flow.slots.push_back(static_cast<std::uint32_t>(state.flows.size()));
        state.flows.push_back(index);
        markDirty(flow.route[hop]);
    }
}

void NetworkCore::finishFlow(std::uint32_t index)
{
    Flow& flow = flows[index];
    std::uint64_t now = calendar.now();
    for (std::size_t hop = 0; hop < flow.route.size(); ++hop) {
        std::uint32_t link = flow.route[hop];
        LinkState& state = links[link];
        std::uint32_t slot = flow.slots[hop];
        std::uint32_t moved = state.flows.back();
        state.flows[slot] = moved;
        state.flows.pop_back();
        if (moved != index) {
            Flow& other = flows[moved];
            for (std::size_t otherHop = 0; otherHop < other.route.size(); ++otherHop)
                if (other.route[otherHop] == link) {
                    other.slots[otherHop] = slot;
                    break;
                }
        }
        if (timeline != nullptr)
            state.endedBytes += static_cast<double>(flow.bytes);
        if (state.flows.empty()) {
            state.busyPs += now - state.busySincePs;
            recordBusy(link, state.busySincePs, now, state.endedBytes);
            state.endedBytes = 0.0;
        }
        markDirty(link);
    }
    flow.remaining = 0.0;
    flow.rate = 0.0;
    ++flow.version;
    calendar.schedule(now + flow.latencyPs, EventKind::Deliver, index, 0);
}

void NetworkCore::remoteArrived(std::uint64_t message)
{
    if (!remoteNetwork || message >= flows.size() || flows[message].remaining != 1.0)
        throw Error("NetworkCore::remoteArrived: message " + std::to_string(message) +
                    " is not in flight on the remote network");
    Flow& flow = flows[message];
    flow.remaining = 0.0;
    calendar.schedule(calendar.now() + config.messageDelay.ps(),
                      EventKind::Deliver,
                      static_cast<std::uint32_t>(message),
                      0);
}

void NetworkCore::appendRoute(std::uint32_t src,
                              std::uint32_t dst,
                              std::vector<LinkId>& hops,
                              std::vector<std::uint32_t>& route) const
{
    hops.clear();
    topology.route(src, dst, hops);
    if (nicLinks && src != dst)
        route.push_back(static_cast<std::uint32_t>(nicBase + src));
    for (LinkId id : hops)
        route.push_back(toUnderlying(id));
    if (nicLinks && src != dst)
        route.push_back(static_cast<std::uint32_t>(nicBase + topology.endpointCount() + dst));
}

void NetworkCore::routeOf(std::uint32_t src,
                          std::uint32_t dst,
                          std::vector<std::uint32_t>& route) const
{
    std::vector<LinkId> hops;
    route.clear();
    appendRoute(src, dst, hops, route);
}

std::string NetworkCore::describe() const
{
    std::ostringstream text;
    // The topology's own routes are described by its shape (the adapter rebuilds them with
    // this code), so the text grows with the links, not with ranks^2. Routes that cross links
    // the topology does not have (NIC links) or links from a device to itself (switch
    // crossbars) are listed pair by pair.
    bool listRoutes = nicLinks;
    for (const LinkState& state : links)
        listRoutes = listRoutes || state.spec.from == state.spec.to;
    text << "# etsim fabric description (docs/cosim-ns3.md)\n"
         << "etsim-fabric " << (listRoutes ? 1 : 2) << '\n'
         << "endpoints " << topology.endpointCount() << '\n'
         << "devices " << topology.deviceCount() << '\n';
    text << std::setprecision(17);
    for (std::size_t index = 0; index < links.size(); ++index) {
        const Link& spec = links[index].spec;
        text << "link " << index << ' ' << spec.from << ' ' << spec.to << ' '
             << spec.bandwidth.bytesPerSecond() << ' ' << spec.latency.ps() << '\n';
    }
    if (!listRoutes) {
        text << "routing " << routingShape(config) << '\n';
        return text.str();
    }
    std::vector<std::uint32_t> route;
    const std::uint32_t endpoints = topology.endpointCount();
    for (std::uint32_t src = 0; src < endpoints; ++src)
        for (std::uint32_t dst = 0; dst < endpoints; ++dst) {
            if (src == dst)
                continue;
            routeOf(src, dst, route);
            text << "route " << src << ' ' << dst;
            for (std::uint32_t link : route)
                text << ' ' << link;
            text << '\n';
        }
    return text.str();
}

void NetworkCore::setCrossing(CrossingSink* sink)
{
    if (sink != nullptr && config.fidelity != Fidelity::Analytical &&
        config.fidelity != Fidelity::AstraUnaware)
        throw Error("a partitioned run needs the analytical or astra_unaware fidelity, whose "
                    "message times are known when a message starts; fabric.fidelity " +
                    std::string(enumName(fidelityNames, config.fidelity)) +
                    " shares links between messages of every process (run it in one process)");
    crossing = sink;
}

void NetworkCore::deliverAt(std::uint32_t index, std::uint32_t dst, std::uint64_t timePs)
{
    if (crossing == nullptr || !crossing->crosses(dst)) {
        calendar.schedule(timePs, EventKind::Deliver, index, 0);
        return;
    }
    const std::uint64_t cookie = flows[index].cookie;
    releaseFlow(index);
    ++deliveredCount;
    crossing->crossed(cookie, timePs);
}

void NetworkCore::deliver(std::uint32_t index)
{
    std::uint64_t cookie = flows[index].cookie;
    releaseFlow(index);
    ++deliveredCount;
    sink.delivered(cookie);
}

void NetworkCore::handle(const CalendarEvent& event)
{
    switch (event.kind) {
    case EventKind::FlowFinish:
        if (flows[event.index].version == event.version && !flows[event.index].slots.empty())
            finishFlow(event.index);
        break;
    case EventKind::Deliver:
        deliver(event.index);
        break;
    case EventKind::Hop:
        forwardHop(event.index);
        break;
    case EventKind::EngineTask:
        throw Error("NetworkCore::handle: an engine event reached the network core");
    }
}

void NetworkCore::settle()
{
    if (dirtyLinks.empty())
        return;
    ++updates;
    epoch += 2;
    std::uint64_t mark = epoch;
    std::uint64_t now = calendar.now();
    // Each connected component of the changed links is evaluated on its own: rates elsewhere
    // cannot move.
    for (std::uint32_t seed : dirtyLinks) {
        LinkState& state = links[seed];
        if (state.mark == mark)
            continue;
        state.mark = mark;
        if (state.flows.empty())
            continue;
        if (state.flows.size() == 1 && settleAlone(state.flows.front(), mark, now))
            continue;
        settleComponent(seed, mark, now);
    }
    dirtyLinks.clear();
}

void NetworkCore::advanceFlow(Flow& flow, std::uint64_t now)
{
    flow.remaining -= flow.rate * static_cast<double>(now - flow.lastPs);
    if (flow.remaining < 0.0)
        flow.remaining = 0.0;
    flow.lastPs = now;
}

void NetworkCore::assignRate(std::uint32_t index, double rate, std::uint64_t now)
{
    Flow& flow = flows[index];
    if (flow.rate == rate)
        return;
    flow.rate = rate;
    ++rateChanges;
    ++flow.version;
    calendar.schedule(
        now + roundPs(flow.remaining / rate), EventKind::FlowFinish, index, flow.version);
}

bool NetworkCore::settleAlone(std::uint32_t index, std::uint64_t mark, std::uint64_t now)
{
    // The common case of collectives: a flow that shares none of its links. Its rate is its
    // slowest link's bandwidth, which is what progressive filling gives a component of one flow.
    Flow& flow = flows[index];
    double rate = std::numeric_limits<double>::infinity();
    for (std::uint32_t link : flow.route) {
        const LinkState& state = links[link];
        if (state.flows.size() != 1)
            return false;
        rate = std::min(rate, state.bytesPerPs);
    }
    for (std::uint32_t link : flow.route)
        links[link].mark = mark;
    flow.mark = mark;
    advanceFlow(flow, now);
    assignRate(index, rate, now);
    return true;
}

void NetworkCore::settleComponent(std::uint32_t seed, std::uint64_t mark, std::uint64_t now)
{
    componentLinks.clear();
    componentFlows.clear();
    componentLinks.push_back(seed);
    for (std::size_t next = 0; next < componentLinks.size(); ++next) {
        LinkState& state = links[componentLinks[next]];
        for (std::uint32_t index : state.flows) {
            Flow& flow = flows[index];
            if (flow.mark == mark)
                continue;
            flow.mark = mark;
            componentFlows.push_back(index);
            for (std::uint32_t link : flow.route)
                if (links[link].mark != mark) {
                    links[link].mark = mark;
                    componentLinks.push_back(link);
                }
        }
    }
    // (Written out rather than calling advanceFlow: this loop runs over every flow of a
    // component, which for an all-to-all is every flow in the network.)
    for (std::uint32_t index : componentFlows) {
        Flow& flow = flows[index];
        flow.remaining -= flow.rate * static_cast<double>(now - flow.lastPs);
        if (flow.remaining < 0.0)
            flow.remaining = 0.0;
        flow.lastPs = now;
        flow.fixed = false;
    }
    for (std::uint32_t link : componentLinks) {
        LinkState& state = links[link];
        state.capacity = state.bytesPerPs;
        state.unfixed = static_cast<std::uint32_t>(state.flows.size());
    }
    // Progressive filling: the link offering the smallest fair share fixes its flows at that
    // share; their rate is taken from every other link they cross; repeat.
    std::size_t left = componentFlows.size();
    while (left > 0) {
        double smallest = std::numeric_limits<double>::infinity();
        for (std::uint32_t link : componentLinks) {
            const LinkState& state = links[link];
            if (state.unfixed > 0)
                smallest = std::min(smallest, state.capacity / state.unfixed);
        }
        double limit = smallest * (1.0 + shareTolerance);
        for (std::uint32_t link : componentLinks) {
            LinkState& state = links[link];
            if (state.unfixed == 0 || state.capacity / state.unfixed > limit)
                continue;
            for (std::uint32_t index : state.flows) {
                Flow& flow = flows[index];
                if (flow.fixed)
                    continue;
                flow.fixed = true;
                --left;
                for (std::uint32_t other : flow.route) {
                    LinkState& crossed = links[other];
                    crossed.capacity = std::max(0.0, crossed.capacity - smallest);
                    --crossed.unfixed;
                }
                if (flow.rate != smallest)
                    assignRate(index, smallest, now);
            }
        }
    }
}

} // namespace etsim::net
