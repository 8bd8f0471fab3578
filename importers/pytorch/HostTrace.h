#pragma once
// A PyTorch host execution trace (ExecutionTraceObserver JSON, "host ET"): the operators each
// host thread ran, in call order, with their inputs and outputs. Reads every schema PyTorch has
// written since 2023 (knownHostSchemas()): the flat node layout of 1.0.1 ("parent", "inputs" as
// a list beside "input_shapes"/"input_types") and the nested one of 1.0.2 and later
// ("ctrl_deps", "inputs": {values, shapes, types}, "attrs": [{name, type, value}]).

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace etsim::importers::pytorch {

// A tensor as the host ET writes it: [id, storage_id, offset, numel, itemsize, device].
struct Tensor {
    int64_t id = 0;
    int64_t storage = 0;
    int64_t offset = 0;
    int64_t numel = 0;
    int64_t itemsize = 0;
    std::string device;

    int64_t bytes() const { return numel * itemsize; }
};

// An argument list of an operator: the trace's lists as compact JSON text, plus the tensors
// (6-tuples) found in the values, in order.
struct IoLists {
    std::string values = "[]";
    std::string shapes = "[]";
    std::string types = "[]";
    std::vector<Tensor> tensors;
};

struct HostOp {
    int64_t id = 0;
    // The caller's id (the thread root for top-level operators).
    int64_t parent = -1;
    std::string name;
    // Host thread number of the trace (1 = the first thread seen, usually the main one).
    int64_t tid = 0;
    std::optional<int64_t> rfId;
    int64_t seqId = -1;
    int64_t scope = 0;
    int64_t fwParent = 0;
    int64_t fwTid = 0;
    std::string opSchema;
    IoLists inputs;
    IoLists outputs;
    // Attributes other than the ones above (1.1.x: collective_name, pg_name, ...), by name.
    nlohmann::json attrs = nlohmann::json::object();

    // The input lists as JSON trees, parsed on demand (most operators never need them).
    // Throw etsim::Error naming the operator for text JSON does not accept (invalid UTF-8).
    nlohmann::json inputValues() const;
    nlohmann::json inputTypes() const;
};

struct HostTrace {
    std::string file;
    std::string schema;
    int64_t pid = -1;
    std::string time;
    int64_t startTs = 0;
    int64_t finishTs = 0;
    // Operators sorted by id (= call order within a thread), root nodes left out.
    std::vector<HostOp> ops;
    // The process and thread root nodes ([pytorch|profiler|execution_graph|thread] ...).
    uint64_t rootNodes = 0;
    int64_t maxId = 0;
};

// Schema versions this reader knows; a schema string is accepted when its part before "-"
// ("1.1.0" of "1.1.0-chakra.0.0.4") is one of them.
const std::vector<std::string>& knownHostSchemas();

// Reads and checks a host ET in one streaming pass over the JSON text (no document tree: a
// tree of a 12 MB trace costs more than the rest of the import). Throws etsim::Error naming
// the file, the node and the key for anything it cannot use (unknown schema with the list of
// known ones, a node without an integer id, invalid or truncated JSON with its line, ...).
HostTrace readHostTrace(const std::filesystem::path& file);
HostTrace parseHostTrace(const std::string& text, const std::string& file);

// The tensors of one argument value (a tensor, or lists of tensors).
void collectTensors(const nlohmann::json& value, std::vector<Tensor>& out);

} // namespace etsim::importers::pytorch
