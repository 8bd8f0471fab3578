#pragma once
// Node lowering: what one Chakra node asks of the hardware (an EtNodeInfo for the transaction)
// and which engine of its rank runs it. Plain C++, no SystemC: the RankDriver lowers every
// node as it streams in and issues the result.
//
// Rules (shared/spec/chakra-et.md sections 5 and 8, astra-sim-semantics.md section 4):
//   COMP_NODE, is_cpu_op    host stream, timed by the driver from duration_micros (replay)
//   COMP_NODE               compute engine: num_ops FLOPs over tensor_size bytes; replay mode
//                           or missing num_ops -> duration_micros, neither -> 1 ns (counted)
//   MEM_LOAD/MEM_STORE      memory engine: tensor_size bytes
//   COMM_SEND/COMM_RECV     communication engine: comm_size bytes to comm_dst / from comm_src
//   COMM_COLL               communication engine: comm_type, comm_size over pg_name's group
//   COMM_* with is_cpu_op   host stream, replayed, with one warning (PyTorch c10d wrappers)
//   METADATA, INVALID       nothing: complete at once; a process-group list is read
// Communication is never dropped: a node that cannot be lowered throws etsim::Error, and a
// collective that cannot reach its members (a one-rank trace of a larger job) is replayed
// locally with a counted warning.

#include "et_driver/OperatorInfo.h"
#include "et_driver/ProcessGroups.h"
#include "et_driver/TraceNode.h"
#include "kernel/Extensions.h"
#include "kernel/Ids.h"

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace etsim {
class Logger;
}

namespace etsim::et {

/// Where a node runs. Compute, Memory and Communication are TLM targets; Host work is timed
/// by the driver; Instant nodes complete at once.
enum class Engine : std::uint8_t { Compute, Memory, Communication, Host, Instant };
inline constexpr std::size_t engineCount = 5;
/// "compute", "memory", "communication", "host", "instant".
const char* engineName(Engine engine);

/// Replay reproduces recorded durations; Model asks the hardware models.
enum class ExecutionMode : std::uint8_t { Replay, Model };
/// The issuing rules: etsim's own, or ASTRA-sim's three single slots.
enum class SchedulingProfile : std::uint8_t { Native, Astra };
/// "replay", "model"; nullopt for anything else.
std::optional<ExecutionMode> parseExecutionMode(std::string_view text);
/// "native", "astra"; nullopt for anything else.
std::optional<SchedulingProfile> parseSchedulingProfile(std::string_view text);
const char* executionModeName(ExecutionMode mode);
const char* schedulingProfileName(SchedulingProfile profile);

struct LoweringOptions {
    ExecutionMode compute = ExecutionMode::Model;
    ExecutionMode memory = ExecutionMode::Model;
    ExecutionMode communication = ExecutionMode::Model;
    SchedulingProfile profile = SchedulingProfile::Native;
    /// Native profile: a send of at most this many bytes is eager (its transfer starts without
    /// waiting for the recv), larger ones rendezvous. The astra profile makes every send eager.
    static constexpr std::uint64_t defaultEagerThresholdBytes = 64 * 1024;
    std::uint64_t eagerThresholdBytes = defaultEagerThresholdBytes;
};

/// Counts of nodes that did not run as their type says; each kind warns once per job.
struct LoweringFallbacks {
    std::uint64_t computeFromDuration = 0; // model mode, no num_ops: replayed duration_micros
    std::uint64_t computeDefault = 0;      // neither num_ops nor a duration: 1 ns
    std::uint64_t zeroDuration = 0;        // replayed duration of 0 us: 1 ns, as ASTRA-sim
    std::uint64_t hostCommunication = 0;   // is_cpu_op communication replayed on the host
    std::uint64_t localCollectives = 0;    // collectives that cannot reach their members
    std::uint64_t total() const
    {
        return computeFromDuration + computeDefault + zeroDuration + hostCommunication +
               localCollectives;
    }
};

/// The attribute a Send transaction carries: 1 = eager, 0 = rendezvous (kernel/Extensions.h,
/// docs/execution-protocol.md).
using etsim::eagerAttribute;
/// The attribute holding the node's name, for the targets' error messages.
inline constexpr const char* nameAttribute = "name";

/// Where a lowered node runs.
struct NodePlacement {
    Engine engine = Engine::Instant;
    /// Timed by the driver itself (host work, replayed or local communication) for localPs.
    bool local = false;
    std::uint64_t localPs = 0;
};

/// What a node becomes: what the hardware sees, and where it runs.
struct LoweredNode : NodePlacement {
    EtNodeInfo info;
};

/// State shared by the lowerings of all ranks of one job: the rank count, the process groups
/// (one member vector per group, shared by every transaction of it) and which warnings were
/// already given.
class LoweringContext {
public:
    /// `log` (may be null) receives one warning per fallback kind; it must outlive this.
    explicit LoweringContext(std::size_t rankCount, const Logger* log = nullptr);

    std::size_t rankCount() const { return ranks; }
    /// Adds or replaces a group (a communicator-group file, a process-group METADATA node).
    /// Empty ranks mean all ranks. Throws etsim::Error for a negative id or a rank < 0.
    void addGroup(const ProcessGroup& group);
    void addGroups(const std::vector<ProcessGroup>& groups);

    struct ResolvedGroup {
        /// Empty for the default group of all ranks.
        std::optional<ProcessGroupId> id;
        /// Null for all ranks.
        std::shared_ptr<const std::vector<RankId>> members;
        /// Some member is not a rank of this job.
        bool beyondJob = false;
    };
    /// The group a pg_name selects. Throws etsim::Error for a pg_name that is not a group id
    /// or names no known group.
    ResolvedGroup resolve(std::string_view pgName) const;

    /// Logs `message` as a warning the first time `kind` (an index below 8) is seen.
    void warnOnce(unsigned kind, const std::string& message);

private:
    std::size_t ranks;
    const Logger* log;
    struct Group {
        std::shared_ptr<const std::vector<RankId>> members;
        bool beyondJob = false;
    };
    std::unordered_map<std::int64_t, Group> groups;
    unsigned warned = 0;
};

/// Lowers the nodes of one rank; numbers its collectives per group.
class NodeLowering {
public:
    NodeLowering(RankId rank, LoweringOptions options, LoweringContext& context);

    /// The node as the hardware sees it. Throws etsim::Error naming the rank and node for a
    /// node that cannot run (unknown type, communication without its peer or size, ...).
    LoweredNode lower(const TraceNode& node);
    /// The same into `out`, whatever it held before: its attribute list, the name's text and
    /// its tensor lists (when nothing else shares them) keep their heap buffers, so a driver
    /// that hands its spent nodes back here lowers without allocating for them.
    void lower(const TraceNode& node, LoweredNode& out);
    /// The same into `info`, kept apart from where the node runs: a driver lowers into the
    /// transaction extension that will carry the node, so issuing it moves nothing.
    NodePlacement lower(const TraceNode& node, EtNodeInfo& info);
    /// The next sequence number of a collective of `group` on this rank (0, 1, ...); called
    /// when the collective is issued, so the numbering follows issue order.
    std::uint64_t nextSequence(const std::optional<ProcessGroupId>& group);

    const LoweringFallbacks& fallbacks() const { return counts; }
    RankId rank() const { return rankId; }
    const LoweringOptions& options() const { return settings; }

private:
    void lowerCompute(const TraceNode& node, EtNodeInfo& info, NodePlacement& out);
    void lowerMemory(const TraceNode& node, EtNodeInfo& info, NodePlacement& out);
    // The node's tensor identities (NodeTensors.h) into info.tensors; null when it names none.
    void readTensors(const TraceNode& node, EtNodeInfo& info);
    void lowerPointToPoint(const TraceNode& node, EtNodeInfo& info, NodePlacement& out);
    void lowerCollective(const TraceNode& node, EtNodeInfo& info, NodePlacement& out);
    void hostReplay(const TraceNode& node, EtNodeInfo& info, NodePlacement& out);
    std::uint64_t replayPs(const TraceNode& node);
    void readProcessGroups(const TraceNode& node);
    std::string where(const TraceNode& node) const;

    RankId rankId;
    LoweringOptions settings;
    LoweringContext& context;
    LoweringFallbacks counts;
    std::unordered_map<std::uint32_t, std::uint64_t> sequences; // group id + 1 (0 = all ranks)
    // Tensor lists of a spent node that nothing else holds, read into by the next node.
    std::shared_ptr<NodeTensors> spareTensors;
    // The operator of the node being lowered; its strings and GEMM list keep their capacity.
    OperatorInfo operatorScratch;
};

} // namespace etsim::et
