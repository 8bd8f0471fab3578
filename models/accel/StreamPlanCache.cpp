#include "models/accel/StreamPlanCache.h"

#include "kernel/IdHash.h"

#include <algorithm>
#include <cstring>

namespace etsim::accel {

bool StreamPlanCache::Key::operator==(const Key& other) const
{
    return readBytes == other.readBytes && writeBytes == other.writeBytes &&
           chunkBytes == other.chunkBytes && dmaBytesPerSecond == other.dmaBytesPerSecond &&
           computePs == other.computePs && memoryFree == other.memoryFree &&
           dmaEngines == other.dmaEngines && units == other.units &&
           std::equal(unitFree.begin(), unitFree.begin() + units, other.unitFree.begin()) &&
           compute == other.compute && tensor == other.tensor && memoryUsed == other.memoryUsed &&
           memoryLastWrite == other.memoryLastWrite && stepOverPeriods == other.stepOverPeriods;
}

std::size_t StreamPlanCache::KeyHash::operator()(const Key& key) const
{
    std::uint64_t hash = mixId(key.readBytes);
    auto add = [&hash](std::uint64_t value) { hash = mixId(hash ^ value) + value; };
    add(key.writeBytes);
    add(key.computePs);
    add(static_cast<std::uint64_t>(key.memoryFree));
    add((std::uint64_t{key.units} << 8) | (key.compute ? 1U : 0U) | (key.tensor ? 2U : 0U) |
        (key.memoryUsed ? 4U : 0U) | (key.memoryLastWrite ? 8U : 0U));
    for (std::uint32_t u = 0; u < key.units; ++u)
        add(key.unitFree[u]);
    // The DMA setting is the accelerator's own and rarely differs between keys.
    return static_cast<std::size_t>(hash);
}

bool StreamPlanCache::makeKey(Key& key,
                              const StreamShape& shape,
                              const StreamMemory& memory,
                              const ComputeEstimate* estimate,
                              bool tensor,
                              const std::vector<Time>& unitsFreeAt,
                              bool stepOverPeriods)
{
    const Time start = shape.start;
    key.readBytes = shape.readBytes;
    key.writeBytes = shape.writeBytes;
    key.chunkBytes = shape.chunkBytes;
    const double dmaRate = shape.dmaBandwidth.bytesPerSecond();
    std::memcpy(&key.dmaBytesPerSecond, &dmaRate, sizeof dmaRate);
    key.dmaEngines = shape.dmaEngines;
    key.stepOverPeriods = stepOverPeriods;
    key.compute = estimate != nullptr;
    if (key.compute) {
        if (unitsFreeAt.size() > maxUnits)
            return false;
        key.computePs = estimate->time.ps();
        key.tensor = tensor;
        key.units = static_cast<std::uint32_t>(unitsFreeAt.size());
        // A unit free before the start serves every slice as one free at the start.
        for (std::size_t u = 0; u < unitsFreeAt.size(); ++u)
            key.unitFree[u] = unitsFreeAt[u] > start ? (unitsFreeAt[u] - start).ps() : 0;
        std::sort(key.unitFree.begin(), key.unitFree.begin() + key.units);
    }
    // A node with no chunks never reaches the memory.
    if (streamChunks(shape.readBytes, shape.writeBytes, shape.chunkBytes) > 0) {
        const MemoryServer settled = memory.settled(memory.state(), start.ps());
        key.memoryFree = static_cast<std::int64_t>(settled.freePs - start.ps());
        key.memoryUsed = settled.used;
        key.memoryLastWrite = settled.lastWrite;
    }
    return true;
}

namespace {

// `times` with `start` taken off; a memory node's chunks have no compute times (zeroed).
ChunkTimes relativeTo(ChunkTimes times, Time start, bool compute)
{
    times.queued -= start;
    times.sent -= start;
    times.served -= start;
    times.loaded -= start;
    if (compute) {
        times.computeSent -= start;
        times.computed -= start;
    } else {
        times.computeSent = Time();
        times.computed = Time();
        times.sliceTime = Time();
    }
    return times;
}

// `times` moved to a node starting at `start`.
ChunkTimes startingAt(ChunkTimes times, Time start, bool compute)
{
    times.queued += start;
    times.sent += start;
    times.served += start;
    times.loaded += start;
    if (compute) {
        times.computeSent += start;
        times.computed += start;
    }
    return times;
}

} // namespace

StreamPlanCache::Entry StreamPlanCache::relative(const StreamPlan& plan, Time start)
{
    Entry entry;
    entry.chunkCount = plan.chunkCount;
    entry.done = plan.done - start;
    entry.transfers = plan.transfers;
    entry.memoryEnd = plan.memoryEnd;
    entry.memoryEnd.freePs -= start.ps();
    std::uint64_t inRuns = 0;
    entry.runs = plan.runs;
    for (ChunkRun& run : entry.runs) {
        inRuns += run.last + 1 - run.first;
        run.memoryAfter.freePs -= start.ps();
    }
    const std::uint64_t walked = plan.chunkCount - inRuns;
    entry.chunks.reserve(walked);
    for (std::uint64_t i = 0; i < walked; ++i)
        entry.chunks.push_back(relativeTo(plan.chunks[i], start, plan.compute));
    if (plan.compute && plan.chunkCount == 0) {
        // The one slice of a node that fits: no load.
        entry.whole.computeSent = plan.whole.computeSent - start;
        entry.whole.computed = plan.whole.computed - start;
        entry.whole.sliceTime = plan.whole.sliceTime;
    }
    return entry;
}

void StreamPlanCache::place(const Entry& entry, StreamPlan& plan, Time start)
{
    plan.chunkCount = entry.chunkCount;
    plan.done = entry.done + start;
    plan.transfers = entry.transfers;
    plan.memoryEnd = entry.memoryEnd;
    plan.memoryEnd.freePs += start.ps();
    plan.runs = entry.runs;
    for (ChunkRun& run : plan.runs)
        run.memoryAfter.freePs += start.ps();
    if (plan.chunks.size() < entry.chunks.size())
        plan.chunks.resize(entry.chunks.size());
    for (std::size_t i = 0; i < entry.chunks.size(); ++i)
        plan.chunks[i] = startingAt(entry.chunks[i], start, plan.compute);
    if (plan.compute && plan.chunkCount == 0) {
        plan.whole.computeSent = entry.whole.computeSent + start;
        plan.whole.computed = entry.whole.computed + start;
        plan.whole.sliceTime = entry.whole.sliceTime;
    }
}

void StreamPlanCache::plan(StreamPlan& plan,
                           const StreamShape& shape,
                           const StreamMemory& memory,
                           const ComputeEstimate* estimate,
                           bool tensor,
                           const std::vector<Time>& unitsFreeAt)
{
    Key key;
    if (!makeKey(key, shape, memory, estimate, tensor, unitsFreeAt, plan.stepOverPeriods)) {
        planStream(plan, shape, memory, estimate, tensor, unitsFreeAt);
        return;
    }
    // The plans hold the memory's arithmetic: they serve another memory only of the same
    // timing (a platform's accelerators share one cache, and their memories are alike).
    if (&memory != plannedFor) {
        if (plannedFor == nullptr || !memory.sameTiming(*plannedFor))
            entries.clear();
        plannedFor = &memory;
    }
    if (const auto found = entries.find(key); found != entries.end()) {
        ++hitCount;
        plan.compute = estimate != nullptr;
        if (plan.compute) {
            plan.tensor = tensor;
            plan.estimate = *estimate;
        }
        place(found->second, plan, shape.start);
        return;
    }
    ++missCount;
    planStream(plan, shape, memory, estimate, tensor, unitsFreeAt);
    if (entries.size() >= capacity)
        entries.clear();
    entries.emplace(key, relative(plan, shape.start));
}

} // namespace etsim::accel
