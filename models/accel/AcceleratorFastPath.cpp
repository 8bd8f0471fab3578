// The accelerator's streaming fast path (docs/accel.md, "Streaming fast path"): a node that
// streams alone is planned arithmetically (StreamPlan) and committed to the memory and the
// engine in the order the per-chunk transactions would have reached them, or handed back to
// the per-chunk path (Accelerator.cpp) when another node arrives while it runs.

#include "kernel/ScTime.h"
#include "kernel/Units.h"
#include "kernel/WallProfile.h"
#include "models/accel/Accelerator.h"

#include <algorithm>

namespace etsim::accel {

bool Accelerator::fastEligible() const
{
    // Only this node in flight, the memory's timing known, and nothing that watches chunks:
    // the engine is ours and records no timeline, per-chunk transactions are not asked for.
    return streaming == 1 && streamMemory != nullptr && ownEngine != nullptr &&
           !ownEngine->hasTimeline() && !config.dma.perChunk;
}

void Accelerator::planFast(std::uint64_t id, Job& job)
{
    const sc_core::sc_time& now = sc_core::sc_time_stamp();
    StreamShape shape;
    shape.start = fromScTime(now);
    shape.readBytes = job.readBytes;
    shape.writeBytes = job.writeBytes;
    shape.chunkBytes = config.dma.chunk.bytes();
    shape.dmaEngines = config.dma.engines;
    shape.dmaBandwidth = config.dma.bandwidth;
    if (job.info->kind == NodeKind::Compute) {
        const bool tensor = usesTensorUnit(*job.info);
        const ComputeEstimate estimate = ownEngine->estimate(*job.info);
        plans->plan(
            fastPlan, shape, *streamMemory, &estimate, tensor, ownEngine->freeTimes(tensor));
    } else {
        plans->plan(fastPlan, shape, *streamMemory, nullptr, false, {});
    }
    fastState = FastState::Running;
    fastJob = id;
    fastEvent.notify(toScTime(fastPlan.done) - now);
}

void Accelerator::commitFast(Job& job, Time upTo)
{
    if (upTo >= fastPlan.done) {
        commitWholeFast(job);
        return;
    }
    // The node leaves the fast path: the calls its per-chunk transactions would have made
    // by `upTo`, in their order (each load reaches the memory at its send time).
    for (std::uint64_t i = 0; i < fastPlan.chunkCount; ++i) {
        const ChunkTimes chunk = fastPlan.chunk(i);
        if (chunk.sent > upTo)
            break;
        streamMemory->complete(chunk.sent.ps(), chunk.bytes, chunk.write);
        ++transfers;
        if (chunk.loaded <= upTo)
            (chunk.write ? writeBytes : readBytes) += chunk.bytes;
    }
    if (fastPlan.compute)
        reserveSlicesUpTo(job, upTo);
}

void Accelerator::commitWholeFast(Job& job)
{
    // Every chunk has happened: the memory and the engine take the whole node at once. The
    // stats they feed are sums (whole ps, bytes, counts; the HBM's latency histogram in whole
    // ps), so they end as a call per chunk would leave them, and the memory ends in the
    // plan's final state.
    const std::uint64_t chunks = fastPlan.chunkCount;
    if (chunks > 0) {
        // The memory counts a turnaround at each change of direction: before the first chunk
        // (against its last transaction) and between the reads and the writes.
        const MemoryServer before = streamMemory->state();
        const bool firstWrite = job.readBytes == 0;
        const std::uint64_t turnarounds = (before.used && before.lastWrite != firstWrite ? 1 : 0) +
                                          (job.readBytes > 0 && job.writeBytes > 0 ? 1 : 0);
        streamMemory->completeStream(fastPlan.transfers, turnarounds, fastPlan.memoryEnd);
        transfers += chunks;
        readBytes += job.readBytes;
        writeBytes += job.writeBytes;
    }
    if (!fastPlan.compute)
        return;
    if (ownEngine->reservesWholeNodes())
        ownEngine->reserveWholeNode(fastPlan.estimate, fastPlan.tensor, fastPlan.done);
    else
        reserveSlicesUpTo(job, fastPlan.done);
}

void Accelerator::reserveSlicesUpTo(Job& job, Time upTo)
{
    // Each slice reaches the engine at its arrival, in order, as its transaction would.
    if (fastPlan.chunkCount == 0) {
        ownEngine->reserveSliceLasting(*job.info,
                                       fastPlan.estimate,
                                       fastPlan.tensor,
                                       0,
                                       1,
                                       fastPlan.whole.computeSent,
                                       fastPlan.whole.sliceTime);
        return;
    }
    for (std::uint64_t i = 0; i < fastPlan.chunkCount; ++i) {
        const ChunkTimes chunk = fastPlan.chunk(i);
        if (chunk.computeSent > upTo)
            break;
        ownEngine->reserveSliceLasting(*job.info,
                                       fastPlan.estimate,
                                       fastPlan.tensor,
                                       i,
                                       fastPlan.chunkCount,
                                       chunk.computeSent,
                                       chunk.sliceTime);
    }
}

void Accelerator::leaveFastPath()
{
    // Another node arrives while the fast node runs: what has happened up to now (this
    // instant included: the node's own events at this time come first, as its per-chunk
    // transactions, started earlier, would) is committed; the rest goes on per chunk.
    Job& job = jobs.at(fastJob);
    const Time now = fromScTime(sc_core::sc_time_stamp());
    if (fastPlan.done <= now) {
        commitFast(job, fastPlan.done);
        fastState = FastState::Ending; // its completion event is due at this instant
        return;
    }
    fastEvent.cancel();
    fastState = FastState::None;
    commitFast(job, now);
    resumePerChunk(fastJob, job, now);
}

void Accelerator::resumePerChunk(std::uint64_t id, Job& job, Time now)
{
    // Rebuild the per-chunk state at `now`: loads in flight complete at their planned times
    // (their memory reservations are committed), loads still queued wait in the DMA queue,
    // and a slice in progress is handed to the engine to answer at its planned end.
    const sc_core::sc_time scNow = toScTime(now);
    auto resumeSlice = [&](std::uint64_t index, Time end) {
        job.computesIssued = index;
        tlm::tlm_generic_payload& payload = makeCompute(id, job);
        ++engineOutbox.inFlight;
        ownEngine->adopt(payload, end);
    };
    if (fastPlan.compute && fastPlan.chunkCount == 0) {
        resumeSlice(0, fastPlan.whole.computed);
        return;
    }
    const std::uint64_t count = fastPlan.chunkCount;
    for (std::uint64_t i = 0; i < count && fastPlan.chunk(i).queued <= now; ++i) {
        const ChunkTimes chunk = fastPlan.chunk(i);
        ++job.loadsIssued;
        if (chunk.loaded <= now) {
            ++job.loadsDone;
            continue;
        }
        tlm::tlm_generic_payload& payload = makeLoad(id, job, i);
        if (chunk.sent > now) {
            dmaOutbox.queue.push_back(&payload);
            continue;
        }
        ++dmaOutbox.inFlight;
        payload.set_response_status(tlm::TLM_OK_RESPONSE); // the memory has answered it
        subDone.put(&payload, toScTime(chunk.loaded) - scNow);
    }
    if (fastPlan.compute) {
        std::uint64_t issued = 0;
        while (issued < count && fastPlan.chunk(issued).computeSent <= now)
            ++issued;
        std::uint64_t done = 0;
        while (done < count && fastPlan.chunk(done).computed <= now)
            ++done;
        job.computesDone = done;
        job.computesIssued = issued;
        if (issued > done)
            resumeSlice(done, fastPlan.chunk(done).computed);
    }
    pumpEvent.notify(sc_core::SC_ZERO_TIME);
}

void Accelerator::onFastDone()
{
    WallScope wallScope(wall, WallPart::Accelerator);
    if (fastState == FastState::None)
        return;
    Job& job = jobs.at(fastJob);
    if (fastState == FastState::Running)
        commitFast(job, fastPlan.done);
    fastState = FastState::None;
    ++fastCompleted;
    if (job.info->kind != NodeKind::Compute) {
        // A memory node's last load completes on its timed event, as here.
        finish(fastJob);
        return;
    }
    // A compute node's last slice returns from the engine one delta cycle before the
    // accelerator sees it; keep that order for whoever waits on the completion.
    fastFinishing.push_back(fastJob);
    fastFinishEvent.notify(sc_core::SC_ZERO_TIME);
}

void Accelerator::onFastFinish()
{
    WallScope wallScope(wall, WallPart::Accelerator);
    std::vector<std::uint64_t> ids;
    ids.swap(fastFinishing);
    for (std::uint64_t id : ids)
        finish(id);
    ids.clear();
    if (fastFinishing.empty())
        fastFinishing.swap(ids); // keep the capacity
}

} // namespace etsim::accel
