#pragma once
// Small trace nodes for tests that write traces with our writer: plain nodes of a type, memory
// nodes, a GPU compute node and the communication nodes built on it. Header-only so any test binary
// that links et_driver can use it.

#include "et_driver/TraceNode.h"
#include "et_driver/TraceWriter.h"

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace etsim::test {

/// A node of `type` named "n<id>" with data dependencies `deps` and nothing else set.
inline et::TraceNode
traceNode(std::uint64_t id, et::NodeType type, std::vector<std::uint64_t> deps = {})
{
    et::TraceNode node;
    node.id = id;
    node.name = "n" + std::to_string(id);
    node.type = type;
    node.dataDeps = std::move(deps);
    return node;
}

/// A memory node (MemLoad or MemStore) moving `bytes` (its tensor size).
inline et::TraceNode memoryNode(std::uint64_t id,
                                et::NodeType type,
                                std::uint64_t bytes,
                                std::vector<std::uint64_t> deps = {})
{
    et::TraceNode node = traceNode(id, type, std::move(deps));
    node.setTensorSize(bytes);
    return node;
}

/// A node of `type` that runs on the GPU (is_cpu_op false).
inline et::TraceNode
gpuNode(std::uint64_t id, et::NodeType type, std::vector<std::uint64_t> deps = {})
{
    et::TraceNode node = traceNode(id, type, std::move(deps));
    node.setIsCpuOp(false);
    return node;
}

/// A GPU compute node of `ops` operations over `bytes` of tensors, `micros` when replayed.
inline et::TraceNode computeNode(std::uint64_t id,
                                 std::uint64_t ops,
                                 std::uint64_t bytes,
                                 std::uint64_t micros,
                                 std::vector<std::uint64_t> deps = {})
{
    et::TraceNode node = gpuNode(id, et::NodeType::Comp, std::move(deps));
    node.setNumOps(static_cast<std::int64_t>(ops));
    node.setTensorSize(bytes);
    node.durationMicros = micros;
    return node;
}

/// A GPU load (`load`) or store of `bytes`.
inline et::TraceNode gpuMemoryNode(std::uint64_t id,
                                   bool load,
                                   std::uint64_t bytes,
                                   std::vector<std::uint64_t> deps = {})
{
    et::TraceNode node =
        gpuNode(id, load ? et::NodeType::MemLoad : et::NodeType::MemStore, std::move(deps));
    node.setTensorSize(bytes);
    return node;
}

/// A GPU collective of `bytes` over the whole world.
inline et::TraceNode gpuCollectiveNode(std::uint64_t id,
                                       et::CollectiveType type,
                                       std::uint64_t bytes,
                                       std::vector<std::uint64_t> deps = {})
{
    et::TraceNode node = gpuNode(id, et::NodeType::CommColl, std::move(deps));
    node.setCommType(type);
    node.setCommSize(static_cast<std::int64_t>(bytes));
    return node;
}

/// On rank `self`: a send (`send`) of `bytes` to `peer` with `tag`, or the matching receive.
inline et::TraceNode pointToPointNode(std::uint64_t id,
                                      bool send,
                                      int self,
                                      int peer,
                                      std::uint64_t bytes,
                                      std::int32_t tag,
                                      std::vector<std::uint64_t> deps = {})
{
    et::TraceNode node =
        gpuNode(id, send ? et::NodeType::CommSend : et::NodeType::CommRecv, std::move(deps));
    node.setCommSrc(send ? self : peer);
    node.setCommDst(send ? peer : self);
    node.setCommTag(tag);
    node.setCommSize(static_cast<std::int64_t>(bytes));
    return node;
}

/// A GPU compute node named "n<id>" that takes `durationMicros` when replayed.
inline et::TraceNode compNode(std::uint64_t id,
                              std::vector<std::uint64_t> data = {},
                              std::vector<std::uint64_t> ctrl = {},
                              std::uint64_t durationMicros = 1)
{
    et::TraceNode node;
    node.id = id;
    node.name = "n" + std::to_string(id);
    node.type = et::NodeType::Comp;
    node.dataDeps = std::move(data);
    node.ctrlDeps = std::move(ctrl);
    node.durationMicros = durationMicros;
    node.setIsCpuOp(false);
    return node;
}

/// A collective of `bytes` over the whole world.
inline et::TraceNode collNode(std::uint64_t id,
                              et::CollectiveType type,
                              std::int64_t bytes,
                              std::vector<std::uint64_t> data = {})
{
    et::TraceNode node = compNode(id, std::move(data));
    node.type = et::NodeType::CommColl;
    node.setCommType(type);
    node.setCommSize(bytes);
    return node;
}

/// A send of `bytes` to rank `dst`.
inline et::TraceNode
sendNode(std::uint64_t id, std::int32_t dst, std::int32_t tag, std::int64_t bytes = 64)
{
    et::TraceNode node = compNode(id);
    node.type = et::NodeType::CommSend;
    node.setCommDst(dst);
    node.setCommTag(tag);
    node.setCommSize(bytes);
    return node;
}

/// A receive of `bytes` from rank `src`.
inline et::TraceNode
recvNode(std::uint64_t id, std::int32_t src, std::int32_t tag, std::int64_t bytes = 64)
{
    et::TraceNode node = compNode(id);
    node.type = et::NodeType::CommRecv;
    node.setCommSrc(src);
    node.setCommTag(tag);
    node.setCommSize(bytes);
    return node;
}

/// A BF16 GEMM m x n x k (2·m·n·k operations) over `bytes` of tensors.
inline et::TraceNode gemmNode(std::uint64_t id,
                              std::int64_t m,
                              std::int64_t n,
                              std::int64_t k,
                              std::int64_t bytes,
                              std::vector<std::uint64_t> deps = {})
{
    et::TraceNode node = traceNode(id, et::NodeType::Comp, std::move(deps));
    node.setNumOps(2 * m * n * k);
    node.setTensorSize(bytes);
    node.setOpKind("gemm");
    node.setGemmM(m);
    node.setGemmN(n);
    node.setGemmK(k);
    node.setDtype("bf16");
    return node;
}

/// Writes <prefix>.<rank>.et for ranks 0 .. ranks - 1 with `nodes[rank]` (ranks past the end
/// of `nodes` get empty files) and returns `prefix`.
inline std::filesystem::path writeRankFiles(const std::filesystem::path& prefix,
                                            std::uint32_t ranks,
                                            const std::vector<std::vector<et::TraceNode>>& nodes)
{
    for (std::uint32_t rank = 0; rank < ranks; ++rank) {
        et::TraceWriter writer(prefix.string() + "." + std::to_string(rank) + ".et");
        if (rank < nodes.size())
            for (const et::TraceNode& each : nodes[rank])
                writer.write(each);
        writer.close();
    }
    return prefix;
}

} // namespace etsim::test
