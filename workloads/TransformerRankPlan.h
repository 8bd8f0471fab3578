#pragma once
// The nodes of one rank of a Transformer job (Transformer.h), split by concern:
//   TransformerLayers.cpp     one layer forward and backward (attention, dense MLP)
//   TransformerMoe.cpp        the expert (MoE) MLP and its all-to-alls
//   TransformerZero.cpp       ZeRO's parameter gathers and gradient scatters, the optimizer step
//   TransformerSchedule.cpp   training: micro-batch forward/backward in the 1F1B pipeline order
//   TransformerInference.cpp  inference: prefill and decode steps through the pipeline
// Internal to workloads; users call Transformer::emitRank.

#include "workloads/Transformer.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace etsim::workloads {

namespace detail {

inline double d(uint64_t value)
{
    return static_cast<double>(value);
}

} // namespace detail

// The nodes of one rank. `chain` is the last node of the compute stream: every compute node
// and every blocking collective depends on it, so the stream runs in program order.
class Transformer::RankPlan {
public:
    RankPlan(const Transformer& job, uint32_t rank, RankEmitter& out)
        : job(job)
        , spec(job.spec)
        , m(job.spec.model)
        , p(job.spec.parallel)
        , out(out)
        , at(job.coordinates(rank))
        , bytes(et::bytesPerElement(job.spec.dtype))
        , gradBytes(et::bytesPerElement(job.spec.gradientDtype()))
        , tpGroup(job.groupName(GroupKind::Tp, rank))
        , dpGroup(job.groupName(GroupKind::Dp, rank))
        , epGroup(job.groupName(GroupKind::Ep, rank))
        , edpGroup(job.groupName(GroupKind::Edp, rank))
    {
        first = at.pp == 0;
        last = at.pp == p.pp - 1;
        layersHere = m.layers / p.pp;
        firstLayer = at.pp * layersHere;
        heads = m.heads / p.tp;
        // KV heads are split over TP ranks; with fewer KV heads than ranks they are repeated.
        kvHeads = std::max<uint32_t>(1, m.kvHeadCount() / p.tp);
    }

    void training();
    void inference();

private:
    // ---- primitives
    uint64_t
    gemm(const std::string& name, int64_t rows, int64_t cols, int64_t inner, int64_t batch = 1)
    {
        // A: the activation; B: the weight (or, in backward, the other operand) under its own
        // id; C: the next activation.
        return matmul(name,
                      {rows, cols, inner, batch},
                      {input(static_cast<uint64_t>(batch * rows * inner * bytes)),
                       fresh(static_cast<uint64_t>(batch * inner * cols * bytes))});
    }
    // C = A B (batched when shape.batch > 1) reading `inputs` and writing C as the next
    // activation. tensor_size is what the product itself moves, A, B and C by the shape, also
    // when an input names a larger tensor the product reads a part of.
    uint64_t
    matmul(const std::string& name, const et::GemmShape& shape, std::vector<TensorUse> inputs)
    {
        et::OperatorInfo info;
        info.kind = shape.batch == 1 ? et::OpKind::Gemm : et::OpKind::Bmm;
        info.dtype = spec.dtype;
        info.gemms.push_back(shape);
        const int64_t cElements = shape.batch * shape.m * shape.n;
        auto moved = static_cast<uint64_t>(
            (shape.batch * (shape.m * shape.k + shape.k * shape.n) + cElements) * bytes);
        NodeTensors tensors;
        tensors.inputs = std::move(inputs);
        tensors.outputs = {output(static_cast<uint64_t>(cElements * bytes))};
        return step(out.compute(name, info, moved, deps(), tensors));
    }
    // An element-wise kernel reading the activation (`elements` of it) and writing one of
    // `outElements` (default: the same size).
    uint64_t
    elementwise(const std::string& name, double ops, double elements, double outElements = -1)
    {
        NodeTensors tensors;
        tensors.inputs = {input(static_cast<uint64_t>(elements * bytes))};
        tensors.outputs = {
            output(static_cast<uint64_t>((outElements < 0 ? elements : outElements) * bytes))};
        return vectorKernel(name, ops, tensors);
    }
    // An element-wise kernel of `ops` operations on the vector unit reading `tensors.inputs`
    // and writing `tensors.outputs`; tensor_size counts every byte of both, read or written.
    uint64_t vectorKernel(const std::string& name, double ops, const NodeTensors& tensors)
    {
        uint64_t size = 0;
        for (const auto* list : {&tensors.inputs, &tensors.outputs})
            for (const TensorUse& tensor : *list)
                size += tensor.bytes;
        return step(out.compute(name,
                                et::OpKind::Elementwise,
                                spec.dtype,
                                static_cast<int64_t>(ops),
                                size,
                                deps(),
                                tensors));
    }
    // Adam over `params` parameters: about 10 operations a parameter; reads the gradient (in
    // the gradient element type) and the fp32 master weight, momentum and variance (12 B a
    // parameter), writes those three back in place (the same tensor) and the parameter. Each
    // byte moved is one tensor byte, read or written, not both.
    uint64_t adam(const std::string& name, double params)
    {
        const auto gradients = static_cast<uint64_t>(params * gradBytes);
        const auto weights = static_cast<uint64_t>(params * bytes);
        const TensorUse state = fresh(static_cast<uint64_t>(params * 12));
        NodeTensors tensors;
        tensors.inputs = {fresh(gradients), state};
        tensors.outputs = {state, output(weights)};
        return step(out.compute(name,
                                et::OpKind::Elementwise,
                                spec.dtype,
                                static_cast<int64_t>(10 * params),
                                gradients + 2 * state.bytes + weights,
                                deps(),
                                tensors));
    }
    uint64_t collective(const std::string& name,
                        et::CollectiveType type,
                        int64_t size,
                        const std::string& group)
    {
        // The collective leaves its result in HBM under a new identity.
        activation = {};
        return step(out.collective(name, type, size, group, deps()));
    }
    uint64_t memory(const std::string& name, bool store, double size)
    {
        activation = {};
        return step(out.memory(name, store, static_cast<uint64_t>(size), deps()));
    }
    // Tensor identities (docs/accel.md, On-chip memory): each kernel's output is the next kernel's
    // input when its size is what that input needs (the activation chain); everything else
    // (weights, gradients, a tensor after a collective or a memory node) gets an id of its own, so
    // a generated trace promises no reuse it does not have.
    TensorUse fresh(uint64_t size) { return TensorUse{nextTensor++, size}; }
    TensorUse input(uint64_t size)
    {
        if (activation.id != 0 && activation.bytes == size)
            return activation;
        return fresh(size);
    }
    TensorUse output(uint64_t size)
    {
        activation = fresh(size);
        return activation;
    }
    std::vector<uint64_t> deps()
    {
        std::vector<uint64_t> list;
        if (chain)
            list.push_back(*chain);
        // push_back, not insert: g++ 12 warns falsely (-Warray-bounds) on inserting a range.
        for (uint64_t id : pending)
            list.push_back(id);
        pending.clear();
        return list;
    }
    uint64_t step(uint64_t id)
    {
        chain = id;
        return id;
    }
    uint32_t peer(uint32_t stage) const { return job.rankOf({at.tp, at.dp, stage}); }
    // The next compute node also waits for this receive.
    void receive(const std::string& name, uint32_t stage, int64_t size, int32_t tag)
    {
        pending.push_back(out.recv(name, peer(stage), size, tag, {}));
    }
    void send(const std::string& name, uint32_t stage, int64_t size, int32_t tag)
    {
        out.send(name,
                 peer(stage),
                 size,
                 tag,
                 chain ? std::vector<uint64_t>{*chain} : std::vector<uint64_t>{});
    }

    // ---- one layer (TransformerLayers.cpp)
    // Weights of one layer held by this rank.
    double layerWeights() const;
    // This rank's share of the MLP's inner size, and the up projection's width (gate and up
    // side by side when gated).
    int64_t ffnShard() const { return m.ffn / p.tp; }
    int64_t upWidth() const { return (m.gatedMlp ? 2 : 1) * ffnShard(); }
    // Tokens the rank's norms, dropouts and residual adds see: 1/tp of `tokens` with sequence
    // parallelism, all of them otherwise.
    int64_t streamTokens(int64_t tokens) const
    {
        return spec.sequenceParallel ? tokens / p.tp : tokens;
    }
    // Into a tensor-parallel block (`block` "attn" or "mlp"): sequence parallelism gathers the
    // tokens the ranks hold apart; nothing without it.
    void
    tpGather(const std::string& prefix, const char* block, const char* suffix, uint32_t tokens);
    // Out of a tensor-parallel block: the partial sums combined, by an all-reduce, or a
    // reduce-scatter that leaves each rank its 1/tp of the tokens (sequence parallelism).
    void
    tpCombine(const std::string& prefix, const char* block, const char* suffix, uint32_t tokens);
    // Forward of one layer on `tokens` tokens with `context` keys per query.
    void layerForward(const std::string& prefix,
                      uint32_t batch,
                      uint32_t queries,
                      uint32_t context,
                      uint64_t kvBytes);
    void mlpForward(const std::string& prefix, int64_t tokens);
    void mlpBackward(const std::string& prefix, int64_t tokens);
    // Backward of a forward GEMM (rows, cols, inner): data gradient and weight gradient; the
    // data gradient stays the activation.
    void gemmBackward(const std::string& name, int64_t rows, int64_t cols, int64_t inner);
    void layerBackward(const std::string& prefix, uint32_t batch);
    // Backward of an element-wise kernel of `ops` operations: reads the gradient (the
    // activation, `elements`) and the forward's saved input (`savedElements`), writes the
    // input's gradient (`savedElements`).
    void
    elementwiseBackward(const std::string& name, double ops, double elements, double savedElements);
    // With GradAccumulation::Separate, adds the weight gradient just written (the activation,
    // `elements`) into the step's gradient buffer: reads both, writes the buffer. The
    // activation stays what it was before.
    void accumulateGradient(const std::string& name, double elements);
    // Dropout in training (spec.dropout > 0; Megatron-LM's attention and hidden dropout).
    bool dropoutActive() const { return spec.phase == Phase::Training && spec.dropout > 0; }
    // The residual add after a block: the block's output (the activation) plus `stream`, the
    // residual stream it branched from; with dropout, the fused bias-dropout-add that also
    // writes the dropout mask. `tokens` x hidden elements.
    void residualAdd(const std::string& name, int64_t tokens, TensorUse stream);
    // Backward of a dropout: reads the gradient and the saved mask, writes the gradient.
    void dropoutBackward(const std::string& name, double elements);
    // Backward of a residual add, where the stream forked: the gradient that went through the
    // block (the activation) plus `skipped`, the one that went around it.
    void gradientSum(const std::string& name, TensorUse skipped);
    // Forward dropout of the activation (`elements`): writes the kept values and the mask.
    void dropout(const std::string& name, double elements);
    // The activation as a tensor of `elements`; when it is not that size, a tensor of its own,
    // which becomes the activation (so the next kernel reads the same one).
    TensorUse current(double elements)
    {
        activation = input(static_cast<uint64_t>(elements * bytes));
        return activation;
    }

    // ---- attention (TransformerAttention.cpp)
    void attentionForward(const std::string& prefix,
                          uint32_t batch,
                          uint32_t queries,
                          uint32_t context,
                          uint64_t kvBytes);
    // `sequences` of `queries` tokens attending to `keys` keys each; `kvBytes` of KV cache.
    void fusedAttentionForward(const std::string& name,
                               int64_t sequences,
                               int64_t queries,
                               int64_t keys,
                               uint64_t kvBytes);
    void unfusedAttentionForward(const std::string& prefix,
                                 int64_t sequences,
                                 int64_t queries,
                                 int64_t keys,
                                 uint64_t kvBytes);
    void attentionBackward(const std::string& prefix, uint32_t batch);
    void fusedAttentionBackward(const std::string& name, int64_t sequences);
    void unfusedAttentionBackward(const std::string& prefix, int64_t sequences);
    // Bytes of the QKV projection's output, and of its K (or V) part, for `tokens` tokens.
    uint64_t qkvBytes(int64_t tokens) const;
    uint64_t kvPartBytes(int64_t tokens) const;
    // Saved activations of one layer per rank, bytes (Korthikanti et al. 2022 for 16-bit
    // tensors, tensor parallel without sequence parallelism; only the input with full
    // recomputation).
    double activationBytes(uint32_t batch) const;

    // ---- experts (TransformerMoe.cpp)
    void expertMlpForward(const std::string& prefix, int64_t tokens);
    void expertMlpBackward(const std::string& prefix, int64_t tokens);
    void allToAll(const std::string& name, int64_t routed);

    // ---- ZeRO and the optimizer (TransformerZero.cpp)
    // ZeRO-3: the layer's weights are gathered before each use and its gradients scattered.
    void zeroGatherLayer(const std::string& prefix);
    void zeroScatterLayerGradients(const std::string& prefix);
    void optimizer();

    // ---- training schedule (TransformerSchedule.cpp)
    void forward(uint32_t mb);
    void backward(uint32_t mb);

    std::string layerPrefix(const char* phase, uint32_t mb, uint32_t layer) const
    {
        return std::string(phase) + ".mb" + std::to_string(mb) + ".layer" +
               std::to_string(firstLayer + layer) + ".";
    }

    const Transformer& job;
    const TransformerSpec& spec;
    const TransformerModel& m;
    const Parallelism& p;
    RankEmitter& out;
    Coordinates at;
    // Element sizes of the trace's dtype and of the gradient buffer.
    int64_t bytes;
    int64_t gradBytes;
    std::string tpGroup;
    std::string dpGroup;
    std::string epGroup;
    std::string edpGroup;
    bool first = false;
    bool last = false;
    uint32_t layersHere = 0;
    uint32_t firstLayer = 0;
    uint32_t heads = 0;
    uint32_t kvHeads = 0;
    std::optional<uint64_t> chain;
    std::vector<uint64_t> pending;
    // The last kernel's output (id 0: none) and the next tensor id of this rank.
    TensorUse activation;
    uint64_t nextTensor = 1;
};

} // namespace etsim::workloads
