#include "apps/TraceCommands.h"

#include "apps/TraceFormats.h"
#include "apps/TraceImport.h"
#include "et_driver/ProcessGroups.h"
#include "et_driver/TraceInfo.h"
#include "et_driver/TraceSet.h"
#include "et_driver/TraceValidator.h"
#include "et_driver/TraceWriter.h"
#include "kernel/Error.h"
#include "kernel/InputFile.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

namespace etsim::apps {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct TraceOptions {
    std::string path;
    std::string output;
    bool json = false;
    bool strict = false;
    bool lenient = false;
    bool dataOnly = false;
    bool force = false;
    std::string commGroups;
};

// Why the path cannot be opened as a trace, or nullopt when it can. A path is a file, a prefix
// (dir/name for dir/name.<rank>.et) or a folder holding one prefix.
std::optional<std::string> openProblem(const fs::path& path)
{
    auto unreadable = [](const fs::path& file) -> std::optional<std::string> {
        std::ifstream in(file, std::ios::binary);
        if (!in)
            return "cannot open " + file.string() + " for reading (check the permissions)";
        return std::nullopt;
    };
    std::error_code error;
    const fs::file_status status = fs::status(path, error);
    if (fs::is_regular_file(status))
        return unreadable(path);
    // Opening a FIFO would block; a device would never end.
    if (fs::exists(status) && !fs::is_directory(status))
        return path.string() + ": is " + fileTypeText(status.type()) + ", not a trace file";
    std::string name = path.filename().string();
    bool looksLikeFile = name.size() > 3 && (name.compare(name.size() - 3, 3, ".et") == 0 ||
                                             name.compare(name.size() - 3, 3, ".gz") == 0);
    if (looksLikeFile && !fs::exists(path, error))
        return "no such file: " + path.string();
    try {
        for (const et::RankFile& rankFile : et::findRankFiles(path))
            if (std::optional<std::string> problem = unreadable(rankFile.path))
                return problem;
    } catch (const et::TraceError& e) {
        return std::string(e.what());
    }
    return std::nullopt;
}

ExitCode cannotStart(const std::string& command, const std::string& message)
{
    std::cerr << "etsim trace " << command << ": " << message << "\n";
    return ExitCode::CannotStart;
}

ExitCode inputProblem(const std::string& command, const std::string& message)
{
    std::cerr << "etsim trace " << command << ": " << message << "\n";
    return ExitCode::InputProblem;
}

std::string typeKey(int32_t type)
{
    return et::nodeTypeName(static_cast<et::NodeType>(type));
}

std::string collectiveKey(int32_t type)
{
    return type < 0 ? std::string("NO_COMM_TYPE") : et::collectiveTypeName(type);
}

// ---- info ---------------------------------------------------------------------------------

json infoJson(const std::string& path, const et::TraceInfo& info)
{
    json out;
    out["path"] = path;
    out["ranks"] = info.ranks;
    out["nodes"] = info.nodes;
    json types = json::object();
    for (const auto& [type, count] : info.nodesByType)
        types[typeKey(type)] = count;
    out["nodesByType"] = types;
    json collectives = json::array();
    for (const auto& [type, c] : info.collectives) {
        json sizes = json::array();
        for (const auto& [bytes, count] : c.countBySize)
            sizes.push_back({{"bytes", bytes}, {"count", count}});
        collectives.push_back({{"type", collectiveKey(type)},
                               {"count", c.count},
                               {"totalBytes", c.totalBytes},
                               {"sizes", sizes}});
    }
    out["collectives"] = collectives;
    out["totals"] = {{"numOps", info.totalNumOps},
                     {"tensorBytes", info.totalTensorBytes},
                     {"commBytes", info.totalCommBytes}};
    json ranks = json::array();
    for (const et::RankInfo& r : info.rankInfos) {
        json rank = {{"rank", r.rank},
                     {"file", r.file},
                     {"metadata", r.metadataPresent},
                     {"nodes", r.nodes},
                     {"chainEdges", et::chainEdgesName(r.chainEdges)},
                     {"longestChainNodes", r.longestChainNodes},
                     {"nodesOnCycles", r.nodesOnCycles}};
        if (r.metadataPresent)
            rank["metadataVersion"] = r.metadataVersion;
        if (r.hasDurations)
            rank["criticalPath"] = {{"durationMicros", r.criticalPathMicros},
                                    {"nodes", r.criticalPathNodes}};
        ranks.push_back(rank);
    }
    out["rankDetails"] = ranks;
    return out;
}

void printInfo(const std::string& path, const et::TraceInfo& info)
{
    // Per-rank lines beyond this many are summarised; --json lists them all.
    constexpr std::size_t shownRanks = 16;
    std::cout << "trace: " << path << "\n"
              << "ranks: " << info.ranks << "\n"
              << "nodes: " << info.nodes << "\n"
              << "nodes by type:\n";
    for (const auto& [type, count] : info.nodesByType)
        std::cout << "  " << std::left << std::setw(16) << typeKey(type) << std::right << " "
                  << count << "\n";
    std::cout << "collectives:" << (info.collectives.empty() ? " none" : "") << "\n";
    for (const auto& [type, c] : info.collectives) {
        std::cout << "  " << collectiveKey(type) << ": " << c.count << " collectives, "
                  << c.totalBytes << " B in total\n";
        for (const auto& [bytes, count] : c.countBySize) {
            if (bytes < 0)
                std::cout << "    no comm_size x " << count << "\n";
            else
                std::cout << "    " << bytes << " B x " << count << "\n";
        }
    }
    std::cout << "totals: num_ops " << info.totalNumOps << ", tensor_size " << info.totalTensorBytes
              << " B, comm_size " << info.totalCommBytes << " B\n"
              << "longest dependency chain per rank:\n";
    for (std::size_t i = 0; i < info.rankInfos.size() && i < shownRanks; ++i) {
        const et::RankInfo& r = info.rankInfos[i];
        std::cout << "  rank " << r.rank << ": " << r.longestChainNodes << " nodes ("
                  << et::chainEdgesName(r.chainEdges) << " edges)";
        if (r.hasDurations)
            std::cout << "; critical path " << r.criticalPathMicros << " us over "
                      << r.criticalPathNodes << " nodes";
        else
            std::cout << "; no durations";
        if (r.nodesOnCycles > 0)
            std::cout << "; " << r.nodesOnCycles << " nodes on or behind cycles left out";
        std::cout << "\n";
    }
    if (info.rankInfos.size() > shownRanks)
        std::cout << "  ... and " << info.rankInfos.size() - shownRanks
                  << " more ranks (--json lists all)\n";
}

ExitCode runInfo(const TraceOptions& options)
{
    if (std::optional<std::string> problem = openProblem(options.path))
        return cannotStart("info", *problem);
    et::TraceInfo info;
    try {
        info = et::readTraceInfo(options.path);
    } catch (const Error& error) {
        return inputProblem("info", error.what());
    }
    if (options.json)
        std::cout << infoJson(options.path, info).dump(2) << "\n";
    else
        printInfo(options.path, info);
    return ExitCode::Success;
}

// ---- validate -----------------------------------------------------------------------------

json findingJson(const et::Finding& f)
{
    json out = {{"severity", et::severityName(f.severity)},
                {"kind", et::findingKindName(f.kind)},
                {"file", f.file},
                {"problem", f.problem},
                {"fix", f.fix}};
    out["rank"] = f.rank ? json(*f.rank) : json(nullptr);
    out["nodeId"] = f.nodeId ? json(*f.nodeId) : json(nullptr);
    out["nodeName"] = f.nodeId ? json(f.nodeName) : json(nullptr);
    return out;
}

ExitCode runValidate(const TraceOptions& options)
{
    if (std::optional<std::string> problem = openProblem(options.path))
        return cannotStart("validate", *problem);
    et::ValidatorOptions validatorOptions;
    validatorOptions.lenient = options.lenient;
    validatorOptions.dataOnly = options.dataOnly;
    if (!options.commGroups.empty()) {
        try {
            validatorOptions.commGroups = et::readCommGroupFile(options.commGroups);
        } catch (const Error& error) {
            return cannotStart("validate", error.what());
        }
    }
    et::ValidationReport report;
    try {
        report = et::TraceValidator(validatorOptions).validate(options.path);
    } catch (const et::TraceError& error) {
        return cannotStart("validate", error.what());
    }
    bool failed = report.errors > 0 || (options.strict && report.warnings > 0);

    if (options.json) {
        json findings = json::array();
        json counts = json::object();
        json omitted = json::object();
        for (int k = 0; k < et::findingKindCount; ++k) {
            auto kind = static_cast<et::FindingKind>(k);
            for (const et::Finding& f : report.findings)
                if (f.kind == kind)
                    findings.push_back(findingJson(f));
            if (report.count(kind) > 0)
                counts[et::findingKindName(kind)] = report.count(kind);
            if (report.omitted(kind) > 0)
                omitted[et::findingKindName(kind)] = report.omitted(kind);
        }
        json out = {{"path", options.path},
                    {"ok", !failed},
                    {"ranks", report.ranks},
                    {"nodes", report.nodes},
                    {"errors", report.errors},
                    {"warnings", report.warnings},
                    {"counts", counts},
                    {"omitted", omitted},
                    {"findings", findings}};
        std::cout << out.dump(2) << "\n";
    } else {
        // Errors first, each kind together, then warnings; a kind's overflow after its findings.
        for (et::Severity severity : {et::Severity::Error, et::Severity::Warning}) {
            for (int k = 0; k < et::findingKindCount; ++k) {
                auto kind = static_cast<et::FindingKind>(k);
                bool shown = false;
                for (const et::Finding& f : report.findings)
                    if (f.kind == kind && f.severity == severity) {
                        std::cout << f.text() << "\n";
                        shown = true;
                    }
                uint64_t more = report.omitted(kind);
                if (shown && more > 0)
                    std::cout << "... and " << more << " more " << et::findingKindName(kind)
                              << " findings (" << report.count(kind) << " in all)\n";
            }
        }
        std::cout << options.path << ": " << report.errors << " errors, " << report.warnings
                  << " warnings in " << report.ranks << (report.ranks == 1 ? " rank" : " ranks")
                  << " (" << report.nodes << " nodes)\n"
                  << "result: "
                  << (failed ? (report.errors > 0 ? "FAILED" : "FAILED (--strict: warnings)")
                             : "OK")
                  << "\n";
    }
    return failed ? ExitCode::InputProblem : ExitCode::Success;
}

// ---- convert ------------------------------------------------------------------------------

ExitCode runConvert(const TraceOptions& options)
{
    std::vector<TraceFormat> formats = traceFormats();
    const TraceFormat* in = findFormat(formats, options.path);
    const TraceFormat* out = findFormat(formats, options.output);
    if (in == nullptr || !in->openSource)
        return cannotStart("convert",
                           "cannot read " + options.path + ": unknown input extension (known: " +
                               knownExtensions(formats, true) + ")");
    if (out == nullptr || !out->openSink)
        return cannotStart(
            "convert",
            "cannot write " + options.output +
                ": unknown output extension (known: " + knownExtensions(formats, false) + ")");
    std::error_code error;
    if (!fs::is_regular_file(options.path, error))
        return cannotStart("convert",
                           "no such file: " + options.path + " (convert takes one rank file)");
    if (std::optional<std::string> problem = openProblem(options.path))
        return cannotStart("convert", *problem);
    if (fs::exists(options.output, error) && fs::equivalent(options.path, options.output, error))
        return cannotStart("convert", "the output " + options.output + " is the input file");

    std::unique_ptr<NodeSource> source;
    try {
        source = in->openSource(options.path);
    } catch (const Error& e) {
        return inputProblem("convert", e.what());
    }
    std::unique_ptr<NodeSink> sink;
    try {
        sink = out->openSink(options.output, source->metadata());
    } catch (const Error& e) {
        return cannotStart("convert", e.what());
    }
    auto abandon = [&]() {
        sink.reset();
        fs::remove(options.output, error);
    };
    uint64_t nodes = 0;
    et::TraceNode node;
    try {
        while (true) {
            bool more = false;
            try {
                more = source->next(node);
            } catch (const Error& e) {
                abandon();
                return inputProblem("convert", e.what());
            }
            if (!more)
                break;
            if (out->nodeLimit > 0 && nodes == out->nodeLimit && !options.force) {
                abandon();
                return cannotStart("convert",
                                   options.path + " has more than " +
                                       std::to_string(out->nodeLimit) +
                                       " nodes: " + out->limitReason +
                                       "; pass --force to write it anyway, or convert one "
                                       "rank or a smaller trace");
            }
            sink->write(node);
            ++nodes;
        }
        sink->close();
    } catch (const Error& e) {
        abandon();
        return cannotStart("convert", e.what());
    }
    std::cout << "wrote " << nodes << " nodes to " << options.output << " (" << out->description
              << ")\n";
    return ExitCode::Success;
}

} // namespace

void addTraceCommands(CLI::App& app, ExitCode& result)
{
    auto options = std::make_shared<TraceOptions>();
    CLI::App* trace = app.add_subcommand("trace", "Inspect, check and convert Chakra traces");
    trace->require_subcommand(1);
    const char* pathHelp = "A trace file, a prefix (dir/name for dir/name.<rank>.et) or a folder";

    CLI::App* info = trace->add_subcommand("info", "Summarise a trace: nodes, collectives, work");
    info->add_option("PATH", options->path, pathHelp)->required();
    info->add_flag("--json", options->json, "Print JSON for scripts");
    info->callback([options, &result]() { result = runInfo(*options); });

    CLI::App* validate =
        trace->add_subcommand("validate", "Check a trace for what a run needs; list problems");
    validate->add_option("PATH", options->path, pathHelp)->required();
    validate->add_flag("--strict", options->strict, "Exit 1 on warnings too");
    validate->add_flag("--lenient",
                       options->lenient,
                       "Report dependencies on missing nodes as warnings, not errors");
    validate->add_flag(
        "--data-only", options->dataOnly, "Ignore control dependencies (the data policy)");
    validate->add_option("--comm-groups",
                         options->commGroups,
                         "Communicator-group JSON file of the run ({\"1\": [0, 1], ...})");
    validate->add_flag("--json", options->json, "Print JSON for scripts");
    validate->callback([options, &result]() { result = runValidate(*options); });

    CLI::App* convert = trace->add_subcommand(
        "convert", "Convert one rank file between formats, chosen by extension");
    convert->add_option("IN", options->path, "Input trace file")->required();
    convert->add_option("OUT", options->output, "Output file")->required();
    convert->add_flag("--force", options->force, "Write DOT files over the node limit");
    convert->callback([options, &result]() { result = runConvert(*options); });

    addTraceImportCommand(*trace, result);
}

} // namespace etsim::apps
