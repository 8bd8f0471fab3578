#include "models/net/fidelity/FlowFidelity.h"

#include "kernel/Error.h"

#include <algorithm>
#include <limits>

namespace etsim::net {

namespace {

// Rates within this relative distance of the smallest share are fixed together, so flows
// that are equal up to rounding finish at the same instant.
constexpr double shareTolerance = 1e-9;

} // namespace

void FlowFidelity::start(std::uint32_t index)
{
    Flow& flow = state.flows[index];
    std::uint64_t now = state.calendar.now();
    flow.remaining = static_cast<double>(flow.bytes);
    flow.rate = 0.0;
    flow.lastPs = now;
    flow.slots.clear();
    for (std::size_t hop = 0; hop < flow.route.size(); ++hop) {
        LinkState& target = state.links[flow.route[hop]];
        if (target.flows.empty())
            target.busySincePs = now;
        flow.slots.push_back(static_cast<std::uint32_t>(target.flows.size()));
        target.flows.push_back(index);
        markDirty(flow.route[hop]);
    }
}

void FlowFidelity::handle(const CalendarEvent& event)
{
    if (event.kind != EventKind::FlowFinish)
        throw Error("NetworkCore: internal: the flow fidelity schedules only flow finishes");
    const Flow& flow = state.flows[event.index];
    if (flow.version == event.version && !flow.slots.empty())
        finishFlow(event.index);
}

void FlowFidelity::finishFlow(std::uint32_t index)
{
    Flow& flow = state.flows[index];
    std::uint64_t now = state.calendar.now();
    for (std::size_t hop = 0; hop < flow.route.size(); ++hop) {
        std::uint32_t link = flow.route[hop];
        LinkState& target = state.links[link];
        std::uint32_t slot = flow.slots[hop];
        std::uint32_t moved = target.flows.back();
        target.flows[slot] = moved;
        target.flows.pop_back();
        if (moved != index) {
            Flow& other = state.flows[moved];
            for (std::size_t otherHop = 0; otherHop < other.route.size(); ++otherHop)
                if (other.route[otherHop] == link) {
                    other.slots[otherHop] = slot;
                    break;
                }
        }
        if (state.timeline.attached())
            target.endedBytes += static_cast<double>(flow.bytes);
        if (target.flows.empty()) {
            target.busyPs += now - target.busySincePs;
            state.timeline.busy(link, target.busySincePs, now, target.endedBytes);
            target.endedBytes = 0.0;
            continue; // no flow left here whose rate could change
        }
        markDirty(link);
    }
    flow.remaining = 0.0;
    flow.rate = 0.0;
    ++flow.version;
    // In a partitioned run a message to another process's rank leaves here, its arrival
    // known (Partitioning::PerProcessSharing).
    state.deliverAt(index, now + flow.latencyPs);
}

void FlowFidelity::settle()
{
    if (dirtyLinks.empty())
        return;
    ++updates;
    epoch += 2;
    std::uint64_t mark = epoch;
    std::uint64_t now = state.calendar.now();
    // Each connected component of the changed links is evaluated on its own: rates elsewhere
    // cannot move.
    for (std::uint32_t seed : dirtyLinks) {
        LinkState& target = state.links[seed];
        if (target.mark == mark)
            continue;
        target.mark = mark;
        if (target.flows.empty())
            continue;
        if (target.flows.size() == 1 && settleAlone(target.flows.front(), mark, now))
            continue;
        settleComponent(seed, mark, now);
    }
    dirtyLinks.clear();
}

void FlowFidelity::advanceFlow(Flow& flow, std::uint64_t now)
{
    flow.remaining -= flow.rate * static_cast<double>(now - flow.lastPs);
    if (flow.remaining < 0.0)
        flow.remaining = 0.0;
    flow.lastPs = now;
}

void FlowFidelity::assignRate(std::uint32_t index, double rate, std::uint64_t now)
{
    Flow& flow = state.flows[index];
    if (flow.rate == rate)
        return;
    flow.rate = rate;
    ++rateChanges;
    ++flow.version;
    state.calendar.schedule(
        now + roundPs(flow.remaining / rate), EventKind::FlowFinish, index, flow.version);
}

bool FlowFidelity::settleAlone(std::uint32_t index, std::uint64_t mark, std::uint64_t now)
{
    // The common case of collectives: a flow that shares none of its links. Its rate is its
    // slowest link's bandwidth, which is what progressive filling gives a component of one flow.
    Flow& flow = state.flows[index];
    double rate = std::numeric_limits<double>::infinity();
    for (std::uint32_t link : flow.route) {
        const LinkState& target = state.links[link];
        if (target.flows.size() != 1)
            return false;
        rate = std::min(rate, target.bytesPerPs);
    }
    for (std::uint32_t link : flow.route)
        state.links[link].mark = mark;
    flow.mark = mark;
    advanceFlow(flow, now);
    assignRate(index, rate, now);
    return true;
}

void FlowFidelity::settleComponent(std::uint32_t seed, std::uint64_t mark, std::uint64_t now)
{
    std::vector<LinkState>& links = state.links;
    std::vector<Flow>& flows = state.flows;
    componentLinks.clear();
    componentFlows.clear();
    componentLinks.push_back(seed);
    for (std::size_t next = 0; next < componentLinks.size(); ++next) {
        LinkState& target = links[componentLinks[next]];
        for (std::uint32_t index : target.flows) {
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
        LinkState& target = links[link];
        target.capacity = target.bytesPerPs;
        target.unfixed = static_cast<std::uint32_t>(target.flows.size());
    }
    // Progressive filling: the link offering the smallest fair share fixes its flows at that
    // share; their rate is taken from every other link they cross; repeat.
    std::size_t left = componentFlows.size();
    while (left > 0) {
        double smallest = std::numeric_limits<double>::infinity();
        for (std::uint32_t link : componentLinks) {
            const LinkState& target = links[link];
            if (target.unfixed > 0)
                smallest = std::min(smallest, target.capacity / target.unfixed);
        }
        double limit = smallest * (1.0 + shareTolerance);
        for (std::uint32_t link : componentLinks) {
            LinkState& target = links[link];
            if (target.unfixed == 0 || target.capacity / target.unfixed > limit)
                continue;
            for (std::uint32_t index : target.flows) {
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
