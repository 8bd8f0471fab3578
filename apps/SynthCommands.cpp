#include "apps/SynthCommands.h"

#include "kernel/Error.h"
#include "workloads/synth/Compare.h"
#include "workloads/synth/Synthesizer.h"
#include "workloads/synth/TraceModel.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

namespace etsim::apps {

namespace {

namespace fs = std::filesystem;
namespace syn = etsim::workloads::synth;

struct LearnOptions {
    std::vector<std::string> traces;
    std::string output;
    int order = 2;
};

struct SynthOptions {
    std::string model;
    std::string output;
    uint32_t ranks = 8;
    uint64_t nodes = 0;
    uint64_t seed = 1;
    bool gzip = false;
};

struct CompareOptions {
    std::string a;
    std::string b;
    std::string platform;
    std::string mode;
    std::vector<std::string> sets;
    std::string json;
};

ExitCode cannotStart(const std::string& command, const std::string& message)
{
    std::cerr << "etsim gen " << command << ": " << message << "\n";
    return ExitCode::CannotStart;
}

ExitCode runLearn(const LearnOptions& o)
{
    std::vector<fs::path> traces(o.traces.begin(), o.traces.end());
    try {
        syn::LearnOptions options;
        options.order = o.order;
        syn::TraceModel model = syn::learnModel(traces, options);
        syn::saveModel(model, o.output);
        std::cout << "learned from " << model.source.traceSets << " trace set(s), "
                  << model.source.ranks << " rank(s), " << model.source.nodes << " nodes ("
                  << model.source.ignoredNodes << " metadata or unmodelled nodes left out)\n"
                  << model.kinds.size() << " node kinds, order-" << model.order << " n-gram model, "
                  << std::setprecision(6) << model.nodesPerRank() << " nodes per rank\n"
                  << "wrote " << o.output << "\n";
    } catch (const Error& error) {
        return cannotStart("learn", error.what());
    }
    return ExitCode::Success;
}

ExitCode runSynth(const SynthOptions& o)
{
    fs::path prefix(o.output);
    std::string name = prefix.filename().string();
    if (name.empty())
        return cannotStart("synth", "-o " + o.output + ": give a prefix such as out/synth");
    fs::path folder = prefix.has_parent_path() ? prefix.parent_path() : fs::path(".");
    try {
        syn::TraceModel model = syn::loadModel(o.model);
        syn::SynthSpec spec;
        spec.ranks = o.ranks;
        spec.nodes = o.nodes;
        spec.seed = o.seed;
        syn::Synthesizer synth(model, spec);
        workloads::WriteOptions options;
        options.folder = folder;
        options.name = name;
        options.gzip = o.gzip;
        workloads::WriteSummary written = workloads::writeWorkload(synth, options);
        fs::path sidecar = syn::writeSynthSummary(synth, folder, name);
        std::cout << "synthesised: " << synth.description() << "\n"
                  << "wrote " << written.ranks << " rank files (" << written.nodes << " nodes, "
                  << written.bytes << " B) to " << written.prefix.string() << ".<rank>.et"
                  << (o.gzip ? ".gz" : "") << "\n"
                  << "kept: node-kind sequence, per-kind sizes/FLOPs/durations, dependency "
                     "distances, collective mix/sizes/groups, peer offsets\n"
                  << "not kept: names (op_<id>), operators, exact shapes (GEMMs as quarter-octave "
                     "classes), ids, timestamps, other "
                     "attributes\n"
                  << "summary: " << sidecar.string() << "\n";
    } catch (const Error& error) {
        return cannotStart("synth", error.what());
    }
    return ExitCode::Success;
}

// A model file when the path names one, else the model learned from the trace.
syn::TraceModel modelOf(const std::string& path, bool& isModel)
{
    std::error_code error;
    isModel = fs::path(path).extension() == ".json" && fs::is_regular_file(path, error);
    if (isModel)
        return syn::loadModel(path);
    return syn::learnModel({fs::path(path)});
}

struct SimulatedRun {
    double timeNs = 0;
    double computeNs = 0;
    double memoryNs = 0;
    double exposedCommNs = 0;
    double idleNs = 0;
};

// Runs `etsim run` on the trace in a child process (one SystemC run per process).
SimulatedRun simulate(const CompareOptions& o, const std::string& trace, const fs::path& report)
{
    std::vector<std::string> args = {"etsim",
                                     "run",
                                     "--platform",
                                     o.platform,
                                     "--trace",
                                     trace,
                                     "--report",
                                     report.string(),
                                     "--quiet"};
    if (!o.mode.empty()) {
        args.push_back("--mode");
        args.push_back(o.mode);
    }
    for (const std::string& set : o.sets) {
        args.push_back("--set");
        args.push_back(set);
    }
    std::vector<char*> argv;
    for (std::string& arg : args)
        argv.push_back(arg.data());
    argv.push_back(nullptr);
    std::cout.flush();
    pid_t child = fork();
    if (child < 0)
        throw Error("cannot start etsim run for " + trace + " (fork failed)");
    if (child == 0) {
        execv("/proc/self/exe", argv.data());
        _exit(127);
    }
    int status = 0;
    waitpid(child, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        throw Error("etsim run --platform " + o.platform + " --trace " + trace + " failed (exit " +
                    std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) +
                    "); run it alone to see why");
    std::ifstream in(report);
    nlohmann::json json = nlohmann::json::parse(in, nullptr, false);
    fs::remove(report);
    if (json.is_discarded() || !json.contains("simulated_time_ns"))
        throw Error(report.string() + ": etsim run wrote no readable report");
    SimulatedRun run;
    run.timeNs = json["simulated_time_ns"].get<double>();
    const nlohmann::json& ranks = json["ranks"];
    for (const nlohmann::json& rank : ranks) {
        run.computeNs += rank["compute_ns"].get<double>() / ranks.size();
        run.memoryNs += rank["memory_ns"].get<double>() / ranks.size();
        run.exposedCommNs += rank["exposed_comm_ns"].get<double>() / ranks.size();
        run.idleNs += rank["idle_ns"].get<double>() / ranks.size();
    }
    return run;
}

std::string percent(double a, double b)
{
    std::ostringstream text;
    text << std::showpos << std::fixed << std::setprecision(2)
         << (a == 0 ? 0.0 : (b - a) / a * 100.0) << "%";
    return text.str();
}

ExitCode runCompare(const CompareOptions& o)
{
    syn::TraceModel a;
    syn::TraceModel b;
    bool aIsModel = false;
    bool bIsModel = false;
    try {
        a = modelOf(o.a, aIsModel);
        b = modelOf(o.b, bIsModel);
    } catch (const Error& error) {
        return cannotStart("compare", error.what());
    }
    if (!o.platform.empty() && (aIsModel || bIsModel))
        return cannotStart("compare",
                           "--platform simulates traces; " + (aIsModel ? o.a : o.b) +
                               " is a model (synthesise a trace from it first)");
    syn::Comparison comparison = syn::compareModels(a, b);
    std::cout << std::setprecision(4) << "A: " << o.a << " (" << comparison.nodesPerRankA
              << " nodes per rank)\nB: " << o.b << " (" << comparison.nodesPerRankB
              << " nodes per rank)\n"
              << "total variation: node kinds " << comparison.kindMix << ", bigrams "
              << comparison.bigramMix << ", collectives " << comparison.collectiveMix << "\n"
              << std::left << std::setw(20) << "kind" << std::setw(14) << "quantity" << std::right
              << std::setw(9) << "count A" << std::setw(9) << "count B" << std::setw(8) << "KS"
              << std::setw(10) << "EMD(dec)" << std::setw(12) << "mean A" << std::setw(12)
              << "mean B"
              << "\n";
    for (const syn::DistributionDistance& d : comparison.distributions)
        std::cout << std::left << std::setw(20) << d.kind << std::setw(14) << d.quantity
                  << std::right << std::setw(9) << d.countA << std::setw(9) << d.countB
                  << std::setw(8) << std::fixed << std::setprecision(3) << d.ks << std::setw(10)
                  << d.emd << std::defaultfloat << std::setprecision(4) << std::setw(12) << d.meanA
                  << std::setw(12) << d.meanB << "\n";
    nlohmann::ordered_json out = syn::comparisonToJson(comparison);
    if (!o.platform.empty()) {
        SimulatedRun ra;
        SimulatedRun rb;
        try {
            fs::path base = fs::temp_directory_path() /
                            ("etsim-compare-" + std::to_string(static_cast<long>(getpid())));
            ra = simulate(o, o.a, base.string() + "-a.json");
            rb = simulate(o, o.b, base.string() + "-b.json");
        } catch (const Error& error) {
            std::cerr << "etsim gen compare: " << error.what() << "\n";
            return ExitCode::InputProblem;
        }
        auto row = [&](const char* what, double va, double vb) {
            std::cout << std::left << std::setw(22) << what << std::right << std::fixed
                      << std::setprecision(3) << std::setw(16) << va / 1000.0 << std::setw(16)
                      << vb / 1000.0 << std::setw(12) << percent(va, vb) << std::defaultfloat
                      << "\n";
        };
        std::cout << "on " << o.platform << " (us; breakdown: mean per rank)\n"
                  << std::left << std::setw(22) << "" << std::right << std::setw(16) << "A"
                  << std::setw(16) << "B" << std::setw(12) << "B vs A"
                  << "\n";
        row("simulated time", ra.timeNs, rb.timeNs);
        row("compute", ra.computeNs, rb.computeNs);
        row("memory", ra.memoryNs, rb.memoryNs);
        row("exposed communication", ra.exposedCommNs, rb.exposedCommNs);
        row("idle", ra.idleNs, rb.idleNs);
        nlohmann::ordered_json& sim = out["simulation"];
        sim["platform"] = o.platform;
        auto side = [](const SimulatedRun& r) {
            return nlohmann::ordered_json{{"simulated_time_ns", r.timeNs},
                                          {"compute_ns", r.computeNs},
                                          {"memory_ns", r.memoryNs},
                                          {"exposed_comm_ns", r.exposedCommNs},
                                          {"idle_ns", r.idleNs}};
        };
        sim["a"] = side(ra);
        sim["b"] = side(rb);
        sim["time_difference"] = ra.timeNs == 0 ? 0.0 : (rb.timeNs - ra.timeNs) / ra.timeNs;
    }
    if (!o.json.empty()) {
        std::ofstream file(o.json);
        file << out.dump(2) << "\n";
        if (!file)
            return cannotStart("compare", "--json " + o.json + ": cannot write the file");
    }
    return ExitCode::Success;
}

} // namespace

void addSynthCommands(CLI::App& gen, ExitCode& result)
{
    auto learn = std::make_shared<LearnOptions>();
    CLI::App* learnCommand = gen.add_subcommand(
        "learn", "Fit a statistical model of traces (kinds, sizes, durations, deps, comms)");
    learnCommand
        ->add_option("TRACES", learn->traces, "Trace prefixes, folders or rank files (one or more)")
        ->required();
    learnCommand->add_option("-o,--output", learn->output, "Model JSON file to write")->required();
    learnCommand
        ->add_option("--order", learn->order, "n-gram order of the node-kind sequence (1..8)")
        ->capture_default_str();
    learnCommand->callback([learn, &result]() { result = runLearn(*learn); });

    auto synth = std::make_shared<SynthOptions>();
    CLI::App* synthCommand = gen.add_subcommand(
        "synth", "Sample valid synthetic traces from a model; names and shapes obfuscated");
    synthCommand->add_option("MODEL", synth->model, "Model JSON from etsim gen learn")->required();
    synthCommand->add_option("--ranks", synth->ranks, "Number of ranks")->capture_default_str();
    synthCommand
        ->add_option("--nodes", synth->nodes, "Nodes per rank (0: the model's mean per rank)")
        ->capture_default_str();
    synthCommand->add_option("--seed", synth->seed, "Random seed (same seed, same bytes)")
        ->capture_default_str();
    synthCommand
        ->add_option("-o,--output",
                     synth->output,
                     "Output prefix DIR/NAME: DIR/NAME.<rank>.et, NAME.comm_groups.json, "
                     "NAME.synth.json")
        ->required();
    synthCommand->add_flag("--gzip", synth->gzip, "Write gzip-compressed .et.gz files");
    synthCommand->callback([synth, &result]() { result = runSynth(*synth); });

    auto compare = std::make_shared<CompareOptions>();
    CLI::App* compareCommand = gen.add_subcommand(
        "compare",
        "Distances between two traces' (or models') distributions; with --platform "
        "also their simulated time");
    compareCommand->add_option("A", compare->a, "Trace prefix/folder/file or model JSON")
        ->required();
    compareCommand->add_option("B", compare->b, "Trace prefix/folder/file or model JSON")
        ->required();
    compareCommand->add_option(
        "--platform", compare->platform, "Simulate both traces on this platform (file or preset)");
    compareCommand->add_option("--mode", compare->mode, "model or replay (as etsim run --mode)")
        ->check(CLI::IsMember({"model", "replay"}));
    compareCommand->add_option(
        "--set", compare->sets, "Platform override key.path=value (repeatable)");
    compareCommand->add_option("--json", compare->json, "Also write the figures as JSON here");
    compareCommand->callback([compare, &result]() { result = runCompare(*compare); });
}

} // namespace etsim::apps
