#include "models/net/collectives/HierarchicalPlan.h"

#include "kernel/Error.h"
#include "models/net/collectives/DirectAlgorithm.h"
#include "models/net/collectives/DoubleBinaryTreeAlgorithm.h"
#include "models/net/collectives/HalvingDoublingAlgorithm.h"
#include "models/net/collectives/InSwitchAlgorithm.h"
#include "models/net/collectives/RingAlgorithm.h"

#include <string>

namespace etsim::net {

ChunkSplit splitIntoChunks(CollectiveType type,
                           std::uint64_t bytes,
                           std::uint32_t chunks,
                           std::uint32_t totalRanks)
{
    if (type == CollectiveType::Barrier || bytes == 0)
        return ChunkSplit{1, 0};
    std::uint64_t chunk = bytes / chunks;
    if (type != CollectiveType::AllGather && totalRanks > chunk) {
        chunk = totalRanks;
        bytes = static_cast<std::uint64_t>(chunks) * chunk;
    }
    if (chunk == 0)
        return ChunkSplit{1, bytes};
    return ChunkSplit{static_cast<std::uint32_t>((bytes + chunk - 1) / chunk), chunk};
}

std::vector<Phase> planPhases(CollectiveType type,
                              std::uint64_t chunkBytes,
                              const std::vector<PlanDim>& dims,
                              CollectiveOptimization optimization)
{
    std::vector<Phase> phases;
    auto add = [&](const PlanDim& dim, CollectiveType phaseType, std::uint64_t input) {
        Phase phase;
        phase.dim = dim.dim;
        phase.flat = dim.flat;
        phase.shape.type = phaseType;
        phase.shape.size = dim.size;
        phase.shape.inputBytes = input;
        phase.algorithm = dim.algorithm;
        if (type == CollectiveType::AllReduce && phaseType != CollectiveType::AllReduce &&
            dim.scatterGather != nullptr)
            phase.algorithm = dim.scatterGather;
        try {
            phase.algorithm->check(phase.shape);
        } catch (const Error& error) {
            throw Error("dimension " + std::to_string(dim.dim) + " (" + std::to_string(dim.size) +
                        " members): " + error.what());
        }
        phase.steps = phase.algorithm->stepCount(phase.shape);
        phases.push_back(phase);
        return phaseOutputBytes(phase.shape);
    };
    if (dims.empty())
        return phases;
    if (type == CollectiveType::AllReduce && optimization == CollectiveOptimization::LocalBwAware &&
        dims.size() > 1) {
        std::uint64_t size = chunkBytes;
        std::vector<std::uint64_t> inputs;
        for (std::size_t index = 0; index + 1 < dims.size(); ++index) {
            inputs.push_back(size);
            size = add(dims[index], CollectiveType::ReduceScatter, size);
        }
        add(dims.back(), CollectiveType::AllReduce, size);
        for (std::size_t index = dims.size() - 1; index-- > 0;) {
            // The all-gather's per-member input is what the matching reduce-scatter left.
            add(dims[index], CollectiveType::AllGather, inputs[index] / dims[index].size);
        }
    } else if (type == CollectiveType::AllGather) {
        std::uint64_t size = chunkBytes;
        for (std::size_t index = dims.size(); index-- > 0;)
            size = add(dims[index], type, size);
    } else {
        std::uint64_t size = chunkBytes;
        for (const PlanDim& dim : dims)
            size = add(dim, type, size);
    }
    std::uint32_t first = 0;
    for (Phase& phase : phases) {
        phase.firstStep = first;
        first += phase.steps;
        // ASTRA-sim runs all-gather phases the other way round the ring when a collective
        // spans more than one dimension (its RS and AG then use opposite links).
        phase.shape.reverse = phase.shape.type == CollectiveType::AllGather && dims.size() > 1;
    }
    return phases;
}

AlgorithmSet::AlgorithmSet()
{
    algorithms.push_back(std::make_unique<RingAlgorithm>());
    algorithms.push_back(std::make_unique<DirectAlgorithm>());
    algorithms.push_back(std::make_unique<HalvingDoublingAlgorithm>());
    algorithms.push_back(std::make_unique<DoubleBinaryTreeAlgorithm>());
    algorithms.push_back(std::make_unique<InSwitchAlgorithm>());
    algorithms.push_back(std::make_unique<InSwitchAlgorithm>(true));
}

AlgorithmSet::~AlgorithmSet() = default;

const CollectiveAlgorithmIf& AlgorithmSet::get(AlgorithmKind kind) const
{
    switch (kind) {
    case AlgorithmKind::Ring:
        return *algorithms[0];
    case AlgorithmKind::Direct:
        return *algorithms[1];
    case AlgorithmKind::HalvingDoubling:
        return *algorithms[2];
    case AlgorithmKind::DoubleBinaryTree:
        return *algorithms[3];
    case AlgorithmKind::InSwitch:
        return *algorithms[4];
    case AlgorithmKind::Custom:
        break; // NetConfig::customAlgorithm holds those
    }
    throw Error("AlgorithmSet::get: unknown algorithm kind");
}

const CollectiveAlgorithmIf& AlgorithmSet::get(AlgorithmKind kind, CollectiveType listType) const
{
    if (kind == AlgorithmKind::InSwitch &&
        (listType == CollectiveType::ReduceScatter || listType == CollectiveType::AllGather))
        return *algorithms[5];
    return get(kind);
}

} // namespace etsim::net
