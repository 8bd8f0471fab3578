#pragma once
// One rank of a PyTorch run as a Chakra graph: the host operators of its host ET (CPU compute
// nodes), the GPU work of its Kineto trace (GPU compute nodes with measured durations and
// streams), one communication node per collective, and the dependencies between them
// (docs/pytorch-import.md, "Mapping rules"). Memory: one rank's traces and nodes.

#include "et_driver/OperatorInfo.h"
#include "et_driver/TraceNode.h"
#include "et_driver/proto/et_def.pb.h"
#include "importers/pytorch/Collectives.h"
#include "importers/pytorch/HostTrace.h"
#include "importers/pytorch/KinetoTrace.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace etsim::importers::pytorch {

// What to keep (docs/pytorch-import.md, "Options"). The defaults keep everything.
struct ImportOptions {
    // Host operators as CPU compute nodes; false keeps GPU work only, the host-side order
    // carried over to the GPU nodes through the dropped host nodes.
    bool hostOps = true;
    // CPU-GPU synchronisation points (cudaStreamSynchronize, ...) as GPU -> host edges.
    bool syncEdges = true;
    // GPU work whose launching call is not in the Kineto trace (kept in stream order).
    bool unlinkedKernels = true;
};

struct RankSummary {
    uint32_t rank = 0;
    std::string hostFile;
    std::string kinetoFile;
    std::string schema;
    // Where the rank number came from (Kineto distributedInfo, record_param_comms, ...).
    std::string rankSource;
    uint64_t hostOps = 0;
    uint64_t rootNodes = 0;
    uint64_t kinetoOps = 0;
    uint64_t matchedOps = 0;
    // How host ops were joined to Kineto events: "rf_id" or "per-thread order".
    std::string matchedBy;
    uint64_t kinetoOpsWithoutHostOp = 0;
    uint64_t gpuEvents = 0;
    uint64_t kernelsWithoutHostOp = 0;
    uint64_t kernelsDropped = 0;
    uint64_t hostOpsWithKernel = 0;
    uint64_t hostOpsWithoutKernel = 0;
    uint64_t ncclKernels = 0;
    uint64_t ncclKernelsAttached = 0;
    uint64_t ncclKernelsMerged = 0;
    uint64_t ncclKernelsWithoutCollective = 0;
    uint64_t collectivesWithoutKernel = 0;
    uint64_t waitRecords = 0;
    std::map<std::string, uint64_t> unknownCommRecords;
    uint64_t gpuNodesFromShapes = 0;
    uint64_t hostNodesDropped = 0;
    std::map<std::string, uint64_t> nodesByType;
    // (collective type, pg_name) -> count.
    std::map<std::pair<std::string, std::string>, uint64_t> collectives;
    uint64_t dataEdges = 0;
    uint64_t crossThreadEdges = 0;
    uint64_t syncEdges = 0;
    uint64_t streamEdges = 0;
    uint64_t launchEdges = 0;
    // Host time outside every operator, folded into the next operator (ns).
    int64_t gapFoldedNs = 0;
    // Host time spent in synchronising calls, left to the sync edges (ns).
    int64_t syncWaitNs = 0;
    // ProfilerStep span of the Kineto trace (ns), 0 without one.
    int64_t stepSpanNs = 0;
    uint64_t nodes = 0;
};

class RankGraph {
public:
    // `kineto` may be null (host trace only). `worldSize` is the job's rank count (for 1.0.1
    // traces, whose process groups are pointers), -1 if unknown. Throws etsim::Error for input
    // that cannot be mapped (named with file and node).
    RankGraph(HostTrace host,
              const KinetoTrace* kineto,
              uint32_t rank,
              int64_t worldSize,
              const ImportOptions& options);

    // The communication of this rank in issue order; sizes may be changed with setCommBytes()
    // before emit() (all-to-allv harmonisation across ranks).
    const std::vector<CommRecord>& communication() const { return comms; }
    void setCommBytes(std::size_t index, int64_t bytes) { commBytes[index] = bytes; }

    // The process groups this rank's trace declares, as the inputs.values text of its
    // METADATA_NODE (the PyTorch converter's rendering), and the groups' members.
    const GroupTable& groups() const { return groupTable; }

    const HostTrace& hostTrace() const { return host; }
    // The rank point-to-point nodes name as their own (once the caller knows it).
    void setRank(uint32_t value) { rank = value; }

    // Builds the nodes in a dependency-respecting order and passes them to `sink`.
    void emit(const std::function<void(const ChakraProtoMsg::Node&)>& sink);

    RankSummary summary;

private:
    struct Gpu {
        std::string name;
        int64_t startNs = 0;
        int64_t durationNs = 0;
        int64_t stream = 0;
        int64_t correlation = -1;
        // Host op that launched it, -1 when unknown.
        int64_t launchOp = -1;
        int64_t key = 0;
        // Communication record it carries, -1 for compute.
        int64_t comm = -1;
        // An NCCL kernel folded into its collective's node.
        bool merged = false;
        bool nccl = false;
        // Without Kineto: what the operator computes (docs/operators.md).
        std::optional<et::OperatorInfo> info;
    };
    struct Node {
        enum class Kind { Host, Gpu, Metadata } kind = Kind::Host;
        std::size_t index = 0;
        uint64_t id = 0;
        int64_t key = 0;
        bool kept = true;
        std::vector<uint32_t> deps;
    };

    void indexOps();
    void readComms(int64_t worldSize);
    void matchKineto();
    void computeSelfTimes();
    void linkGpu();
    void synthesiseGpu();
    void attachComms();
    void buildNodes();
    void addEdges();
    void addTensorEdges();
    void addCrossThreadEdges();
    void addSyncEdges();
    std::vector<uint32_t> order() const;
    void contract(const std::vector<uint32_t>& topo);
    void fill(const Node& node, et::TraceNode& out) const;
    void fillHost(const Node& node, ChakraProtoMsg::Node& out) const;
    void addDep(uint32_t node, uint32_t on);
    int64_t hostIndex(int64_t id) const;

    HostTrace host;
    const KinetoTrace* kineto;
    uint32_t rank;
    ImportOptions options;
    GroupTable groupTable;
    std::vector<CommRecord> comms;
    std::vector<int64_t> commBytes;
    std::vector<int64_t> commOfOp;
    std::vector<int64_t> parentOf;
    std::vector<std::vector<std::size_t>> threadOps;
    std::vector<int64_t> threadOfOp;
    // Kineto op matched to each host op (-1 none) and the reverse.
    std::vector<int64_t> kinetoOfOp;
    std::vector<int64_t> opOfKineto;
    std::vector<int64_t> startKey;
    std::vector<int64_t> endKey;
    std::vector<int64_t> selfNs;
    std::vector<Gpu> gpus;
    std::vector<int64_t> hostNode;
    std::vector<int64_t> gpuNode;
    std::vector<uint32_t> launchesOfOp;
    std::vector<Node> nodes;
    std::string metadataText;
    bool metadataFromHost = false;
};

} // namespace etsim::importers::pytorch
