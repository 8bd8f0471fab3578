#pragma once
// Moves messages between endpoints over a topology. The core builds each message's route
// (FabricLinks: the topology's links and, when configured, NIC links), counts its wire bytes
// (wire_bytes = S + ceil(S/P) * H, packetisation), remembers routes, and delivers; when and how
// a message crosses its route is the fidelity policy's (models/net/fidelity/, one per
// `fidelity` of docs/network.md, which also states what each ignores). A fixed per-message
// delay at the receiver applies in every fidelity. All state is plain C++; the owner drives the
// calendar.

#include "kernel/Timeline.h"
#include "models/net/NetConfig.h"
#include "models/net/fidelity/FidelityIf.h"
#include "models/net/flow/EventCalendar.h"
#include "models/net/flow/NetworkState.h"
#include "models/net/topology/FabricLinks.h"
#include "models/net/topology/TopologyIf.h"

#include <cstdint>
#include <memory>
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

/// Where a message from endpoint `src` to `dst` goes on in another process
/// (Partitioning::LinkOwners): at link `hop` of its route, which the process of endpoint `via`
/// times; with the time its request for that link was made, its wire bytes and its order among
/// an instant's requests.
struct HandOver {
    std::uint32_t src = 0;
    std::uint32_t dst = 0;
    std::uint32_t via = 0;
    std::uint32_t hop = 0;
    std::uint64_t requestedPs = 0;
    std::uint64_t wireBytes = 0;
    MessageOrder order;
};

/// Partitioned runs (docs/partitioned-runs.md): messages to endpoints simulated by another
/// process leave here once their arrival is known, with the time they will arrive; with
/// Partitioning::LinkOwners they leave at the first link another process times.
class CrossingSink {
public:
    /// True when endpoint `dst` belongs to another process.
    virtual bool crosses(std::uint32_t dst) const = 0;
    /// The message sent with `cookie` will arrive at its (remote) destination at `arrivalPs`.
    virtual void crossed(std::uint64_t cookie, std::uint64_t arrivalPs) = 0;
    /// LinkOwners: the message with `cookie` goes on in another process, reaching its next
    /// link there at `atPs`.
    virtual void handedOver(std::uint64_t cookie, std::uint64_t atPs, const HandOver& handOver) = 0;
    /// LinkOwners: the message with `cookie` will arrive at its local destination at
    /// `arrivalPs` (its sender may be in another process).
    virtual void arriving(std::uint64_t cookie, std::uint64_t arrivalPs) = 0;

protected:
    ~CrossingSink() = default;
};

class NetworkCore {
public:
    /// The topology, config, calendar and sink must outlive the core. A NIC bandwidth of 0 in
    /// the config means no NIC links. The config's fidelity chooses the timing policy.
    NetworkCore(const TopologyIf& topology,
                const NetConfig& config,
                EventCalendar& calendar,
                MessageSink& sink);
    ~NetworkCore();
    NetworkCore(const NetworkCore&) = delete;
    NetworkCore& operator=(const NetworkCore&) = delete;

    /// Starts a message of `bytes` from endpoint `src` to `dst` at the calendar's now().
    /// `order` ranks it among messages asking for one link at the same instant (astra_aware,
    /// MessageOrder).
    void send(std::uint32_t src,
              std::uint32_t dst,
              std::uint64_t bytes,
              std::uint64_t cookie,
              const MessageOrder& order = {});
    /// Starts one stream of `bytes` at the calendar's now() that crosses the routes of all
    /// `pairs` (src, dst endpoints) at a single rate: an in-switch reduction, whose data goes up
    /// every member's uplink and down every member's downlink together. It arrives (once, with
    /// `cookie`) after the longest of the pairs' route latencies plus the message delay. Only
    /// fidelities that carry streams (NetConfig.h, fidelityAbilities; throws etsim::Error
    /// otherwise).
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
    /// two endpoints. Only fidelities that carry streams (throws etsim::Error otherwise).
    void sendSwitchStream(const std::vector<std::uint32_t>& sources,
                          const std::vector<std::uint32_t>& destinations,
                          std::uint64_t bytes,
                          std::uint64_t cookie);
    /// From now on send() hands messages between different endpoints to `remote` (nullptr:
    /// back to the core's own timing). Streams (sendStream) are refused while it is set.
    void setRemote(RemoteNetwork* remote) { remoteNetwork = remote; }
    bool isRemote() const { return remoteNetwork != nullptr; }
    /// From now on messages to endpoints `crossing` says are remote leave through it instead of
    /// arriving here (nullptr: none leave), once their arrival is known: when they start, in
    /// the flow fidelity when their last byte has crossed, and in astra_aware at the first link
    /// another process times (FidelityAbilities::partitioning). Throws etsim::Error for a link
    /// that no process can own (astra_aware between two switches).
    void setCrossing(CrossingSink* crossing);
    /// Partitioned runs (Partitioning::LinkOwners): a message another process started goes on
    /// here from `handOver.hop` at `atPs` (not before now()); `cookie` as for send(). Its bytes
    /// were counted on the route's links where it started.
    void continueMessage(std::uint64_t atPs, const HandOver& handOver, std::uint64_t cookie);
    /// The remote network delivered `message` at the calendar's now(); the sink hears of it
    /// after the message delay. Throws etsim::Error for a message not in flight.
    void remoteArrived(std::uint64_t message);
    /// The links messages cross and the route builder (the bridge describes them to a peer
    /// that carries the messages: cosim/adapters/ns3/FabricDescription.h).
    const FabricLinks& fabricLinks() const { return fabric; }
    /// The timing policy of the configured fidelity.
    const FidelityIf& fidelity() const { return *policy; }

    /// Handles a FlowFinish, Deliver or Hop event popped from the calendar.
    void handle(const CalendarEvent& event);
    /// Re-evaluates flow rates after every event of the current instant was handled.
    void settle();
    /// True when settle() has rates to re-evaluate (messages started or ended since).
    bool settlePending() const { return policy->settlePending(); }

    /// Links the core uses: the topology's, then (with NIC bandwidth) injection link of each
    /// endpoint, then its ejection link.
    std::size_t linkCount() const { return state.links.size(); }
    const Link& link(std::size_t index) const { return state.links[index].spec; }
    /// Wire bytes that crossed (or are crossing) link `index`, B.
    double linkBytes(std::size_t index) const { return state.links[index].bytes; }
    /// Time link `index` carried data, ps (flow: time with at least one flow; other
    /// fidelities: the sum of serialisation times).
    std::uint64_t linkBusyPs(std::size_t index) const;
    /// Messages sent and delivered so far.
    std::uint64_t messagesSent() const { return sent; }
    std::uint64_t messagesDelivered() const { return deliveredCount; }
    /// Rate re-evaluations (Flow mode) and flows whose rate they set.
    std::uint64_t rateUpdates() const { return policy->rateUpdates(); }
    std::uint64_t flowRateChanges() const { return policy->flowRateChanges(); }
    /// Messages in flight.
    std::uint64_t inFlight() const { return sent - deliveredCount; }
    /// Wire bytes of a message of `bytes` payload (packet headers added).
    std::uint64_t wireBytes(std::uint64_t bytes) const;

    /// Writes one track per link that carries data on `timeline`: thread = link index under
    /// process `processId`, one "busy" slice per busy interval (intervals that overlap or touch
    /// are merged, so a slice spans many messages) with the wire bytes it carried. Busy means
    /// what linkBusyPs() counts. The timeline must outlive the core.
    void attachTimeline(Timeline& timeline, std::uint32_t processId)
    {
        state.timeline.attach(timeline, processId);
    }
    /// Writes the busy intervals still held for merging; call when the network is idle (the
    /// Fabric does) and before closing the timeline.
    void flushTimeline() { state.timeline.flush(); }

private:
    // One remembered route: key = (src << 32 | dst) + 1 (0 = empty slot), links in routeLinks.
    struct RouteSlot {
        std::uint64_t key = 0;
        std::uint32_t offset = 0;
        std::uint32_t length = 0;
        std::uint64_t nicPs = 0; // nicLatencyPs of the route
    };

    std::uint32_t allocateFlow();
    void releaseFlow(std::uint32_t index);
    // The route of `src` -> `dst` into `flow.route`: remembered, else built by
    // FabricLinks::appendRoute (the one route builder). Returns the route's NIC latency
    // (nicLatencyPs), remembered with it.
    std::uint64_t buildRoute(std::uint32_t src, std::uint32_t dst, Flow& flow);
    // The NIC latency of a message on `route`: dims[d].nic_latency once for every dimension
    // d it crosses (0 without any, or in a fidelity that does not charge latency).
    std::uint64_t nicLatencyPs(const std::vector<std::uint32_t>& route) const
    {
        return nicPsByDim.empty() ? 0 : nicLatencyOfDims(route);
    }
    std::uint64_t nicLatencyOfDims(const std::vector<std::uint32_t>& route) const;
    void checkStreamAllowed(const char* what) const;
    /// Throws etsim::Error when `flow`, alone on its route from `fromPs`, would end past the
    /// end of the simulated clock.
    void requireFitsTheClock(const Flow& flow,
                             std::uint32_t src,
                             std::uint32_t dst,
                             std::uint64_t fromPs) const;
    void launchStream(std::uint32_t index, std::uint64_t latencyPs);
    void deliver(std::uint32_t index);
    // Ends flow `index`'s record here (it arrived, or left for another process): counts it
    // delivered unless it came from another process, frees it and returns its cookie.
    std::uint64_t retireFlow(std::uint32_t index);
    // The endpoint whose process times `link` in a LinkOwners run: its source endpoint, else
    // its destination (a switch's down link).
    std::uint32_t ownerEndpoint(std::uint32_t link) const;
    void ownLinks();
    std::size_t routeSlotOf(std::uint64_t key) const;
    void growRouteTable();

    const TopologyIf& topology;
    const NetConfig& config;
    EventCalendar& calendar;
    MessageSink& sink;
    FabricLinks fabric;
    NetworkState state;
    std::unique_ptr<FidelityIf> policy;
    RemoteNetwork* remoteNetwork = nullptr;
    CrossingSink* crossing = nullptr;
    // dims[d].nic_latency in ps (empty when every one is 0 or latency is not charged).
    std::vector<std::uint64_t> nicPsByDim;
    std::vector<std::uint32_t> freeFlows;
    std::vector<LinkId> routeScratch;
    std::vector<RouteSlot> routeTable; // open addressing, linear probing, power-of-two size
    unsigned routeTableBits = 0;
    std::size_t routeCount = 0;
    std::vector<std::uint32_t> routeLinks;
    std::uint64_t sent = 0;
    /// The slowest link's time per byte, ps, and half the clock's end (2^63 ps): a message
    /// bounded below that by them needs no closer look (requireFitsTheClock).
    double slowestPsPerByte = 0.0;
    static constexpr double clockEndPsBound = 9223372036854775808.0;
    std::uint64_t deliveredCount = 0;
};

} // namespace etsim::net
