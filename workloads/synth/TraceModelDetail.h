#pragma once
// Rules the model's learning (TraceModelLearn.cpp) and its file (TraceModelFile.cpp) share:
// the limits a model may hold and the spelling of its kinds. Internal to workloads/synth.

#include <cstdint>
#include <string>
#include <vector>

namespace etsim::workloads::synth::detail {

// Longest n-gram context a model may have.
constexpr int maxOrder = 8;
// Dependency counts above this are pooled under it (a node with hundreds of inputs is rare).
constexpr uint64_t maxDepCount = 16;
// The dependency target "the node just before" (as opposed to a signed offset).
constexpr const char* previousTarget = "previous";

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
