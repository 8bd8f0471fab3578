#include "models/accel/StreamPlan.h"

#include "kernel/IntMath.h"
#include "models/accel/ComputeSlice.h"

#include <algorithm>

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

void planStream(StreamPlan& plan,
                const StreamShape& shape,
                const StreamMemory& memory,
                const ComputeEngine* engine,
                const EtNodeInfo& node)
{
    const Time t0 = shape.start;
    // No chunks when nothing streams (a compute node that fits in SRAM).
    const std::uint64_t count = streamChunks(shape.readBytes, shape.writeBytes, shape.chunkBytes);
    if (plan.chunks.size() < count)
        plan.chunks.resize(count);
    plan.chunkCount = count;
    plan.compute = engine != nullptr;
    std::vector<Time>& engineFree = plan.engineFree;
    if (plan.compute) {
        plan.tensor = usesTensorUnit(node);
        plan.estimate = engine->estimate(node);
        engineFree = engine->freeTimes(plan.tensor);
    }
    const std::uint64_t slices = std::max<std::uint64_t>(count, 1);
    SliceShares shares(plan.compute ? plan.estimate.time.ps() : 0, slices);
    if (plan.compute && count == 0) {
        plan.whole.computeSent = t0;
        plan.whole.sliceTime = Time::fromPs(shares.next());
        plan.whole.computed = ComputeEngine::place(engineFree, t0, plan.whole.sliceTime).end;
        plan.done = plan.whole.computed;
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
    for (std::uint64_t i = 0; i < count; ++i) {
        ChunkTimes& chunk = plan.chunks[i];
        const StreamPiece piece =
            streamPiece(shape.readBytes, shape.writeBytes, shape.chunkBytes, reads, i);
        chunk.bytes = piece.bytes;
        chunk.write = piece.write;
        // A memory node queues every chunk at once; a compute node has two staging buffers,
        // so chunk i waits for the slice of chunk i - 2 to free its buffer.
        chunk.queued = plan.compute && i >= 2 ? plan.chunks[i - 2].computed : t0;
        // The DMA queue is FIFO: no load leaves before the one ahead of it, nor before an
        // engine is free. The engine that frees first takes the load; its slot is reused.
        Time sent = std::max(chunk.queued, previousSent);
        Time* engine = nullptr;
        if (engines.size() == shape.dmaEngines) {
            engine = &*std::min_element(engines.begin(), engines.end());
            sent = std::max(sent, *engine);
        }
        chunk.sent = sent;
        previousSent = sent;
        const Time memoryDone =
            Time::fromPs(memory.serve(memoryState, sent.ps(), chunk.bytes, chunk.write));
        const Time dma = chunk.bytes == shape.chunkBytes
                             ? fullChunkDma
                             : Size::fromBytes(chunk.bytes) / shape.dmaBandwidth;
        chunk.loaded = std::max(memoryDone, sent + dma);
        if (engine != nullptr)
            *engine = chunk.loaded;
        else
            engines.push_back(chunk.loaded);
        lastLoaded = std::max(lastLoaded, chunk.loaded);
        if (plan.compute) {
            // A slice starts when its chunk is in and the previous slice is done.
            chunk.computeSent =
                i == 0 ? chunk.loaded : std::max(chunk.loaded, plan.chunks[i - 1].computed);
            chunk.sliceTime = Time::fromPs(shares.next());
            chunk.computed =
                ComputeEngine::place(engineFree, chunk.computeSent, chunk.sliceTime).end;
        }
    }
    plan.done = plan.compute ? plan.chunks[count - 1].computed : lastLoaded;
}

} // namespace etsim::accel
