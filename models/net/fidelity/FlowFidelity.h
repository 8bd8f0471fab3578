#pragma once
// flow: a message is a flow on its route. Flows share every link max-min fairly (progressive
// filling); rates are re-evaluated once per simulated instant in which flows started or ended,
// only over the links and flows connected to the change. The last byte leaves the source at
// the flow's finish; the message arrives after the route's summed latency (cut-through):
// T = sum(l_i) + wire_bytes / B for a flow alone. An in-switch stream is one flow over the
// links of all its routes.

#include "models/net/fidelity/FidelityIf.h"

#include <cstdint>
#include <vector>

namespace etsim::net {

class FlowFidelity final : public FidelityIf {
public:
    explicit FlowFidelity(NetworkState& stateIn) : state(stateIn) {}

    const char* name() const override { return "flow"; }
    void start(std::uint32_t index) override;
    /// A FlowFinish: the flow may have sent its last byte (stale versions are ignored).
    void handle(const CalendarEvent& event) override;
    void settle() override;
    bool settlePending() const override { return !dirtyLinks.empty(); }
    std::uint64_t reductionPs(std::uint64_t bytes, Bandwidth localMemory) const override
    {
        return reductionPsExact(bytes, localMemory);
    }
    std::uint64_t rateUpdates() const override { return updates; }
    std::uint64_t flowRateChanges() const override { return rateChanges; }

private:
    void finishFlow(std::uint32_t index);
    // Queues `link` for the next settle (once per instant). Inline: every flow start and end
    // marks each link of its route.
    void markDirty(std::uint32_t link)
    {
        LinkState& target = state.links[link];
        if (target.mark == epoch + 1)
            return;
        target.mark = epoch + 1;
        dirtyLinks.push_back(link);
    }
    void advanceFlow(Flow& flow, std::uint64_t now);
    void assignRate(std::uint32_t index, double rate, std::uint64_t now);
    bool settleAlone(std::uint32_t index, std::uint64_t mark, std::uint64_t now);
    void settleComponent(std::uint32_t seed, std::uint64_t mark, std::uint64_t now);

    NetworkState& state;
    std::vector<std::uint32_t> dirtyLinks;
    std::vector<std::uint32_t> componentLinks;
    std::vector<std::uint32_t> componentFlows;
    std::uint64_t epoch = 0;
    std::uint64_t updates = 0;
    std::uint64_t rateChanges = 0;
};

} // namespace etsim::net
