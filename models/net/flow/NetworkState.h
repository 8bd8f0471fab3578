#pragma once
// What the network core and its fidelity policy share: per-link state, the flow records (one
// per message or stream in flight), the calendar, the link timeline and the per-message delay.
// The core owns it, builds routes into it and delivers; the policy (models/net/fidelity/) times
// what the core starts.

#include "models/net/flow/EventCalendar.h"
#include "models/net/flow/LinkTimeline.h"
#include "models/net/topology/FabricLinks.h"

#include <cstdint>
#include <functional>
#include <vector>

namespace etsim::net {

struct LinkState {
    Link spec;
    double bytesPerPs = 0.0;
    double bytesPerNs = 0.0;
    /// Flows crossing the link now (flow fidelity).
    std::vector<std::uint32_t> flows;
    /// Wire bytes that crossed (or are crossing) the link.
    double bytes = 0.0;
    std::uint64_t busyPs = 0;
    std::uint64_t busySincePs = 0;
    /// When the link is free again (store-and-forward).
    std::uint64_t freeAtPs = 0;
    /// Bytes of flows that ended in the current busy interval (for the timeline).
    double endedBytes = 0.0;
    // Scratch for rate evaluation.
    double capacity = 0.0;
    std::uint32_t unfixed = 0;
    std::uint64_t mark = 0;
};

/// What orders messages that ask for one link at the same instant (astra_aware), after the
/// time they were sent on their way and their source: given by the sender (a collective's key,
/// chunk and step; a send's node), so it is the same in every process of a partitioned run,
/// unlike the order in which the events that started them ran.
struct MessageOrder {
    std::uint64_t key = 0;
    std::uint64_t sub = 0;
};

struct Flow {
    /// Link indices in order.
    std::vector<std::uint32_t> route;
    /// The flow's position in each route link's `flows`.
    std::vector<std::uint32_t> slots;
    double remaining = 0.0;
    double rate = 0.0;
    std::uint64_t lastPs = 0;
    /// Route latency plus the message delay, ps: from the last byte sent to the delivery.
    std::uint64_t latencyPs = 0;
    std::uint64_t cookie = 0;
    /// Wire bytes (packet headers included).
    std::uint64_t bytes = 0;
    std::uint64_t mark = 0;
    std::uint32_t version = 0;
    /// Next link of the route (store-and-forward).
    std::uint32_t hop = 0;
    /// Source and destination endpoints (of a message; 0 for a stream).
    std::uint32_t src = 0;
    std::uint32_t dst = 0;
    /// astra_aware: when the message's request for its next link was made (its start, or when
    /// the previous hop was timed), ps; and its order among requests of the same instant.
    std::uint64_t requestedPs = 0;
    MessageOrder order;
    bool fixed = false;
    /// Started by another process and handed over here (Partitioning::LinkOwners): counted as
    /// sent and delivered there.
    bool transit = false;
};

struct NetworkState {
    NetworkState(EventCalendar& calendarIn, const FabricLinks& fabricLinks, std::uint64_t delayPs)
        : calendar(calendarIn), timeline(fabricLinks), messageDelayPs(delayPs)
    {
    }

    EventCalendar& calendar;
    std::vector<LinkState> links;
    std::vector<Flow> flows;
    LinkTimeline timeline;
    /// Fixed delay at the receiver, added to every message, ps.
    std::uint64_t messageDelayPs = 0;
    /// Partitioned runs (NetworkCore::setCrossing): takes flow `index`, arriving at `timePs`,
    /// when its destination is simulated by another process; false when it stays here.
    std::function<bool(std::uint32_t index, std::uint64_t timePs)> leave;

    /// Partitioned runs with Partitioning::LinkOwners: per link, true when another process
    /// times it (empty otherwise); and what takes flow `index` when the next link of its route
    /// is one of those, reaching it at `timePs`.
    std::vector<bool> foreignLinks;
    std::function<void(std::uint32_t index, std::uint64_t timePs)> handOver;

    /// Schedules the arrival of flow `index` at `timePs`, unless it leaves for another
    /// process (the policies whose arrival is known at the start call this).
    void deliverAt(std::uint32_t index, std::uint64_t timePs)
    {
        if (!leave || !leave(index, timePs))
            calendar.schedule(timePs, EventKind::Deliver, index, 0);
    }
};

} // namespace etsim::net
