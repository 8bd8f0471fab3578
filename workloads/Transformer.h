#pragma once
// Decoder-only transformer steps (training: forward, backward, optimizer; inference: prefill,
// then decode with a KV cache) from model shapes and a data/tensor/pipeline/expert-parallel
// layout, written per rank with the collectives and point-to-point transfers each parallelism
// implies (Megatron-LM's placement).
//
// Rank layout: rank = tp + TP * (dp + DP * pp), tensor parallelism fastest. Expert
// parallelism splits the data-parallel ranks into blocks of EP consecutive dp indices: the
// all-to-all group is a block, the expert data-parallel group holds the ranks with one
// position in every block.
//
// What is modelled, and the simplifications (docs/cli.md repeats them):
// - Per layer: norm, QKV GEMM, attention (Q K^T and P V, full s x s, causal masking not
//   exploited; one fused kernel, or unfused as Megatron-LM ran it before fused kernels: the
//   scores go through HBM between a batched GEMM, the softmax, the dropout and a second
//   batched GEMM), output GEMM, TP all-reduce of b*s*h elements, the residual add (with
//   dropout: Megatron's fused bias-dropout-add), norm, MLP (two GEMMs, or three weights fused
//   as up+gate and down when gated) or MoE (router, all-to-all, experts with balanced
//   routing, all-to-all), TP all-reduce, residual add. Backward: two GEMMs per forward GEMM
//   (data and weight gradient), attention backward (fused: one kernel that recomputes the
//   scores; unfused: four batched GEMMs with the softmax and dropout backward between), the
//   same TP all-reduces, and where the residual stream forks the sum of its two gradients;
//   optionally each weight gradient added into the step's buffer by a kernel of its own.
// - Pipeline: 1F1B schedule, activations of b*s*h elements sent forward and gradients
//   backward; receives are posted without dependencies, sends depend only on their producer,
//   so the compute order alone decides progress.
// - Data parallelism: one gradient all-reduce per stage after the last micro-batch (ZeRO 1 and
//   2: a reduce-scatter, then an all-gather of the updated shard; ZeRO 3: parameter
//   all-gathers before each layer in forward and backward, a per-layer reduce-scatter in
//   every backward). MoE expert weights synchronise over the expert data-parallel group.
// - Optimizer: Adam as one element-wise node over the local parameter shard (10 operations and
//   fp32 master, momentum, variance read and written per parameter).
// - Gradients are summed over micro-batches and reduced over the data-parallel ranks in the
//   gradient element type (TransformerSpec::gradientDtype): fp32 with bf16, as Megatron-LM
//   forces and the Llama 3 paper reports, otherwise the trace's dtype.
// - Sequence parallelism (Korthikanti et al. 2022, optional): the norms, dropouts and residual
//   adds run on the rank's 1/tp of the tokens, each TP all-reduce becomes an all-gather
//   before the block and a reduce-scatter after it (their conjugates in backward), and the
//   pipeline sends the rank's 1/tp of the activations. Megatron-LM's second all-gather of a
//   block's input for its weight gradient, which it overlaps with the data gradient, is left
//   out.
// - Not modelled: the vocab-parallel loss all-reduces, embedding
//   synchronisation between the first and last stage for tied embeddings, the reductions of
//   bias gradients, overlap of communication with compute beyond what the dependencies allow.

#include "workloads/Workload.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace etsim::workloads {

struct TransformerModel {
    std::string name = "custom";
    uint32_t layers = 2;
    uint32_t hidden = 1024;
    uint32_t heads = 16;
    // Key/value heads (grouped-query attention); 0 means equal to heads.
    uint32_t kvHeads = 0;
    // MLP inner size (per expert for MoE).
    uint32_t ffn = 4096;
    uint32_t vocab = 32000;
    // Default sequence length of the preset, tokens.
    uint32_t seqLen = 1024;
    // Experts per MoE layer (0: dense MLP) and experts each token is routed to.
    uint32_t experts = 0;
    uint32_t topK = 0;
    // SwiGLU-style MLP with three weight matrices instead of two.
    bool gatedMlp = false;
    // Input embedding and output head share one matrix.
    bool tiedEmbeddings = false;

    uint32_t kvHeadCount() const { return kvHeads == 0 ? heads : kvHeads; }
    uint32_t headDim() const { return hidden / heads; }
    // Weights of one layer's attention (QKV and output projections).
    double attentionParameters() const;
    // Weights of one layer's MLP: all experts plus router for MoE.
    double mlpParameters() const;
    // Weights a token passes through in one layer's MLP (top-k experts plus router for MoE).
    double activeMlpParameters() const;
    // Every weight of the model, including embeddings and norms.
    double parameters() const;
    // Weights in matrix products per token: layers (active) plus the output head.
    double matmulParameters() const;
};

struct Parallelism {
    uint32_t tp = 1;
    uint32_t pp = 1;
    uint32_t dp = 1;
    // Expert parallelism, inside the data-parallel ranks (divides dp).
    uint32_t ep = 1;
    uint32_t ranks() const { return tp * pp * dp; }
};

enum class Phase { Training, Inference };
// Activation recomputation: none; selective re-runs each layer's attention core (the scores,
// softmax, dropout and context of Korthikanti et al. 2022, Megatron-LM's
// --recompute-granularity selective) just before its backward; full re-runs every layer's
// forward before its backward.
enum class Recompute { None, Selective, Full };
enum class Offload { None, Weights, Activations };
// How attention runs: one fused kernel that keeps the s x s scores on chip (FlashAttention,
// Dao et al. 2022), or unfused kernels that write them to HBM (Megatron-LM before it).
enum class AttentionKernel { Fused, Unfused };
// Where a micro-batch's weight gradients are summed over the step: nowhere the trace shows
// (the weight-gradient GEMM's output is the gradient, or the GEMM accumulates into it), or in
// a separate element-wise kernel after each weight-gradient GEMM (Megatron-LM 2021's
// main_grad hook, megatron/model/distributed.py; PyTorch autograd's accumulation).
enum class GradAccumulation { None, Separate };

std::string_view phaseName(Phase phase);
std::optional<Phase> phaseFromName(std::string_view name);
std::string_view recomputeName(Recompute recompute);
std::optional<Recompute> recomputeFromName(std::string_view name);
std::string_view offloadName(Offload offload);
std::optional<Offload> offloadFromName(std::string_view name);
std::string_view attentionName(AttentionKernel kernel);
std::optional<AttentionKernel> attentionFromName(std::string_view name);
std::string_view gradAccumulationName(GradAccumulation accumulation);
std::optional<GradAccumulation> gradAccumulationFromName(std::string_view name);

struct TransformerSpec {
    TransformerModel model;
    Parallelism parallel;
    Phase phase = Phase::Training;
    // Tokens per sequence (inference: prompt length); 0 means the model's seqLen.
    uint32_t seqLen = 0;
    // Sequences per micro-batch.
    uint32_t microBatch = 1;
    // Sequences per step over all data-parallel replicas; 0 means microBatch * dp.
    uint32_t globalBatch = 0;
    et::DataType dtype = et::DataType::Bf16;
    Recompute recompute = Recompute::None;
    // ZeRO stage 0..3 (training with dp > 1).
    uint32_t zero = 0;
    // Training, when the trace is one data-parallel replica of a larger job (dp 1): the ranks
    // its optimizer state is sharded over (FSDP or ZeRO across replicas the trace leaves out),
    // so each rank's Adam step updates 1/N of its stage's parameters. 1: not sharded.
    uint32_t optimizerShards = 1;
    Offload offload = Offload::None;
    AttentionKernel attention = AttentionKernel::Fused;
    // Training: dropout probability of the attention probabilities and of each block's
    // output (Megatron-LM's attention and hidden dropout); 0 writes no dropout kernel.
    double dropout = 0;
    GradAccumulation gradAccumulation = GradAccumulation::None;
    // Training with tp > 1: sequence parallelism (see the header comment); b*s must divide by tp.
    bool sequenceParallel = false;
    // Training: element type of the gradient buffer, in which weight gradients are summed over
    // the micro-batches, reduced over the data-parallel ranks and read by the optimizer;
    // nullopt for the default of gradientDtype().
    std::optional<et::DataType> gradDtype;
    // Inference: tokens generated after the prefill.
    uint32_t decodeTokens = 0;

    // gradDtype when given; otherwise fp32 when dtype is bf16 (Megatron-LM sets
    // accumulate_allreduce_grads_in_fp32 for bf16, whose 8-bit mantissa would lose the
    // micro-batches' small additions; Llama 3 accumulates and reduce-scatters its gradients in
    // fp32), and dtype itself for every other type (Megatron-LM's fp16 main_grad).
    et::DataType gradientDtype() const;
};

// The closed-form training FLOPs of one step: (6, or 8 with full recomputation) x layer matmul
// parameters x tokens, plus 6 x output-head parameters x tokens (the head is not recomputed),
// plus the attention term (attentionFlopFactor x layers x seq x hidden x tokens).
double trainingFlopsClosedForm(const TransformerSpec& spec);
// FLOPs of attention's matrix products per layer, per token, per (seq x hidden): forward 4,
// backward 8 (10 when fused: the kernel recomputes Q K^T), and 4 more with full recomputation.
double attentionFlopFactor(const TransformerSpec& spec);

class Transformer : public Workload {
public:
    // Throws etsim::Error naming the parameter when the spec cannot be generated (a degree
    // that does not divide, a batch that does not split into micro-batches, ...).
    explicit Transformer(TransformerSpec spec);

    uint32_t rankCount() const override { return spec.parallel.ranks(); }
    std::string description() const override;
    std::vector<CommGroup> groupsOf(uint32_t rank) const override;
    void forEachGroup(const std::function<void(const CommGroup&)>& visit) const override;
    void emitRank(uint32_t rank, RankEmitter& out) const override;

    const TransformerSpec& config() const { return spec; }
    uint32_t seqLen() const { return spec.seqLen; }
    uint32_t globalBatch() const { return spec.globalBatch; }
    uint32_t microBatches() const;
    // Tokens processed per step (training) or per prefill (inference).
    double tokens() const;

    // Bytes of comm_size of the collectives, for the callers that report them.
    // Tensor-parallel all-reduce of one block output: b * s * h * bytes.
    int64_t tpAllReduceBytes(uint32_t tokens) const;
    // Data-parallel gradient buffer of the dense weights of a stage, per rank, bytes (in the
    // gradient element type).
    int64_t dpGradientBytes(uint32_t stage) const;
    // Expert weights' gradients of a stage per rank, in the gradient element type
    // (synchronised over the expert data-parallel group).
    int64_t expertGradientBytes(uint32_t stage) const;

    // The group kinds; public for tests.
    enum class GroupKind { Tp, Dp, Ep, Edp };
    // pg_name of `rank`'s group of that kind; "" when the kind spans all ranks or is unused.
    std::string groupName(GroupKind kind, uint32_t rank) const;

private:
    struct Coordinates {
        uint32_t tp = 0;
        uint32_t dp = 0;
        uint32_t pp = 0;
    };
    struct Kind {
        GroupKind kind;
        const char* description;
        uint32_t size;
        int64_t firstId;
    };
    class RankPlan;

    Coordinates coordinates(uint32_t rank) const;
    uint32_t rankOf(Coordinates c) const;
    std::vector<Kind> usedKinds() const;
    const Kind* kindOf(GroupKind kind) const;
    uint32_t groupIndex(GroupKind kind, Coordinates c) const;
    CommGroup group(const Kind& kind, uint32_t index) const;
    // Weights of stage's dense part and expert part held by one rank.
    double stageDenseParameters(uint32_t stage) const;
    double stageExpertParameters(uint32_t stage) const;

    TransformerSpec spec;
    std::vector<Kind> kinds;
};

} // namespace etsim::workloads
