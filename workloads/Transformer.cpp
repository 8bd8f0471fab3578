#include "workloads/Transformer.h"

#include "kernel/Error.h"

#include <algorithm>
#include <cmath>

namespace etsim::workloads {

using et::CollectiveType;
using et::OpKind;

namespace {

// ASTRA-sim reduces point-to-point tags modulo this (spec 8.8).
constexpr int64_t tagLimit = 500000000;

double d(uint64_t value)
{
    return static_cast<double>(value);
}

} // namespace

// ---- names ------------------------------------------------------------------------------------

std::string_view phaseName(Phase phase)
{
    return phase == Phase::Training ? "training" : "inference";
}

std::optional<Phase> phaseFromName(std::string_view name)
{
    if (name == "training")
        return Phase::Training;
    if (name == "inference")
        return Phase::Inference;
    return std::nullopt;
}

std::string_view recomputeName(Recompute recompute)
{
    return recompute == Recompute::None ? "none" : "full";
}

std::optional<Recompute> recomputeFromName(std::string_view name)
{
    if (name == "none")
        return Recompute::None;
    if (name == "full")
        return Recompute::Full;
    return std::nullopt;
}

std::string_view offloadName(Offload offload)
{
    switch (offload) {
    case Offload::None:
        return "none";
    case Offload::Weights:
        return "weights";
    case Offload::Activations:
        return "activations";
    }
    return "none";
}

std::optional<Offload> offloadFromName(std::string_view name)
{
    for (Offload o : {Offload::None, Offload::Weights, Offload::Activations})
        if (offloadName(o) == name)
            return o;
    return std::nullopt;
}

// ---- model arithmetic -----------------------------------------------------------------------

double TransformerModel::attentionParameters() const
{
    double h = hidden;
    double kv = d(kvHeadCount()) * headDim();
    return h * (h + 2 * kv) + h * h;
}

double TransformerModel::mlpParameters() const
{
    double perExpert = (gatedMlp ? 3.0 : 2.0) * hidden * ffn;
    if (experts == 0)
        return perExpert;
    return experts * perExpert + d(hidden) * experts;
}

double TransformerModel::activeMlpParameters() const
{
    double perExpert = (gatedMlp ? 3.0 : 2.0) * hidden * ffn;
    if (experts == 0)
        return perExpert;
    return topK * perExpert + d(hidden) * experts;
}

double TransformerModel::parameters() const
{
    double h = hidden;
    double embeddings = d(vocab) * h * (tiedEmbeddings ? 1 : 2);
    return layers * (attentionParameters() + mlpParameters() + 2 * h) + embeddings + h;
}

double TransformerModel::matmulParameters() const
{
    return layers * (attentionParameters() + activeMlpParameters()) + d(vocab) * hidden;
}

double trainingFlopsClosedForm(const TransformerSpec& spec)
{
    const TransformerModel& m = spec.model;
    double seq = spec.seqLen == 0 ? m.seqLen : spec.seqLen;
    double batch = spec.globalBatch == 0 ? d(spec.microBatch) * spec.parallel.dp : spec.globalBatch;
    double tokens = batch * seq;
    bool full = spec.recompute == Recompute::Full;
    double layerParameters = m.matmulParameters() - d(m.vocab) * m.hidden;
    // Recomputation re-runs the layers, not the output head.
    return (full ? 8.0 : 6.0) * layerParameters * tokens + 6.0 * d(m.vocab) * m.hidden * tokens +
           (full ? 16.0 : 12.0) * m.layers * seq * m.hidden * tokens;
}

// ---- construction and layout ----------------------------------------------------------------

Transformer::Transformer(TransformerSpec s) : spec(std::move(s))
{
    auto fail = [](const std::string& problem) { throw Error("transformer: " + problem); };
    const TransformerModel& m = spec.model;
    const Parallelism& p = spec.parallel;
    if (spec.seqLen == 0)
        spec.seqLen = m.seqLen;
    if (spec.globalBatch == 0)
        spec.globalBatch = spec.microBatch * p.dp;
    auto positive = [&](uint64_t value, const char* name) {
        if (value == 0)
            fail(std::string(name) + " must be >= 1");
    };
    positive(m.layers, "layers");
    positive(m.hidden, "hidden");
    positive(m.heads, "heads");
    positive(m.ffn, "ffn");
    positive(m.vocab, "vocab");
    positive(spec.seqLen, "seq-len");
    positive(spec.microBatch, "micro-batch");
    positive(p.tp, "tp");
    positive(p.pp, "pp");
    positive(p.dp, "dp");
    positive(p.ep, "ep");
    auto divides = [&](uint64_t divisor, uint64_t value, const std::string& what) {
        if (value % divisor != 0)
            fail(what + " (" + std::to_string(value) + ") must be a multiple of " +
                 std::to_string(divisor));
    };
    divides(m.heads, m.hidden, "hidden");
    if (m.kvHeadCount() > m.heads || m.heads % m.kvHeadCount() != 0)
        fail("kv-heads (" + std::to_string(m.kvHeadCount()) + ") must divide heads (" +
             std::to_string(m.heads) + ")");
    divides(p.tp, m.heads, "heads, for tp " + std::to_string(p.tp) + ",");
    divides(p.tp, m.ffn, "ffn, for tp " + std::to_string(p.tp) + ",");
    divides(p.tp, m.vocab, "vocab, for tp " + std::to_string(p.tp) + ",");
    divides(p.pp, m.layers, "layers, for pp " + std::to_string(p.pp) + ",");
    divides(p.ep, p.dp, "dp, for ep " + std::to_string(p.ep) + ",");
    if (m.experts == 0 && p.ep > 1)
        fail("ep " + std::to_string(p.ep) + " needs a mixture-of-experts model (experts > 0)");
    if (m.experts > 0) {
        divides(p.ep, m.experts, "experts, for ep " + std::to_string(p.ep) + ",");
        if (m.topK == 0 || m.topK > m.experts)
            fail("top-k must be between 1 and experts (" + std::to_string(m.experts) + ")");
    }
    divides(uint64_t{spec.microBatch} * p.dp,
            spec.globalBatch,
            "global-batch, for micro-batch " + std::to_string(spec.microBatch) + " x dp " +
                std::to_string(p.dp) + ",");
    if (spec.zero > 3)
        fail("zero must be 0, 1, 2 or 3");
    if (et::bytesPerElement(spec.dtype) == 0)
        fail("dtype must be a known element type");
    uint64_t ranks = uint64_t{p.tp} * p.pp * p.dp;
    if (ranks > (uint64_t{1} << 31))
        fail("tp x pp x dp = " + std::to_string(ranks) + " ranks is too many");
    if (spec.phase == Phase::Inference && spec.offload == Offload::Activations)
        fail("activation offload applies to training; use --offload weights for inference");
    uint64_t tags = 2 * uint64_t{microBatches()} * (uint64_t{spec.decodeTokens} + 1);
    if (tags >= tagLimit)
        fail("too many micro-batches x decode steps for point-to-point tags below 5e8");
    kinds = usedKinds();
}

uint32_t Transformer::microBatches() const
{
    return spec.globalBatch / (spec.microBatch * spec.parallel.dp);
}

double Transformer::tokens() const
{
    return d(spec.globalBatch) * spec.seqLen;
}

std::string Transformer::description() const
{
    const Parallelism& p = spec.parallel;
    std::string text = spec.model.name + " " + std::string(phaseName(spec.phase)) +
                       " step: " + std::to_string(spec.model.layers) + " layers, hidden " +
                       std::to_string(spec.model.hidden) + ", seq " + std::to_string(spec.seqLen) +
                       ", global batch " + std::to_string(spec.globalBatch) + ", micro-batch " +
                       std::to_string(spec.microBatch) + ", " +
                       std::string(et::dataTypeName(spec.dtype)) + "; tp " + std::to_string(p.tp) +
                       " pp " + std::to_string(p.pp) + " dp " + std::to_string(p.dp) + " ep " +
                       std::to_string(p.ep);
    if (spec.phase == Phase::Training)
        text += ", recompute " + std::string(recomputeName(spec.recompute)) + ", zero " +
                std::to_string(spec.zero);
    else
        text += ", decode " + std::to_string(spec.decodeTokens) + " tokens";
    return text;
}

Transformer::Coordinates Transformer::coordinates(uint32_t rank) const
{
    const Parallelism& p = spec.parallel;
    return {rank % p.tp, (rank / p.tp) % p.dp, rank / (p.tp * p.dp)};
}

uint32_t Transformer::rankOf(Coordinates c) const
{
    const Parallelism& p = spec.parallel;
    return c.tp + p.tp * (c.dp + p.dp * c.pp);
}

std::vector<Transformer::Kind> Transformer::usedKinds() const
{
    const Parallelism& p = spec.parallel;
    uint32_t ranks = p.ranks();
    bool training = spec.phase == Phase::Training;
    bool moe = spec.model.experts > 0;
    std::vector<Kind> used;
    int64_t nextId = 1;
    auto add = [&](GroupKind kind, const char* description, uint32_t size, bool needed) {
        // A group of every rank is the default group "": nothing to declare.
        if (!needed || size < 2 || size == ranks)
            return;
        used.push_back({kind, description, size, nextId});
        nextId += ranks / size;
    };
    add(GroupKind::Tp, "tp", p.tp, true);
    add(GroupKind::Dp, "dp", p.dp, training);
    add(GroupKind::Ep, "ep", p.ep, moe);
    add(GroupKind::Edp, "edp", p.dp / p.ep, training && moe);
    return used;
}

const Transformer::Kind* Transformer::kindOf(GroupKind kind) const
{
    for (const Kind& k : kinds)
        if (k.kind == kind)
            return &k;
    return nullptr;
}

uint32_t Transformer::groupIndex(GroupKind kind, Coordinates c) const
{
    const Parallelism& p = spec.parallel;
    uint32_t blocks = p.dp / p.ep;
    switch (kind) {
    case GroupKind::Tp:
        return c.dp + p.dp * c.pp;
    case GroupKind::Dp:
        return c.tp + p.tp * c.pp;
    case GroupKind::Ep:
        return c.tp + p.tp * (c.dp / p.ep + blocks * c.pp);
    case GroupKind::Edp:
        return c.tp + p.tp * (c.dp % p.ep + p.ep * c.pp);
    }
    return 0;
}

CommGroup Transformer::group(const Kind& kind, uint32_t index) const
{
    const Parallelism& p = spec.parallel;
    uint32_t blocks = p.dp / p.ep;
    CommGroup g;
    g.id = kind.firstId + index;
    g.description = kind.description;
    g.ranks.reserve(kind.size);
    for (uint32_t i = 0; i < kind.size; ++i) {
        Coordinates c;
        switch (kind.kind) {
        case GroupKind::Tp:
            c = {i, index % p.dp, index / p.dp};
            break;
        case GroupKind::Dp:
            c = {index % p.tp, i, index / p.tp};
            break;
        case GroupKind::Ep: {
            uint32_t rest = index / p.tp;
            c = {index % p.tp, (rest % blocks) * p.ep + i, rest / blocks};
            break;
        }
        case GroupKind::Edp: {
            uint32_t rest = index / p.tp;
            c = {index % p.tp, rest % p.ep + p.ep * i, rest / p.ep};
            break;
        }
        }
        g.ranks.push_back(rankOf(c));
    }
    return g;
}

std::string Transformer::groupName(GroupKind kind, uint32_t rank) const
{
    const Kind* k = kindOf(kind);
    if (k == nullptr)
        return "";
    return std::to_string(k->firstId + groupIndex(kind, coordinates(rank)));
}

std::vector<CommGroup> Transformer::groupsOf(uint32_t rank) const
{
    std::vector<CommGroup> groups;
    for (const Kind& k : kinds)
        groups.push_back(group(k, groupIndex(k.kind, coordinates(rank))));
    return groups;
}

void Transformer::forEachGroup(const std::function<void(const CommGroup&)>& visit) const
{
    for (const Kind& k : kinds)
        for (uint32_t index = 0; index < spec.parallel.ranks() / k.size; ++index)
            visit(group(k, index));
}

double Transformer::stageDenseParameters(uint32_t stage) const
{
    const TransformerModel& m = spec.model;
    const Parallelism& p = spec.parallel;
    double layers = d(m.layers) / p.pp;
    double h = m.hidden;
    double dense = m.attentionParameters() + (m.experts == 0 ? m.mlpParameters() : 0);
    // Norm weights are replicated on every tensor-parallel rank; the router too.
    double replicated = 2 * h + (m.experts > 0 ? h * m.experts : 0);
    double params = layers * (dense / p.tp + replicated);
    if (stage == 0)
        params += d(m.vocab) * h / p.tp;
    if (stage == p.pp - 1) {
        params += h;
        if (!m.tiedEmbeddings || p.pp > 1)
            params += d(m.vocab) * h / p.tp;
    }
    return params;
}

double Transformer::stageExpertParameters(uint32_t /*stage*/) const
{
    const TransformerModel& m = spec.model;
    if (m.experts == 0)
        return 0;
    const Parallelism& p = spec.parallel;
    double perExpert = (m.gatedMlp ? 3.0 : 2.0) * m.hidden * m.ffn;
    return d(m.layers) / p.pp * (d(m.experts) / p.ep) * perExpert / p.tp;
}

int64_t Transformer::tpAllReduceBytes(uint32_t tokens) const
{
    return static_cast<int64_t>(tokens) * spec.model.hidden * et::bytesPerElement(spec.dtype);
}

int64_t Transformer::dpGradientBytes(uint32_t stage) const
{
    return static_cast<int64_t>(
        std::llround(stageDenseParameters(stage) * et::bytesPerElement(spec.dtype)));
}

int64_t Transformer::expertGradientBytes(uint32_t stage) const
{
    return static_cast<int64_t>(
        std::llround(stageExpertParameters(stage) * et::bytesPerElement(spec.dtype)));
}

// ---- one rank ------------------------------------------------------------------------------

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
        et::OperatorInfo info;
        info.kind = batch == 1 ? OpKind::Gemm : OpKind::Bmm;
        info.dtype = spec.dtype;
        info.gemms.push_back({rows, cols, inner, batch});
        auto moved =
            static_cast<uint64_t>(batch * (rows * inner + inner * cols + rows * cols) * bytes);
        return step(out.compute(name, info, moved, deps()));
    }
    uint64_t elementwise(const std::string& name, double ops, double elements)
    {
        return step(out.compute(name,
                                OpKind::Elementwise,
                                spec.dtype,
                                static_cast<int64_t>(ops),
                                static_cast<uint64_t>(elements * bytes),
                                deps()));
    }
    uint64_t attention(
        const std::string& name, int64_t queries, int64_t keys, int64_t batch, uint64_t extraBytes)
    {
        et::OperatorInfo info;
        info.kind = OpKind::Attention;
        info.dtype = spec.dtype;
        int64_t dh = m.headDim();
        info.gemms.push_back({queries, keys, dh, batch});
        info.gemms.push_back({queries, dh, keys, batch});
        auto moved =
            static_cast<uint64_t>(batch * (2 * queries * dh + 2 * keys * dh) * bytes) + extraBytes;
        return step(out.compute(name, info, moved, deps()));
    }
    uint64_t
    collective(const std::string& name, CollectiveType type, int64_t size, const std::string& group)
    {
        return step(out.collective(name, type, size, group, deps()));
    }
    uint64_t memory(const std::string& name, bool store, double size)
    {
        return step(out.memory(name, store, static_cast<uint64_t>(size), deps()));
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

    // ---- model pieces
    // Weights of one layer held by this rank.
    double layerWeights() const
    {
        double mlp = m.experts == 0
                         ? m.mlpParameters() / p.tp
                         : job.stageExpertParameters(at.pp) / layersHere + d(m.hidden) * m.experts;
        return m.attentionParameters() / p.tp + mlp + 2.0 * m.hidden;
    }
    void tpAllReduce(const std::string& name, uint32_t tokens)
    {
        if (p.tp > 1)
            collective(name, CollectiveType::AllReduce, job.tpAllReduceBytes(tokens), tpGroup);
    }
    // Forward of one layer on `tokens` tokens with `context` keys per query.
    void layerForward(const std::string& prefix,
                      uint32_t batch,
                      uint32_t queries,
                      uint32_t context,
                      uint64_t kvBytes)
    {
        int64_t tokens = int64_t{batch} * queries;
        int64_t h = m.hidden;
        int64_t dh = m.headDim();
        int64_t qkv = (int64_t{heads} + 2 * int64_t{kvHeads}) * dh;
        elementwise(prefix + "norm1", 5.0 * d(tokens) * h, d(tokens) * h);
        gemm(prefix + "qkv", tokens, qkv, h);
        attention(prefix + "attention", queries, context, int64_t{batch} * heads, kvBytes);
        gemm(prefix + "attn_out", tokens, h, int64_t{heads} * dh);
        tpAllReduce(prefix + "attn_allreduce", static_cast<uint32_t>(tokens));
        elementwise(prefix + "norm2", 5.0 * d(tokens) * h, d(tokens) * h);
        mlpForward(prefix, tokens);
        tpAllReduce(prefix + "mlp_allreduce", static_cast<uint32_t>(tokens));
    }
    void mlpForward(const std::string& prefix, int64_t tokens)
    {
        int64_t h = m.hidden;
        int64_t f = m.ffn / p.tp;
        int64_t up = (m.gatedMlp ? 2 : 1) * f;
        if (m.experts == 0) {
            gemm(prefix + "mlp_up", tokens, up, h);
            elementwise(prefix + "activation", 4.0 * d(tokens) * f, d(tokens) * up);
            gemm(prefix + "mlp_down", tokens, h, f);
            return;
        }
        int64_t routed = tokens * m.topK;
        gemm(prefix + "router", tokens, m.experts, h);
        allToAll(prefix + "dispatch", routed);
        gemm(prefix + "expert_up", routed, up, h);
        elementwise(prefix + "expert_activation", 4.0 * d(routed) * f, d(routed) * up);
        gemm(prefix + "expert_down", routed, h, f);
        allToAll(prefix + "combine", routed);
    }
    void allToAll(const std::string& name, int64_t routed)
    {
        if (p.ep > 1)
            collective(name, CollectiveType::AllToAll, routed * m.hidden * bytes, epGroup);
    }
    // Backward of a forward GEMM (rows, cols, inner): data gradient and weight gradient.
    void gemmBackward(const std::string& name, int64_t rows, int64_t cols, int64_t inner)
    {
        gemm(name + ".dgrad", rows, inner, cols);
        gemm(name + ".wgrad", inner, cols, rows);
    }
    void layerBackward(const std::string& prefix, uint32_t batch)
    {
        int64_t s = job.spec.seqLen;
        int64_t tokens = int64_t{batch} * s;
        int64_t h = m.hidden;
        int64_t dh = m.headDim();
        int64_t f = m.ffn / p.tp;
        int64_t up = (m.gatedMlp ? 2 : 1) * f;
        int64_t qkv = (int64_t{heads} + 2 * int64_t{kvHeads}) * dh;
        if (m.experts == 0) {
            gemmBackward(prefix + "mlp_down", tokens, h, f);
            elementwise(prefix + "activation.bwd", 4.0 * d(tokens) * f, d(tokens) * up);
            gemmBackward(prefix + "mlp_up", tokens, up, h);
        } else {
            int64_t routed = tokens * m.topK;
            allToAll(prefix + "combine.bwd", routed);
            gemmBackward(prefix + "expert_down", routed, h, f);
            elementwise(prefix + "expert_activation.bwd", 4.0 * d(routed) * f, d(routed) * up);
            gemmBackward(prefix + "expert_up", routed, up, h);
            allToAll(prefix + "dispatch.bwd", routed);
            gemmBackward(prefix + "router", tokens, m.experts, h);
        }
        tpAllReduce(prefix + "mlp_allreduce.bwd", static_cast<uint32_t>(tokens));
        elementwise(prefix + "norm2.bwd", 8.0 * d(tokens) * h, d(tokens) * h);
        gemmBackward(prefix + "attn_out", tokens, h, int64_t{heads} * dh);
        // Attention backward: four batched products (dP, dV, dQ, dK), each as large as one of
        // the two forward ones.
        int64_t b = int64_t{batch} * heads;
        gemm(prefix + "attention.bwd.dp", s, s, dh, b);
        gemm(prefix + "attention.bwd.dv", s, dh, s, b);
        gemm(prefix + "attention.bwd.dq", s, dh, s, b);
        gemm(prefix + "attention.bwd.dk", s, dh, s, b);
        gemmBackward(prefix + "qkv", tokens, qkv, h);
        tpAllReduce(prefix + "attn_allreduce.bwd", static_cast<uint32_t>(tokens));
        elementwise(prefix + "norm1.bwd", 8.0 * d(tokens) * h, d(tokens) * h);
    }
    // Saved activations of one layer per rank, bytes (Korthikanti et al. 2022 for 16-bit
    // tensors, tensor parallel without sequence parallelism; only the input with full
    // recomputation).
    double activationBytes(uint32_t batch) const
    {
        double sbh = d(batch) * spec.seqLen * m.hidden;
        if (spec.recompute == Recompute::Full)
            return sbh * bytes;
        double t = p.tp;
        return sbh * (10 + 24 / t + 5.0 * m.heads * spec.seqLen / (d(m.hidden) * t)) * bytes / 2;
    }

    void forward(uint32_t mb);
    void backward(uint32_t mb);
    void optimizer();
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
    int64_t bytes;
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
};

void Transformer::RankPlan::forward(uint32_t mb)
{
    uint32_t b = spec.microBatch;
    uint32_t s = spec.seqLen;
    int64_t tokens = int64_t{b} * s;
    int64_t h = m.hidden;
    int64_t activation = tokens * h * bytes;
    std::string tag = "fwd.mb" + std::to_string(mb);
    if (first)
        elementwise(tag + ".embedding", 0, d(tokens) * h);
    else
        receive(tag + ".recv_activation", at.pp - 1, activation, static_cast<int32_t>(2 * mb));
    for (uint32_t layer = 0; layer < layersHere; ++layer) {
        std::string prefix = layerPrefix("fwd", mb, layer);
        if (spec.zero == 3 && p.dp > 1)
            collective(prefix + "param_allgather",
                       CollectiveType::AllGather,
                       static_cast<int64_t>(layerWeights() * bytes / p.dp),
                       dpGroup);
        if (spec.offload == Offload::Weights)
            memory(prefix + "load_weights", false, layerWeights() * bytes);
        layerForward(prefix, b, s, s, 0);
        if (spec.offload == Offload::Activations)
            memory(prefix + "store_activations", true, activationBytes(b));
    }
    if (last) {
        elementwise(tag + ".final_norm", 5.0 * d(tokens) * h, d(tokens) * h);
        gemm(tag + ".lm_head", tokens, m.vocab / p.tp, h);
        elementwise(tag + ".loss", 5.0 * d(tokens) * m.vocab / p.tp, d(tokens) * m.vocab / p.tp);
    } else {
        send(tag + ".send_activation", at.pp + 1, activation, static_cast<int32_t>(2 * mb));
    }
}

void Transformer::RankPlan::backward(uint32_t mb)
{
    uint32_t b = spec.microBatch;
    int64_t tokens = int64_t{b} * spec.seqLen;
    int64_t h = m.hidden;
    int64_t activation = tokens * h * bytes;
    std::string tag = "bwd.mb" + std::to_string(mb);
    if (last) {
        elementwise(tag + ".loss", 3.0 * d(tokens) * m.vocab / p.tp, d(tokens) * m.vocab / p.tp);
        gemmBackward(tag + ".lm_head", tokens, m.vocab / p.tp, h);
        elementwise(tag + ".final_norm", 8.0 * d(tokens) * h, d(tokens) * h);
    } else {
        receive(tag + ".recv_gradient", at.pp + 1, activation, static_cast<int32_t>(2 * mb + 1));
    }
    for (uint32_t l = layersHere; l-- > 0;) {
        std::string prefix = layerPrefix("bwd", mb, l);
        if (spec.zero == 3 && p.dp > 1)
            collective(prefix + "param_allgather",
                       CollectiveType::AllGather,
                       static_cast<int64_t>(layerWeights() * bytes / p.dp),
                       dpGroup);
        if (spec.offload == Offload::Weights)
            memory(prefix + "load_weights", false, layerWeights() * bytes);
        if (spec.offload == Offload::Activations)
            memory(prefix + "load_activations", false, activationBytes(b));
        if (spec.recompute == Recompute::Full)
            layerForward(layerPrefix("recompute", mb, l), b, spec.seqLen, spec.seqLen, 0);
        layerBackward(prefix, b);
        if (spec.zero == 3 && p.dp > 1)
            collective(prefix + "grad_reducescatter",
                       CollectiveType::ReduceScatter,
                       static_cast<int64_t>(layerWeights() * bytes),
                       dpGroup);
    }
    if (first)
        elementwise(tag + ".embedding", d(tokens) * h, d(tokens) * h);
    else
        send(tag + ".send_gradient", at.pp - 1, activation, static_cast<int32_t>(2 * mb + 1));
}

void Transformer::RankPlan::optimizer()
{
    double dense = job.stageDenseParameters(at.pp);
    double experts = job.stageExpertParameters(at.pp);
    int64_t denseBytes = job.dpGradientBytes(at.pp);
    int64_t expertBytes = job.expertGradientBytes(at.pp);
    bool sharded = spec.zero >= 1 && p.dp > 1;
    if (p.dp > 1 && spec.zero == 0)
        collective("grad_allreduce", CollectiveType::AllReduce, denseBytes, dpGroup);
    if (p.dp > 1 && (spec.zero == 1 || spec.zero == 2))
        collective("grad_reducescatter", CollectiveType::ReduceScatter, denseBytes, dpGroup);
    uint32_t edp = p.dp / p.ep;
    if (experts > 0 && edp > 1)
        collective("expert_grad_allreduce", CollectiveType::AllReduce, expertBytes, edpGroup);
    double shard = (sharded ? dense / p.dp : dense) + experts;
    // Adam: about 10 operations per parameter; reads and writes fp32 master weight, momentum
    // and variance, reads the gradient and writes the parameter.
    elementwise("optimizer.adam", 10 * shard, shard * (24.0 / bytes + 2));
    if (p.dp > 1 && (spec.zero == 1 || spec.zero == 2))
        collective("param_allgather",
                   CollectiveType::AllGather,
                   static_cast<int64_t>(std::llround(dense / p.dp * bytes)),
                   dpGroup);
}

void Transformer::RankPlan::training()
{
    uint32_t mbs = job.microBatches();
    uint32_t warmup = std::min(p.pp - at.pp - 1, mbs);
    for (uint32_t j = 0; j < warmup; ++j)
        forward(j);
    for (uint32_t i = 0; i + warmup < mbs; ++i) {
        forward(warmup + i);
        backward(i);
    }
    for (uint32_t i = mbs - warmup; i < mbs; ++i)
        backward(i);
    optimizer();
}

void Transformer::RankPlan::inference()
{
    uint32_t mbs = job.microBatches();
    uint32_t b = spec.microBatch;
    uint32_t s = spec.seqLen;
    int64_t h = m.hidden;
    int64_t dh = m.headDim();
    // One step: prefill (step 0, s queries per sequence) or one decode token (step > 0).
    for (uint32_t stepIndex = 0; stepIndex <= spec.decodeTokens; ++stepIndex) {
        bool prefill = stepIndex == 0;
        uint32_t queries = prefill ? s : 1;
        uint32_t context = prefill ? s : s + stepIndex;
        int64_t tokens = int64_t{b} * queries;
        int64_t activation = tokens * h * bytes;
        for (uint32_t mb = 0; mb < mbs; ++mb) {
            auto tagBase = static_cast<int32_t>(2 * (int64_t{stepIndex} * mbs + mb));
            std::string tag =
                (prefill ? std::string("prefill") : "decode" + std::to_string(stepIndex)) + ".mb" +
                std::to_string(mb);
            if (first) {
                // From the second step on, the next token comes from the last stage.
                if (!prefill && p.pp > 1)
                    receive(tag + ".recv_token", p.pp - 1, int64_t{b} * 4, tagBase - 2 * mbs + 1);
                elementwise(tag + ".embedding", 0, d(tokens) * h);
            } else {
                receive(tag + ".recv_activation", at.pp - 1, activation, tagBase);
            }
            for (uint32_t layer = 0; layer < layersHere; ++layer) {
                std::string prefix = tag + ".layer" + std::to_string(firstLayer + layer) + ".";
                if (spec.offload == Offload::Weights)
                    memory(prefix + "load_weights", false, layerWeights() * bytes);
                // Decode reads the cached keys and values of every earlier token.
                uint64_t kvBytes =
                    prefill
                        ? 0
                        : static_cast<uint64_t>(2 * int64_t{b} * context * kvHeads * dh * bytes);
                layerForward(prefix, b, queries, context, kvBytes);
            }
            if (last) {
                // Only the last position of each sequence needs logits.
                elementwise(tag + ".final_norm", 5.0 * b * h, d(b) * h);
                gemm(tag + ".lm_head", b, m.vocab / p.tp, h);
                elementwise(tag + ".sample", 5.0 * b * m.vocab / p.tp, d(b) * m.vocab / p.tp);
                if (stepIndex < spec.decodeTokens && p.pp > 1)
                    send(tag + ".send_token", 0, int64_t{b} * 4, tagBase + 1);
            } else {
                send(tag + ".send_activation", at.pp + 1, activation, tagBase);
            }
        }
    }
}

void Transformer::emitRank(uint32_t rank, RankEmitter& out) const
{
    out.processGroups(groupsOf(rank));
    RankPlan plan(*this, rank, out);
    if (spec.phase == Phase::Training)
        plan.training();
    else
        plan.inference();
}

} // namespace etsim::workloads
