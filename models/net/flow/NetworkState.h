#pragma once
// What the network core and its fidelity policy share: per-link state, the flow records (one
// per message or stream in flight), the calendar, the link timeline and the per-message delay.
// The core owns it, builds routes into it and delivers; the policy (models/net/fidelity/) times
// what the core starts.

#include "models/net/flow/EventCalendar.h"
#include "models/net/flow/LinkTimeline.h"
#include "models/net/topology/FabricLinks.h"

#include <cstdint>
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
    bool fixed = false;
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
};

} // namespace etsim::net
