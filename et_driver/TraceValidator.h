#pragma once
// Checks a Chakra trace (one rank file, or every rank of a set) against what a run needs:
// dependency structure (spec 7), node types and the attribute matrix (spec 4.3), sizes,
// point-to-point peers and tags (8.8), communicator groups (8.6) and cross-rank collective
// sequences (8.5). Returns findings instead of throwing, so one run reports every problem.
//
// Memory: nodes are streamed from the reader and checked one at a time; what stays is a
// TraceGraph per rank (ids and edges, about 20 B per node plus 4 B per edge, freed after the
// rank) and one small record per collective for the cross-rank comparison. Graph findings
// need node names, which are not kept: a second streaming pass over the rank file fetches the
// names of the nodes of reported findings only.
//
// Severities. Errors stop a run or make it wrong; warnings are suspicious but run. Where
// ASTRA-sim is the reference, its behaviour decides: it exits on an unknown communicator group
// (also when no group data exists at all), on a comm node with is_cpu_op true and on missing
// required attributes, so those are errors. Control edges are warnings: PyTorch converters
// store the caller there and leave it dangling or cyclic (spec 7.1); use dataOnly to ignore
// them.

#include "et_driver/ProcessGroups.h"
#include "et_driver/TraceSet.h"

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace etsim::et {

enum class Severity { Warning, Error };

enum class FindingKind {
    UnreadableTrace,     // the file cannot be read to the end (corrupt, truncated)
    MissingMetadata,     // record 0 is a Node, not GlobalMetadata
    DuplicateId,         // two records with one id
    DanglingDataDep,     // data dependency on an id not in the file
    DanglingCtrlDep,     // control dependency on an id not in the file
    DataSelfLoop,        // a node data-depends on itself
    CtrlSelfLoop,        // a node ctrl-depends on itself
    DataCycle,           // cycle of data dependencies
    CtrlCycle,           // cycle that needs control dependencies
    UnknownNodeType,     // type outside NodeType
    MissingAttribute,    // a required attribute of the node type is absent
    WrongAttributeType,  // a known attribute in an encoding or range its readers reject
    DuplicateAttribute,  // a known attribute name repeated; readers disagree which wins
    UnknownCollective,   // comm_type outside CollectiveCommType
    NegativeSize,        // comm_size, num_ops below zero
    ZeroSize,            // comm_size or tensor_size zero where data should move
    MissingPeerOrTag,    // send/recv without comm_dst/comm_src or comm_tag
    CommOnCpu,           // a communication node with is_cpu_op true
    BadProcessGroupList, // a METADATA_NODE whose process-group list does not parse
    UnknownProcessGroup, // pg_name that names no known group
    CollectiveMismatch,  // a rank's collective sequence differs from its group's
    PeerOutOfRange,      // comm_src / comm_dst not a rank of the job, or not the node's own
    BeyondLimits,        // a size, count, GEMM shape or duration etsim cannot simulate
};
inline constexpr int findingKindCount = 23;

// "unreadable-trace", "dangling-data-dep", ... (stable names for scripts).
const char* findingKindName(FindingKind kind);
const char* severityName(Severity severity);

struct Finding {
    Severity severity = Severity::Error;
    FindingKind kind = FindingKind::UnreadableTrace;
    std::string file;
    std::optional<uint32_t> rank;
    std::optional<uint64_t> nodeId;
    std::string nodeName;
    // What is wrong, and what to do about it.
    std::string problem;
    std::string fix;

    // "error: FILE: rank R: node ID "NAME": PROBLEM; fix: FIX" (parts that are unknown left out).
    std::string text() const;
};

struct ValidatorOptions {
    // Dangling data dependencies become warnings (a run would drop them, see the
    // DependencyTracker).
    bool lenient = false;
    // Ignore control dependencies entirely (the data-deps policy of spec 7.1).
    bool dataOnly = false;
    // Findings kept per kind; the rest are only counted.
    std::size_t maxPerKind = 20;
    // Communicator groups given to the run (spec 8.6 file), in addition to the groups of the
    // traces' METADATA_NODEs.
    std::vector<ProcessGroup> commGroups;
};

struct ValidationReport {
    uint32_t ranks = 0;
    uint64_t nodes = 0;
    uint64_t errors = 0;
    uint64_t warnings = 0;
    // The first maxPerKind findings of each kind, in the order found (rank by rank, file order).
    std::vector<Finding> findings;
    // Exact number of findings per kind, including those not kept.
    std::map<FindingKind, uint64_t> counts;

    bool ok() const { return errors == 0; }
    uint64_t count(FindingKind kind) const;
    // Findings of a kind that were counted but not kept.
    uint64_t omitted(FindingKind kind) const;
};

class TraceValidator {
public:
    explicit TraceValidator(ValidatorOptions options = {});

    // A file, a prefix (dir/name for dir/name.<rank>.et) or a folder. Throws TraceError only
    // when no trace file can be found there; problems inside files are findings.
    ValidationReport validate(const std::filesystem::path& fileOrPrefix);
    // One rank file; the rank is taken from a name such as name.3.et (0 otherwise). No
    // cross-rank checks.
    ValidationReport validateFile(const std::filesystem::path& file);
    // Every rank of a set, plus the cross-rank collective comparison.
    ValidationReport validateSet(TraceSet& set);

private:
    class Run;
    ValidatorOptions options;
};

} // namespace etsim::et
