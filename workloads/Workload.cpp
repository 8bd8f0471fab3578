#include "workloads/Workload.h"

#include "et_driver/NodeTensors.h"
#include "et_driver/TraceCodec.h"
#include "et_driver/TraceWriter.h"
#include "kernel/AtomicFile.h"
#include "kernel/Error.h"
#include "kernel/InputLimits.h"

#include <cmath>
#include <fstream>
#include <sstream>
#include <system_error>

namespace etsim::workloads {

namespace fs = std::filesystem;
using et::NodeType;
using et::TraceNode;

RankEmitter::RankEmitter(uint32_t rank, NodeSink& sink) : self(rank), sink(sink) {}

TraceNode&
RankEmitter::start(const std::string& name, NodeType type, const std::vector<uint64_t>& deps)
{
    scratch.reset();
    scratch.id = next;
    scratch.name = name;
    scratch.type = type;
    scratch.dataDeps = deps;
    scratch.setIsCpuOp(false);
    return scratch;
}

uint64_t RankEmitter::finish()
{
    if (std::optional<int64_t> ops = scratch.numOps())
        totalFlops += static_cast<double>(*ops);
    sink.node(scratch);
    return next++;
}

void RankEmitter::processGroups(const std::vector<CommGroup>& groups)
{
    if (groups.empty())
        return;
    // The PyTorch converter's rendering (spec 6): a Python list holding one JSON string.
    std::ostringstream json;
    json << "['[";
    for (std::size_t g = 0; g < groups.size(); ++g) {
        const CommGroup& group = groups[g];
        json << (g == 0 ? "" : ", ") << "{\"pg_name\": \"" << group.id << "\", \"pg_desc\": \""
             << group.description << "\", \"backend_config\": \"cuda:nccl\", \"ranks\": [";
        for (std::size_t r = 0; r < group.ranks.size(); ++r)
            json << (r == 0 ? "" : ", ") << group.ranks[r];
        json << "], \"group_size\": " << group.ranks.size() << ", \"group_count\": 1}";
    }
    json << "]']";
    TraceNode& node = start("## process_group:init ##", NodeType::Metadata, {});
    // Host-side bookkeeping, as the PyTorch converter marks it.
    node.setIsCpuOp(true);
    ChakraProtoMsg::IOInfo inputs;
    inputs.set_values(json.str());
    et::TraceCodec::setInputs(node, inputs);
    finish();
}

void RankEmitter::writeTensors(et::TraceNode& node, et::DataType dtype, const NodeTensors& tensors)
{
    if (tensors.inputs.empty() && tensors.outputs.empty())
        return;
    const int elementBytes = et::bytesPerElement(dtype);
    et::setNodeTensors(node,
                       tensors.inputs,
                       tensors.outputs,
                       elementBytes > 0 ? static_cast<uint64_t>(elementBytes) : 1,
                       et::pytorchTensorType(dtype));
}

uint64_t RankEmitter::compute(const std::string& name,
                              const et::OperatorInfo& info,
                              uint64_t tensorBytes,
                              const std::vector<uint64_t>& deps,
                              const NodeTensors& tensors)
{
    TraceNode& node = start(name, NodeType::Comp, deps);
    et::applyOperatorInfo(node, info);
    node.setTensorSize(tensorBytes);
    writeTensors(scratch, info.dtype, tensors);
    return finish();
}

uint64_t RankEmitter::compute(const std::string& name,
                              et::OpKind kind,
                              et::DataType dtype,
                              int64_t numOps,
                              uint64_t tensorBytes,
                              const std::vector<uint64_t>& deps,
                              const NodeTensors& tensors)
{
    TraceNode& node = start(name, NodeType::Comp, deps);
    node.setOpKind(std::string(et::opKindName(kind)));
    node.setDtype(std::string(et::dataTypeName(dtype)));
    node.setNumOps(numOps);
    node.setTensorSize(tensorBytes);
    writeTensors(scratch, dtype, tensors);
    return finish();
}

uint64_t
RankEmitter::delay(const std::string& name, uint64_t micros, const std::vector<uint64_t>& deps)
{
    TraceNode& node = start(name, NodeType::Comp, deps);
    node.durationMicros = micros;
    return finish();
}

uint64_t RankEmitter::collective(const std::string& name,
                                 et::CollectiveType type,
                                 int64_t bytes,
                                 const std::string& pgName,
                                 const std::vector<uint64_t>& deps)
{
    TraceNode& node = start(name, NodeType::CommColl, deps);
    node.setCommType(type);
    node.setCommSize(bytes);
    if (!pgName.empty())
        node.setPgName(pgName);
    return finish();
}

uint64_t RankEmitter::send(const std::string& name,
                           uint32_t peer,
                           int64_t bytes,
                           int32_t tag,
                           const std::vector<uint64_t>& deps)
{
    TraceNode& node = start(name, NodeType::CommSend, deps);
    node.setCommSrc(static_cast<int32_t>(self));
    node.setCommDst(static_cast<int32_t>(peer));
    node.setCommSize(bytes);
    node.setCommTag(tag);
    return finish();
}

uint64_t RankEmitter::recv(const std::string& name,
                           uint32_t peer,
                           int64_t bytes,
                           int32_t tag,
                           const std::vector<uint64_t>& deps)
{
    TraceNode& node = start(name, NodeType::CommRecv, deps);
    node.setCommSrc(static_cast<int32_t>(peer));
    node.setCommDst(static_cast<int32_t>(self));
    node.setCommSize(bytes);
    node.setCommTag(tag);
    return finish();
}

uint64_t RankEmitter::memory(const std::string& name,
                             bool store,
                             uint64_t bytes,
                             const std::vector<uint64_t>& deps)
{
    TraceNode& node = start(name, store ? NodeType::MemStore : NodeType::MemLoad, deps);
    node.setTensorSize(bytes);
    return finish();
}

uint64_t RankEmitter::custom(const std::string& name,
                             NodeType type,
                             const std::vector<uint64_t>& deps,
                             const std::function<void(TraceNode&)>& fill)
{
    TraceNode& node = start(name, type, deps);
    fill(node);
    return finish();
}

double generate(const Workload& workload, NodeSink& sink)
{
    double flops = 0;
    for (uint32_t rank = 0; rank < workload.rankCount(); ++rank) {
        sink.beginRank(rank);
        RankEmitter out(rank, sink);
        workload.emitRank(rank, out);
        sink.endRank();
        flops += out.flops();
    }
    return flops;
}

namespace {

// Writes each rank to its own file with the TraceWriter; one file open at a time.
class FileSink : public NodeSink {
public:
    FileSink(fs::path prefix,
             std::string extension,
             ChakraProtoMsg::GlobalMetadata metadata,
             uint64_t maxNodesPerRank)
        : prefix(std::move(prefix))
        , extension(std::move(extension))
        , metadata(std::move(metadata))
        , maxNodes(maxNodesPerRank)
    {
    }

    void beginRank(uint32_t rank) override
    {
        fs::path file = prefix;
        file += "." + std::to_string(rank) + extension;
        writer = std::make_unique<et::TraceWriter>(file, metadata);
        written.push_back(file);
        current = rank;
    }
    void node(const TraceNode& node) override
    {
        // A rank file etsim could not read back: stop here, not after writing for hours.
        if (writer->nodesWritten() >= maxNodes)
            throw Error("rank " + std::to_string(current) + " would have more than " +
                        std::to_string(maxNodes) +
                        " nodes, the most etsim reads from one rank file; generate fewer "
                        "layers, micro-batches or iterations");
        writer->write(node);
    }
    void endRank() override
    {
        writer->close();
        nodes += writer->nodesWritten();
        std::error_code error;
        bytes += fs::file_size(writer->path(), error);
        writer.reset();
    }

    uint64_t nodes = 0;
    uint64_t bytes = 0;
    /// Every rank file started, for removing a half-written set.
    std::vector<fs::path> written;

private:
    fs::path prefix;
    std::string extension;
    ChakraProtoMsg::GlobalMetadata metadata;
    std::unique_ptr<et::TraceWriter> writer;
    uint64_t maxNodes;
    uint32_t current = 0;
};

void addStringAttr(ChakraProtoMsg::GlobalMetadata& metadata,
                   const std::string& name,
                   const std::string& value)
{
    ChakraProtoMsg::AttributeProto* attr = metadata.add_attr();
    attr->set_name(name);
    attr->set_string_val(value);
}

} // namespace

void writeCommGroups(const Workload& workload, std::ostream& out)
{
    out << "{";
    bool first = true;
    workload.forEachGroup([&](const CommGroup& group) {
        out << (first ? "\n" : ",\n") << "  \"" << group.id << "\": [";
        for (std::size_t r = 0; r < group.ranks.size(); ++r)
            out << (r == 0 ? "" : ", ") << group.ranks[r];
        out << "]";
        first = false;
    });
    out << (first ? "}\n" : "\n}\n");
}

WriteSummary writeWorkload(const Workload& workload, const WriteOptions& options)
{
    if (options.name.empty() || options.name.find('/') != std::string::npos)
        throw Error("trace name \"" + options.name +
                    "\": give a plain file prefix without '/', e.g. \"llama3\"");
    std::error_code error;
    fs::create_directories(options.folder, error);
    if (error || !fs::is_directory(options.folder))
        throw Error(options.folder.string() + ": cannot create the output folder (" +
                    error.message() + "); choose a writable folder");

    if (workload.rankCount() > maxRanks)
        throw Error(std::to_string(workload.rankCount()) + " ranks is more than " +
                    std::to_string(maxRanks) +
                    ", the most etsim generates and runs; generate a smaller cluster");
    WriteSummary summary;
    summary.prefix = options.folder / options.name;
    ChakraProtoMsg::GlobalMetadata metadata = et::TraceWriter::defaultMetadata();
    addStringAttr(metadata, "schema", "etsim-gen");
    addStringAttr(metadata, "workload", workload.description());

    if (options.commGroupFile) {
        summary.commGroupFile = options.folder / (options.name + ".comm_groups.json");
        std::ostringstream text;
        writeCommGroups(workload, text);
        writeFileAtomically(summary.commGroupFile, text.str());
    }

    FileSink sink(
        summary.prefix, options.gzip ? ".et.gz" : ".et", metadata, options.maxNodesPerRank);
    try {
        summary.flops = generate(workload, sink);
    } catch (...) {
        // A trace with some ranks missing is no trace: what this run wrote goes with it
        // (the failing file itself was never put in place).
        std::error_code ignored;
        for (const fs::path& file : sink.written)
            fs::remove(file, ignored);
        if (!summary.commGroupFile.empty())
            fs::remove(summary.commGroupFile, ignored);
        throw;
    }
    summary.ranks = workload.rankCount();
    summary.nodes = sink.nodes;
    summary.bytes = sink.bytes;
    return summary;
}

} // namespace etsim::workloads
