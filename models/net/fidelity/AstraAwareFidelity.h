#pragma once
// astra_aware: ASTRA-sim's congestion-aware backend. Every link is a FIFO server: a message
// holds a link for floor(m / B) ns from when both it and the link are ready, and reaches the
// next device floor(L + m / B) ns after it started on the link (store-and-forward, integer
// ns); after the last link, the message delay. Endpoint reductions take whole ns as well.

#include "models/net/fidelity/FidelityIf.h"

namespace etsim::net {

class AstraAwareFidelity final : public FidelityIf {
public:
    explicit AstraAwareFidelity(NetworkState& stateIn) : state(stateIn) {}

    const char* name() const override { return "astra_aware"; }
    void start(std::uint32_t index) override { forwardHop(index); }
    /// A Hop: the message reached the next link of its route.
    void handle(const CalendarEvent& event) override;
    std::uint64_t reductionPs(std::uint64_t bytes, Bandwidth localMemory) const override
    {
        return reductionPsWholeNs(bytes, localMemory);
    }

private:
    void forwardHop(std::uint32_t index);

    NetworkState& state;
};

} // namespace etsim::net
