#include "models/accel/StreamPlan.h"

#include "kernel/IntMath.h"
#include "models/accel/ComputeSlice.h"

#include <algorithm>
#include <array>

namespace etsim::accel {

std::uint64_t
streamChunks(std::uint64_t readBytes, std::uint64_t writeBytes, std::uint64_t chunkBytes)
{
    return ceilDiv(readBytes, chunkBytes) + ceilDiv(writeBytes, chunkBytes);
}

StreamPiece streamPiece(std::uint64_t readBytes,
                        std::uint64_t writeBytes,
                        std::uint64_t chunkBytes,
                        std::uint64_t index)
{
    return streamPiece(readBytes, writeBytes, chunkBytes, ceilDiv(readBytes, chunkBytes), index);
}

StreamPiece streamPiece(std::uint64_t readBytes,
                        std::uint64_t writeBytes,
                        std::uint64_t chunkBytes,
                        std::uint64_t reads,
                        std::uint64_t index)
{
    const bool write = index >= reads;
    const std::uint64_t part = write ? writeBytes : readBytes;
    const std::uint64_t offset = (write ? index - reads : index) * chunkBytes;
    return StreamPiece{offset, std::min(chunkBytes, part - offset), write};
}

ChunkTimes StreamPlan::chunk(std::uint64_t i) const
{
    // `chunks` holds the chunks outside runs, in order: chunk i sits before the runs' chunks
    // that precede it are left out.
    std::uint64_t inRunsBefore = 0;
    for (const ChunkRun& run : runs) {
        if (i < run.first)
            break;
        if (i <= run.last) {
            const std::uint64_t offset = i - run.first;
            ChunkTimes times = chunks[run.base + offset % run.period];
            const Time later = Time::fromPs(run.shift.ps() * (offset / run.period + 1));
            if (compute)
                times.queued += later; // a memory node queues every chunk at its start
            times.sent += later;
            times.served += later;
            times.loaded += later;
            times.computeSent += later;
            times.computed += later;
            return times;
        }
        inRunsBefore += run.last + 1 - run.first;
    }
    return chunks[i - inRunsBefore];
}

const ChunkRun* StreamPlan::runOf(std::uint64_t i) const
{
    for (const ChunkRun& run : runs)
        if (i >= run.first && i <= run.last)
            return &run;
    return nullptr;
}

namespace {

// Periods up to this many chunks are looked for (one: a bound resource; two: the pair of
// staging buffers taking turns; more: several DMA engines or units taking turns).
constexpr std::size_t maxPeriod = 4;
// DMA engines compared in a state; more engines than this and the plan walks every chunk.
constexpr std::size_t maxEngines = 8;
// A run that has not settled within this many chunks is walked to its end (the search costs
// about as much as the chunk it saves).
constexpr std::uint64_t settleWithin = 64;

// What the next chunk's timing depends on, after a chunk (StreamPlan.h, "Stepping over
// periods").
struct PipelineState {
    Time sent;                              // the chunk's send (the next one's FIFO bound)
    Time computedBefore;                    // compute nodes: the slice before the chunk's
    Time computed;                          // compute nodes: the chunk's slice
    MemoryServer memory;                    // the memory after the chunk
    std::array<Time, maxEngines> engines{}; // the DMA engines' busy ends, sorted
    std::size_t engineCount = 0;            //
    std::array<Time, maxPeriod> unitFree{}; // compute nodes: the units' free times
};

// True when `later` is `earlier` with every time `shift` later.
bool shifted(const PipelineState& earlier,
             const PipelineState& later,
             Time shift,
             bool compute,
             std::size_t units)
{
    if (later.sent != earlier.sent + shift || later.engineCount != earlier.engineCount ||
        later.memory.lastWrite != earlier.memory.lastWrite ||
        later.memory.used != earlier.memory.used ||
        later.memory.freePs != earlier.memory.freePs + shift.ps())
        return false;
    for (std::size_t e = 0; e < later.engineCount; ++e)
        if (later.engines[e] != earlier.engines[e] + shift)
            return false;
    if (!compute)
        return true;
    if (later.computed != earlier.computed + shift ||
        later.computedBefore != earlier.computedBefore + shift)
        return false;
    for (std::size_t u = 0; u < units; ++u)
        if (later.unitFree[u] != earlier.unitFree[u] + shift)
            return false;
    return true;
}

// Adds `count` transactions of `bytes` completing `latencyPs` after arrival to `groups`.
void addTransfers(std::vector<TransferGroup>& groups,
                  std::uint64_t bytes,
                  std::uint64_t latencyPs,
                  std::uint64_t count)
{
    for (TransferGroup& group : groups)
        if (group.bytes == bytes && group.latencyPs == latencyPs) {
            group.count += count;
            return;
        }
    groups.push_back({bytes, latencyPs, count});
}

// Fills plan.transfers from the first `walked` entries of plan.chunks and the runs.
void groupTransfers(StreamPlan& plan, std::uint64_t walked)
{
    plan.transfers.clear();
    for (std::uint64_t slot = 0; slot < walked; ++slot) {
        const ChunkTimes& chunk = plan.chunks[slot];
        addTransfers(plan.transfers, chunk.bytes, (chunk.served - chunk.sent).ps(), 1);
    }
    for (const ChunkRun& run : plan.runs)
        for (std::uint64_t b = run.base; b < run.base + run.period; ++b) {
            const ChunkTimes& chunk = plan.chunks[b];
            addTransfers(
                plan.transfers, chunk.bytes, (chunk.served - chunk.sent).ps(), run.repetitions());
        }
}

} // namespace

void planStream(StreamPlan& plan,
                const StreamShape& shape,
                const StreamMemory& memory,
                const ComputeEngine* engine,
                const EtNodeInfo& node)
{
    if (engine == nullptr) {
        plan.engineFree.clear();
        planStream(plan, shape, memory, nullptr, false, plan.engineFree);
        return;
    }
    const bool tensor = usesTensorUnit(node);
    const ComputeEstimate estimate = engine->estimate(node);
    planStream(plan, shape, memory, &estimate, tensor, engine->freeTimes(tensor));
}

void planStream(StreamPlan& plan,
                const StreamShape& shape,
                const StreamMemory& memory,
                const ComputeEstimate* estimate,
                bool tensor,
                const std::vector<Time>& unitsFreeAt)
{
    const Time t0 = shape.start;
    // No chunks when nothing streams (a compute node that fits in SRAM).
    const std::uint64_t count = streamChunks(shape.readBytes, shape.writeBytes, shape.chunkBytes);
    plan.chunkCount = count;
    plan.runs.clear();
    plan.compute = estimate != nullptr;
    std::vector<Time>& engineFree = plan.engineFree;
    if (plan.compute) {
        plan.tensor = tensor;
        plan.estimate = *estimate;
        if (&engineFree != &unitsFreeAt)
            engineFree = unitsFreeAt;
    }
    const std::uint64_t slices = std::max<std::uint64_t>(count, 1);
    SliceShares shares(plan.compute ? plan.estimate.time.ps() : 0, slices);
    if (plan.compute && count == 0) {
        plan.whole.computeSent = t0;
        plan.whole.sliceTime = Time::fromPs(shares.next());
        plan.whole.computed = ComputeEngine::place(engineFree, t0, plan.whole.sliceTime).end;
        plan.done = plan.whole.computed;
        plan.transfers.clear(); // nothing reaches the memory
        return;
    }

    MemoryServer memoryState = memory.state();
    // Completion times of the loads holding a DMA engine (at most dma.engines of them).
    std::vector<Time>& engines = plan.engines;
    engines.clear();
    Time previousSent = t0;
    Time lastLoaded = t0;
    // Every chunk but the last of each part is full: its DMA time is worked out once.
    const Time fullChunkDma = Size::fromBytes(shape.chunkBytes) / shape.dmaBandwidth;
    const std::uint64_t reads = ceilDiv(shape.readBytes, shape.chunkBytes);
    const std::uint64_t fullReads = shape.readBytes / shape.chunkBytes;
    const std::uint64_t fullWrites = shape.writeBytes / shape.chunkBytes;
    // Periods are looked for among equal chunks: full, of one direction, with equal slices
    // (all but the node's last chunk), with at most maxEngines DMA engines and, for a compute
    // node, at most maxPeriod units.
    const bool periodic = plan.stepOverPeriods && shape.dmaEngines <= maxEngines &&
                          (!plan.compute || engineFree.size() <= maxPeriod);
    std::array<PipelineState, maxPeriod + 1> history{};
    std::uint64_t runStart = 0; // the first chunk of the equal chunks chunk i belongs to
    std::uint64_t runEnd = 0;   // and their last
    std::uint64_t inRuns = 0;   // chunks stepped over so far (not in `chunks`)
    // Compute nodes: the ends of the slices of the two chunks before chunk i.
    Time computedTwoBack;
    Time computedOneBack;
    for (std::uint64_t i = 0; i < count; ++i) {
        const std::uint64_t slot = i - inRuns;
        if (slot >= plan.chunks.size())
            plan.chunks.resize(slot + 1);
        ChunkTimes& chunk = plan.chunks[slot];
        const StreamPiece piece =
            streamPiece(shape.readBytes, shape.writeBytes, shape.chunkBytes, reads, i);
        chunk.bytes = piece.bytes;
        chunk.write = piece.write;
        // A memory node queues every chunk at once; a compute node has two staging buffers,
        // so chunk i waits for the slice of chunk i - 2 to free its buffer.
        chunk.queued = plan.compute && i >= 2 ? computedTwoBack : t0;
        // The DMA queue is FIFO: no load leaves before the one ahead of it, nor before an
        // engine is free. The engine that frees first takes the load; its slot is reused.
        Time sent = std::max(chunk.queued, previousSent);
        Time* freeEngine = nullptr;
        if (engines.size() == shape.dmaEngines) {
            freeEngine = &*std::min_element(engines.begin(), engines.end());
            sent = std::max(sent, *freeEngine);
        }
        chunk.sent = sent;
        previousSent = sent;
        chunk.served = Time::fromPs(memory.serve(memoryState, sent.ps(), chunk.bytes, chunk.write));
        const Time dma = chunk.bytes == shape.chunkBytes
                             ? fullChunkDma
                             : Size::fromBytes(chunk.bytes) / shape.dmaBandwidth;
        chunk.loaded = std::max(chunk.served, sent + dma);
        if (freeEngine != nullptr)
            *freeEngine = chunk.loaded;
        else
            engines.push_back(chunk.loaded);
        lastLoaded = std::max(lastLoaded, chunk.loaded);
        if (plan.compute) {
            // A slice starts when its chunk is in and the previous slice is done.
            chunk.computeSent = i == 0 ? chunk.loaded : std::max(chunk.loaded, computedOneBack);
            chunk.sliceTime = Time::fromPs(shares.next());
            chunk.computed =
                ComputeEngine::place(engineFree, chunk.computeSent, chunk.sliceTime).end;
            computedTwoBack = computedOneBack;
            computedOneBack = chunk.computed;
        }
        if (!periodic)
            continue;

        // Stepping over periods (StreamPlan.h). The equal chunks chunk i belongs to:
        if (i == 0 || i == reads) {
            runStart = i;
            const std::uint64_t full = i >= reads ? fullWrites : fullReads;
            // Not the node's last chunk: its slice takes the remainder.
            runEnd = full == 0 || i + 1 >= count ? i : std::min(i + full - 1, count - 2);
        }
        // A period's chunks must be equal ones, past the chunks whose timing depends on the
        // node's start (a compute node's first two are queued at once), and past an earlier
        // run (whose chunks are not all in `chunks`).
        const auto firstBase =
            std::max<std::uint64_t>({runStart,
                                     plan.compute ? std::uint64_t{2} : std::uint64_t{0},
                                     plan.runs.empty() ? 0 : plan.runs.back().last + 1});
        if (i < firstBase || i >= runEnd || i - firstBase >= settleWithin)
            continue;
        PipelineState& now = history[i % history.size()];
        now.sent = chunk.sent;
        now.computedBefore = computedTwoBack;
        now.computed = chunk.computed;
        now.memory = memoryState;
        // The engines as the next chunks see them: every later send is at or after this
        // one's, so an engine free before it is as free as an engine not used yet, and the
        // chunk that takes it goes when the FIFO lets it. Each is counted at this send (an
        // unused one too), so a pipeline whose loads end before the next send settles as soon
        // as its sends do, not dma.engines chunks later.
        now.engineCount = shape.dmaEngines;
        std::fill(now.engines.begin(), now.engines.begin() + now.engineCount, chunk.sent);
        for (std::size_t e = 0; e < engines.size(); ++e)
            now.engines[e] = std::max(engines[e], chunk.sent);
        std::sort(now.engines.begin(), now.engines.begin() + static_cast<long>(now.engineCount));
        if (plan.compute)
            std::copy(engineFree.begin(), engineFree.end(), now.unitFree.begin());
        // The state after chunk i - p is recorded for p chunks of the run behind chunk i.
        for (std::uint64_t p = 1; p <= maxPeriod && i >= firstBase + p; ++p) {
            const PipelineState& before = history[(i - p) % history.size()];
            if (now.sent <= before.sent)
                continue;
            const Time shift = now.sent - before.sent;
            if (!shifted(before, now, shift, plan.compute, engineFree.size()))
                continue;
            const std::uint64_t repeats = (runEnd - i) / p;
            if (repeats == 0)
                break;
            // Chunks i + 1 .. last repeat chunks i - p + 1 .. i, `repeats` times.
            const std::uint64_t last = i + repeats * p;
            const Time later = Time::fromPs(shift.ps() * repeats);
            memoryState.freePs += later.ps();
            plan.runs.push_back(ChunkRun{i + 1, last, p, shift, slot + 1 - p, memoryState});
            previousSent += later;
            for (Time& busyEnd : engines)
                busyEnd += later;
            if (plan.compute)
                for (Time& unitEnd : engineFree)
                    unitEnd += later;
            for (std::uint64_t b = slot + 1 - p; b <= slot; ++b)
                lastLoaded = std::max(lastLoaded, plan.chunks[b].loaded + later);
            shares.skip(repeats * p);
            if (plan.compute) {
                computedTwoBack = plan.chunk(last - 1).computed;
                computedOneBack = plan.chunk(last).computed;
            }
            inRuns += repeats * p;
            i = last;
            break;
        }
    }
    plan.done = plan.compute ? computedOneBack : lastLoaded;
    plan.memoryEnd = memoryState;
    groupTransfers(plan, count - inRuns);
}

} // namespace etsim::accel
