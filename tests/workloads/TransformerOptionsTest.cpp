// The training options of Korthikanti et al. 2022 (Megatron-LM): sequence parallelism and
// selective recomputation, each checked by hand on test::smallDense (hidden 256, 4 heads of
// 64, 64-token sequences, bf16).

#include "tests/workloads/WorkloadTestSupport.h"
#include "workloads/Transformer.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace etsim::workloads {
namespace {

using et::CollectiveType;
using et::NodeType;
using test::find;
using test::generateAll;
using test::MemorySink;
using test::smallDense;
using test::tensorsOf;

// Around each tensor-parallel block an all-gather of the rank's 1/tp of the tokens and a
// reduce-scatter of the partial sums, the conjugates in backward, element-wise kernels on 1/tp
// of the tokens, and pipeline messages of 1/tp of the activation.
TEST(TransformerOptions, SequenceParallelGathersAndScattersAroundEachBlock)
{
    TransformerSpec spec = smallDense();
    spec.parallel.tp = 2;
    spec.parallel.pp = 2;
    spec.microBatch = 2;
    spec.dropout = 0.1;
    spec.sequenceParallel = true;
    MemorySink sink = generateAll(Transformer(spec));
    // b s h bytes = 2 x 64 x 256 x 2 = 65,536 B in all; each rank holds half of it.
    for (const char* block : {"attn", "mlp"}) {
        const std::string fwd = std::string("fwd.mb0.layer0.") + block;
        const std::string bwd = std::string("bwd.mb0.layer0.") + block;
        for (const std::string& gather : {fwd + "_allgather", bwd + "_allgather.bwd"}) {
            et::TraceNode node = find(sink, 0, gather);
            EXPECT_EQ(node.commType(), static_cast<int32_t>(CollectiveType::AllGather)) << gather;
            EXPECT_EQ(node.commSize(), 32768) << gather;
        }
        for (const std::string& scatter : {fwd + "_reducescatter", bwd + "_reducescatter.bwd"}) {
            et::TraceNode node = find(sink, 0, scatter);
            EXPECT_EQ(node.commType(), static_cast<int32_t>(CollectiveType::ReduceScatter))
                << scatter;
            EXPECT_EQ(node.commSize(), 65536) << scatter;
        }
    }
    // No all-reduce is left in a layer.
    for (const et::TraceNode& node : sink.ranks.at(0)) {
        if (node.type == NodeType::CommColl && node.name.find("layer") != std::string::npos) {
            EXPECT_NE(node.commType(), static_cast<int32_t>(CollectiveType::AllReduce))
                << node.name;
        }
    }
    // The norms (5 operations an element) and the bias-dropout-add (5) see 64 of 128 tokens.
    EXPECT_EQ(find(sink, 0, "fwd.mb0.layer0.norm1").numOps(), 5 * 64 * 256);
    EXPECT_EQ(find(sink, 0, "fwd.mb0.layer0.norm2").numOps(), 5 * 64 * 256);
    EXPECT_EQ(find(sink, 0, "fwd.mb0.layer0.attn_residual").numOps(), 5 * 64 * 256);
    // The GEMMs see every token: 2 x 128 x (2 + 2 x 2 heads of 64) x 256.
    EXPECT_EQ(find(sink, 0, "fwd.mb0.layer0.qkv").numOps(), 2LL * 128 * 384 * 256);
    // Stage 0 sends its half of the activation; stage 1 gathers before the output head and
    // scatters the head's input gradient.
    EXPECT_EQ(find(sink, 0, "fwd.mb0.send_activation").commSize(), 32768);
    EXPECT_EQ(find(sink, 2, "fwd.mb0.lm_head_allgather").commSize(), 32768);
    EXPECT_EQ(find(sink, 2, "bwd.mb0.lm_head_reducescatter.bwd").commSize(), 65536);

    // Without it: all-reduces of b s h, the whole stream in every norm and message.
    spec.sequenceParallel = false;
    MemorySink plain = generateAll(Transformer(spec));
    EXPECT_EQ(find(plain, 0, "fwd.mb0.layer0.attn_allreduce").commSize(), 65536);
    EXPECT_EQ(find(plain, 0, "fwd.mb0.layer0.norm1").numOps(), 5 * 128 * 256);
    EXPECT_EQ(find(plain, 0, "fwd.mb0.send_activation").commSize(), 65536);
}

// Selective recomputation re-runs the attention core, here the four unfused kernels, between
// the output projection's backward and the attention's; nothing else of the layer is re-run.
TEST(TransformerOptions, SelectiveRecomputeRerunsTheAttentionCore)
{
    TransformerSpec spec = smallDense();
    spec.attention = AttentionKernel::Unfused;
    spec.dropout = 0.1;
    spec.recompute = Recompute::Selective;
    MemorySink sink = generateAll(Transformer(spec));
    std::vector<std::string> order;
    const std::string prefix = "bwd.mb0.layer0.";
    for (const et::TraceNode& node : sink.ranks.at(0))
        if (node.name.rfind(prefix, 0) == 0)
            order.push_back(node.name.substr(prefix.size()));
    auto at = [&](const std::string& name) {
        return std::find(order.begin(), order.end(), name) - order.begin();
    };
    const std::vector<std::string> core{"recompute.attention.scores",
                                        "recompute.attention.softmax",
                                        "recompute.attention.dropout",
                                        "recompute.attention.context"};
    for (const std::string& name : core) {
        ASSERT_LT(at(name), static_cast<std::ptrdiff_t>(order.size())) << name;
        EXPECT_GT(at(name), at("attn_out.wgrad")) << name;
        EXPECT_LT(at(name), at("attention.bwd.dv")) << name;
        // The same kernel as in the forward.
        EXPECT_EQ(find(sink, 0, prefix + name).numOps(),
                  find(sink, 0, "fwd.mb0.layer0." + name.substr(10)).numOps())
            << name;
    }
    for (const std::string& name : order)
        EXPECT_TRUE(name.rfind("recompute.", 0) != 0 ||
                    std::find(core.begin(), core.end(), name) != core.end())
            << name;
    // The attention backward still reads the context's gradient the projection wrote.
    EXPECT_EQ(tensorsOf(find(sink, 0, prefix + "attention.bwd.dv")).inputs.at(1).id,
              tensorsOf(find(sink, 0, prefix + "attn_out.dgrad")).outputs.at(0).id);
    EXPECT_EQ(recomputeName(Recompute::Selective), "selective");

    // Without it, no recompute kernel at all.
    spec.recompute = Recompute::None;
    for (const et::TraceNode& node : generateAll(Transformer(spec)).ranks.at(0))
        EXPECT_EQ(node.name.find("recompute"), std::string::npos) << node.name;
}

} // namespace
} // namespace etsim::workloads
