#pragma once
// astra_aware: ASTRA-sim's congestion-aware backend. Every link is a FIFO server: a message
// holds a link for floor(m / B) ns from when both it and the link are ready, and reaches the
// next device floor(L + m / B) ns after it started on the link (store-and-forward, integer
// ns); after the last link, the message delay. Endpoint reductions take whole ns as well.
//
// Messages that ask for one link at the same instant are served once every event of the
// instant has run (settle()), in an order that does not depend on the order those events ran
// in: by when each request was made (a message's start, or the timing of its previous hop),
// then its source endpoint, its MessageOrder and its destination. A partitioned run, whose
// processes see the events of an instant in another order, so serves them as one process does.

#include "models/net/fidelity/FidelityIf.h"

#include <vector>

namespace etsim::net {

class AstraAwareFidelity final : public FidelityIf {
public:
    explicit AstraAwareFidelity(NetworkState& stateIn)
        : state(stateIn), lastHop(stateIn.links.size()), linkInstant(stateIn.links.size(), 0)
    {
    }

    const char* name() const override { return "astra_aware"; }
    void start(std::uint32_t index) override;
    /// A Hop: the message reached the next link of its route.
    void handle(const CalendarEvent& event) override;
    /// Serves the requests of the instant.
    void settle() override;
    bool settlePending() const override { return !requests.empty(); }
    std::uint64_t reductionPs(std::uint64_t bytes, Bandwidth localMemory) const override
    {
        return reductionPsWholeNs(bytes, localMemory);
    }

private:
    // A link's times for the size it last carried: collectives send the same size over a link
    // again and again, and both times are a function of the link and the size alone, so the
    // two divisions and floors are done once per size change rather than once per message.
    struct HopTimes {
        std::uint64_t bytes = UINT64_MAX;
        std::uint64_t serialPs = 0;
        std::uint64_t hopPs = 0;
    };

    // A flow waiting for `link`, the next link of its route.
    struct Request {
        std::uint32_t link;
        std::uint32_t flow;
    };

    bool servedBefore(const Request& a, const Request& b) const;
    void forwardHop(std::uint32_t index);
    const HopTimes& hopTimes(std::uint32_t link, std::uint64_t bytes);

    NetworkState& state;
    std::vector<HopTimes> lastHop; // per link
    // Flows waiting for the link of their next hop since this instant began, and those being
    // served (kept to reuse their storage).
    std::vector<Request> requests;
    std::vector<Request> serving;
    // settle() calls so far, and per link the last one in which the link was asked for.
    std::uint64_t instant = 0;
    std::vector<std::uint64_t> linkInstant;
};

} // namespace etsim::net
