#pragma once
// A job's trace files hashed on a thread of their own while the simulation runs. The report
// records each file's size, SHA-256 and CRC-32; reading and hashing them on the simulation's
// thread before the run cost a full-scale trace (15 GB for GPT-3 on 1,024 ranks) about 4 % of
// its wall time. The simulation runs on one thread, so the hashing takes a second core and
// the run waits for it only if it is not done by the end.

#include "platforms/Job.h"

#include <atomic>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <thread>
#include <utility>
#include <vector>

namespace etsim::platform {

class TraceHashes {
public:
    using RankedPath = std::pair<std::uint32_t, std::filesystem::path>;
    using RankedInfo = std::pair<std::uint32_t, TraceFileInfo>;

    /// Starts hashing `files`, in order.
    explicit TraceHashes(std::vector<RankedPath> files);
    /// Stops the hashing at its next block and waits for the thread (a run that failed does
    /// not wait for the rest of its trace to be read).
    ~TraceHashes();
    TraceHashes(const TraceHashes&) = delete;
    TraceHashes& operator=(const TraceHashes&) = delete;

    /// Waits for the hashing and gives each file's description, in the order given; throws
    /// the hashing's etsim::Error (naming the file) if a file could not be read. Once only.
    std::vector<RankedInfo> take();

private:
    void hashAll();

    std::vector<RankedPath> paths;
    std::vector<RankedInfo> described;
    std::exception_ptr failure;
    std::atomic<bool> stop{false};
    bool taken = false;
    // Declared last: it starts once the members it uses exist.
    std::thread worker;
};

} // namespace etsim::platform
