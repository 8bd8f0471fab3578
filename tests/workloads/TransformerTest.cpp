// Transformer steps: GEMM shapes and FLOPs checked by hand, collective sizes per parallelism,
// groups, pipeline message pairing, closed-form FLOPs of the presets, validation of every
// variant, and every error.

#include "workloads/Transformer.h"

#include "et_driver/NodeTensors.h"
#include "kernel/Error.h"
#include "tests/support/TempDir.h"
#include "tests/workloads/WorkloadTestSupport.h"
#include "workloads/Presets.h"

#include <gtest/gtest.h>

namespace etsim::workloads {
namespace {

using et::CollectiveType;
using et::NodeType;
using etsim::test::TempDir;
using test::find;
using test::generateAll;
using test::MemorySink;
using test::smallDense;

TransformerModel small(bool gated)
{
    TransformerModel m;
    m.layers = 2;
    m.hidden = 1024;
    m.heads = 16;
    m.kvHeads = 4;
    m.ffn = 4096;
    m.vocab = 32000;
    m.gatedMlp = gated;
    return m;
}

TEST(Transformer, LayerGemmShapesAndFlopsByHand)
{
    TransformerSpec spec;
    spec.model = small(true);
    spec.parallel.tp = 2;
    spec.parallel.dp = 2;
    spec.seqLen = 128;
    spec.microBatch = 2;
    Transformer job(spec);
    MemorySink sink = generateAll(job);
    // Rank 3: tp 1, dp 1. Tokens b*s = 256; per TP rank 8 query heads, 2 KV heads of 64.
    et::TraceNode qkv = find(sink, 3, "fwd.mb0.layer0.qkv");
    EXPECT_EQ(qkv.gemmM(), 256);
    EXPECT_EQ(qkv.gemmN(), (8 + 2 * 2) * 64);
    EXPECT_EQ(qkv.gemmK(), 1024);
    EXPECT_EQ(qkv.numOps(), 2LL * 256 * 768 * 1024);
    EXPECT_EQ(qkv.opKind(), "gemm");
    EXPECT_EQ(qkv.dtype(), "bf16");
    EXPECT_EQ(qkv.tensorSize(), (256U * 1024 + 1024 * 768 + 256 * 768) * 2);
    et::TraceNode attention = find(sink, 3, "fwd.mb0.layer0.attention");
    EXPECT_EQ(attention.opKind(), "attention");
    EXPECT_EQ(attention.gemmM(), 128);
    EXPECT_EQ(attention.gemmN(), 128);
    EXPECT_EQ(attention.gemmK(), 64);
    EXPECT_EQ(attention.gemmBatch(), 2 * 8);
    EXPECT_EQ(attention.numOps(), 2 * (2LL * 128 * 128 * 64 * 16));
    et::TraceNode out = find(sink, 3, "fwd.mb0.layer0.attn_out");
    EXPECT_EQ(out.gemmN(), 1024);
    EXPECT_EQ(out.gemmK(), 512);
    et::TraceNode up = find(sink, 3, "fwd.mb0.layer0.mlp_up");
    EXPECT_EQ(up.gemmN(), 2 * 2048); // gate and up fused, ffn split over 2 TP ranks
    et::TraceNode down = find(sink, 3, "fwd.mb0.layer0.mlp_down");
    EXPECT_EQ(down.gemmN(), 1024);
    EXPECT_EQ(down.gemmK(), 2048);

    // Layer forward = 2 x (layer weights / tp) x tokens + 4 b s^2 h / tp.
    // Weights: attention 1024 x (1024 + 2 x 256) + 1024^2 = 2,621,440; MLP 3 x 1024 x 4096.
    int64_t layerFlops = 0;
    for (const char* name : {"qkv", "attention", "attn_out", "mlp_up", "mlp_down"})
        layerFlops += *find(sink, 3, std::string("fwd.mb0.layer0.") + name).numOps();
    EXPECT_EQ(layerFlops, 2LL * (2621440 + 12582912) / 2 * 256 + 4LL * 2 * 128 * 128 * 1024 / 2);

    // Backward of a GEMM: data and weight gradients, each as large as the forward.
    EXPECT_EQ(find(sink, 3, "bwd.mb0.layer0.qkv.dgrad").numOps(), qkv.numOps());
    EXPECT_EQ(find(sink, 3, "bwd.mb0.layer0.qkv.wgrad").numOps(), qkv.numOps());
    EXPECT_EQ(find(sink, 3, "bwd.mb0.layer0.qkv.wgrad").gemmM(), 1024);
}

TEST(Transformer, TensorAndDataParallelCollectivesByHand)
{
    TransformerSpec spec;
    spec.model = small(true);
    spec.parallel.tp = 2;
    spec.parallel.dp = 2;
    spec.seqLen = 128;
    spec.microBatch = 2;
    Transformer job(spec);
    MemorySink sink = generateAll(job);
    // TP all-reduce of b*s*h*bytes = 2 x 128 x 1024 x 2 in rank 3's TP group {2, 3} (id 2).
    for (const char* name : {"fwd.mb0.layer1.attn_allreduce",
                             "fwd.mb0.layer1.mlp_allreduce",
                             "bwd.mb0.layer0.attn_allreduce.bwd",
                             "bwd.mb0.layer0.mlp_allreduce.bwd"}) {
        et::TraceNode ar = find(sink, 3, name);
        EXPECT_EQ(ar.type, NodeType::CommColl);
        EXPECT_EQ(ar.commType(), static_cast<int32_t>(CollectiveType::AllReduce));
        EXPECT_EQ(ar.commSize(), 524288);
        EXPECT_EQ(ar.pgName(), "2");
    }
    EXPECT_EQ(job.tpAllReduceBytes(256), 524288);
    std::vector<CommGroup> groups = job.groupsOf(3);
    ASSERT_EQ(groups.size(), 2U);
    EXPECT_EQ(groups[0].description, "tp");
    EXPECT_EQ(groups[0].ranks, (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(groups[1].id, 4);
    EXPECT_EQ(groups[1].description, "dp");
    EXPECT_EQ(groups[1].ranks, (std::vector<int64_t>{1, 3}));
    EXPECT_EQ(find(sink, 3, "grad_allreduce").pgName(), "4");
}

TEST(Transformer, DataParallelGradientAllReducePerStageByHand)
{
    TransformerSpec spec;
    spec.model = small(false);
    spec.model.layers = 4;
    spec.model.kvHeads = 0;
    spec.parallel = {2, 2, 2, 1};
    spec.seqLen = 64;
    Transformer job(spec);
    // Stage 0, per rank: 2 layers x ((4h^2 + 2hf) / 2 + 2h norms) + embedding V h / 2
    //   = 2 x (12,582,912 / 2 + 2,048) + 16,384,000 = 28,971,008 parameters.
    // Stage 1: the same layers + final norm h + output head V h / 2 = 28,972,032.
    // bf16 training reduces fp32 gradients: 4 B a parameter.
    EXPECT_EQ(job.dpGradientBytes(0), 28971008LL * 4);
    EXPECT_EQ(job.dpGradientBytes(1), 28972032LL * 4);
    MemorySink sink = generateAll(job);
    // rank = tp + 2 (dp + 2 pp): rank 0 is stage 0, rank 6 stage 1.
    EXPECT_EQ(find(sink, 0, "grad_allreduce").commSize(), 28971008LL * 4);
    EXPECT_EQ(find(sink, 6, "grad_allreduce").commSize(), 28972032LL * 4);
    // Close to parameters x bytes / (TP x PP): norms are replicated, embeddings not split.
    double total = spec.model.parameters();
    EXPECT_EQ(total, 115876864.0);
    EXPECT_NEAR(static_cast<double>(job.dpGradientBytes(0)) / (total * 4 / 4), 1.0, 1e-3);
}

TEST(Transformer, ZeroShardingCollectives)
{
    TransformerSpec spec = smallDense();
    spec.parallel.dp = 4;
    spec.zero = 1;
    Transformer zero1(spec);
    MemorySink sink = generateAll(zero1);
    int64_t grads = zero1.dpGradientBytes(0);
    EXPECT_EQ(find(sink, 2, "grad_reducescatter").commType(),
              static_cast<int32_t>(CollectiveType::ReduceScatter));
    EXPECT_EQ(find(sink, 2, "grad_reducescatter").commSize(), grads);
    // All-gather: per-rank input, the local shard of bf16 parameters (the gradients are fp32).
    EXPECT_EQ(find(sink, 2, "param_allgather").commSize(), grads / 4 / 2);

    spec.zero = 3;
    MemorySink zero3 = generateAll(Transformer(spec));
    // One layer's weights: 4h^2 + 2hf + 2h = 786,944 parameters, 1,573,888 B in bf16; their
    // gradients in fp32.
    EXPECT_EQ(find(zero3, 1, "fwd.mb0.layer1.param_allgather").commSize(), 1573888 / 4);
    EXPECT_EQ(find(zero3, 1, "bwd.mb0.layer1.param_allgather").commSize(), 1573888 / 4);
    EXPECT_EQ(find(zero3, 1, "bwd.mb0.layer1.grad_reducescatter").commSize(), 1573888 * 2);
    for (const et::TraceNode& node : zero3.ranks[1])
        EXPECT_NE(node.name, "grad_allreduce");
}

TEST(Transformer, ExpertParallelGroupsAndAllToAll)
{
    TransformerSpec spec;
    spec.model = small(true);
    spec.model.hidden = 256;
    spec.model.heads = 4;
    spec.model.kvHeads = 0;
    spec.model.ffn = 512;
    spec.model.experts = 4;
    spec.model.topK = 2;
    spec.parallel = {2, 1, 4, 2};
    spec.seqLen = 64;
    Transformer job(spec);
    // Ids: TP 1..4, DP 5..6, EP 7..10, expert-DP 11..14.
    std::vector<CommGroup> rank0 = job.groupsOf(0);
    ASSERT_EQ(rank0.size(), 4U);
    EXPECT_EQ(rank0[2].id, 7);
    EXPECT_EQ(rank0[2].ranks, (std::vector<int64_t>{0, 2}));
    EXPECT_EQ(rank0[3].id, 11);
    EXPECT_EQ(rank0[3].ranks, (std::vector<int64_t>{0, 4}));
    std::vector<CommGroup> rank5 = job.groupsOf(5); // tp 1, dp 2
    EXPECT_EQ(rank5[2].id, 10);
    EXPECT_EQ(rank5[2].ranks, (std::vector<int64_t>{5, 7}));
    EXPECT_EQ(rank5[3].id, 12);
    EXPECT_EQ(rank5[3].ranks, (std::vector<int64_t>{1, 5}));

    MemorySink sink = generateAll(job);
    // Dispatch: b s k h bytes = 64 x 2 x 256 x 2.
    et::TraceNode dispatch = find(sink, 5, "fwd.mb0.layer0.dispatch");
    EXPECT_EQ(dispatch.commType(), static_cast<int32_t>(CollectiveType::AllToAll));
    EXPECT_EQ(dispatch.commSize(), 65536);
    EXPECT_EQ(dispatch.pgName(), "10");
    // Experts: 2 layers x 2 local experts x 3 h f / tp = 786,432 parameters, fp32 gradients.
    et::TraceNode experts = find(sink, 5, "expert_grad_allreduce");
    EXPECT_EQ(experts.commSize(), 786432 * 4);
    EXPECT_EQ(experts.pgName(), "12");
    EXPECT_EQ(find(sink, 5, "fwd.mb0.layer0.expert_up").gemmM(), 128); // 64 tokens x top-2
}

TEST(Transformer, PipelineSendsAndReceivesPairUp)
{
    TransformerSpec spec;
    spec.model = small(true);
    spec.model.layers = 4;
    spec.parallel = {2, 4, 1, 1};
    spec.seqLen = 64;
    spec.globalBatch = 8;
    MemorySink sink = generateAll(Transformer(spec));
    std::vector<test::Message> sends;
    std::vector<test::Message> recvs;
    test::messages(sink, sends, recvs);
    // 3 stage boundaries x 8 micro-batches x (activation + gradient) x 2 TP ranks.
    EXPECT_EQ(sends.size(), 96U);
    EXPECT_EQ(sends, recvs);
    // Rank 2 (tp 0, stage 1) receives micro-batch 3's activation from rank 0, b s h bytes.
    et::TraceNode recv = find(sink, 2, "fwd.mb3.recv_activation");
    EXPECT_EQ(recv.commSrc(), 0);
    EXPECT_EQ(recv.commTag(), 6);
    EXPECT_EQ(recv.commSize(), 64 * 1024 * 2);
    et::TraceNode send = find(sink, 2, "bwd.mb3.send_gradient");
    EXPECT_EQ(send.commDst(), 0);
    EXPECT_EQ(send.commTag(), 7);

    spec.phase = Phase::Inference;
    spec.parallel = {1, 2, 1, 1};
    spec.decodeTokens = 3;
    spec.globalBatch = 2;
    MemorySink inference = generateAll(Transformer(spec));
    sends.clear();
    recvs.clear();
    test::messages(inference, sends, recvs);
    // 2 micro-batches x (4 activations forward + 3 tokens back).
    EXPECT_EQ(sends.size(), 14U);
    EXPECT_EQ(sends, recvs);
}

TEST(Transformer, DecodeReadsTheKvCache)
{
    TransformerSpec spec;
    spec.model = small(true);
    spec.model.hidden = 256;
    spec.model.heads = 4;
    spec.model.kvHeads = 2;
    spec.model.ffn = 512;
    spec.parallel.tp = 2;
    spec.phase = Phase::Inference;
    spec.seqLen = 64;
    spec.decodeTokens = 2;
    MemorySink sink = generateAll(Transformer(spec));
    et::TraceNode prefill = find(sink, 0, "prefill.mb0.layer0.attention");
    EXPECT_EQ(prefill.gemmM(), 64);
    et::TraceNode decode = find(sink, 0, "decode1.mb0.layer0.attention");
    EXPECT_EQ(decode.gemmM(), 1);
    EXPECT_EQ(decode.gemmN(), 65);
    // Q, O (1 x 64) and K, V (65 x 64) for 2 heads, plus the cached K and V of 65 tokens
    // for the rank's one KV head.
    EXPECT_EQ(decode.tensorSize(), 2U * (2 * 64 + 2 * 65 * 64) * 2 + 2U * 65 * 64 * 2);
    EXPECT_EQ(find(sink, 0, "decode2.mb0.layer1.qkv").gemmM(), 1);
}

TEST(Transformer, OffloadWritesMemoryNodes)
{
    TransformerSpec spec = smallDense();
    spec.offload = Offload::Activations;
    MemorySink sink = generateAll(Transformer(spec));
    et::TraceNode store = find(sink, 0, "fwd.mb0.layer0.store_activations");
    EXPECT_EQ(store.type, NodeType::MemStore);
    // s b h (34 + 5 a s / h) bytes for 16-bit tensors: 16,384 x 39.
    EXPECT_EQ(store.tensorSize(), 16384U * 39);
    EXPECT_EQ(find(sink, 0, "bwd.mb0.layer0.load_activations").type, NodeType::MemLoad);
    // Selective recomputation keeps none of the attention core's 5 a s / h: 16,384 x 34.
    spec.recompute = Recompute::Selective;
    EXPECT_EQ(
        find(generateAll(Transformer(spec)), 0, "fwd.mb0.layer0.store_activations").tensorSize(),
        16384U * 34);
    // With tp 2, s b h (10 + (24 + 5 a s / h) / 2), a = 4 heads, s = 64, h = 256: 16,384 x 24.5;
    // sequence parallelism shards the 10 as well: s b h (34 + 5) / 2 = 16,384 x 19.5.
    spec.recompute = Recompute::None;
    spec.parallel.tp = 2;
    EXPECT_EQ(
        find(generateAll(Transformer(spec)), 0, "fwd.mb0.layer0.store_activations").tensorSize(),
        16384U * 49 / 2);
    spec.sequenceParallel = true;
    EXPECT_EQ(
        find(generateAll(Transformer(spec)), 0, "fwd.mb0.layer0.store_activations").tensorSize(),
        16384U * 39 / 2);
    spec.sequenceParallel = false;
    spec.parallel.tp = 1;

    spec.offload = Offload::Weights;
    MemorySink weights = generateAll(Transformer(spec));
    EXPECT_EQ(find(weights, 0, "fwd.mb0.layer1.load_weights").tensorSize(), 786944U * 2);
}

double generatedFlops(const TransformerSpec& spec)
{
    test::CountingSink sink;
    return generate(Transformer(spec), sink);
}

TEST(Transformer, PresetStepFlopsMatchTheClosedForm)
{
    struct Case {
        const char* preset;
        Parallelism parallel;
        uint32_t globalBatch;
    };
    for (const Case& c : {Case{"llama3-8b", {1, 1, 1, 1}, 1},
                          Case{"llama3-70b", {8, 1, 1, 1}, 1},
                          Case{"gpt3-175b", {8, 8, 1, 1}, 8},
                          Case{"mixtral-8x7b", {1, 1, 8, 8}, 8}}) {
        for (Recompute recompute : {Recompute::None, Recompute::Selective, Recompute::Full}) {
            for (AttentionKernel attention : {AttentionKernel::Fused, AttentionKernel::Unfused}) {
                TransformerSpec spec;
                spec.model = findModelPreset(c.preset)->model;
                spec.parallel = c.parallel;
                spec.globalBatch = c.globalBatch;
                spec.recompute = recompute;
                spec.attention = attention;
                double closed = trainingFlopsClosedForm(spec);
                double generated = generatedFlops(spec);
                EXPECT_NEAR(generated / closed, 1.0, 0.02)
                    << c.preset << " recompute " << recomputeName(recompute) << ", "
                    << attentionName(attention) << " attention";
            }
        }
    }
    // The closed form itself, by hand for Llama-3 8B, one 8192-token sequence:
    // 6 x (32 x (4096 x (4096 + 2 x 1024) + 4096^2 + 3 x 4096 x 14336) + 128256 x 4096) x 8192
    // + 14 x 32 x 8192 x 4096 x 8192 (fused attention: 4 forward, 10 backward).
    TransformerSpec llama;
    llama.model = findModelPreset("llama3-8b")->model;
    double layer = 4096.0 * (4096 + 2048) + 4096.0 * 4096 + 3.0 * 4096 * 14336;
    double expected = 6 * (32 * layer + 128256.0 * 4096) * 8192 + 14.0 * 32 * 8192 * 4096 * 8192;
    EXPECT_DOUBLE_EQ(trainingFlopsClosedForm(llama), expected);
    // Llama-3 8B has 8.03 B parameters.
    EXPECT_NEAR(llama.model.parameters() / 1e9, 8.03, 0.01);
    EXPECT_NEAR(findModelPreset("llama3-70b")->model.parameters() / 1e9, 70.55, 0.05);
    EXPECT_NEAR(findModelPreset("gpt3-175b")->model.parameters() / 1e9, 174.6, 0.5);
    EXPECT_NEAR(findModelPreset("mixtral-8x7b")->model.parameters() / 1e9, 46.7, 0.1);
}

TEST(Transformer, PresetsAreListedInOrder)
{
    std::vector<ModelPreset> presets = modelPresets();
    ASSERT_EQ(presets.size(), 4U);
    EXPECT_EQ(presets[0].name, "gpt3-175b");
    EXPECT_EQ(presets[3].model.experts, 8U);
    EXPECT_FALSE(findModelPreset("gpt5").has_value());
}

TEST(Transformer, EveryVariantValidatesClean)
{
    TempDir dir;
    std::vector<TransformerSpec> specs;
    TransformerSpec base;
    base.model = small(true);
    base.model.hidden = 256;
    base.model.heads = 8;
    base.model.kvHeads = 2;
    base.model.ffn = 512;
    base.model.vocab = 1024;
    base.model.layers = 4;
    base.seqLen = 32;
    base.parallel = {2, 2, 2, 1};
    base.globalBatch = 8;
    for (uint32_t zero = 0; zero <= 3; ++zero) {
        TransformerSpec s = base;
        s.zero = zero;
        s.recompute = zero % 2 == 0 ? Recompute::None : Recompute::Full;
        specs.push_back(s);
    }
    TransformerSpec offload = base;
    offload.offload = Offload::Activations;
    specs.push_back(offload);
    TransformerSpec moe = base;
    moe.model.experts = 4;
    moe.model.topK = 2;
    moe.parallel = {2, 2, 4, 2};
    moe.offload = Offload::Weights;
    specs.push_back(moe);
    TransformerSpec inference = base;
    inference.phase = Phase::Inference;
    inference.decodeTokens = 3;
    specs.push_back(inference);
    TransformerSpec unfused = base;
    unfused.attention = AttentionKernel::Unfused;
    unfused.dropout = 0.1;
    unfused.recompute = Recompute::Full;
    unfused.gradAccumulation = GradAccumulation::Separate;
    specs.push_back(unfused);
    TransformerSpec sequenceParallel = unfused;
    sequenceParallel.sequenceParallel = true;
    sequenceParallel.recompute = Recompute::Selective;
    specs.push_back(sequenceParallel);
    TransformerSpec unfusedInference = inference;
    unfusedInference.attention = AttentionKernel::Unfused;
    specs.push_back(unfusedInference);
    TransformerSpec moeInference = moe;
    moeInference.phase = Phase::Inference;
    moeInference.decodeTokens = 2;
    specs.push_back(moeInference);
    for (std::size_t i = 0; i < specs.size(); ++i) {
        Transformer job(specs[i]);
        et::ValidationReport report = test::writeAndValidate(job, dir.path() / std::to_string(i));
        EXPECT_EQ(report.errors + report.warnings, 0U) << job.description() << "\n"
                                                       << test::findingsText(report);
        EXPECT_EQ(report.ranks, job.rankCount());
        MemorySink sink = generateAll(job);
        std::vector<test::Message> sends;
        std::vector<test::Message> recvs;
        test::messages(sink, sends, recvs);
        EXPECT_EQ(sends, recvs) << job.description();
    }
}

void expectError(const TransformerSpec& spec, const std::string& message)
{
    try {
        Transformer job(spec);
        ADD_FAILURE() << "no error; expected: " << message;
    } catch (const Error& error) {
        EXPECT_NE(std::string(error.what()).find(message), std::string::npos) << error.what();
    }
}

TEST(Transformer, BadSpecsAreRejectedWithTheParameter)
{
    TransformerSpec spec;
    spec.model.layers = 0;
    expectError(spec, "transformer: layers must be >= 1");
    spec = {};
    spec.microBatch = 0;
    expectError(spec, "micro-batch must be >= 1");
    spec = {};
    spec.model.hidden = 1000;
    spec.model.heads = 16;
    expectError(spec, "hidden (1000) must be a multiple of 16");
    spec = {};
    spec.model.kvHeads = 5;
    expectError(spec, "kv-heads (5) must divide heads (16)");
    spec = {};
    spec.parallel.tp = 3;
    expectError(spec, "heads, for tp 3, (16) must be a multiple of 3");
    spec = {};
    spec.parallel.pp = 3;
    expectError(spec, "layers, for pp 3, (2) must be a multiple of 3");
    spec = {};
    spec.parallel.ep = 2;
    spec.parallel.dp = 2;
    expectError(spec, "ep 2 needs a mixture-of-experts model");
    spec = {};
    spec.parallel.ep = 2;
    expectError(spec, "dp, for ep 2, (1) must be a multiple of 2");
    spec = {};
    spec.model.experts = 4;
    spec.model.topK = 5;
    expectError(spec, "top-k must be between 1 and experts (4)");
    spec = {};
    spec.parallel.dp = 2;
    spec.globalBatch = 3;
    expectError(spec, "global-batch, for micro-batch 1 x dp 2, (3) must be a multiple of 2");
    spec = {};
    spec.zero = 4;
    expectError(spec, "zero must be 0, 1, 2 or 3");
    spec = {};
    spec.dropout = 1;
    expectError(spec, "dropout must be a probability in [0, 1)");
    spec = {};
    spec.dtype = et::DataType::Unknown;
    expectError(spec, "dtype must be a known element type");
    spec = {};
    spec.phase = Phase::Inference;
    spec.offload = Offload::Activations;
    expectError(spec, "activation offload applies to training");
    spec = {};
    spec.phase = Phase::Inference;
    spec.globalBatch = 1000000;
    spec.decodeTokens = 1000;
    expectError(spec, "too many micro-batches x decode steps");
    spec = {};
    spec.sequenceParallel = true;
    expectError(spec,
                "sequence-parallel splits the tokens over the tensor-parallel ranks; it "
                "needs tp of at least 2");
    spec.parallel.tp = 2;
    spec.seqLen = 33;
    expectError(spec,
                "sequence-parallel needs micro-batch x seq-len (33 tokens) divisible by tp 2");
    spec.seqLen = 32;
    spec.phase = Phase::Inference;
    expectError(spec, "sequence-parallel applies to training");
    spec.phase = Phase::Training;
    spec.model.experts = 4;
    spec.model.topK = 1;
    expectError(spec, "sequence-parallel with mixture-of-experts layers is not modelled");
}

TEST(Transformer, NamesParse)
{
    EXPECT_EQ(phaseFromName("inference"), Phase::Inference);
    EXPECT_FALSE(phaseFromName("serve").has_value());
    EXPECT_EQ(recomputeFromName("full"), Recompute::Full);
    EXPECT_EQ(attentionFromName("unfused"), AttentionKernel::Unfused);
    EXPECT_EQ(attentionName(AttentionKernel::Fused), "fused");
    EXPECT_FALSE(attentionFromName("flash").has_value());
    EXPECT_EQ(gradAccumulationFromName("separate"), GradAccumulation::Separate);
    EXPECT_EQ(gradAccumulationName(GradAccumulation::None), "none");
    EXPECT_EQ(recomputeFromName("selective"), Recompute::Selective);
    EXPECT_FALSE(recomputeFromName("partial").has_value());
    EXPECT_EQ(offloadFromName("weights"), Offload::Weights);
    EXPECT_FALSE(offloadFromName("kv").has_value());
}

TEST(Transformer, AdamMovesEachByteOnceAndShardsOverLeftOutReplicas)
{
    TransformerSpec spec = smallDense();
    Transformer whole(spec);
    const et::TraceNode adam = find(generateAll(whole), 0, "optimizer.adam");
    // Parameters of the one stage: its gradient bytes / 4 (fp32 gradients with bf16).
    const double params = static_cast<double>(whole.dpGradientBytes(0)) / 4;
    EXPECT_EQ(adam.numOps(), static_cast<int64_t>(10 * params));
    // Reads the fp32 gradient (4 B) and the fp32 state (12 B), writes the state and the bf16
    // parameter (2 B): 30 B a parameter, each once.
    EXPECT_EQ(adam.tensorSize(),
              static_cast<uint64_t>(params * 4) + static_cast<uint64_t>(params * 12) * 2 +
                  static_cast<uint64_t>(params * 2));
    std::optional<NodeTensors> tensors = et::nodeTensors(adam);
    ASSERT_TRUE(tensors);
    uint64_t named = 0;
    for (const auto* list : {&tensors->inputs, &tensors->outputs})
        for (const TensorUse& t : *list)
            named += t.bytes;
    EXPECT_EQ(named, *adam.tensorSize());

    spec.optimizerShards = 64;
    const et::TraceNode sharded = find(generateAll(Transformer(spec)), 0, "optimizer.adam");
    EXPECT_EQ(sharded.numOps(), static_cast<int64_t>(10 * (params / 64)));
    spec.parallel.dp = 2;
    expectError(spec, "optimizer-shards stands for data-parallel replicas the trace leaves out");
    spec.parallel.dp = 1;
    spec.optimizerShards = 0;
    expectError(spec, "optimizer-shards must be at least 1");
}

TEST(Transformer, GradientsAreFp32WithBf16AndTheTraceTypeOtherwise)
{
    TransformerSpec spec = smallDense();
    spec.parallel.dp = 2;
    spec.gradAccumulation = GradAccumulation::Separate;
    auto gradientBytes = [](const TransformerSpec& s) {
        Transformer job(s);
        MemorySink sink = generateAll(job);
        // The all-reduce, the buffer the accumulation reads and writes, the optimizer's read.
        const et::TraceNode add = find(sink, 0, "bwd.mb0.layer0.mlp_down.accumulate");
        const std::optional<NodeTensors> tensors = et::nodeTensors(add);
        EXPECT_TRUE(tensors);
        const auto weights = static_cast<double>(add.numOps().value_or(0));
        const double parameters =
            static_cast<double>(find(sink, 0, "optimizer.adam").numOps().value_or(0)) / 10;
        EXPECT_EQ(static_cast<double>(tensors->outputs.at(0).bytes) / weights,
                  static_cast<double>(find(sink, 0, "grad_allreduce").commSize().value_or(0)) /
                      parameters);
        return static_cast<double>(tensors->outputs.at(0).bytes) / weights;
    };
    EXPECT_EQ(spec.gradientDtype(), et::DataType::Fp32);
    EXPECT_EQ(gradientBytes(spec), 4.0);
    spec.gradDtype = et::DataType::Bf16;
    EXPECT_EQ(gradientBytes(spec), 2.0);
    spec.gradDtype.reset();
    spec.dtype = et::DataType::Fp16;
    EXPECT_EQ(spec.gradientDtype(), et::DataType::Fp16);
    EXPECT_EQ(gradientBytes(spec), 2.0);
    spec.dtype = et::DataType::Fp32;
    EXPECT_EQ(gradientBytes(spec), 4.0);

    spec.gradDtype = et::DataType::Unknown;
    expectError(spec, "grad-dtype must be a known element type");
    spec.gradDtype = et::DataType::Fp32;
    spec.phase = Phase::Inference;
    expectError(spec, "grad-dtype applies to training");
}

} // namespace
} // namespace etsim::workloads
