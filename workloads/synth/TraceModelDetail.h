#pragma once
// Rules the model's learning (TraceModelLearn.cpp) and its file (TraceModelFile.cpp) share:
// the limits a model may hold and the spelling of its kinds. Internal to workloads/synth.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace etsim::workloads::synth::detail {

// Longest n-gram context a model may have.
constexpr int maxOrder = 8;
// Dependency counts above this are pooled under it (a node with hundreds of inputs is rare).
constexpr uint64_t maxDepCount = 16;
// The dependency target "the node just before" (as opposed to a signed offset).
constexpr const char* previousTarget = "previous";
// Tensors per node above this are pooled under it.
constexpr uint64_t maxTensorCount = 16;
// Where an input tensor was last seen on the rank: nowhere, written or read by an earlier node.
// A model's keys put the input's position first: "0:fresh", "1:output".
constexpr const char* freshSource = "fresh";
constexpr const char* outputSource = "output";
constexpr const char* inputSource = "input";

// The position and the source of a key "<position>:<source>"; position -1 when malformed.
std::pair<int, std::string> sourceKey(const std::string& key);

// "coll.all_reduce", ... for a Chakra collective type; every one of them in type order.
std::string collectiveKind(int32_t type);
std::vector<std::string> collectiveKinds();

inline bool isGemmLike(const std::string& kind)
{
    return kind == "comp.gemm" || kind == "comp.bmm" || kind == "comp.conv2d" ||
           kind == "comp.attention";
}

// The four exponents of a GEMM class "m,n,k,batch"; empty when malformed.
std::vector<int64_t> classExponents(const std::string& gemmClass);

} // namespace etsim::workloads::synth::detail
