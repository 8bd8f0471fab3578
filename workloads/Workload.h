#pragma once
// A generated multi-rank workload: the trace of each rank, produced one rank at a time, and the
// communicator groups its collectives use (spec 8.6). writeWorkload() streams every rank to its
// own <name>.<rank>.et file, so memory stays bounded by one node, whatever the rank count.

#include "et_driver/OperatorInfo.h"
#include "et_driver/TraceNode.h"
#include "et_driver/TraceReader.h"
#include "kernel/NodeInfo.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace etsim::workloads {

// One communicator group (spec 8.6): pg_name is the decimal id, members are global ranks.
struct CommGroup {
    int64_t id = 0;
    // What the group is for ("tp", "dp", "ep", ...), written as pg_desc.
    std::string description;
    std::vector<int64_t> ranks;
};

// Receives the nodes of one rank at a time, in id order.
class NodeSink {
public:
    virtual ~NodeSink() = default;
    virtual void beginRank(uint32_t rank) = 0;
    virtual void node(const et::TraceNode& node) = 0;
    virtual void endRank() = 0;
};

// Builds the nodes of one rank: ids ascending from 0, every node streamed to the sink as soon
// as it is complete, dependencies only on earlier nodes (spec 9 items 2, 3). Adds is_cpu_op
// false to every node (spec 9 item 4) and keeps running totals.
class RankEmitter {
public:
    RankEmitter(uint32_t rank, NodeSink& sink);

    uint32_t rank() const { return self; }

    // The `## process_group:init ##` METADATA_NODE listing `groups` as the PyTorch converter
    // does (spec 6), so readers resolve the pg_name of this rank's collectives. Nothing is
    // written for an empty list.
    void processGroups(const std::vector<CommGroup>& groups);

    // A COMP_NODE doing `info` (GEMM shapes, op_kind, dtype, num_ops from the GEMMs) that moves
    // `tensorBytes` (bytes), reading and writing the tensors `tensors` (written as Chakra
    // tensor tuples, NodeTensors.h; none when empty). Returns its id.
    uint64_t compute(const std::string& name,
                     const et::OperatorInfo& info,
                     uint64_t tensorBytes,
                     const std::vector<uint64_t>& deps,
                     const NodeTensors& tensors = {});
    // A COMP_NODE of an element-wise or reduction kind with an explicit operation count.
    uint64_t compute(const std::string& name,
                     et::OpKind kind,
                     et::DataType dtype,
                     int64_t numOps,
                     uint64_t tensorBytes,
                     const std::vector<uint64_t>& deps,
                     const NodeTensors& tensors = {});
    // A COMP_NODE known only by its duration, microseconds.
    uint64_t delay(const std::string& name, uint64_t micros, const std::vector<uint64_t>& deps);
    // A COMM_COLL_NODE. `bytes` is comm_size as Chakra means it (all-gather: per-rank input);
    // `pgName` "" is the group of all ranks.
    uint64_t collective(const std::string& name,
                        et::CollectiveType type,
                        int64_t bytes,
                        const std::string& pgName,
                        const std::vector<uint64_t>& deps);
    // COMM_SEND_NODE from this rank to `peer`, and COMM_RECV_NODE from `peer` to this rank.
    uint64_t send(const std::string& name,
                  uint32_t peer,
                  int64_t bytes,
                  int32_t tag,
                  const std::vector<uint64_t>& deps);
    uint64_t recv(const std::string& name,
                  uint32_t peer,
                  int64_t bytes,
                  int32_t tag,
                  const std::vector<uint64_t>& deps);
    // MEM_LOAD_NODE / MEM_STORE_NODE of `bytes` (offloaded weights or activations).
    uint64_t
    memory(const std::string& name, bool store, uint64_t bytes, const std::vector<uint64_t>& deps);

    // A node of any type: `fill` sets its attributes and may change is_cpu_op (set to false
    // before it runs). Returns its id.
    uint64_t custom(const std::string& name,
                    et::NodeType type,
                    const std::vector<uint64_t>& deps,
                    const std::function<void(et::TraceNode&)>& fill);

    // Sets a node's Chakra inputs and outputs to `tensors` as tensors of `dtype` (bytes per
    // element from it, 1 for Unknown); nothing when both lists are empty.
    static void writeTensors(et::TraceNode& node, et::DataType dtype, const NodeTensors& tensors);

    uint64_t nodes() const { return next; }
    // Sum of num_ops over this rank's nodes, FLOPs.
    double flops() const { return totalFlops; }

private:
    et::TraceNode&
    start(const std::string& name, et::NodeType type, const std::vector<uint64_t>& deps);
    uint64_t finish();

    uint32_t self;
    NodeSink& sink;
    et::TraceNode scratch;
    uint64_t next = 0;
    double totalFlops = 0;
};

// A workload whose ranks can be generated independently, in any order.
class Workload {
public:
    virtual ~Workload() = default;
    virtual uint32_t rankCount() const = 0;
    // One line saying what is generated, for the output and the GlobalMetadata.
    virtual std::string description() const = 0;
    // The groups `rank` is a member of and uses (not the group of all ranks).
    virtual std::vector<CommGroup> groupsOf(uint32_t rank) const = 0;
    // Every group of the job, in id order, one at a time.
    virtual void forEachGroup(const std::function<void(const CommGroup&)>& visit) const = 0;
    // Emits the whole trace of `rank`.
    virtual void emitRank(uint32_t rank, RankEmitter& out) const = 0;
};

// Streams every rank of `workload` into `sink`, rank 0 first. Returns the total num_ops, FLOPs.
double generate(const Workload& workload, NodeSink& sink);

struct WriteOptions {
    // Folder to write into; created when missing.
    std::filesystem::path folder;
    // File prefix: ranks go to <folder>/<name>.<rank>.et.
    std::string name = "workload";
    // gzip-compress the rank files (.et.gz); plain is what every reader accepts (spec 9).
    bool gzip = false;
    // Also write the communicator-group file <folder>/<name>.comm_groups.json (spec 8.6).
    bool commGroupFile = true;
    // A rank with more nodes is refused while it is written: by default the most etsim's
    // trace reader takes from one rank file.
    uint64_t maxNodesPerRank = et::TraceReaderOptions{}.maxNodes;
};

struct WriteSummary {
    uint32_t ranks = 0;
    uint64_t nodes = 0;
    uint64_t bytes = 0;
    // Sum of num_ops over all ranks, FLOPs.
    double flops = 0;
    std::filesystem::path prefix;
    // Empty when not written.
    std::filesystem::path commGroupFile;
};

// Writes the workload as described at the top of this file. Throws etsim::Error when the folder
// cannot be created or a file cannot be written (the message names the path).
WriteSummary writeWorkload(const Workload& workload, const WriteOptions& options);

// The communicator-group JSON text for `workload` ({"1": [0, 1], ...}), streamed to `out`.
void writeCommGroups(const Workload& workload, std::ostream& out);

} // namespace etsim::workloads
