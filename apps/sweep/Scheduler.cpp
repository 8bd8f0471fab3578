#include "apps/sweep/Scheduler.h"

#include "kernel/Error.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <spawn.h>
#include <sstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace etsim::sweep {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr const char* pointFile = "point.json";
constexpr const char* statusFile = "status.json";
constexpr const char* logFile = "log.txt";
// How long the wait loop sleeps between looks at the children.
constexpr long pollNanoseconds = 20'000'000;
// The error of a failed point quotes at most this much of the end of its log.
constexpr std::size_t errorTailBytes = 600;

nlohmann::ordered_json pointJson(const PointJob& job)
{
    return {{"id", job.id}, {"parameters", job.parameters}, {"arguments", job.arguments}};
}

void writeJson(const fs::path& path, const nlohmann::ordered_json& json)
{
    std::ofstream out(path);
    out << json.dump(2) << "\n";
    if (!out)
        throw Error(path.string() + ": cannot write (check the sweep's output folder)");
}

std::string readText(const fs::path& path)
{
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// The last lines of a failed child's log: etsim prints its error last.
std::string errorFromLog(const fs::path& path)
{
    std::string text = readText(path);
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r'))
        text.pop_back();
    if (text.size() > errorTailBytes) {
        text = text.substr(text.size() - errorTailBytes);
        const std::size_t newline = text.find('\n');
        if (newline != std::string::npos)
            text = text.substr(newline + 1);
    }
    return text;
}

// Blocks the stop signals for the sweep's lifetime so the wait loop can take them with
// sigtimedwait (no handler, no global flag); the old mask comes back at the end.
class SignalGuard {
public:
    SignalGuard()
    {
        sigemptyset(&stopSignals);
        sigaddset(&stopSignals, SIGINT);
        sigaddset(&stopSignals, SIGTERM);
        sigaddset(&stopSignals, SIGHUP);
        pthread_sigmask(SIG_BLOCK, &stopSignals, &previous);
    }
    ~SignalGuard() { pthread_sigmask(SIG_SETMASK, &previous, nullptr); }
    SignalGuard(const SignalGuard&) = delete;
    SignalGuard& operator=(const SignalGuard&) = delete;

    /// Sleeps up to the poll interval; true when a stop signal arrived.
    bool waitForSignal() const
    {
        timespec timeout{0, pollNanoseconds};
        return sigtimedwait(&stopSignals, nullptr, &timeout) > 0;
    }
    const sigset_t& signals() const { return stopSignals; }

private:
    sigset_t stopSignals;
    sigset_t previous;
};

struct Running {
    std::size_t job;
    pid_t pid;
    Clock::time_point start;
};

pid_t spawnChild(const fs::path& executable, const PointJob& job, const SignalGuard& guard)
{
    std::vector<std::string> argv{executable.string()};
    argv.insert(argv.end(), job.arguments.begin(), job.arguments.end());
    std::vector<char*> pointers;
    for (std::string& argument : argv)
        pointers.push_back(argument.data());
    pointers.push_back(nullptr);

    const std::string log = (job.folder / logFile).string();
    posix_spawn_file_actions_t files;
    posix_spawn_file_actions_init(&files);
    posix_spawn_file_actions_addopen(&files, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&files, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&files, 1, 2);
    // The child gets default signal handling and an empty mask whatever the sweep blocks.
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    sigset_t none;
    sigemptyset(&none);
    posix_spawnattr_setsigmask(&attributes, &none);
    posix_spawnattr_setsigdefault(&attributes, &guard.signals());
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    pid_t pid = 0;
    const int error =
        posix_spawn(&pid, executable.c_str(), &files, &attributes, pointers.data(), environ);
    posix_spawn_file_actions_destroy(&files);
    posix_spawnattr_destroy(&attributes);
    if (error != 0)
        throw Error("cannot start " + executable.string() + " for point " + job.id + ": " +
                    std::strerror(error));
    return pid;
}

int exitCodeOf(int status)
{
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return -1;
}

} // namespace

const char* statusName(PointStatus status)
{
    switch (status) {
    case PointStatus::Ok:
        return "ok";
    case PointStatus::Failed:
        return "failed";
    case PointStatus::Reused:
        return "reused";
    case PointStatus::Interrupted:
        return "interrupted";
    case PointStatus::NotRun:
        break;
    }
    return "not run";
}

bool isFinished(const PointJob& job)
{
    std::error_code ignored;
    if (!fs::exists(job.folder / job.product, ignored))
        return false;
    try {
        const auto point = nlohmann::ordered_json::parse(readText(job.folder / pointFile));
        const auto status = nlohmann::json::parse(readText(job.folder / statusFile));
        return point == pointJson(job) && status.value("status", "") == "ok";
    } catch (const nlohmann::json::exception&) {
        return false;
    }
}

SchedulerResult runPoints(const std::vector<PointJob>& jobs, const SchedulerOptions& options)
{
    SchedulerResult result;
    result.outcomes.resize(jobs.size());
    const unsigned limit =
        options.jobs > 0 ? options.jobs : std::max(1u, std::thread::hardware_concurrency());
    std::size_t done = 0;
    auto finish = [&](std::size_t index, PointOutcome outcome) {
        result.outcomes[index] = std::move(outcome);
        if (options.onPointDone)
            options.onPointDone(result.outcomes[index], ++done, jobs.size());
    };

    std::vector<std::size_t> pending;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
        result.outcomes[i].id = jobs[i].id;
        if (options.resume && isFinished(jobs[i])) {
            PointOutcome reused;
            reused.id = jobs[i].id;
            reused.status = PointStatus::Reused;
            reused.exitCode = 0;
            try {
                const auto status = nlohmann::json::parse(readText(jobs[i].folder / statusFile));
                reused.wallSeconds = status.value("wall_seconds", 0.0);
            } catch (const nlohmann::json::exception&) {
            }
            finish(i, reused);
        } else {
            pending.push_back(i);
        }
    }

    SignalGuard guard;
    std::vector<Running> running;
    std::size_t next = 0;
    auto stopAll = [&] {
        for (const Running& child : running)
            kill(child.pid, SIGTERM);
        for (const Running& child : running) {
            int status = 0;
            waitpid(child.pid, &status, 0);
            PointOutcome outcome;
            outcome.id = jobs[child.job].id;
            outcome.status = PointStatus::Interrupted;
            outcome.exitCode = exitCodeOf(status);
            outcome.error = "interrupted by a signal; rerun with --resume";
            finish(child.job, outcome);
        }
        running.clear();
    };

    while (next < pending.size() || !running.empty()) {
        while (running.size() < limit && next < pending.size()) {
            const std::size_t index = pending[next++];
            const PointJob& job = jobs[index];
            std::error_code error;
            fs::create_directories(job.folder, error);
            if (error)
                throw Error(job.folder.string() +
                            ": cannot create the point folder: " + error.message());
            fs::remove(job.folder / job.product, error);
            fs::remove(job.folder / statusFile, error);
            writeJson(job.folder / pointFile, pointJson(job));
            try {
                running.push_back(
                    {index, spawnChild(options.executable, job, guard), Clock::now()});
            } catch (const Error&) {
                stopAll();
                throw;
            }
        }
        bool reaped = false;
        for (std::size_t r = 0; r < running.size();) {
            int status = 0;
            if (waitpid(running[r].pid, &status, WNOHANG) != running[r].pid) {
                ++r;
                continue;
            }
            reaped = true;
            const PointJob& job = jobs[running[r].job];
            PointOutcome outcome;
            outcome.id = job.id;
            outcome.exitCode = exitCodeOf(status);
            outcome.wallSeconds =
                std::chrono::duration<double>(Clock::now() - running[r].start).count();
            std::error_code ignored;
            const bool reported = fs::exists(job.folder / job.product, ignored);
            if (outcome.exitCode == 0 && reported) {
                outcome.status = PointStatus::Ok;
            } else {
                outcome.status = PointStatus::Failed;
                outcome.error = errorFromLog(job.folder / logFile);
                if (outcome.error.empty())
                    outcome.error = "exit code " + std::to_string(outcome.exitCode);
            }
            writeJson(job.folder / statusFile,
                      {{"status", statusName(outcome.status)},
                       {"exit_code", outcome.exitCode},
                       {"error", outcome.error},
                       {"wall_seconds", outcome.wallSeconds}});
            const std::size_t index = running[r].job;
            running.erase(running.begin() + static_cast<std::ptrdiff_t>(r));
            finish(index, outcome);
        }
        if (!reaped && !running.empty() && guard.waitForSignal()) {
            stopAll();
            result.interrupted = true;
            break;
        }
    }
    if (result.interrupted)
        for (std::size_t i = next; i < pending.size(); ++i)
            result.outcomes[pending[i]].status = PointStatus::NotRun;
    return result;
}

} // namespace etsim::sweep
