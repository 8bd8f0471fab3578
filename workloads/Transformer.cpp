#include "workloads/Transformer.h"

#include "kernel/Error.h"
#include "workloads/TransformerRankPlan.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <sstream>

namespace etsim::workloads {

using detail::d;
using et::CollectiveType;
using et::OpKind;

namespace {

// ASTRA-sim reduces point-to-point tags modulo this (spec 8.8).
constexpr int64_t tagLimit = 500000000;

// The one of `values` that `nameOf` calls `name`.
template <typename Enum>
std::optional<Enum> fromName(std::string_view name,
                             std::initializer_list<Enum> values,
                             std::string_view (*nameOf)(Enum))
{
    for (Enum value : values)
        if (nameOf(value) == name)
            return value;
    return std::nullopt;
}

// A probability as the command line would give it ("0.1").
std::string probabilityText(double value)
{
    std::ostringstream text;
    text << value;
    return text.str();
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
    switch (recompute) {
    case Recompute::None:
        return "none";
    case Recompute::Selective:
        return "selective";
    case Recompute::Full:
        return "full";
    }
    return "none";
}

std::optional<Recompute> recomputeFromName(std::string_view name)
{
    if (name == "none")
        return Recompute::None;
    if (name == "selective")
        return Recompute::Selective;
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
    return fromName(name, {Offload::None, Offload::Weights, Offload::Activations}, offloadName);
}

std::string_view attentionName(AttentionKernel kernel)
{
    return kernel == AttentionKernel::Fused ? "fused" : "unfused";
}

std::optional<AttentionKernel> attentionFromName(std::string_view name)
{
    return fromName(name, {AttentionKernel::Fused, AttentionKernel::Unfused}, attentionName);
}

std::string_view gradAccumulationName(GradAccumulation accumulation)
{
    return accumulation == GradAccumulation::None ? "none" : "separate";
}

std::optional<GradAccumulation> gradAccumulationFromName(std::string_view name)
{
    return fromName(
        name, {GradAccumulation::None, GradAccumulation::Separate}, gradAccumulationName);
}

et::DataType TransformerSpec::gradientDtype() const
{
    if (gradDtype)
        return *gradDtype;
    return dtype == et::DataType::Bf16 ? et::DataType::Fp32 : dtype;
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
           attentionFlopFactor(spec) * m.layers * seq * m.hidden * tokens;
}

double attentionFlopFactor(const TransformerSpec& spec)
{
    // A fused backward recomputes Q K^T from Q and K (it never stored the scores): five
    // products of the forward's size instead of four (Dao 2023, FlashAttention-2).
    double backward = spec.attention == AttentionKernel::Fused ? 10.0 : 8.0;
    // Both recomputations re-run the attention forward (the two products) once.
    double recomputed = spec.recompute == Recompute::None ? 0.0 : 4.0;
    return 4.0 + recomputed + backward;
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
    if (!(spec.dropout >= 0 && spec.dropout < 1))
        fail("dropout must be a probability in [0, 1)");
    if (spec.optimizerShards == 0)
        fail("optimizer-shards must be at least 1 (1: the optimizer state is not sharded)");
    if (spec.optimizerShards > 1 && p.dp > 1)
        fail("optimizer-shards stands for data-parallel replicas the trace leaves out (dp 1); "
             "with dp " +
             std::to_string(p.dp) + " use --zero to shard over the replicas in the trace");
    if (et::bytesPerElement(spec.dtype) == 0)
        fail("dtype must be a known element type");
    if (spec.sequenceParallel) {
        if (spec.phase != Phase::Training)
            fail("sequence-parallel applies to training");
        if (p.tp < 2)
            fail("sequence-parallel splits the tokens over the tensor-parallel ranks; it needs "
                 "tp of at least 2");
        if (m.experts > 0)
            fail("sequence-parallel with mixture-of-experts layers is not modelled; drop one");
        if ((uint64_t{spec.microBatch} * spec.seqLen) % p.tp != 0)
            fail("sequence-parallel needs micro-batch x seq-len (" +
                 std::to_string(uint64_t{spec.microBatch} * spec.seqLen) +
                 " tokens) divisible by tp " + std::to_string(p.tp));
    }
    if (spec.gradDtype && spec.phase != Phase::Training)
        fail("grad-dtype applies to training; inference has no gradients");
    if (spec.gradDtype && et::bytesPerElement(*spec.gradDtype) == 0)
        fail("grad-dtype must be a known element type");
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
    text += ", " + std::string(attentionName(spec.attention)) + " attention";
    if (spec.phase == Phase::Training && spec.dropout > 0)
        text += ", dropout " + probabilityText(spec.dropout);
    if (spec.phase == Phase::Training && spec.gradAccumulation == GradAccumulation::Separate)
        text += ", gradients accumulated by a separate kernel";
    if (spec.sequenceParallel)
        text += ", sequence parallel";
    if (spec.phase == Phase::Training)
        text += ", " + std::string(et::dataTypeName(spec.gradientDtype())) + " gradients";
    if (spec.phase == Phase::Training)
        text += ", recompute " + std::string(recomputeName(spec.recompute)) + ", zero " +
                std::to_string(spec.zero) +
                (spec.optimizerShards > 1
                     ? ", optimizer sharded " + std::to_string(spec.optimizerShards) + " ways"
                     : "");
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
        std::llround(stageDenseParameters(stage) * et::bytesPerElement(spec.gradientDtype())));
}

int64_t Transformer::expertGradientBytes(uint32_t stage) const
{
    return static_cast<int64_t>(
        std::llround(stageExpertParameters(stage) * et::bytesPerElement(spec.gradientDtype())));
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
