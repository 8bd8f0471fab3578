#pragma once
// Moves messages between endpoints over a topology, in one of four fidelity modes
// (docs/network.md states what each ignores):
//
//   Flow          a message is a flow on its route. Flows share every link max-min fairly
//                 (progressive filling); rates are re-evaluated once per simulated instant in
//                 which flows started or ended, only over the links and flows connected to
//                 the change. The last byte leaves the source at the flow's finish; the message
//                 arrives after the route's summed latency (cut-through):
//                 T = sum(l_i) + wire_bytes / B for a flow alone.
//   Analytical    T = sum(l_i) + wire_bytes / min(B_i); no link state, no contention.
//   AstraAware    ASTRA-sim's congestion-aware backend: every link a FIFO server, a message
//                 holds a link for floor(m/B) ns and reaches the next device floor(L + m/B) ns
//                 after it started on the link (store-and-forward, integer ns).
//   AstraUnaware  ASTRA-sim's congestion-unaware backend: floor(sum(L) + m/B) ns.
//
// Packetisation (wire_bytes = S + ceil(S/P) * H), optional NIC links (one injection and one
// ejection link per endpoint, added to every route) and a fixed per-message delay at the
// receiver apply in every mode. All state is plain C++; the owner drives the calendar.

#include "kernel/Timeline.h"
#include "models/net/NetConfig.h"
#include "models/net/flow/EventCalendar.h"
#include "models/net/topology/TopologyIf.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace etsim::net {

/// Receives arrivals. `cookie` is what the sender passed to NetworkCore::send.
class MessageSink {
public:
    virtual void delivered(std::uint64_t cookie) = 0;

protected:
    ~MessageSink() = default;
};

/// Carries messages through another simulator instead of the core's own timing (the fabric
/// co-simulated, docs/cosim-ns3.md). The owner reports each arrival with
/// NetworkCore::remoteArrived at the simulated time it happened.
class RemoteNetwork {
public:
    /// A message of `bytes` payload from endpoint `src` to `dst` starts now; `message`
    /// identifies it in remoteArrived.
    virtual void
    inject(std::uint32_t src, std::uint32_t dst, std::uint64_t bytes, std::uint64_t message) = 0;

protected:
    ~RemoteNetwork() = default;
};

/// Partitioned runs (docs/partitioned-runs.md): messages to endpoints simulated by another
/// process leave here, at the time they are sent, with the time they will arrive.
class CrossingSink {
public:
    /// True when endpoint `dst` belongs to another process.
    virtual bool crosses(std::uint32_t dst) const = 0;
    /// The message sent with `cookie` will arrive at its (remote) destination at `arrivalPs`.
    virtual void crossed(std::uint64_t cookie, std::uint64_t arrivalPs) = 0;

protected:
    ~CrossingSink() = default;
};

class NetworkCore {
public:
    /// The topology, config, calendar and sink must outlive the core. A NIC bandwidth of 0 in
    /// the config means no NIC links.
    NetworkCore(const TopologyIf& topology,
                const NetConfig& config,
                EventCalendar& calendar,
                MessageSink& sink);
    NetworkCore(const NetworkCore&) = delete;
    NetworkCore& operator=(const NetworkCore&) = delete;

    /// Starts a message of `bytes` from endpoint `src` to `dst` at the calendar's now().
    void send(std::uint32_t src, std::uint32_t dst, std::uint64_t bytes, std::uint64_t cookie);
    /// Starts one stream of `bytes` at the calendar's now() that crosses the routes of all
    /// `pairs` (src, dst endpoints) at a single rate: an in-switch reduction, whose data goes up
    /// every member's uplink and down every member's downlink together. It arrives (once, with
    /// `cookie`) after the longest of the pairs' route latencies plus the message delay. Flow
    /// and analytical fidelities only (throws etsim::Error otherwise).
    void sendStream(const std::vector<std::pair<std::uint32_t, std::uint32_t>>& pairs,
                    std::uint64_t bytes,
                    std::uint64_t cookie);
    /// Starts one stream of `bytes` at the calendar's now() through the switch that joins
    /// `sources` and `destinations` (endpoints of one switch line): the data goes up the
    /// first half of every source's route to another member and down the second half of
    /// every destination's route from another member, all at a single rate (the switch
    /// reduces the sources' data, or multicasts one source's data, at line rate, pipelined).
    /// It arrives (once, with `cookie`) after the longest up half plus the longest down half
    /// of the routes' latency, plus the message delay. The members together must name at least
    /// two endpoints. Flow and analytical fidelities only (throws etsim::Error otherwise).
    void sendSwitchStream(const std::vector<std::uint32_t>& sources,
                          const std::vector<std::uint32_t>& destinations,
                          std::uint64_t bytes,
                          std::uint64_t cookie);
    /// From now on send() hands messages between different endpoints to `remote` (nullptr:
    /// back to the core's own timing). Streams (sendStream) are refused while it is set.
    void setRemote(RemoteNetwork* remote) { remoteNetwork = remote; }
    bool isRemote() const { return remoteNetwork != nullptr; }
    /// From now on messages to endpoints `crossing` says are remote leave through it instead of
    /// arriving here (nullptr: none leave). Only the analytical and astra_unaware fidelities,
    /// whose arrival time is known when a message starts (throws etsim::Error otherwise).
    void setCrossing(CrossingSink* crossing);
    /// The remote network delivered `message` at the calendar's now(); the sink hears of it
    /// after the message delay. Throws etsim::Error for a message not in flight.
    void remoteArrived(std::uint64_t message);
    /// The network as the co-simulation CONFIG text (docs/cosim-ns3.md, "The fabric
    /// description"): endpoints, devices, every link (including NIC links) with its bandwidth
    /// and latency, and the routes: the topology's routing shape (format 2), or, when a route
    /// crosses NIC or self links, the route of every ordered pair of endpoints (format 1).
    std::string describe() const;

    /// Handles a FlowFinish, Deliver or Hop event popped from the calendar.
    void handle(const CalendarEvent& event);
    /// Re-evaluates flow rates after every event of the current instant was handled.
    void settle();

    /// Links the core uses: the topology's, then (with NIC bandwidth) injection link of each
    /// endpoint, then its ejection link.
    std::size_t linkCount() const { return links.size(); }
    const Link& link(std::size_t index) const { return links[index].spec; }
    /// Wire bytes that crossed (or are crossing) link `index`, B.
    double linkBytes(std::size_t index) const { return links[index].bytes; }
    /// Time link `index` carried data, ps (Flow: time with at least one flow; other modes:
    /// the sum of serialisation times).
    std::uint64_t linkBusyPs(std::size_t index) const;
    /// Messages sent and delivered so far.
    std::uint64_t messagesSent() const { return sent; }
    std::uint64_t messagesDelivered() const { return deliveredCount; }
    /// Rate re-evaluations (Flow mode) and flows whose rate they set.
    std::uint64_t rateUpdates() const { return updates; }
    std::uint64_t flowRateChanges() const { return rateChanges; }
    /// Messages in flight.
    std::uint64_t inFlight() const { return sent - deliveredCount; }
    /// Wire bytes of a message of `bytes` payload (packet headers added).
    std::uint64_t wireBytes(std::uint64_t bytes) const;

    /// Writes one track per link that carries data on `timeline`: thread = link index under
    /// process `processId`, one "busy" slice per busy interval (intervals that overlap or touch
    /// are merged, so a slice spans many messages) with the wire bytes it carried. Busy means
    /// what linkBusyPs() counts. The timeline must outlive the core.
    void attachTimeline(Timeline& timeline, std::uint32_t processId);
    /// Writes the busy intervals still held for merging; call when the network is idle (the
    /// Fabric does) and before closing the timeline.
    void flushTimeline();

private:
    struct LinkState {
        Link spec;
        double bytesPerPs = 0.0;
        double bytesPerNs = 0.0;
        std::vector<std::uint32_t> flows;
        double bytes = 0.0;
        std::uint64_t busyPs = 0;
        std::uint64_t busySincePs = 0;
        std::uint64_t freeAtPs = 0;
        // Timeline: the busy interval being merged, and bytes of flows that ended in it.
        std::uint64_t spanStartPs = 0;
        std::uint64_t spanEndPs = 0;
        double spanBytes = 0.0;
        double endedBytes = 0.0;
        bool spanOpen = false;
        bool trackNamed = false;
        // Scratch for rate evaluation.
        double capacity = 0.0;
        std::uint32_t unfixed = 0;
        std::uint64_t mark = 0;
    };
    struct Flow {
        std::vector<std::uint32_t> route;
        std::vector<std::uint32_t> slots;
        double remaining = 0.0;
        double rate = 0.0;
        std::uint64_t lastPs = 0;
        std::uint64_t latencyPs = 0;
        std::uint64_t cookie = 0;
        std::uint64_t bytes = 0;
        std::uint64_t mark = 0;
        std::uint32_t version = 0;
        std::uint32_t hop = 0;
        bool fixed = false;
    };

    // One remembered route: key = (src << 32 | dst) + 1 (0 = empty slot), links in routeLinks.
    struct RouteSlot {
        std::uint64_t key = 0;
        std::uint32_t offset = 0;
        std::uint32_t length = 0;
    };

    std::uint32_t allocateFlow();
    // The one route builder: the topology's hops between endpoints `src` and `dst`, with the
    // NIC injection and ejection links around them when configured, appended to `route`
    // (`hops` is scratch). buildRoute caches its result; routeOf does not.
    void appendRoute(std::uint32_t src,
                     std::uint32_t dst,
                     std::vector<LinkId>& hops,
                     std::vector<std::uint32_t>& route) const;
    void routeOf(std::uint32_t src, std::uint32_t dst, std::vector<std::uint32_t>& route) const;
    void releaseFlow(std::uint32_t index);
    void buildRoute(std::uint32_t src, std::uint32_t dst, Flow& flow);
    void startFlow(std::uint32_t index);
    void checkStreamAllowed(const char* what) const;
    void launchStream(std::uint32_t index, std::uint64_t latencyPs);
    void finishFlow(std::uint32_t index);
    void forwardHop(std::uint32_t index);
    void deliver(std::uint32_t index);
    // Schedules the arrival of flow `index` at endpoint `dst`, or hands it to the crossing.
    void deliverAt(std::uint32_t index, std::uint32_t dst, std::uint64_t timePs);
    void markDirty(std::uint32_t link);
    // Inline so that a run without a timeline pays one test per link event.
    void recordBusy(std::uint32_t link, std::uint64_t startPs, std::uint64_t endPs, double bytes)
    {
        if (timeline != nullptr)
            mergeBusy(link, startPs, endPs, bytes);
    }
    void mergeBusy(std::uint32_t link, std::uint64_t startPs, std::uint64_t endPs, double bytes);
    void writeSpan(std::uint32_t link);
    std::size_t routeSlotOf(std::uint64_t key) const;
    void growRouteTable();
    void advanceFlow(Flow& flow, std::uint64_t now);
    void assignRate(std::uint32_t index, double rate, std::uint64_t now);
    bool settleAlone(std::uint32_t index, std::uint64_t mark, std::uint64_t now);
    void settleComponent(std::uint32_t seed, std::uint64_t mark, std::uint64_t now);

    const TopologyIf& topology;
    const NetConfig& config;
    EventCalendar& calendar;
    MessageSink& sink;
    std::vector<LinkState> links;
    RemoteNetwork* remoteNetwork = nullptr;
    CrossingSink* crossing = nullptr;
    std::size_t nicBase = 0;
    bool nicLinks = false;
    std::vector<Flow> flows;
    std::vector<std::uint32_t> freeFlows;
    std::vector<std::uint32_t> dirtyLinks;
    std::vector<std::uint32_t> componentLinks;
    std::vector<std::uint32_t> componentFlows;
    std::vector<LinkId> routeScratch;
    std::vector<RouteSlot> routeTable; // open addressing, linear probing, power-of-two size
    unsigned routeTableBits = 0;
    std::size_t routeCount = 0;
    std::vector<std::uint32_t> routeLinks;
    Timeline* timeline = nullptr;
    std::uint32_t timelineProcess = 0;
    std::uint64_t epoch = 0;
    std::uint64_t sent = 0;
    std::uint64_t deliveredCount = 0;
    std::uint64_t updates = 0;
    std::uint64_t rateChanges = 0;
};

} // namespace etsim::net
