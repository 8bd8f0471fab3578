#pragma once
// Communication microbenchmarks: one collective, or a point-to-point pattern, repeated with
// optional compute in between, on every rank of a job split into communicator groups.

#include "workloads/Workload.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace etsim::workloads {

enum class P2pPattern {
    // Each group member sends to the next member and receives from the previous (a ring).
    Ring,
    // Members 2i and 2i+1 of each group exchange with each other (both directions).
    Pairwise,
};

// "ring", "pairwise".
std::string_view p2pPatternName(P2pPattern pattern);
std::optional<P2pPattern> p2pPatternFromName(std::string_view name);
// A CollectiveType from "all_reduce", "all-reduce", "allreduce" or "ALL_REDUCE" (any case).
std::optional<et::CollectiveType> collectiveFromName(std::string_view name);

enum class GroupLayout {
    // Group g holds ranks g*size .. g*size+size-1 (like tensor parallelism inside a node).
    Contiguous,
    // Group g holds ranks g, g+count, g+2*count, ... (like data parallelism across nodes).
    Strided,
};

struct MicrobenchSpec {
    uint32_t ranks = 8;
    // Ranks per communicator group; 0 or `ranks` means one group of all ranks (pg_name "").
    uint32_t groupSize = 0;
    GroupLayout layout = GroupLayout::Contiguous;
    // A collective, or (when set) a point-to-point pattern instead.
    et::CollectiveType collective = et::CollectiveType::AllReduce;
    std::optional<P2pPattern> pattern;
    // comm_size of each collective or message, bytes (all-gather: per-rank input, as Chakra).
    int64_t bytes = 1 << 20;
    uint32_t iterations = 1;
    // Compute between iterations: a GEMM of this many FLOPs (0: none) ...
    int64_t computeFlops = 0;
    // ... or a fixed delay, microseconds (0: none).
    uint64_t computeMicros = 0;
    et::DataType dtype = et::DataType::Bf16;
};

class Microbench : public Workload {
public:
    // Throws etsim::Error for a spec that cannot be generated (the message names the field).
    explicit Microbench(MicrobenchSpec spec);

    uint32_t rankCount() const override { return spec.ranks; }
    std::string description() const override;
    std::vector<CommGroup> groupsOf(uint32_t rank) const override;
    void forEachGroup(const std::function<void(const CommGroup&)>& visit) const override;
    void emitRank(uint32_t rank, RankEmitter& out) const override;

    const MicrobenchSpec& config() const { return spec; }

private:
    uint32_t groupSize() const;
    uint32_t groupCount() const { return spec.ranks / groupSize(); }
    CommGroup group(uint32_t index) const;
    uint32_t groupIndex(uint32_t rank) const;
    uint32_t position(uint32_t rank) const;
    uint32_t memberAt(uint32_t groupIndex, uint32_t position) const;

    MicrobenchSpec spec;
};

} // namespace etsim::workloads
