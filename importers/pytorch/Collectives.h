#pragma once
// Communication of a PyTorch host trace. Each collective or point-to-point operation appears as
// three nested host operators (c10d::<op>_ -> record_param_comms -> nccl:<op>); it is counted
// once, from its record_param_comms node, which carries the sequence number, the process group,
// the rank argument and the collective's name. `wait` records are not communication.

#include "et_driver/TraceNode.h"
#include "importers/pytorch/HostTrace.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace etsim::importers::pytorch {

enum class CommKind { Collective, Send, Recv };

struct CommRecord {
    // Index of the record_param_comms operator in HostTrace::ops.
    std::size_t op = 0;
    std::string collectiveName;
    CommKind kind = CommKind::Collective;
    et::CollectiveType type = et::CollectiveType::AllReduce;
    int64_t seq = -1;
    // Process-group name as etsim writes pg_name ("0" = the default group of all ranks).
    std::string group = "0";
    // Ranks in the group; -1 when the trace does not say.
    int64_t groupSize = -1;
    // Bytes, in Chakra's convention (all-gather: this rank's contribution).
    int64_t bytes = 0;
    // The rank argument: the caller's rank in the group, the root for broadcast/reduce/gather/
    // scatter, the peer for send/recv (converted to a global rank).
    int64_t rankArgument = -1;
    int64_t peer = -1;
    int64_t tag = 0;
};

// What a record_param_comms node is. `record` is empty for a wait record (`skipped` "wait") or
// a name this importer does not know (`skipped` says which, for the summary).
struct CommParse {
    std::optional<CommRecord> record;
    std::string skipped;
};

// How the trace names process groups: from a `## process_group:init ##` node (1.0.2 and later)
// or, in 1.0.1, only by a per-process pointer.
struct GroupTable {
    // pg_name -> members (global ranks; empty = all) and size, from the init node.
    struct Group {
        std::vector<int64_t> ranks;
        int64_t size = -1;
        std::string description;
    };
    std::map<std::string, Group> groups;
    // 1.0.x process-group pointer (backend_id) -> pg_name.
    std::map<int64_t, std::string> byPointer;
    // The init node's JSON list text, as the trace has it ("" when there is none).
    std::string initJson;
};

// Reads the `## process_group:init ##` node, if any. Throws etsim::Error naming the file and
// node when its list does not parse.
GroupTable readGroupTable(const HostTrace& trace);

// Parses one record_param_comms node. `pointerGroup` is the pg_name to give 1.0.1 records
// whose group is only a pointer. Throws etsim::Error naming the file and node for a record
// whose arguments do not have the documented layout.
CommParse parseCommRecord(const HostTrace& trace,
                          std::size_t op,
                          const GroupTable& groups,
                          const std::string& pointerGroup);

// Whether a record_param_comms node's first argument is its data (tensors); records without
// data (wait, barrier) start with the sequence number.
bool dataArgument(const HostOp& record);

// Bytes per element of a record_param_comms dtype ("Float", "BFloat16", ...); 0 if unknown.
int64_t dtypeBytes(const std::string& dtype);

// The rank of the trace's process according to its communication records (the rank argument
// of a collective that is not rooted); -1 when no record says.
int64_t rankFromRecords(const std::vector<CommRecord>& records);

} // namespace etsim::importers::pytorch
