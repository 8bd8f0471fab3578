#include "apps/SweepCommand.h"

#include "apps/Version.h"
#include "apps/sweep/Results.h"
#include "apps/sweep/Sweep.h"
#include "kernel/Error.h"
#include "kernel/InputFile.h"
#include "platforms/PlatformConfig.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <set>

namespace etsim::apps {

namespace {

namespace fs = std::filesystem;

struct SweepCliOptions {
    std::string spec;
    std::string output;
    unsigned jobs = 0;
    bool resume = false;
    bool quiet = false;
};

ExitCode sweepCommand(const SweepCliOptions& options)
{
    std::error_code ignored;
    if (!fs::exists(options.spec, ignored)) {
        std::cerr << "etsim sweep: " << options.spec << ": no such file\n";
        return ExitCode::CannotStart;
    }
    sweep::SweepSpec spec;
    try {
        spec = sweep::loadSweepSpec(options.spec);
    } catch (const FileAccessError& error) {
        std::cerr << "etsim sweep: " << error.what() << "\n";
        return ExitCode::CannotStart;
    } catch (const Error& error) {
        std::cerr << "etsim sweep: " << error.what() << "\n";
        return ExitCode::InputProblem;
    }
    // Every point would fail the same way; say it once, before anything runs.
    if (!fs::exists(spec.platform, ignored)) {
        const auto names = platform::platformPresetNames();
        if (std::find(names.begin(), names.end(), spec.platform) == names.end()) {
            std::string list;
            for (const std::string& name : names)
                list += (list.empty() ? "" : ", ") + name;
            std::cerr << "etsim sweep: " << options.spec << ": platform: " << spec.platform
                      << " is neither a file (relative to the spec) nor a bundled preset (" << list
                      << ")\n";
            return ExitCode::InputProblem;
        }
    }
    sweep::SweepOptions sweepOptions;
    sweepOptions.output =
        options.output.empty() ? fs::path(spec.name + "-sweep") : fs::path(options.output);
    sweepOptions.jobs = options.jobs;
    sweepOptions.resume = options.resume;
    sweepOptions.etsimVersion = etsimVersion;
    // The points run this very binary, whatever the PATH holds.
    sweepOptions.executable = fs::read_symlink("/proc/self/exe", ignored);
    if (sweepOptions.executable.empty()) {
        std::cerr << "etsim sweep: cannot find the etsim binary (/proc/self/exe)\n";
        return ExitCode::CannotStart;
    }
    if (!options.quiet)
        sweepOptions.progress = [](const std::string& line) {
            std::cerr << "etsim sweep: " << line << "\n";
        };
    sweep::SweepOutcome outcome;
    try {
        outcome = sweep::runSweep(spec, sweepOptions);
    } catch (const Error& error) {
        std::cerr << "etsim sweep: " << error.what() << "\n";
        return ExitCode::CannotStart;
    }
    if (!options.quiet)
        sweep::writeText(std::cout, outcome.table);
    const fs::path output = fs::absolute(sweepOptions.output);
    std::cout << "results: " << (output / "results.csv").string() << ", "
              << (output / "report.md").string() << "\n";
    if (outcome.interrupted) {
        std::cerr << "etsim sweep: interrupted; rerun with --resume to finish\n";
        return ExitCode::InputProblem;
    }
    if (outcome.failed > 0) {
        std::cerr << "etsim sweep: " << outcome.failed << " run(s) failed; see results.csv\n";
        return ExitCode::InputProblem;
    }
    return ExitCode::Success;
}

struct CompareOptions {
    std::vector<std::string> reports;
    std::string svg;
    std::string json;
};

ExitCode compareCommand(const CompareOptions& options)
{
    sweep::Table table;
    table.parameterKeys = {"platform", "ranks"};
    std::set<std::vector<std::string>> traces;
    for (const std::string& path : options.reports) {
        sweep::Row row;
        row.id = path;
        row.status = "ok";
        try {
            row.figures =
                sweep::figuresFromReport(readJsonFile(path, "a JSON report (etsim run)"), path);
        } catch (const FileAccessError& error) {
            std::cerr << "etsim compare: " << error.what() << "\n";
            return ExitCode::CannotStart;
        } catch (const nlohmann::json::exception& error) {
            std::cerr << "etsim compare: " << path << ": not JSON: " << error.what() << "\n";
            return ExitCode::InputProblem;
        } catch (const Error& error) {
            std::cerr << "etsim compare: " << error.what() << "\n";
            return ExitCode::InputProblem;
        }
        row.parameters = {{"platform", row.figures->platform},
                          {"ranks", std::to_string(row.figures->ranks)}};
        traces.insert(row.figures->traceFiles);
        if (!table.base)
            table.base = row;
        else
            table.rows.push_back(row);
    }
    sweep::writeText(std::cout, table);
    std::cout << "speed-up: the first report's simulated time over each report's\n";
    if (traces.size() > 1)
        std::cout << "note: the reports ran different trace files (names or CRC-32 differ)\n";
    if (!options.svg.empty()) {
        std::ofstream out(options.svg);
        sweep::writeBreakdownSvg(out, table, "etsim compare");
        if (!out) {
            std::cerr << "etsim compare: " << options.svg << ": cannot write\n";
            return ExitCode::CannotStart;
        }
    }
    if (!options.json.empty()) {
        std::ofstream out(options.json);
        out << sweep::tableToJson(table).dump(2) << "\n";
        if (!out) {
            std::cerr << "etsim compare: " << options.json << ": cannot write\n";
            return ExitCode::CannotStart;
        }
    }
    return ExitCode::Success;
}

} // namespace

void addSweepCommands(CLI::App& app, ExitCode& result)
{
    auto options = std::make_shared<SweepCliOptions>();
    CLI::App* sweepApp = app.add_subcommand(
        "sweep",
        "Run a design-space sweep: one etsim run per point of SPEC.yaml, several at a time, "
        "then a table, a ranked report and SVG pictures (docs/sweep.md)");
    sweepApp->add_option("SPEC", options->spec, "The sweep file (YAML, docs/sweep.md)")->required();
    sweepApp->add_option("-j,--jobs", options->jobs, "Points run at once (default: the cores)")
        ->check(CLI::Range(1u, 4096u));
    sweepApp->add_option(
        "-o,--output", options->output, "Output folder (default: <spec name>-sweep)");
    sweepApp->add_flag("--resume",
                       options->resume,
                       "Continue the sweep in the output folder, reusing finished points");
    sweepApp->add_flag("--quiet", options->quiet, "No progress lines and no table");
    sweepApp->callback([options, &result]() { result = sweepCommand(*options); });

    auto compare = std::make_shared<CompareOptions>();
    CLI::App* compareApp = app.add_subcommand(
        "compare", "Put two or more run reports (etsim run --report) side by side");
    compareApp->add_option("REPORT", compare->reports, "Run reports (JSON); the first is the base")
        ->required()
        ->expected(2, 1 << 20);
    compareApp->add_option("--svg", compare->svg, "Also draw the stacked breakdowns as SVG");
    compareApp->add_option("--json", compare->json, "Also write the table as JSON");
    compareApp->callback([compare, &result]() { result = compareCommand(*compare); });
}

} // namespace etsim::apps
