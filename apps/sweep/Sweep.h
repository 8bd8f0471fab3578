#pragma once
// A whole sweep: generate the trace once (when the spec asks for it), run every design point
// and the base platform through the scheduler, and write the table, the report and the
// pictures into the output folder (docs/sweep.md):
//
//     DIR/spec.yaml            the spec as given
//     DIR/trace/               the generated trace (only with `generate`)
//     DIR/points/NNN/, base/   one folder per run (apps/sweep/Scheduler.h)
//     DIR/results.csv, results.json, report.md, breakdown.svg, time_vs_<key>.svg

#include "apps/sweep/Results.h"
#include "apps/sweep/Scheduler.h"
#include "apps/sweep/SweepSpec.h"

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace etsim::sweep {

struct SweepOptions {
    std::filesystem::path output;
    /// The etsim binary that runs the points.
    std::filesystem::path executable;
    /// Points at once; 0 = the number of cores.
    unsigned jobs = 0;
    /// Continue a sweep in `output`, reusing finished points.
    bool resume = false;
    /// Recorded in results.json.
    std::string etsimVersion;
    /// One line per event (trace generated, point done), for a terminal.
    std::function<void(const std::string&)> progress;
};

struct SweepOutcome {
    Table table;
    bool interrupted = false;
    /// Points (and base) that did not produce a report.
    std::size_t failed = 0;
};

/// The etsim run arguments of one point (its report goes to `folder`/report.json).
std::vector<std::string> runArguments(const SweepSpec& spec,
                                      const std::string& trace,
                                      const std::filesystem::path& folder,
                                      const DesignPoint* point);

/// Runs the sweep. Throws etsim::Error when the output folder already holds a sweep and
/// `resume` is off, when it cannot be written, or when the trace cannot be generated.
SweepOutcome runSweep(const SweepSpec& spec, const SweepOptions& options);

/// Reads the point reports of `table` rows back from their folders (status, figures).
Row rowFromFolder(const std::string& id,
                  const std::filesystem::path& folder,
                  const PointOutcome& outcome,
                  std::vector<std::pair<std::string, std::string>> parameters);

} // namespace etsim::sweep
