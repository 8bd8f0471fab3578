#pragma once
// ASTRA-sim's analytical collective timing, reproduced to the nanosecond for the
// compatibility profile (shared/spec/astra-sim-semantics.md sections 2 and 3): a collective is
// split into chunks, each chunk runs a list of phases (one per network dimension), each
// dimension's queue runs at most `activeChunks` chunks at a time, and a phase of the ring
// algorithm costs what that simulator's system layer charges for it.
//
// Plain C++ without SystemC: the fabric's compatibility mode and the tests call it directly.
// Scope: the congestion-unaware network backend (any number of dimensions) and the ring
// implementation, one collective at a time on its queues. Priorities between collectives that
// overlap on the same queues (LIFO/FIFO scheduling policies) belong to the caller.

#include <cstdint>
#include <vector>

namespace etsim::models::net::astra {

enum class DimTopology { Ring, FullyConnected, Switch };

struct Dim {
    DimTopology topology = DimTopology::Ring;
    std::uint32_t npus = 1;
    double bytesPerNs = 1.0; // as the network file's bandwidth converts (GiB/s quirk applied)
    double latencyNs = 0.0;  // per hop
};

struct SystemParams {
    std::uint64_t endpointDelayNs = 0;
    double localMemBytesPerNs = 1.0; // local-mem-bw in decimal GB/s is bytes per ns
    std::uint32_t datasetSplits = 1; // preferred-dataset-splits
    std::uint32_t activeChunks = 1;  // active-chunks-per-dimension (one queue per dimension)
    bool localBwAware = false;       // collective-optimization: localBWAware
};

enum class Collective { AllReduce, ReduceScatter, AllGather, AllToAll };

// Hops a ring-algorithm message crosses in one dimension: neighbours on a ring or a fully
// connected network are one hop apart; through a switch, two (NPU -> switch -> NPU).
std::uint32_t hops(DimTopology topology);

// Time of one network message of `bytes` in `dim`, congestion-unaware:
// floor(hops * latency + bytes / bandwidth).
std::uint64_t messageNs(const Dim& dim, std::uint64_t bytes);

// Reduction of a received message: one write and two reads at local memory bandwidth,
// 3 * floor(bytes / local-mem-bw).
std::uint64_t reductionNs(const SystemParams& system, std::uint64_t bytes);

struct Phase {
    Collective type = Collective::AllReduce;
    std::size_t dim = 0;           // index into the network's dimensions
    std::uint64_t inputBytes = 0;  // per chunk, as this phase receives it
    std::uint64_t outputBytes = 0; // what the next phase receives
    std::uint64_t durationNs = 0;  // ring algorithm, no contention
};

struct CollectivePlan {
    std::uint64_t chunkBytes = 0;     // c
    std::uint64_t chunks = 0;         // n
    std::uint64_t effectiveBytes = 0; // S after the small-collective inflation
    std::vector<Phase> phases;        // the same for every chunk
    std::uint64_t finishNs = 0;       // when the last chunk leaves its last phase
};

// Plans and times a collective of `bytes` (Chakra comm_size; for all-gather the per-rank input)
// over every dimension of `dims` that has more than one NPU. `totalNpus` is the number of NPUs
// of the whole network (the small-collective inflation compares against it).
CollectivePlan planCollective(Collective type,
                              std::uint64_t bytes,
                              const std::vector<Dim>& dims,
                              std::uint64_t totalNpus,
                              const SystemParams& system);

// The flow shop of section 3: `chunks` identical chunks pass through `phaseDims` in order
// (phase i runs on the queue of dimension phaseDims[i] and takes phaseNs[i]); each
// dimension's queue runs at most `activeChunks` chunks at once and serves waiting chunks in
// the order they arrived (the lower chunk index first on a tie). Returns when the last chunk
// finishes its last phase.
std::uint64_t flowShopFinishNs(const std::vector<std::size_t>& phaseDims,
                               const std::vector<std::uint64_t>& phaseNs,
                               std::uint64_t chunks,
                               std::uint32_t activeChunks);

} // namespace etsim::models::net::astra
