#pragma once
// A statistical model of a set of Chakra traces, learned by `etsim gen learn` and sampled by
// `etsim gen synth` (docs/synth.md describes the JSON file field by field):
//
//  - per rank, the sequence of node kinds ("comp.gemm", "host", "coll.all_reduce", "send",
//    "mem_load", ...) as an n-gram model (order 2 by default) with back-off to shorter
//    contexts;
//  - per kind, quantile sketches of num_ops (FLOPs), tensor_size and comm_size (bytes) and
//    duration_micros, the element types, the number of dependencies, their targets' kinds and
//    distances (in nodes of the target's kind, file order), the communicator-group shapes of
//    collectives (with their mean size) and the peer offsets of sends and receives;
//  - per GEMM-like kind, the quarter-octave classes of the GEMM shapes;
//  - per compute and memory kind, how many tensors a node names and where each input was
//    last seen (which earlier node wrote or read it), so on-chip reuse survives synthesis.
//
// Nothing else of the input is kept: no names, exact shapes, ids, timestamps or other
// attributes.
// Ranks are pooled: the model describes a typical rank. Learning reads one rank at a time.

#include "workloads/synth/Distribution.h"

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace etsim::workloads::synth {

/// Version of the model file; bumped whenever a field's name or meaning changes.
inline constexpr int modelVersion = 1;
/// The "format" value of a model file.
inline constexpr const char* modelFormat = "etsim-synth-model";

/// Numeric node attributes the model keeps, in this order: num_ops (operations), tensor_size
/// (bytes), comm_size (bytes), duration_us (microseconds).
enum class Quantity : uint8_t { NumOps, TensorSize, CommSize, Duration };
inline constexpr std::size_t quantityCount = 4;
/// "num_ops", "tensor_size", "comm_size", "duration_us".
const char* quantityName(Quantity quantity);

struct KindStats {
    uint64_t count = 0;
    /// Distribution of each attribute over the nodes that carry it; its count says how many
    /// do (the rest leave it out).
    std::array<Quantiles, quantityCount> quantities;
    /// Element type names ("bf16", ...) of compute nodes that carry one.
    Categorical dtypes;
    /// Number of dependencies per node ("0", "1", ...).
    Categorical depCounts;
    /// Target of each dependency: "previous" (the node just before), else the target's kind,
    /// with its distance counted in nodes of that kind (1 = the latest earlier node of the
    /// kind). Counting within the target's kind keeps chains
    /// such as "each layer waits for the previous layer" whatever is interleaved between.
    Categorical depTargets;
    Quantiles depDistance;
    /// Collectives: communicator-group shape, "all" or "<size>x<stride>" (members r, r+stride..).
    Categorical groups;
    /// Collectives: mean comm_size (bytes) per group shape, so the synthesiser can give large
    /// collectives the groups large ones had (e.g. the data-parallel gradient all-reduce).
    std::map<std::string, double> groupMeanSize;
    /// Sends and receives: peer minus own rank ("+1", "-1", ...).
    Categorical peerOffsets;
    /// GEMM-like compute kinds (gemm, bmm, conv2d, attention): the quarter-octave class of
    /// each node's GEMM shape (gemmClassOf), for nodes that carry one. No shape is kept.
    Categorical gemmClasses;
    /// Compute and memory kinds whose nodes name tensors (Chakra tensor tuples, the identities
    /// the on-chip residency model keys on): input and output tensors per such node ("0",
    /// "1", ...), and for each input, by its position in the node's list ("0:", "1:", ...),
    /// where it was last seen on the rank: "fresh" (nowhere), "output" or "input" (written or
    /// read by an earlier tensor-naming node), with that node's distance counted in
    /// tensor-naming nodes (1 = the one just before). Keeping the position keeps "the first
    /// input is the previous node's output, the second a weight seen long ago". No id or size
    /// is kept: sizes come from tensor_size when synthesised.
    Categorical tensorInputs;
    Categorical tensorOutputs;
    Categorical inputSources;
    Quantiles reuseDistance;

    const Quantiles& quantity(Quantity q) const { return quantities[static_cast<int>(q)]; }
    Quantiles& quantity(Quantity q) { return quantities[static_cast<int>(q)]; }
};

struct ModelSource {
    /// Trace sets learned from, ranks and nodes read.
    uint32_t traceSets = 0;
    uint32_t ranks = 0;
    uint64_t nodes = 0;
    /// Nodes not modelled: metadata nodes, unknown types, communication without a type.
    uint64_t ignoredNodes = 0;
    /// Most ranks in one set (what peer offsets refer to).
    uint32_t maxRanks = 0;
};

struct TraceModel {
    /// n of the n-gram model: the next kind depends on the n - 1 previous ones.
    int order = 2;
    ModelSource source;
    std::map<std::string, KindStats> kinds;
    /// Context (previous kinds joined by ' ', oldest first, "^" before the start; "" for the
    /// unigram) -> next kind -> count. Every context length 0 .. order - 1 is present.
    std::map<std::string, Categorical> ngrams;

    /// Mean modelled nodes per rank.
    double nodesPerRank() const;
    /// Node count per kind (the node-kind mix).
    Categorical kindMix() const;
    /// Collective count per "coll.<type>".
    Categorical collectiveMix() const;
};

/// The start-of-sequence symbol of n-gram contexts.
inline constexpr const char* startSymbol = "^";

struct LearnOptions {
    int order = 2;
};

/// Learns from trace sets: each path a prefix, a folder or a single rank file (as `etsim run`
/// takes them). Collective groups are resolved from process-group METADATA_NODEs and from a
/// `<prefix>.comm_groups.json` next to the rank files. Dependencies are data_deps, or
/// ctrl_deps for a rank file without any data dependency (legacy text-converter traces).
/// Throws etsim::Error (TraceError) for an unreadable trace or an order outside 1..8.
TraceModel learnModel(const std::vector<std::filesystem::path>& traces,
                      const LearnOptions& options = {});

/// The JSON form (docs/synth.md).
nlohmann::ordered_json modelToJson(const TraceModel& model);
/// Parses and checks a model; throws etsim::Error naming `where` (a file name) and the key
/// path of the first bad field ("kinds.comp.gemm.num_ops.quantiles[3]") and what to fix.
TraceModel modelFromJson(const nlohmann::json& json, const std::string& where);

/// Writes / reads a model file. Errors name the file; reading also reports JSON syntax errors
/// with their byte offset.
void saveModel(const TraceModel& model, const std::filesystem::path& file);
TraceModel loadModel(const std::filesystem::path& file);

/// The quarter-octave class of a GEMM shape, "em,en,ek,eb" with e = round(4 log2(dim)) for
/// m, n, k and batch (dims below 1 count as 1): the shape to within a factor 2^(1/8).
std::string gemmClassOf(int64_t m, int64_t n, int64_t k, int64_t batch);
/// A synthetic shape of a class: m, n, k are 2^(e/4) shrunk by 1/64 and rounded down (at least
/// 1), batch is 2^(e/4) rounded. Shrinking keeps the tile count of tiles up to 1/64 of the
/// dimension while never writing the power-of-two sizes real models use. Throws etsim::Error
/// for a malformed class.
std::array<int64_t, 4> gemmOfClass(const std::string& gemmClass);
/// log2 of the class's FLOPs, times 4 (the sum of its exponents), for ordering classes.
int64_t gemmClassWeight(const std::string& gemmClass);

/// Whether `kind` is one the synthesiser can write ("comp.<op kind>", "host", "mem_load",
/// "mem_store", "send", "recv", "coll.<collective>").
bool isKnownKind(const std::string& kind);

} // namespace etsim::workloads::synth
