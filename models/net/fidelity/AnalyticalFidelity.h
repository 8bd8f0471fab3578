#pragma once
// analytical: T = sum(l_i) + wire_bytes / min(B_i) per message, rounded to the ps. No link
// state and no contention: every message crosses its route as if alone. In-switch streams
// are timed the same way (their latency is the longest of their routes').

#include "models/net/fidelity/FidelityIf.h"

namespace etsim::net {

class AnalyticalFidelity final : public FidelityIf {
public:
    explicit AnalyticalFidelity(NetworkState& stateIn) : state(stateIn) {}

    const char* name() const override { return "analytical"; }
    void start(std::uint32_t index) override;
    void handle(const CalendarEvent& event) override;
    std::uint64_t reductionPs(std::uint64_t bytes, Bandwidth localMemory) const override
    {
        return reductionPsExact(bytes, localMemory);
    }

private:
    NetworkState& state;
};

} // namespace etsim::net
