#include "platforms/TraceHashes.h"

#include "kernel/Error.h"

namespace etsim::platform {

TraceHashes::TraceHashes(std::vector<RankedPath> files)
    : paths(std::move(files)), worker([this] { hashAll(); })
{
}

TraceHashes::~TraceHashes()
{
    stop.store(true, std::memory_order_relaxed);
    if (worker.joinable())
        worker.join();
}

void TraceHashes::hashAll()
{
    try {
        described.reserve(paths.size());
        for (const auto& [rank, path] : paths) {
            if (stop.load(std::memory_order_relaxed))
                return;
            described.emplace_back(rank, describeTraceFile(path, &stop));
        }
    } catch (...) {
        failure = std::current_exception();
    }
}

std::vector<TraceHashes::RankedInfo> TraceHashes::take()
{
    if (taken)
        throw Error("TraceHashes::take: the hashes were taken already");
    taken = true;
    worker.join();
    if (failure)
        std::rethrow_exception(failure);
    return std::move(described);
}

} // namespace etsim::platform
