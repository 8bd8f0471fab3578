#pragma once
// astra_aware: ASTRA-sim's congestion-aware backend. Every link is a FIFO server: a message
// holds a link for floor(m / B) ns from when both it and the link are ready, and reaches the
// next device floor(L + m / B) ns after it started on the link (store-and-forward, integer
// ns); after the last link, the message delay. Endpoint reductions take whole ns as well.

#include "models/net/fidelity/FidelityIf.h"

#include <vector>

namespace etsim::net {

class AstraAwareFidelity final : public FidelityIf {
public:
    explicit AstraAwareFidelity(NetworkState& stateIn)
        : state(stateIn), lastHop(stateIn.links.size())
    {
    }

    const char* name() const override { return "astra_aware"; }
    void start(std::uint32_t index) override { forwardHop(index); }
    /// A Hop: the message reached the next link of its route.
    void handle(const CalendarEvent& event) override;
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

    void forwardHop(std::uint32_t index);
    const HopTimes& hopTimes(std::uint32_t link, std::uint64_t bytes);

    NetworkState& state;
    std::vector<HopTimes> lastHop; // per link
};

} // namespace etsim::net
