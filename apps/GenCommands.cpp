#include "apps/GenCommands.h"

#include "apps/SynthCommands.h"
#include "kernel/Error.h"
#include "kernel/Units.h"
#include "workloads/Microbench.h"
#include "workloads/Presets.h"
#include "workloads/Transformer.h"

#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>

namespace etsim::apps {

namespace {

namespace wl = etsim::workloads;

struct OutputOptions {
    std::string folder;
    std::string name;
    bool gzip = false;
};

struct MicrobenchOptions {
    uint32_t ranks = 8;
    uint32_t groupSize = 0;
    std::string layout = "contiguous";
    std::string collective = "all_reduce";
    std::string pattern;
    std::string size = "1 MiB";
    uint32_t iterations = 1;
    double computeFlops = 0;
    uint64_t computeMicros = 0;
    std::string dtype = "bf16";
    OutputOptions output{"", "microbench", false};
};

struct TransformerOptions {
    bool list = false;
    std::string preset;
    wl::TransformerModel model;
    wl::Parallelism parallel;
    std::string phase = "training";
    uint32_t seqLen = 0;
    uint32_t microBatch = 1;
    uint32_t globalBatch = 0;
    std::string dtype = "bf16";
    std::string recompute = "none";
    uint32_t zero = 0;
    uint32_t optimizerShards = 1;
    std::string offload = "none";
    std::string attention = "fused";
    double dropout = 0;
    std::string gradAccumulation = "none";
    bool sequenceParallel = false;
    // Empty: the default of TransformerSpec::gradientDtype.
    std::string gradDtype;
    uint32_t decodeTokens = 0;
    OutputOptions output{"", "transformer", false};
    // Options given on the command line override the preset's value.
    std::vector<std::pair<CLI::Option*, uint32_t wl::TransformerModel::*>> modelOptions;
    CLI::Option* gatedOption = nullptr;
    CLI::Option* tiedOption = nullptr;
};

ExitCode cannotStart(const std::string& command, const std::string& message)
{
    std::cerr << "etsim gen " << command << ": " << message << "\n";
    return ExitCode::CannotStart;
}

std::string engineering(double value)
{
    std::ostringstream text;
    text << std::setprecision(4) << value;
    return text.str();
}

ExitCode write(const std::string& command, const wl::Workload& workload, const OutputOptions& o)
{
    wl::WriteOptions options;
    options.folder = o.folder;
    options.name = o.name;
    options.gzip = o.gzip;
    wl::WriteSummary summary;
    try {
        summary = wl::writeWorkload(workload, options);
    } catch (const Error& error) {
        return cannotStart(command, error.what());
    }
    std::cout << "generated: " << workload.description() << "\n"
              << "wrote " << summary.ranks << " rank files (" << summary.nodes << " nodes, "
              << summary.bytes << " B) to " << summary.prefix.string() << ".<rank>.et"
              << (o.gzip ? ".gz" : "") << "\n";
    if (!summary.commGroupFile.empty())
        std::cout << "communicator groups: " << summary.commGroupFile.string() << "\n";
    std::cout << "num_ops over all ranks: " << engineering(summary.flops) << " FLOPs\n";
    return ExitCode::Success;
}

std::optional<et::DataType> dtypeOf(const std::string& name)
{
    std::optional<et::DataType> type = et::dataTypeFromName(name);
    if (!type || *type == et::DataType::Unknown)
        return std::nullopt;
    return type;
}

ExitCode runMicrobench(const MicrobenchOptions& o)
{
    const std::string command = "microbench";
    wl::MicrobenchSpec spec;
    spec.ranks = o.ranks;
    spec.groupSize = o.groupSize;
    if (o.layout == "contiguous")
        spec.layout = wl::GroupLayout::Contiguous;
    else if (o.layout == "strided")
        spec.layout = wl::GroupLayout::Strided;
    else
        return cannotStart(command, "--group-layout " + o.layout + ": use contiguous or strided");
    std::optional<et::CollectiveType> collective = wl::collectiveFromName(o.collective);
    if (!collective)
        return cannotStart(command,
                           "--collective " + o.collective +
                               ": use all_reduce, reduce, all_gather, gather, scatter, "
                               "broadcast, all_to_all, reduce_scatter, reduce_scatter_block or "
                               "barrier");
    spec.collective = *collective;
    if (!o.pattern.empty()) {
        spec.pattern = wl::p2pPatternFromName(o.pattern);
        if (!spec.pattern)
            return cannotStart(command, "--pattern " + o.pattern + ": use ring or pairwise");
    }
    try {
        spec.bytes = static_cast<int64_t>(Size::parse(o.size).bytes());
    } catch (const Error& error) {
        return cannotStart(command, "--size: " + std::string(error.what()));
    }
    spec.iterations = o.iterations;
    spec.computeFlops = static_cast<int64_t>(o.computeFlops);
    spec.computeMicros = o.computeMicros;
    std::optional<et::DataType> dtype = dtypeOf(o.dtype);
    if (!dtype)
        return cannotStart(command,
                           "--dtype " + o.dtype +
                               ": use fp32, tf32, bf16, fp16, fp8 "
                               "or int8");
    spec.dtype = *dtype;
    try {
        wl::Microbench bench(spec);
        return write(command, bench, o.output);
    } catch (const Error& error) {
        return cannotStart(command, error.what());
    }
}

void listPresets()
{
    std::cout << "model presets (etsim gen transformer --preset NAME):\n";
    for (const wl::ModelPreset& p : wl::modelPresets()) {
        const wl::TransformerModel& m = p.model;
        std::cout << "  " << std::left << std::setw(14) << p.name << std::right << " "
                  << engineering(m.parameters() / 1e9) << "B parameters: layers " << m.layers
                  << ", hidden " << m.hidden << ", heads " << m.heads << ", kv-heads "
                  << m.kvHeadCount() << ", ffn " << m.ffn << ", vocab " << m.vocab << ", seq "
                  << m.seqLen;
        if (m.experts > 0)
            std::cout << ", experts " << m.experts << " top-" << m.topK;
        std::cout << (m.gatedMlp ? ", gated MLP" : "")
                  << (m.tiedEmbeddings ? ", tied embeddings" : "") << "\n"
                  << "  " << std::string(14, ' ') << " source: " << p.source << "\n";
    }
}

ExitCode runTransformer(TransformerOptions& o)
{
    const std::string command = "transformer";
    if (o.list) {
        listPresets();
        return ExitCode::Success;
    }
    if (o.output.folder.empty())
        return cannotStart(command, "--out FOLDER is required (where the rank files go)");
    wl::TransformerSpec spec;
    spec.model = o.model;
    if (!o.preset.empty()) {
        std::optional<wl::ModelPreset> preset = wl::findModelPreset(o.preset);
        if (!preset)
            return cannotStart(command, "unknown --preset " + o.preset + " (see etsim gen --list)");
        spec.model = preset->model;
        for (const auto& [option, field] : o.modelOptions)
            if (option->count() > 0)
                spec.model.*field = o.model.*field;
        if (o.gatedOption->count() > 0)
            spec.model.gatedMlp = o.model.gatedMlp;
        if (o.tiedOption->count() > 0)
            spec.model.tiedEmbeddings = o.model.tiedEmbeddings;
    }
    spec.parallel = o.parallel;
    std::optional<wl::Phase> phase = wl::phaseFromName(o.phase);
    if (!phase)
        return cannotStart(command, "--phase " + o.phase + ": use training or inference");
    spec.phase = *phase;
    std::optional<wl::Recompute> recompute = wl::recomputeFromName(o.recompute);
    if (!recompute)
        return cannotStart(command, "--recompute " + o.recompute + ": use none, selective or full");
    spec.recompute = *recompute;
    std::optional<wl::Offload> offload = wl::offloadFromName(o.offload);
    if (!offload)
        return cannotStart(command,
                           "--offload " + o.offload + ": use none, weights or activations");
    spec.offload = *offload;
    std::optional<wl::AttentionKernel> attention = wl::attentionFromName(o.attention);
    if (!attention)
        return cannotStart(command, "--attention " + o.attention + ": use fused or unfused");
    spec.attention = *attention;
    spec.dropout = o.dropout;
    std::optional<wl::GradAccumulation> accumulation =
        wl::gradAccumulationFromName(o.gradAccumulation);
    if (!accumulation)
        return cannotStart(command,
                           "--grad-accumulation " + o.gradAccumulation + ": use none or separate");
    spec.gradAccumulation = *accumulation;
    spec.sequenceParallel = o.sequenceParallel;
    std::optional<et::DataType> dtype = dtypeOf(o.dtype);
    if (!dtype)
        return cannotStart(command,
                           "--dtype " + o.dtype +
                               ": use fp32, tf32, bf16, fp16, fp8 "
                               "or int8");
    spec.dtype = *dtype;
    if (!o.gradDtype.empty()) {
        spec.gradDtype = dtypeOf(o.gradDtype);
        if (!spec.gradDtype)
            return cannotStart(command,
                               "--grad-dtype " + o.gradDtype +
                                   ": use fp32, tf32, bf16, fp16, fp8 or int8 (or leave it "
                                   "out: fp32 with --dtype bf16, otherwise --dtype)");
    }
    spec.seqLen = o.seqLen;
    spec.microBatch = o.microBatch;
    spec.globalBatch = o.globalBatch;
    spec.zero = o.zero;
    spec.optimizerShards = o.optimizerShards;
    spec.decodeTokens = o.decodeTokens;
    try {
        wl::Transformer job(spec);
        ExitCode code = write(command, job, o.output);
        if (code == ExitCode::Success && spec.phase == wl::Phase::Training) {
            bool full = spec.recompute == wl::Recompute::Full;
            double head = double(spec.model.vocab) * spec.model.hidden;
            std::cout << "closed form: " << engineering(wl::trainingFlopsClosedForm(job.config()))
                      << " FLOPs = " << (full ? "8" : "6") << " x "
                      << engineering(spec.model.matmulParameters() - head)
                      << " layer matmul parameters x " << engineering(job.tokens())
                      << " tokens + 6 x " << engineering(head) << " head parameters x tokens + "
                      << wl::attentionFlopFactor(spec)
                      << " x layers x seq x hidden x tokens (attention, "
                      << wl::attentionName(spec.attention) << "), "
                      << (full ? "with full recomputation"
                          : spec.recompute == wl::Recompute::Selective
                              ? "with the attention recomputed"
                              : "without recomputation")
                      << "\n";
        }
        return code;
    } catch (const Error& error) {
        return cannotStart(command, error.what());
    }
}

void addOutputOptions(CLI::App* command, OutputOptions& output)
{
    command->add_option("--out", output.folder, "Output folder, created when missing (required)");
    command->add_option("--name", output.name, "File prefix: <out>/<name>.<rank>.et")
        ->capture_default_str();
    command
        ->add_flag(
            "--gzip", output.gzip, "Write gzip-compressed .et.gz files (default: off, plain .et)")
        ->capture_default_str();
}

} // namespace

void addGenCommands(CLI::App& app, ExitCode& result)
{
    CLI::App* gen = app.add_subcommand(
        "gen", "Generate Chakra traces from parameters, or learn and synthesise them from traces");
    gen->require_subcommand(0, 1);
    auto listAll = std::make_shared<bool>(false);
    gen->add_flag("--list", *listAll, "List the model presets");

    auto bench = std::make_shared<MicrobenchOptions>();
    CLI::App* micro = gen->add_subcommand(
        "microbench", "A collective or point-to-point pattern, repeated, on every rank");
    micro->add_option("--ranks", bench->ranks, "Number of ranks")->capture_default_str();
    micro
        ->add_option("--collective",
                     bench->collective,
                     "all_reduce, reduce, all_gather, gather, scatter, broadcast, all_to_all, "
                     "reduce_scatter, reduce_scatter_block, barrier")
        ->capture_default_str();
    micro->add_option("--pattern",
                      bench->pattern,
                      "Point-to-point instead of a collective: ring or pairwise (none by "
                      "default)");
    micro
        ->add_option("--size",
                     bench->size,
                     "comm_size of each collective or message, e.g. \"64 MiB\" (all-gather: "
                     "per-rank input, Chakra's convention)")
        ->capture_default_str();
    micro
        ->add_option(
            "--group-size", bench->groupSize, "Ranks per communicator group (0: all ranks)")
        ->capture_default_str();
    micro
        ->add_option("--group-layout",
                     bench->layout,
                     "contiguous (ranks g*size..) or strided (ranks g, g+groups, ..)")
        ->capture_default_str();
    micro->add_option("--iterations", bench->iterations, "Repetitions")->capture_default_str();
    micro
        ->add_option("--compute-flops",
                     bench->computeFlops,
                     "A GEMM of about this many FLOPs before each repetition (0: none)")
        ->capture_default_str();
    micro
        ->add_option("--compute-us",
                     bench->computeMicros,
                     "A compute delay before each repetition, microseconds (0: none)")
        ->capture_default_str();
    micro->add_option("--dtype", bench->dtype, "Element type of the compute")
        ->capture_default_str();
    addOutputOptions(micro, bench->output);
    micro->callback([bench, &result]() {
        if (bench->output.folder.empty())
            result = cannotStart("microbench",
                                 "--out FOLDER is required (where the rank files "
                                 "go)");
        else
            result = runMicrobench(*bench);
    });

    auto tf = std::make_shared<TransformerOptions>();
    CLI::App* transformer = gen->add_subcommand(
        "transformer", "A transformer training or inference step under DP/TP/PP/EP");
    transformer->add_flag("--list", tf->list, "List the model presets and exit");
    transformer->add_option("--preset",
                            tf->preset,
                            "Model shapes of a preset (gpt3-175b, llama3-8b, llama3-70b, "
                            "mixtral-8x7b); model options given too override it");
    auto modelOption =
        [&](const char* name, uint32_t wl::TransformerModel::*field, const char* help) {
            CLI::Option* option =
                transformer->add_option(name, tf->model.*field, help)->capture_default_str();
            tf->modelOptions.emplace_back(option, field);
        };
    modelOption("--layers", &wl::TransformerModel::layers, "Transformer layers");
    modelOption("--hidden", &wl::TransformerModel::hidden, "Hidden size");
    modelOption("--heads", &wl::TransformerModel::heads, "Attention heads");
    modelOption("--kv-heads", &wl::TransformerModel::kvHeads, "Key/value heads (0: = heads)");
    modelOption("--ffn", &wl::TransformerModel::ffn, "MLP inner size (per expert for MoE)");
    modelOption("--vocab", &wl::TransformerModel::vocab, "Vocabulary size");
    modelOption("--experts", &wl::TransformerModel::experts, "Experts per MoE layer (0: dense)");
    modelOption("--top-k", &wl::TransformerModel::topK, "Experts per token (MoE)");
    tf->gatedOption = transformer
                          ->add_flag("--gated-mlp",
                                     tf->model.gatedMlp,
                                     "Three-matrix (SwiGLU) MLP (default: off, or the preset's)")
                          ->capture_default_str();
    tf->tiedOption =
        transformer
            ->add_flag(
                "--tied-embeddings",
                tf->model.tiedEmbeddings,
                "Input embedding and output head share weights (default: off, or the preset's)")
            ->capture_default_str();
    transformer
        ->add_option("--seq-len", tf->seqLen, "Tokens per sequence (0: the preset's, else 1024)")
        ->capture_default_str();
    transformer->add_option("--micro-batch", tf->microBatch, "Sequences per micro-batch")
        ->capture_default_str();
    transformer
        ->add_option("--global-batch", tf->globalBatch, "Sequences per step (0: micro-batch x dp)")
        ->capture_default_str();
    transformer->add_option("--tp", tf->parallel.tp, "Tensor-parallel degree")
        ->capture_default_str();
    transformer->add_option("--pp", tf->parallel.pp, "Pipeline-parallel degree (1F1B)")
        ->capture_default_str();
    transformer->add_option("--dp", tf->parallel.dp, "Data-parallel degree")->capture_default_str();
    transformer->add_option("--ep", tf->parallel.ep, "Expert-parallel degree (divides dp)")
        ->capture_default_str();
    transformer->add_option("--phase", tf->phase, "training or inference")->capture_default_str();
    transformer->add_option("--dtype", tf->dtype, "Element type: fp32, bf16, fp16, fp8, ...")
        ->capture_default_str();
    transformer
        ->add_option("--recompute",
                     tf->recompute,
                     "Activation recomputation: none, selective (each layer's attention core "
                     "again before its backward, Megatron-LM's selective granularity) or full "
                     "(each layer's forward again)")
        ->capture_default_str();
    transformer->add_option("--zero", tf->zero, "ZeRO stage 0..3 (training)")
        ->capture_default_str();
    transformer
        ->add_option("--optimizer-shards",
                     tf->optimizerShards,
                     "With --dp 1, for one replica of a larger job: ranks the optimizer state "
                     "is sharded over (FSDP/ZeRO across the replicas left out)")
        ->capture_default_str();
    transformer
        ->add_option(
            "--offload", tf->offload, "Memory nodes for offloaded data: none, weights, activations")
        ->capture_default_str();
    transformer
        ->add_option("--attention",
                     tf->attention,
                     "fused: one kernel keeps the s x s scores on chip (FlashAttention); "
                     "unfused: scores GEMM, softmax, dropout and context GEMM through HBM "
                     "(Megatron-LM before fused kernels)")
        ->capture_default_str();
    transformer
        ->add_option("--dropout",
                     tf->dropout,
                     "Training: dropout probability of the attention probabilities and block "
                     "outputs; 0 writes no dropout kernel")
        ->capture_default_str();
    transformer
        ->add_option("--grad-accumulation",
                     tf->gradAccumulation,
                     "Training: none (a weight-gradient GEMM's output is the gradient), or "
                     "separate: a kernel adds each weight gradient into the step's buffer "
                     "(Megatron-LM 2021)")
        ->capture_default_str();
    transformer->add_flag("--sequence-parallel",
                          tf->sequenceParallel,
                          "Training with tp > 1: norms, dropouts and residual adds on 1/tp of "
                          "the tokens, all-gather and reduce-scatter around each "
                          "tensor-parallel block instead of an all-reduce (Megatron-LM)");
    transformer->add_option("--grad-dtype",
                            tf->gradDtype,
                            "Training: element type of the gradient buffer (accumulation, "
                            "data-parallel reduction, optimizer read); default fp32 with "
                            "--dtype bf16 (Megatron-LM, Llama 3), otherwise --dtype");
    transformer
        ->add_option(
            "--decode-tokens", tf->decodeTokens, "Inference: tokens decoded after the prefill")
        ->capture_default_str();
    addOutputOptions(transformer, tf->output);
    transformer->callback([tf, &result]() { result = runTransformer(*tf); });

    addSynthCommands(*gen, result);

    gen->callback([gen, listAll, &result]() {
        if (!gen->get_subcommands().empty())
            return;
        if (*listAll) {
            listPresets();
            result = ExitCode::Success;
        } else {
            result = cannotStart(
                "",
                "give a subcommand: microbench, transformer, learn, synth or compare (or --list)");
        }
    });
}

} // namespace etsim::apps
