#pragma once
// The small transformer step whole-platform tests run: one layer, hidden 512, 8 heads, FFN
// 2048, vocabulary 8192, sequence 512, activations offloaded, written as Chakra traces.

#include "workloads/Transformer.h"
#include "workloads/Workload.h"

#include <cstdint>
#include <filesystem>

namespace etsim::test {

/// Writes the step for data x tensor parallel `dp` x `tp` into `folder`; returns the trace
/// prefix.
inline std::filesystem::path
writeSmallTransformer(std::uint32_t dp, std::uint32_t tp, const std::filesystem::path& folder)
{
    workloads::TransformerSpec spec;
    spec.model.layers = 1;
    spec.model.hidden = 512;
    spec.model.heads = 8;
    spec.model.ffn = 2048;
    spec.model.vocab = 8192;
    spec.seqLen = 512;
    spec.parallel.dp = dp;
    spec.parallel.tp = tp;
    spec.offload = workloads::Offload::Activations;
    workloads::WriteOptions options;
    options.folder = folder;
    options.name = "job";
    return workloads::writeWorkload(workloads::Transformer(spec), options).prefix;
}

} // namespace etsim::test
