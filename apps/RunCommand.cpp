#include "apps/RunCommand.h"

#include "apps/Plot.h"
#ifdef ETSIM_WITH_MPI
#include "apps/PartitionRun.h"
#endif
#include "apps/SignalWatcher.h"
#include "apps/Version.h"
#include "et_driver/TraceError.h"
#include "et_driver/TraceSet.h"
#include "kernel/AtomicFile.h"
#include "kernel/Error.h"
#include "kernel/InputFile.h"
#include "kernel/InputLimits.h"
#include "kernel/StopRequest.h"
#include "kernel/Units.h"
#include "platforms/Job.h"
#include "platforms/PlatformConfig.h"
#include "platforms/astra/AstraPlatform.h"
#include "platforms/partition/PartitionPlan.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <systemc>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <tuple>
#include <unistd.h>
#include <utility>

namespace etsim::apps {

namespace {

namespace fs = std::filesystem;

struct RunOptions {
    std::string platform;
    std::string trace;
    std::string mode;
    std::string report;
    std::string timeline;
    std::string stats;
    std::string timelineRanks = "all";
    std::string timelineWindow;
    std::string timelineSample;
    std::string timelineLinks = "auto";
    bool timelineNoNodes = false;
    std::vector<std::string> sets;
    std::uint32_t replicate = 0;
    std::string commGroups;
    // ASTRA-sim's files instead of --platform (docs/astra-compat.md).
    std::string astraNetwork;
    std::string astraSystem;
    std::string astraMemory;
    std::string astraCongestion;
    std::string astraCommGroups;
    // Partitioned runs (docs/partitioned-runs.md): 0 = not asked for.
    std::uint32_t partitions = 0;
    std::string partitionBy = "auto";
    double partitionTimeoutSeconds = 60.0;
    bool explainPartition = false;
    bool quiet = false;
    bool profile = false;
    bool listPlatforms = false;
    // Whether --report / --timeline / --stats were given at all: `--report ""` names no file.
    bool reportGiven = false;
    bool timelineGiven = false;
    bool statsGiven = false;
};

ExitCode fail(ExitCode code, const std::string& message)
{
    std::cerr << "etsim run: " << message << "\n";
    return code;
}

// Progress on stderr: one rewritten line on a terminal, a plain line every 10 s otherwise.
class ProgressPrinter {
public:
    ProgressPrinter() : terminal(isatty(fileno(stderr)) != 0) {}

    void operator()(const platform::JobProgress& progress)
    {
        const double every = terminal ? 0.25 : 10.0;
        if (progress.wallSeconds - lastPrint < every)
            return;
        lastPrint = progress.wallSeconds;
        std::ostringstream line;
        line << std::fixed << std::setprecision(3) << "simulated "
             << progress.simulatedSeconds * 1e3 << " ms, " << progress.nodesDone
             << " nodes done, wall " << std::setprecision(1) << progress.wallSeconds << " s, "
             << std::setprecision(0)
             << (progress.wallSeconds > 0 ? progress.nodesDone / progress.wallSeconds : 0.0)
             << " nodes/s";
        if (terminal)
            std::cerr << "\r" << line.str() << "\x1b[K" << std::flush;
        else
            std::cerr << "etsim run: " << line.str() << "\n";
        printed = true;
    }
    void finish()
    {
        if (terminal && printed)
            std::cerr << "\r\x1b[K" << std::flush;
    }

private:
    bool terminal;
    bool printed = false;
    double lastPrint = 0.0;
};

// Writes the JSON report (nothing when `path` is empty); the exit code when it cannot.
std::optional<ExitCode> writeReport(const std::string& path,
                                    const platform::RunReport& report,
                                    const std::vector<std::string>& commandLine)
{
    if (path.empty())
        return std::nullopt;
    try {
        writeFileAtomically(
            path, platform::reportToJson(report, commandLine, etsimVersion).dump(2) + "\n");
    } catch (const Error& error) {
        return fail(ExitCode::CannotStart, std::string("--report ") + error.what());
    }
    return std::nullopt;
}

// The rules between the ASTRA-sim options and the others; the problem, or nullopt.
std::optional<std::string> checkAstraOptions(const RunOptions& options)
{
    if (!options.platform.empty())
        return "--platform and ASTRA-sim's --astra-* files are alternatives; give one platform";
    if (!options.sets.empty())
        return "--set applies to --platform files only; edit the ASTRA-sim files instead";
    if (!options.mode.empty())
        return "--mode applies to --platform files only; with ASTRA-sim's files compute follows "
               "roofline-enabled in --astra-system (1: roofline, 0: recorded durations)";
    if (!options.commGroups.empty() && !options.astraCommGroups.empty())
        return "--comm-groups and --astra-comm-groups name the same file; give one";
    if (options.astraNetwork.empty() && options.astraSystem.empty())
        return std::string(!options.astraMemory.empty()       ? "--astra-memory"
                           : !options.astraCongestion.empty() ? "--astra-congestion"
                                                              : "--astra-comm-groups") +
               " needs --astra-network FILE and --astra-system FILE";
    if (options.astraSystem.empty())
        return "--astra-network needs --astra-system FILE (ASTRA-sim's system JSON: collective "
               "implementations, chunks, local-mem-bw, ...)";
    if (options.astraNetwork.empty())
        return "--astra-system needs --astra-network FILE (ASTRA-sim's network YAML: topology, "
               "npus_count, bandwidth, latency)";
    std::error_code ignored;
    for (const auto& [flag, file] : {std::pair{"--astra-network", &options.astraNetwork},
                                     std::pair{"--astra-system", &options.astraSystem},
                                     std::pair{"--astra-memory", &options.astraMemory}})
        if (!file->empty() && !fs::is_regular_file(*file, ignored))
            return std::string(flag) + " " + *file + ": no such file";
    // "empty" is ASTRA-sim's own spelling of "no groups file".
    if (!options.astraCommGroups.empty() &&
        options.astraCommGroups.find("empty") == std::string::npos &&
        !fs::is_regular_file(options.astraCommGroups, ignored))
        return "--astra-comm-groups " + options.astraCommGroups + ": no such file";
    return std::nullopt;
}

// The output options that cannot work: an empty name, or two outputs on one file (the second
// write would replace the first). The problem, or nullopt.
std::optional<std::string> checkOutputPaths(const RunOptions& options)
{
    if (options.reportGiven && options.report.empty())
        return std::string("--report needs a file name (e.g. --report report.json)");
    if (options.timelineGiven && options.timeline.empty())
        return std::string("--timeline needs a file name (e.g. --timeline timeline.json)");
    if (options.statsGiven && options.stats.empty())
        return std::string("--stats needs a file name (e.g. --stats stats.json)");
    const std::vector<std::pair<std::string, std::string>> outputs = {
        {"--report", options.report}, {"--timeline", options.timeline}, {"--stats", options.stats}};
    for (std::size_t a = 0; a < outputs.size(); ++a)
        for (std::size_t b = a + 1; b < outputs.size(); ++b) {
            const auto& [firstOption, first] = outputs[a];
            const auto& [secondOption, second] = outputs[b];
            if (first.empty() || second.empty())
                continue;
            std::error_code error;
            if (fs::weakly_canonical(first, error) == fs::weakly_canonical(second, error) ||
                fs::equivalent(first, second, error))
                return firstOption + " " + first + " and " + secondOption + " " + second +
                       " name the same file; give each output its own file";
        }
    return std::nullopt;
}

// Writes every model's stats (nothing when `path` is empty): text for a .txt name, else JSON
// (docs/outputs.md). The exit code when it cannot.
std::optional<ExitCode> writeStats(const std::string& path, const platform::RunReport& report)
{
    if (path.empty())
        return std::nullopt;
    try {
        writeFileAtomically(path, report.stats);
    } catch (const Error& error) {
        return fail(ExitCode::CannotStart, std::string("--stats ") + error.what());
    }
    return std::nullopt;
}

// --partitions and its companions; the problem, or nullopt. A build without MPI explains the
// plan but cannot run it.
std::optional<std::string> checkPartitionOptions(const RunOptions& options)
{
    if (options.partitions == 0 && options.partitionBy != "auto" && !options.explainPartition)
        return std::string("--partition-by shapes a partitioned run: add --partitions K");
    if (options.partitions > 0 && options.profile)
        return std::string("--profile measures a run in one process: leave out --partitions, "
                           "or profile the partitions with perf");
    if (options.partitions > 0 && !options.stats.empty())
        return std::string("--stats writes the stats of a run in one process: leave out "
                           "--partitions (each partition holds only its own ranks' models)");
#ifdef ETSIM_WITH_MPI
    constexpr bool mpiBuilt = true;
#else
    constexpr bool mpiBuilt = false;
#endif
    if (!options.explainPartition)
        return platform::partitionsRefusal(options.partitions, mpiBuilt);
    return std::nullopt;
}

// Loads ASTRA-sim's files and prints a warning for every key etsim ignores.
platform::PlatformConfig loadAstra(const RunOptions& options)
{
    platforms::astra::AstraFiles files;
    files.network = options.astraNetwork;
    files.system = options.astraSystem;
    files.memory = options.astraMemory;
    if (!options.astraCongestion.empty())
        files.congestion = *platforms::astra::parseCongestion(options.astraCongestion);
    std::vector<std::string> warnings;
    platform::PlatformConfig config = platforms::astra::loadAstraPlatform(files, warnings);
    for (const std::string& warning : warnings)
        std::cerr << "etsim run: warning: " << warning << "\n";
    return config;
}

ExitCode runCommand(const RunOptions& options,
                    const std::string& logSpec,
                    const std::vector<std::string>& commandLine)
{
    if (options.listPlatforms) {
        for (const std::string& name : platform::platformPresetNames())
            std::cout << name << "\n";
        return ExitCode::Success;
    }
    const bool astra = !options.astraNetwork.empty() || !options.astraSystem.empty() ||
                       !options.astraMemory.empty() || !options.astraCongestion.empty() ||
                       !options.astraCommGroups.empty();
    if (astra) {
        if (std::optional<std::string> problem = checkAstraOptions(options))
            return fail(ExitCode::CannotStart, *problem);
    } else if (options.platform.empty()) {
        return fail(ExitCode::CannotStart,
                    "--platform is required (a file or one of the presets "
                    "listed by --list-platforms), or ASTRA-sim's --astra-network and "
                    "--astra-system files");
    }
    if (std::optional<std::string> problem = checkPartitionOptions(options))
        return fail(ExitCode::CannotStart, *problem);
    if (options.trace.empty() && !options.explainPartition)
        return fail(ExitCode::CannotStart, "--trace is required (a prefix or a folder)");
    if (std::optional<std::string> problem = checkOutputPaths(options))
        return fail(ExitCode::CannotStart, *problem);
    // Found out now, not after a long run: a report that cannot be written.
    if (!options.report.empty())
        if (std::string problem = checkWritable(options.report); !problem.empty())
            return fail(ExitCode::CannotStart, "--report " + problem);
    if (!options.stats.empty())
        if (std::string problem = checkWritable(options.stats); !problem.empty())
            return fail(ExitCode::CannotStart, "--stats " + problem);

    std::vector<platform::Override> overrides;
    try {
        for (const std::string& text : options.sets)
            overrides.push_back(platform::parseOverride(text));
    } catch (const Error& error) {
        return fail(ExitCode::CannotStart, error.what());
    }
    if (!options.mode.empty())
        overrides.push_back({"driver.mode", options.mode});

    // A platform that is neither a file nor a preset, or a trace with no rank file, means
    // etsim cannot start; a platform or trace that is there but wrong is an input problem.
    std::error_code ignored;
    bool isFile = astra || fs::exists(options.platform, ignored);
    if (!isFile) {
        bool isPreset = false;
        for (const std::string& name : platform::platformPresetNames())
            isPreset = isPreset || name == options.platform;
        if (!isPreset) {
            std::string names;
            for (const std::string& name : platform::platformPresetNames())
                names += (names.empty() ? "" : ", ") + name;
            return fail(ExitCode::CannotStart,
                        "--platform " + options.platform +
                            ": no such file, and not a bundled preset (" + names + ")");
        }
    }
    if (!options.explainPartition) {
        try {
            et::findRankFiles(options.trace);
        } catch (const et::TraceError& error) {
            return fail(ExitCode::CannotStart, "--trace " + options.trace + ": " + error.what());
        }
    }

    // From here on every outcome leaves its own report (docs/report.md, Outcomes), so that
    // a report from an earlier run at the same path never survives a failed one.
    auto failWithReport = [&](const std::string& message,
                              platform::RunReport failed = {}) -> ExitCode {
        failed.finished = false;
        failed.outcome = "failed";
        failed.problem = message;
        const ExitCode code = fail(ExitCode::InputProblem, message);
        // Stats of an earlier run at the same path must not pass for this one's.
        if (!options.stats.empty())
            std::remove(options.stats.c_str());
        if (std::optional<ExitCode> unwritten = writeReport(options.report, failed, commandLine))
            return *unwritten;
        return code;
    };
    platform::PlatformConfig config;
    try {
        if (astra)
            config = loadAstra(options);
        else
            config = isFile ? platform::loadPlatformFile(options.platform, overrides)
                            : platform::loadPlatform(options.platform, overrides);
    } catch (const FileAccessError& error) {
        return fail(ExitCode::CannotStart, error.what());
    } catch (const Error& error) {
        if (options.explainPartition)
            return fail(ExitCode::InputProblem, error.what());
        return failWithReport(error.what());
    }
    if (options.explainPartition) {
        try {
            platform::writePartitionPlan(
                std::cout,
                platform::planPartitions(
                    config, {std::max<std::uint32_t>(options.partitions, 1), options.partitionBy}));
        } catch (const Error& error) {
            return fail(ExitCode::CannotStart, error.what());
        }
        return ExitCode::Success;
    }

    platform::JobSpec job;
    job.trace = options.trace;
    job.replicate = options.replicate;
    platform::JobOptions jobOptions;
    jobOptions.profile = options.profile;
    if (!options.stats.empty())
        jobOptions.stats = options.stats.size() >= 4 &&
                                   options.stats.compare(options.stats.size() - 4, 4, ".txt") == 0
                               ? platform::StatsFormat::Text
                               : platform::StatsFormat::Json;
    if (options.timeline.empty() &&
        (options.timelineRanks != "all" || !options.timelineWindow.empty() ||
         !options.timelineSample.empty() || options.timelineLinks != "auto" ||
         options.timelineNoNodes))
        return fail(ExitCode::CannotStart,
                    "the --timeline-* options shape a timeline: add --timeline FILE.json");
    platform::TimelineSpec& timeline = jobOptions.timeline;
    timeline.path = options.timeline;
    if (options.timelineLinks != "auto")
        timeline.linkTracks = options.timelineLinks == "on";
    timeline.nodeTracks = !options.timelineNoNodes;
    try {
        timeline.ranks = platform::parseRankList(options.timelineRanks);
        if (!options.timelineWindow.empty())
            std::tie(timeline.startPs, timeline.endPs) =
                platform::parseTimelineWindow(options.timelineWindow);
        if (!options.timelineSample.empty()) {
            try {
                timeline.samplePs = Time::parse(options.timelineSample).ps();
            } catch (const Error& error) {
                throw Error("--timeline-sample " + options.timelineSample + ": " + error.what() +
                            " (write a time with a unit, e.g. 10us)");
            }
            if (timeline.samplePs == 0)
                throw Error("--timeline-sample " + options.timelineSample +
                            ": must be at least 1 ps (e.g. 10us)");
        }
    } catch (const Error& error) {
        return fail(ExitCode::CannotStart, error.what());
    }
    jobOptions.logSpec = logSpec;
    auto printer = std::make_shared<ProgressPrinter>();
    // Progress runs the kernel in slices; a slice with nothing to do is not worth a warning.
    sc_core::sc_report_handler::set_actions(sc_core::SC_ID_NO_SC_START_ACTIVITY_,
                                            sc_core::SC_DO_NOTHING);
    if (!options.quiet)
        jobOptions.progress = [printer](const platform::JobProgress& p) { (*printer)(p); };

#ifdef ETSIM_WITH_MPI
    if (options.partitions > 1) {
        if (!options.commGroups.empty())
            job.groups = et::readCommGroupFile(options.commGroups);
        PartitionRunOptions partitioned;
        partitioned.request = {options.partitions, options.partitionBy};
        partitioned.timeout = std::chrono::milliseconds(
            static_cast<std::int64_t>(options.partitionTimeoutSeconds * 1000.0));
        partitioned.report = options.report;
        partitioned.quiet = options.quiet;
        return runPartitioned(partitioned, config, job, jobOptions, commandLine);
    }
#endif
    platform::RunReport report;
    platform::RunReport failed;
    jobOptions.failure = &failed;
    StopRequest stop;
    jobOptions.stop = &stop;
    std::optional<int> signal;
    try {
        if (!options.commGroups.empty())
            job.groups = et::readCommGroupFile(options.commGroups);
        // ASTRA-sim reads a path containing "empty" as "no groups" (its default is "empty").
        if (!options.astraCommGroups.empty() &&
            options.astraCommGroups.find("empty") == std::string::npos)
            job.groups = et::readCommGroupFile(options.astraCommGroups);
        // SIGINT, SIGTERM and SIGHUP stop the run cleanly from here until the report is out.
        SignalWatcher signals(stop);
        report = platform::runJob(config, job, jobOptions);
        if (signals.signal() != 0 && report.outcome == "interrupted")
            signal = signals.signal();
    } catch (const FileAccessError& error) {
        printer->finish();
        return fail(ExitCode::CannotStart, error.what());
    } catch (const Error& error) {
        printer->finish();
        return failWithReport(error.what(), failed);
    } catch (const sc_core::sc_report& error) {
        // The message alone: what() adds SystemC's own source file and line, which tell the
        // user nothing about the input.
        printer->finish();
        return failWithReport(error.get_msg(), failed);
    }
    printer->finish();

    if (!options.quiet)
        platform::writeReportText(std::cout, report);
    for (const std::string& problem : report.shutdownProblems)
        std::cerr << "etsim run: warning: " << problem << "\n";
    if (std::optional<ExitCode> code = writeReport(options.report, report, commandLine))
        return *code;
    if (std::optional<ExitCode> code = writeStats(options.stats, report))
        return *code;
    if (signal) {
        std::cerr << "etsim run: " << report.problem << "; the timeline and report cover the run "
                  << "up to there\n";
        return interruptedBy(*signal);
    }
    if (!report.finished) {
        std::cerr << "etsim run: the run did not finish (" << report.outcome << ")\n"
                  << report.problem << "\n";
        return ExitCode::InputProblem;
    }
    return ExitCode::Success;
}

} // namespace

void addRunCommands(CLI::App& app,
                    const std::string& logSpec,
                    const std::vector<std::string>& commandLine,
                    ExitCode& result)
{
    auto options = std::make_shared<RunOptions>();
    CLI::App* run = app.add_subcommand("run", "Run a Chakra trace on a platform and report");
    run->add_option("--platform",
                    options->platform,
                    "Platform YAML file, or a bundled preset name (--list-platforms)");
    run->add_option(
        "--trace", options->trace, "Trace prefix (dir/name for dir/name.N.et) or folder");
    run->add_option("--mode", options->mode, "model (hardware models) or replay (recorded times)")
        ->check(CLI::IsMember({"model", "replay"}));
    run->add_option("--report", options->report, "Write the JSON report here (docs/report.md)");
    run->add_option("--timeline", options->timeline, "Write a Chrome/Perfetto timeline here");
    run->add_option("--stats",
                    options->stats,
                    "Write every model's statistics here: JSON, or text for a .txt name "
                    "(docs/outputs.md)");
    run->add_option("--timeline-ranks",
                    options->timelineRanks,
                    "Ranks with one slice per node in the timeline: all (default), none, or "
                    "e.g. 0,3,8-15");
    run->add_option("--timeline-window",
                    options->timelineWindow,
                    "Only this span of simulated time in the timeline: START:END, e.g. 2ms:3ms");
    run->add_option("--timeline-sample",
                    options->timelineSample,
                    "Width of one sample of the utilisation counter tracks (default: the "
                    "window / 500)");
    run->add_option("--timeline-links",
                    options->timelineLinks,
                    "Per-link fabric tracks: on, off, or auto (on when every rank is drawn)")
        ->check(CLI::IsMember({"auto", "on", "off"}));
    run->add_flag("--timeline-no-node-tracks",
                  options->timelineNoNodes,
                  "No per-node (host) utilisation tracks");
    run->add_option("--set", options->sets, "Override a platform value: key.path=value")
        ->take_all();
    run->add_option("--replicate",
                    options->replicate,
                    "Run a one-rank trace as N identical ranks (collectives span them all)")
        ->check(CLI::Range(1u, maxRanks));
    run->add_option("--comm-groups",
                    options->commGroups,
                    "Communicator-group JSON file ({\"1\": [0, 1], ...})")
        ->check(CLI::ExistingFile);
    run->add_option("--astra-network",
                    options->astraNetwork,
                    "ASTRA-sim network YAML (analytical backend), instead of --platform");
    run->add_option("--astra-system",
                    options->astraSystem,
                    "ASTRA-sim system JSON (collectives, chunks, roofline); with --astra-network");
    run->add_option("--astra-memory",
                    options->astraMemory,
                    "ASTRA-sim remote-memory JSON; without it memory nodes are an error");
    run->add_option("--astra-congestion",
                    options->astraCongestion,
                    "ASTRA-sim analytical backend: aware (default) or unaware")
        ->check(CLI::IsMember({"aware", "unaware"}));
    run->add_option("--astra-comm-groups",
                    options->astraCommGroups,
                    "ASTRA-sim communicator-group JSON ({\"1\": [0, 1], ...}); a path "
                    "containing \"empty\" means none, as in ASTRA-sim");
    run->add_option("--partitions",
                    options->partitions,
                    "Split the run over K processes started by mpirun -n K "
                    "(docs/partitioned-runs.md)")
        ->check(CLI::Range(1u, maxRanks));
    run->add_option("--partition-by",
                    options->partitionBy,
                    "How ranks are split: auto (the outermost dimensions), nodes, ranks or dim:N");
    run->add_option("--partition-timeout",
                    options->partitionTimeoutSeconds,
                    "Seconds a partition may stay silent before the run is abandoned as failed "
                    "(default 60)")
        ->check(CLI::Range(0.1, 86400.0));
    run->add_flag("--explain-partition",
                  options->explainPartition,
                  "Print the split of --partitions K and its lookahead, and run nothing");
    run->add_flag("--profile",
                  options->profile,
                  "Measure the wall time each part of the platform takes (driver, accelerator, "
                  "HBM, fabric, co-simulation): a section of the text and JSON reports");
    run->add_flag("--quiet", options->quiet, "No progress and no text report");
    run->add_flag("--list-platforms", options->listPlatforms, "List the bundled platforms");
    run->callback([run, options, &logSpec, &commandLine, &result]() {
        options->reportGiven = run->count("--report") > 0;
        options->timelineGiven = run->count("--timeline") > 0;
        options->statsGiven = run->count("--stats") > 0;
        result = runCommand(*options, logSpec, commandLine);
    });

    auto plotInput = std::make_shared<std::string>();
    auto plotOutput = std::make_shared<std::string>();
    CLI::App* plot =
        app.add_subcommand("plot", "Draw a run report (etsim run --report) as an SVG picture");
    plot->add_option("REPORT", *plotInput, "The JSON report")->required();
    plot->add_option("-o,--output", *plotOutput, "SVG file to write")->required();
    plot->callback([plotInput, plotOutput, &result]() {
        nlohmann::json report;
        try {
            report = readJsonFile(*plotInput, "a JSON report (etsim run --report)");
            std::ofstream out(*plotOutput);
            if (!out) {
                std::cerr << "etsim plot: " << *plotOutput << ": cannot write\n";
                result = ExitCode::CannotStart;
                return;
            }
            writeReportSvg(out, report);
            result = ExitCode::Success;
        } catch (const FileAccessError& error) {
            std::cerr << "etsim plot: " << error.what() << "\n";
            result = ExitCode::CannotStart;
        } catch (const std::exception& error) {
            std::cerr << "etsim plot: " << *plotInput << ": " << error.what() << "\n";
            result = ExitCode::InputProblem;
        }
    });
}

} // namespace etsim::apps
