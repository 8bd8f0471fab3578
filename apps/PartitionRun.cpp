#include "apps/PartitionRun.h"

#include "apps/Version.h"
#include "kernel/AtomicFile.h"
#include "kernel/Error.h"
#include "platforms/partition/MpiTransport.h"
#include "platforms/partition/PartitionedJob.h"

#include <systemc>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <thread>

namespace etsim::apps {

namespace {

// Ends every process of the run after a failure here: a report of the failure from partition
// 0 (written whole, so no earlier report survives), the error on stderr, then MPI_Abort, so
// that no process is left waiting.
[[noreturn]] void abandon(platform::PartitionTransport& transport,
                          const PartitionRunOptions& options,
                          const std::vector<std::string>& commandLine,
                          const std::string& problem)
{
    const std::string message = "partition " + std::to_string(transport.self()) + " of " +
                                std::to_string(transport.partitions()) + ": " + problem;
    std::cerr << "etsim run: " << message << "\n" << std::flush;
    if (transport.self() == 0 && !options.report.empty()) {
        platform::RunReport failed;
        failed.outcome = "failed";
        failed.problem = message;
        try {
            writeFileAtomically(options.report,
                                platform::reportToJson(failed, commandLine, etsimVersion).dump(2) +
                                    "\n");
        } catch (const Error&) { // NOLINT(bugprone-empty-catch): the run's error is the one to tell
        }
    }
    // An error every process meets (an input that cannot run partitioned) reaches them at
    // about the same time: the others give partition 0 a moment to write its report of it
    // before their abort ends it.
    if (transport.self() != 0)
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
    transport.abortAll(toInt(ExitCode::InputProblem));
    std::_Exit(toInt(ExitCode::InputProblem)); // not reached: abortAll ends the process
}

} // namespace

ExitCode runPartitioned(const PartitionRunOptions& options,
                        const platform::PlatformConfig& config,
                        const platform::JobSpec& job,
                        const platform::JobOptions& jobOptions,
                        const std::vector<std::string>& commandLine)
{
    platform::PartitionPlan plan;
    try {
        plan = platform::planPartitions(config, options.request);
    } catch (const Error& error) {
        std::cerr << "etsim run: " << error.what() << "\n";
        return ExitCode::CannotStart;
    }
    platform::MpiTransport transport(options.timeout);
    // A report or timeline from an earlier run at the same path must not outlive this one,
    // whichever process fails.
    if (transport.self() == 0) {
        if (!options.report.empty())
            std::remove(options.report.c_str());
        if (!jobOptions.timeline.path.empty())
            std::remove(jobOptions.timeline.path.c_str());
    }
    platform::RunReport report;
    try {
        report = platform::runPartitionedJob(config, job, jobOptions, plan, transport);
    } catch (const platform::PartitionFailure& error) {
        abandon(transport, options, commandLine, error.what());
    } catch (const Error& error) {
        abandon(transport, options, commandLine, error.what());
    } catch (const sc_core::sc_report& error) {
        abandon(transport, options, commandLine, error.get_msg());
    }
    if (transport.self() != 0)
        return report.finished ? ExitCode::Success : ExitCode::InputProblem;
    if (!options.quiet)
        platform::writeReportText(std::cout, report);
    if (!options.report.empty()) {
        try {
            writeFileAtomically(options.report,
                                platform::reportToJson(report, commandLine, etsimVersion).dump(2) +
                                    "\n");
        } catch (const Error& error) {
            std::cerr << "etsim run: --report " << error.what() << "\n";
            return ExitCode::CannotStart;
        }
    }
    if (!report.finished) {
        std::cerr << "etsim run: the run did not finish (" << report.outcome << ")\n"
                  << report.problem << "\n";
        return ExitCode::InputProblem;
    }
    return ExitCode::Success;
}

} // namespace etsim::apps
