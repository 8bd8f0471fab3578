#include "models/net/collectives/InSwitchAlgorithm.h"

#include "kernel/Error.h"

#include <string>

namespace etsim::net {

void InSwitchAlgorithm::check(const PhaseShape& shape) const
{
    if (scatterGather) {
        if (shape.type != CollectiveType::ReduceScatter && shape.type != CollectiveType::AllGather)
            throw Error(std::string("the in_switch algorithm listed for reduce-scatter and "
                                    "all-gather phases runs only those, not ") +
                        toString(shape.type) +
                        " (list in_switch under algorithms.all_reduce for an in-switch "
                        "all-reduce phase)");
        return;
    }
    if (shape.type != CollectiveType::AllReduce)
        throw Error(std::string("the in_switch algorithm runs only all_reduce phases, not ") +
                    toString(shape.type) +
                    " (with local_bw_aware a multi-dimension all-reduce reduce-scatters in every "
                    "dimension but the last: use in_switch on the last dimension only, "
                    "optimization: baseline, or algorithms.all_reduce_phases for in-switch "
                    "reduce-scatter and all-gather phases)");
}

std::uint32_t InSwitchAlgorithm::stepCount(const PhaseShape& /*shape*/) const
{
    return 1;
}

void InSwitchAlgorithm::plan(const PhaseShape& shape,
                             std::uint32_t /*member*/,
                             std::uint32_t /*step*/,
                             StepPlan& plan) const
{
    plan.inSwitch = true;
    switch (shape.type) {
    case CollectiveType::ReduceScatter:
        // The switch-side bytes of one shard; the member receives its own shard.
        plan.switchBytes = shape.inputBytes / shape.size;
        plan.receives = 1;
        plan.waitForLine = true;
        break;
    case CollectiveType::AllGather:
        // The member's part, multicast; it receives every member's part. A multicast needs
        // only its sender's data: it starts at once.
        plan.switchBytes = shape.inputBytes;
        plan.receives = shape.size;
        break;
    default:
        plan.switchBytes = shape.inputBytes;
        plan.receives = 1;
        plan.waitForLine = true;
        break;
    }
}

void InSwitchAlgorithm::switchStreams(const PhaseShape& shape,
                                      std::uint32_t member,
                                      std::uint64_t bytes,
                                      std::vector<SwitchStream>& streams) const
{
    std::vector<std::uint32_t> line;
    for (std::uint32_t position = 0; position < shape.size; ++position)
        line.push_back(position);
    SwitchStream stream;
    stream.bytes = bytes;
    switch (shape.type) {
    case CollectiveType::AllGather:
        // Up the sender's uplink, down every member's downlink (the sender's included).
        stream.sources = {member};
        stream.destinations = line;
        stream.multicast = true;
        streams.push_back(stream);
        return;
    case CollectiveType::ReduceScatter:
        // One stream per shard, up every member's uplink and down to the shard's owner.
        stream.sources = line;
        for (std::uint32_t position = 0; position < shape.size; ++position) {
            stream.destinations = {position};
            stream.receiver = position;
            streams.push_back(stream);
        }
        return;
    default:
        // Whole all-reduce: up every member's uplink and down every member's downlink at once,
        // as the routes from each member to the next.
        for (std::uint32_t position = 0; position < shape.size; ++position)
            stream.pairs.emplace_back(position, (position + 1) % shape.size);
        stream.multicast = true;
        streams.push_back(stream);
        return;
    }
}

} // namespace etsim::net
