#pragma once
// astra_unaware: ASTRA-sim's congestion-unaware backend. A message takes
// floor(sum(L) + m / B) ns, B the slowest link of its route in bytes per ns as ASTRA-sim
// derives it (GB/s / 1e9, not via bytes per ps: the rounding differs), plus the message delay.
// Each link counts floor(m / B_link) ns as busy. Endpoint reductions take whole ns as well.

#include "models/net/fidelity/FidelityIf.h"

namespace etsim::net {

class AstraUnawareFidelity final : public FidelityIf {
public:
    explicit AstraUnawareFidelity(NetworkState& stateIn) : state(stateIn) {}

    const char* name() const override { return "astra_unaware"; }
    void start(std::uint32_t index) override;
    void handle(const CalendarEvent& event) override;
    std::uint64_t reductionPs(std::uint64_t bytes, Bandwidth localMemory) const override
    {
        return reductionPsWholeNs(bytes, localMemory);
    }

private:
    NetworkState& state;
};

} // namespace etsim::net
