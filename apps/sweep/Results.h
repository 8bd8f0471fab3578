#pragma once
// The table of a sweep or a comparison: a row per run report with its figures, written as
// CSV, JSON, a ranked Markdown report and SVG pictures (docs/sweep.md).

#include <nlohmann/json.hpp>

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace etsim::sweep {

/// The figures of one run report (docs/report.md) that a table compares. Breakdown times are
/// the mean over ranks, ns of simulated time.
struct RunFigures {
    std::string outcome;
    std::string platform;
    std::uint32_t ranks = 0;
    double simulatedNs = 0.0;
    double computeNs = 0.0;
    double memoryNs = 0.0;
    double exposedCommNs = 0.0;
    double idleNs = 0.0;
    double tensorBusy = 0.0;
    double flopUtilisation = 0.0;
    double hbmUtilisation = 0.0;
    /// Utilisation of the busiest link; 0 when the report lists none.
    double busiestLink = 0.0;
    /// The simulator's own run time, s.
    double wallSeconds = 0.0;
    /// "path crc32" of each trace file.
    std::vector<std::string> traceFiles;
};

/// Reads the figures of a schema-1 run report; throws etsim::Error naming `source` and the
/// missing key for anything else.
RunFigures figuresFromReport(const nlohmann::json& report, const std::string& source);

/// One row: a design point (or a compared report) and what became of it.
struct Row {
    std::string id;
    std::vector<std::pair<std::string, std::string>> parameters;
    /// ok, reused, failed, interrupted, not run.
    std::string status;
    int exitCode = 0;
    std::string error;
    /// Wall time of the whole child process, s.
    double processWallSeconds = 0.0;
    std::optional<RunFigures> figures;
};

/// A finished table; `base` is the reference run for speed-ups (or none).
struct Table {
    std::vector<std::string> parameterKeys;
    std::vector<Row> rows;
    std::optional<Row> base;
};

/// base simulated time / row simulated time; nullopt when either has no figures.
std::optional<double> speedup(const Table& table, const Row& row);

/// Rows with figures, fastest first (ties keep table order), then the others.
std::vector<const Row*> rankRows(const Table& table);

/// A header line and a row per point (base first, when there is one).
void writeCsv(std::ostream& out, const Table& table);
/// The rows as JSON objects (base under "base").
nlohmann::ordered_json tableToJson(const Table& table);
/// Markdown: the ranked table with speed-ups, failures with their errors, picture links.
void writeMarkdown(std::ostream& out,
                   const Table& table,
                   const std::string& title,
                   const std::vector<std::string>& pictures);
/// Plain-text table of the rows in table order, for a terminal.
void writeText(std::ostream& out, const Table& table);

/// Simulated time against the values of `key` (one marker per point; numeric values on a
/// linear axis, others in order of appearance).
void writeTimeVsParameterSvg(std::ostream& out, const Table& table, const std::string& key);
/// A stacked bar per row with figures: compute, memory, exposed communication, idle.
void writeBreakdownSvg(std::ostream& out, const Table& table, const std::string& title);

/// The file name a picture of `key` gets: "time_vs_" and the key with [].= replaced.
std::string pictureName(const std::string& key);

} // namespace etsim::sweep
