#pragma once
// Runs the design points of a sweep as child processes, `jobs` at a time: one etsim process
// per point, because the SystemC kernel cannot be restarted inside a process. Each point has
// its own folder:
//
//     point.json    what the point is (id, parameters, arguments); written before it runs
//     log.txt       the child's stdout and stderr
//     report.json   the child's report (etsim run --report), or another `product`
//     status.json   how it ended: status, exit code, error, wall time
//
// A failing point is recorded and the others go on. With `resume`, a point whose folder
// holds its product, an "ok" status and the same point.json is reused without running.
// SIGINT, SIGTERM and SIGHUP while points run stop the children and return what finished.

#include <nlohmann/json.hpp>

#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace etsim::sweep {

/// One child run.
struct PointJob {
    /// "000", "001", ... or "base".
    std::string id;
    std::filesystem::path folder;
    /// Arguments after the program name.
    std::vector<std::string> arguments;
    /// What identifies the point for resume (recorded in point.json).
    nlohmann::ordered_json parameters;
    /// The file in `folder` whose presence (with exit code 0) means the run succeeded.
    std::string product = "report.json";
};

enum class PointStatus { Ok, Failed, Reused, Interrupted, NotRun };

/// "ok", "failed", "reused", "interrupted", "not run".
const char* statusName(PointStatus status);

struct PointOutcome {
    std::string id;
    PointStatus status = PointStatus::NotRun;
    /// The child's exit code; 128 + signal when a signal ended it; -1 when it did not start.
    int exitCode = -1;
    /// For failures: the last lines the child wrote.
    std::string error;
    /// Wall time of the child process, s.
    double wallSeconds = 0.0;
};

struct SchedulerOptions {
    /// The etsim binary to start.
    std::filesystem::path executable;
    /// Children at once; 0 = the number of cores.
    unsigned jobs = 0;
    bool resume = false;
    /// Called after each point ends or is reused (done counts them), from the calling thread.
    std::function<void(const PointOutcome& outcome, std::size_t done, std::size_t total)>
        onPointDone;
};

struct SchedulerResult {
    /// One per job, in the jobs' order.
    std::vector<PointOutcome> outcomes;
    /// A signal stopped the sweep; points not finished are Interrupted or NotRun.
    bool interrupted = false;
};

/// Runs the jobs. Throws etsim::Error when a point folder cannot be written or a child
/// cannot be started at all (no such executable).
SchedulerResult runPoints(const std::vector<PointJob>& jobs, const SchedulerOptions& options);

/// Whether `job`'s folder holds a finished run of exactly this job (what resume reuses).
bool isFinished(const PointJob& job);

} // namespace etsim::sweep
