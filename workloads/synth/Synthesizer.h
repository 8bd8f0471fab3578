#pragma once
// Samples traces from a TraceModel (`etsim gen synth`, docs/synth.md). The result is a
// Workload, written like any generated one (one rank file per rank, communicator groups).
//
// How validity is kept: one skeleton of `nodes` entries is sampled once and shared by every
// rank (SPMD), so collectives appear in the same order, with the same type and size, on every
// member of their group; a send to rank r + d is always paired with a receive from r - d under
// the same tag, posted side by side, so every message has its receiver; dependencies point
// only to earlier nodes. Per-kind values come from quota sampling: the kind's n nodes take the
// n equal strata of the model's distribution, one each in a seeded order, and the stratum's
// mean, so the kind's total is n times the model's mean for every seed; one stratum per node
// serves all of its quantities, so large operators stay large in FLOPs, bytes and duration
// together. The n-gram walk, dependencies, strata and groups come from one seeded generator:
// the same model, seed, rank count and node count give the same bytes.

#include "workloads/Workload.h"
#include "workloads/synth/TraceModel.h"

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace etsim::workloads::synth {

struct SynthSpec {
    uint32_t ranks = 1;
    /// Modelled nodes per rank (each rank also gets a process-group METADATA_NODE when it
    /// uses groups); 0 = the model's mean.
    uint64_t nodes = 0;
    uint64_t seed = 1;
};

class Synthesizer : public Workload {
public:
    /// Throws etsim::Error for 0 ranks or a model whose n-gram walk cannot start.
    Synthesizer(const TraceModel& model, const SynthSpec& spec);

    uint32_t rankCount() const override { return spec.ranks; }
    std::string description() const override;
    std::vector<CommGroup> groupsOf(uint32_t rank) const override;
    void forEachGroup(const std::function<void(const CommGroup&)>& visit) const override;
    void emitRank(uint32_t rank, RankEmitter& out) const override;

    /// Modelled nodes per rank, and their count per kind (the same on every rank).
    uint64_t nodesPerRank() const { return skeleton.size(); }
    Categorical kindCounts() const;
    /// P2P symbols of the walk dropped because the rank count leaves no peer (one rank, or
    /// an offset that is a multiple of the rank count).
    uint64_t droppedPointToPoint() const { return droppedP2p; }

    /// What the output keeps and leaves out, for the sidecar file and the summary line.
    nlohmann::ordered_json summary() const;

private:
    struct Entry {
        uint32_t kind = 0;
        // Whether each quantity is written, and its value (operations, bytes, microseconds).
        uint8_t present = 0;
        std::array<double, quantityCount> values{};
        uint32_t dtype = 0;
        // Peer offset (send: +d, recv: -d) and tag of a point-to-point node.
        int64_t peer = 0;
        int32_t tag = 0;
        // Index into layouts of a collective; -1 = all ranks.
        int32_t layout = -1;
        // Index into gemmClassNames of a GEMM-like node; -1 = no shape written.
        int32_t gemmClass = -1;
        std::vector<uint64_t> deps;
        // A compute or memory node's tensor identities (the same ids on every rank, each rank
        // having its own accelerator); both empty when it names none.
        std::vector<TensorUse> inputs;
        std::vector<TensorUse> outputs;
    };
    struct Layout {
        uint32_t size = 0;
        uint32_t stride = 1;
        int64_t firstId = 0;
    };

    void plan(const TraceModel& model);
    // Gives the nodes of each kind their values, GEMM shapes and group shapes once the walk
    // has fixed how many there are (quota sampling, see plan()).
    // `occurrences` holds the skeleton index of each node of each kind (of an exchange, the
    // send; its receive follows it).
    void assignValues(const std::vector<std::vector<uint64_t>>& occurrences, Random& random);
    // Gives nodes of kinds whose model names tensors their tensor identities (after
    // assignValues: fresh tensors share the node's tensor_size).
    void assignTensors(Random& random);
    int32_t layoutFor(const std::string& shape);
    // The element type of a node that carries one; Unknown otherwise.
    et::DataType dataTypeOf(const Entry& entry) const;
    // Group of `rank` under a layout: its id and members.
    CommGroup groupOf(std::size_t layout, uint32_t rank) const;

    SynthSpec spec;
    std::vector<std::string> kindNames;
    std::vector<KindStats> kindStats;
    std::vector<std::string> dtypeNames;
    std::vector<std::string> gemmClassNames;
    std::vector<Entry> skeleton;
    std::vector<Layout> layouts;
    uint64_t droppedP2p = 0;
};

/// Writes the sidecar `<folder>/<name>.synth.json` (the summary plus the spec); returns its
/// path. Throws etsim::Error when it cannot be written.
std::filesystem::path writeSynthSummary(const Synthesizer& synth,
                                        const std::filesystem::path& folder,
                                        const std::string& name);

} // namespace etsim::workloads::synth
