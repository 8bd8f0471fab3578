#include "apps/sweep/Sweep.h"

#include "kernel/Error.h"
#include "kernel/InputFile.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

namespace etsim::sweep {

namespace {

namespace fs = std::filesystem;

constexpr const char* traceName = "trace";

std::string pointId(std::size_t index, std::size_t total)
{
    std::string id = std::to_string(index);
    const std::size_t width = std::max<std::size_t>(3, std::to_string(total - 1).size());
    return std::string(width > id.size() ? width - id.size() : 0, '0') + id;
}

void writeFile(const fs::path& path, const std::string& text)
{
    std::ofstream out(path, std::ios::binary);
    out << text;
    if (!out)
        throw Error(path.string() + ": cannot write (check the sweep's output folder)");
}

nlohmann::ordered_json parametersJson(const DesignPoint* point)
{
    nlohmann::ordered_json json = nlohmann::ordered_json::object();
    if (point)
        for (const auto& [key, value] : point->parameters)
            json[key] = value;
    return json;
}

} // namespace

std::vector<std::string> runArguments(const SweepSpec& spec,
                                      const std::string& trace,
                                      const fs::path& folder,
                                      const DesignPoint* point)
{
    std::vector<std::string> arguments{"run",
                                       "--platform",
                                       spec.platform,
                                       "--trace",
                                       trace,
                                       "--quiet",
                                       "--report",
                                       (folder / "report.json").string()};
    if (spec.replicate > 0) {
        arguments.push_back("--replicate");
        arguments.push_back(std::to_string(spec.replicate));
    }
    if (!spec.commGroups.empty()) {
        arguments.push_back("--comm-groups");
        arguments.push_back(spec.commGroups);
    }
    for (const std::string& set : spec.sets) {
        arguments.push_back("--set");
        arguments.push_back(set);
    }
    if (point)
        for (const auto& [key, value] : point->parameters) {
            arguments.push_back("--set");
            arguments.push_back(key + "=" + value);
        }
    return arguments;
}

Row rowFromFolder(const std::string& id,
                  const fs::path& folder,
                  const PointOutcome& outcome,
                  std::vector<std::pair<std::string, std::string>> parameters)
{
    Row row;
    row.id = id;
    row.parameters = std::move(parameters);
    row.status = statusName(outcome.status);
    row.exitCode = outcome.exitCode;
    row.error = outcome.error;
    row.processWallSeconds = outcome.wallSeconds;
    if (outcome.status == PointStatus::Ok || outcome.status == PointStatus::Reused) {
        const fs::path report = folder / "report.json";
        try {
            row.figures = figuresFromReport(readJsonFile(report, "a JSON report"), report.string());
        } catch (const std::exception& error) {
            row.status = "failed";
            row.error = error.what();
        }
    }
    return row;
}

SweepOutcome runSweep(const SweepSpec& spec, const SweepOptions& options)
{
    const fs::path output = fs::absolute(options.output);
    const fs::path pointsFolder = output / "points";
    std::error_code error;
    if (!options.resume && fs::exists(pointsFolder, error))
        throw Error(output.string() +
                    " already holds a sweep (points/); pass --resume to continue it, or choose "
                    "another output folder with -o");
    fs::create_directories(pointsFolder, error);
    if (error)
        throw Error(output.string() + ": cannot create the output folder: " + error.message());
    writeFile(output / "spec.yaml", spec.text);
    auto say = [&](const std::string& line) {
        if (options.progress)
            options.progress(line);
    };

    std::string trace = spec.trace;
    if (!spec.generate.empty()) {
        PointJob gen;
        gen.id = "trace";
        gen.folder = output / "trace";
        gen.arguments = {"gen"};
        gen.arguments.insert(gen.arguments.end(), spec.generate.begin(), spec.generate.end());
        for (const std::string& argument : {std::string("--out"),
                                            gen.folder.string(),
                                            std::string("--name"),
                                            std::string(traceName)})
            gen.arguments.push_back(argument);
        gen.parameters = {{"generate", spec.generate}};
        gen.product = std::string(traceName) + ".0.et";
        SchedulerOptions genOptions;
        genOptions.executable = options.executable;
        genOptions.jobs = 1;
        genOptions.resume = options.resume;
        const SchedulerResult generated = runPoints({gen}, genOptions);
        const PointOutcome& outcome = generated.outcomes.front();
        if (outcome.status != PointStatus::Ok && outcome.status != PointStatus::Reused)
            throw Error("etsim gen failed (" + std::string(statusName(outcome.status)) +
                        ", exit code " + std::to_string(outcome.exitCode) + "); see " +
                        (gen.folder / "log.txt").string() + ":\n" + outcome.error);
        say(outcome.status == PointStatus::Reused ? "trace: reused " + gen.folder.string()
                                                  : "trace: generated in " + gen.folder.string());
        trace = (gen.folder / traceName).string();
    }

    const std::vector<DesignPoint> points = expandPoints(spec);
    std::vector<PointJob> jobs;
    if (spec.runBase) {
        PointJob base;
        base.id = "base";
        base.folder = pointsFolder / "base";
        base.arguments = runArguments(spec, trace, base.folder, nullptr);
        base.parameters = parametersJson(nullptr);
        jobs.push_back(base);
    }
    for (const DesignPoint& point : points) {
        PointJob job;
        job.id = pointId(point.index, points.size());
        job.folder = pointsFolder / job.id;
        job.arguments = runArguments(spec, trace, job.folder, &point);
        job.parameters = parametersJson(&point);
        jobs.push_back(job);
    }

    SchedulerOptions schedulerOptions;
    schedulerOptions.executable = options.executable;
    schedulerOptions.jobs = options.jobs;
    schedulerOptions.resume = options.resume;
    schedulerOptions.onPointDone =
        [&](const PointOutcome& outcome, std::size_t done, std::size_t total) {
            std::ostringstream line;
            line << "[" << done << "/" << total << "] " << outcome.id << ": "
                 << statusName(outcome.status);
            if (outcome.status == PointStatus::Failed)
                line << " (exit code " << outcome.exitCode << ")";
            else if (outcome.status == PointStatus::Ok)
                line << " in " << formatNumber(std::round(outcome.wallSeconds * 10) / 10) << " s";
            say(line.str());
        };
    const SchedulerResult result = runPoints(jobs, schedulerOptions);

    SweepOutcome outcome;
    outcome.interrupted = result.interrupted;
    outcome.table.parameterKeys = parameterKeys(spec);
    std::size_t j = 0;
    if (spec.runBase) {
        outcome.table.base = rowFromFolder("base", jobs[0].folder, result.outcomes[0], {});
        ++j;
    }
    for (const DesignPoint& point : points) {
        outcome.table.rows.push_back(
            rowFromFolder(jobs[j].id, jobs[j].folder, result.outcomes[j], point.parameters));
        ++j;
    }
    for (const Row* row : rankRows(outcome.table))
        outcome.failed += row->figures ? 0 : 1;
    if (outcome.table.base && !outcome.table.base->figures)
        ++outcome.failed;

    // The table and the pictures.
    std::ostringstream csv;
    writeCsv(csv, outcome.table);
    writeFile(output / "results.csv", csv.str());
    nlohmann::ordered_json json;
    json["etsim_version"] = options.etsimVersion;
    json["name"] = spec.name;
    json["spec_file"] = spec.file.string();
    json["spec"] = spec.text;
    json["platform"] = spec.platform;
    json["trace"] = trace;
    if (!spec.generate.empty())
        json["generate"] = spec.generate;
    json["interrupted"] = outcome.interrupted;
    nlohmann::ordered_json traceFiles = nlohmann::ordered_json::array();
    for (const Row* row : rankRows(outcome.table))
        if (row->figures && traceFiles.empty())
            for (const std::string& file : row->figures->traceFiles)
                traceFiles.push_back(file);
    if (traceFiles.empty() && outcome.table.base && outcome.table.base->figures)
        for (const std::string& file : outcome.table.base->figures->traceFiles)
            traceFiles.push_back(file);
    json["trace_files"] = traceFiles;
    const nlohmann::ordered_json rows = tableToJson(outcome.table);
    for (const auto& [key, value] : rows.items())
        json[key] = value;
    writeFile(output / "results.json", json.dump(2) + "\n");

    std::vector<std::string> pictures{"breakdown.svg"};
    std::ostringstream breakdown;
    writeBreakdownSvg(breakdown, outcome.table, spec.name);
    writeFile(output / "breakdown.svg", breakdown.str());
    for (const std::string& key : outcome.table.parameterKeys) {
        std::ostringstream picture;
        writeTimeVsParameterSvg(picture, outcome.table, key);
        writeFile(output / pictureName(key), picture.str());
        pictures.push_back(pictureName(key));
    }
    std::ostringstream markdown;
    writeMarkdown(markdown, outcome.table, "Sweep " + spec.name, pictures);
    markdown << "\netsim " << options.etsimVersion << "; spec `" << spec.file.string()
             << "`; trace files (path, CRC-32):\n\n";
    for (const auto& file : traceFiles)
        markdown << "- `" << file.get<std::string>() << "`\n";
    writeFile(output / "report.md", markdown.str());
    return outcome;
}

} // namespace etsim::sweep
