// The streaming plan's stepping over periods (StreamPlan.h): on any stream shape, memory state,
// DMA setting and compute time, the plan that steps over periods must give every chunk the
// times of the plan that walks every chunk, to the picosecond, and leave the memory, the DMA
// engines and the units in the same state.

#include "models/accel/StreamPlan.h"

#include "models/accel/StreamPlanCache.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace etsim::accel {
namespace {

// A FIFO memory server in the analytic HBM's form (docs/hbm.md): a transaction starts when it
// arrives and the server is free (plus a turnaround after the other direction), moves its bytes
// at the direction's rate, and completes a fixed latency after its data.
class FifoMemory final : public StreamMemory {
public:
    FifoMemory(double readBytesPerPs,
               double writeBytesPerPs,
               std::uint64_t turnaroundPs,
               std::uint64_t latencyPs,
               MemoryServer start)
        : readRate(readBytesPerPs)
        , writeRate(writeBytesPerPs)
        , turnaroundPs(turnaroundPs)
        , latencyPs(latencyPs)
        , server(start)
    {
    }
    MemoryServer state() const override { return server; }
    std::uint64_t
    serve(MemoryServer& at, std::uint64_t arrivalPs, std::uint64_t bytes, bool write) const override
    {
        const bool turns = at.used && at.lastWrite != write;
        const std::uint64_t start = std::max(arrivalPs, at.freePs + (turns ? turnaroundPs : 0));
        at.freePs = start + static_cast<std::uint64_t>(static_cast<double>(bytes) /
                                                       (write ? writeRate : readRate));
        at.lastWrite = write;
        at.used = true;
        return at.freePs + latencyPs;
    }
    MemoryServer settled(const MemoryServer& at, std::uint64_t fromPs) const override
    {
        if (at.freePs + (at.used ? turnaroundPs : 0) <= fromPs)
            return MemoryServer{fromPs, false, false};
        return at.used ? at : MemoryServer{at.freePs, false, false};
    }
    bool sameTiming(const StreamMemory& other) const override
    {
        const auto* fifo = dynamic_cast<const FifoMemory*>(&other);
        return fifo != nullptr && fifo->readRate == readRate && fifo->writeRate == writeRate &&
               fifo->turnaroundPs == turnaroundPs && fifo->latencyPs == latencyPs;
    }
    std::uint64_t complete(std::uint64_t arrivalPs, std::uint64_t bytes, bool write) override
    {
        return serve(server, arrivalPs, bytes, write);
    }
    void setState(const MemoryServer& now) { server = now; }
    void completeStream(const std::vector<TransferGroup>& /*transfers*/,
                        std::uint64_t /*turnarounds*/,
                        const MemoryServer& after) override
    {
        server = after;
    }

private:
    double readRate;
    double writeRate;
    std::uint64_t turnaroundPs;
    std::uint64_t latencyPs;
    MemoryServer server;
};

struct Case {
    StreamShape shape;
    FifoMemory memory;
    bool compute = false;
    ComputeEstimate estimate;
    bool tensor = true;
    std::vector<Time> unitsFreeAt;
};

// Expects `a` and `b` to give every chunk the same times and end alike.
void expectSameChunks(const StreamPlan& a, const StreamPlan& b, bool compute)
{
    ASSERT_EQ(a.chunkCount, b.chunkCount);
    EXPECT_EQ(a.done, b.done);
    for (std::uint64_t i = 0; i < a.chunkCount; ++i) {
        const ChunkTimes x = a.chunk(i);
        const ChunkTimes y = b.chunk(i);
        ASSERT_EQ(x.bytes, y.bytes) << "chunk " << i;
        ASSERT_EQ(x.write, y.write) << "chunk " << i;
        ASSERT_EQ(x.queued, y.queued) << "chunk " << i;
        ASSERT_EQ(x.sent, y.sent) << "chunk " << i;
        ASSERT_EQ(x.served, y.served) << "chunk " << i;
        ASSERT_EQ(x.loaded, y.loaded) << "chunk " << i;
        if (compute) {
            ASSERT_EQ(x.computeSent, y.computeSent) << "chunk " << i;
            ASSERT_EQ(x.computed, y.computed) << "chunk " << i;
            ASSERT_EQ(x.sliceTime, y.sliceTime) << "chunk " << i;
        }
    }
    if (compute && a.chunkCount == 0) {
        EXPECT_EQ(a.whole.computeSent, b.whole.computeSent);
        EXPECT_EQ(a.whole.computed, b.whole.computed);
        EXPECT_EQ(a.whole.sliceTime, b.whole.sliceTime);
    }
}

// Plans `c` walking every chunk and stepping over periods; expects the same chunks and end.
// Returns how many chunks the stepping plan left inside runs.
std::uint64_t expectSamePlan(const Case& c, const std::string& label)
{
    SCOPED_TRACE(label);
    StreamPlan walked;
    walked.stepOverPeriods = false;
    StreamPlan stepped;
    const ComputeEstimate* estimate = c.compute ? &c.estimate : nullptr;
    planStream(walked, c.shape, c.memory, estimate, c.tensor, c.unitsFreeAt);
    planStream(stepped, c.shape, c.memory, estimate, c.tensor, c.unitsFreeAt);
    EXPECT_TRUE(walked.runs.empty());
    // The DMA engines' busy ends as a next chunk would see them: an engine free before the
    // last send (or not used) is as free as any other (StreamPlan.cpp, the pipeline's state).
    if (walked.chunkCount > 0) {
        const Time lastSent = walked.chunk(walked.chunkCount - 1).sent;
        auto asSeen = [&](std::vector<Time> engines) {
            engines.resize(c.shape.dmaEngines, lastSent);
            for (Time& end : engines)
                end = std::max(end, lastSent);
            std::sort(engines.begin(), engines.end());
            return engines;
        };
        EXPECT_EQ(asSeen(walked.engines), asSeen(stepped.engines)) << "the DMA engines";
    }
    if (c.compute) {
        EXPECT_EQ(walked.engineFree, stepped.engineFree) << "the units' free times";
    }
    expectSameChunks(walked, stepped, c.compute);
    std::uint64_t inRuns = 0;
    for (const ChunkRun& run : stepped.runs) {
        EXPECT_EQ((run.last + 1 - run.first) % run.period, 0U);
        inRuns += run.last + 1 - run.first;
    }
    // The memory's state after the last run, against the walked plan's replay up to there.
    if (!stepped.runs.empty()) {
        const ChunkRun& run = stepped.runs.back();
        MemoryServer replay = c.memory.state();
        for (std::uint64_t i = 0; i <= run.last; ++i) {
            const ChunkTimes chunk = walked.chunk(i);
            c.memory.serve(replay, chunk.sent.ps(), chunk.bytes, chunk.write);
        }
        EXPECT_EQ(run.memoryAfter.freePs, replay.freePs);
        EXPECT_EQ(run.memoryAfter.lastWrite, replay.lastWrite);
        EXPECT_EQ(run.memoryAfter.used, replay.used);
    }
    return inRuns;
}

constexpr std::uint64_t mib = 1024ULL * 1024;

// The H100-like case by hand: a GEMM streaming 40 full chunks of 2 MiB with slices of 2 us,
// far longer than a load (about 0.7 us): compute-bound, period one chunk, one slice apart.
TEST(StreamPlan, ComputeBoundStreamRepeatsEveryChunk)
{
    Case c{StreamShape{}, FifoMemory(3.0, 2.7, 30'000, 500'000, {}), true, {}, true, {Time()}};
    c.shape.start = Time::fromPs(1'000'000);
    c.shape.readBytes = 80 * mib;
    c.shape.chunkBytes = 2 * mib;
    c.shape.dmaEngines = 4;
    c.shape.dmaBandwidth = Bandwidth::fromBytesPerSecond(3.35e12);
    c.estimate.time = Time::fromPs(40ULL * 2'000'000 + 7);
    EXPECT_GT(expectSamePlan(c, "compute-bound"), 30U);
    StreamPlan plan;
    planStream(plan, c.shape, c.memory, &c.estimate, true, c.unitsFreeAt);
    ASSERT_FALSE(plan.runs.empty());
    EXPECT_EQ(plan.runs.front().period, 1U);
    EXPECT_EQ(plan.runs.front().shift, Time::fromPs(2'000'000));
    // Only the chunks walked before the pipeline settled, and the last, are kept.
    EXPECT_LT(plan.chunks.size(), 10U);
    // The first chunk is in after its transfer (2 MiB at 3 B/ps) and the latency; then 40
    // slices of 2 us back to back, the last with the remainder of 7 ps.
    const std::uint64_t firstIn = 1'000'000 + 699'050 + 500'000;
    EXPECT_EQ(plan.done.ps(), firstIn + 40ULL * 2'000'000 + 7);
}

// Many shapes at random: sizes with and without partial chunks, reads and writes, 1 to 6 DMA
// engines, 1 to 3 units, memories faster and slower than the DMA, compute from negligible to
// dominant, busy memories and units at the start.
TEST(StreamPlan, SteppingOverPeriodsMatchesWalkingEveryChunk)
{
    std::mt19937_64 random(20261206);
    auto pick = [&](std::uint64_t low, std::uint64_t high) {
        return std::uniform_int_distribution<std::uint64_t>(low, high)(random);
    };
    std::uint64_t inRuns = 0;
    std::uint64_t total = 0;
    for (int trial = 0; trial < 3000; ++trial) {
        const std::uint64_t chunk = pick(1, 4) * 512 * 1024;
        const bool partial = pick(0, 1) == 1;
        MemoryServer start{pick(0, 3'000'000), pick(0, 1) == 1, pick(0, 1) == 1};
        Case c{StreamShape{},
               FifoMemory(static_cast<double>(pick(5, 40)) / 10.0,
                          static_cast<double>(pick(5, 40)) / 10.0,
                          pick(0, 60'000),
                          pick(0, 2'000'000),
                          start),
               pick(0, 3) != 0,
               {},
               pick(0, 1) == 1,
               {}};
        c.shape.start = Time::fromPs(pick(0, 2'000'000));
        c.shape.readBytes = pick(0, 60) * chunk + (partial ? pick(1, chunk - 1) : 0);
        c.shape.writeBytes = pick(0, 3) == 0 ? pick(0, 30) * chunk + pick(0, chunk - 1) : 0;
        if (c.shape.readBytes + c.shape.writeBytes == 0)
            c.shape.readBytes = chunk;
        c.shape.chunkBytes = chunk;
        c.shape.dmaEngines = static_cast<std::uint32_t>(pick(1, 6));
        c.shape.dmaBandwidth =
            Bandwidth::fromBytesPerSecond(static_cast<double>(pick(1, 50)) * 1e11);
        const std::uint64_t chunks =
            streamChunks(c.shape.readBytes, c.shape.writeBytes, c.shape.chunkBytes);
        c.estimate.time = Time::fromPs(chunks * pick(0, 3'000'000) + pick(0, 999));
        for (std::uint64_t u = pick(1, 3); u > 0; --u)
            c.unitsFreeAt.push_back(Time::fromPs(pick(0, 4'000'000)));
        inRuns += expectSamePlan(c, "trial " + std::to_string(trial));
        total += chunks;
        if (HasFailure())
            return;
    }
    // Most chunks are stepped over: the test exercises the runs, not only the walk.
    EXPECT_GT(inRuns * 2, total) << inRuns << " of " << total << " chunks in runs";
}

// The plan cache (StreamPlanCache.h) on a sequence of nodes drawn from a few shapes, each
// starting at its own time in a state drawn so that many are equivalent to an earlier node's
// relative to its start (an idle memory whatever its past, units free at various times before
// the start) and many are not (a memory or units still busy, a turnaround pending). Every plan
// it gives must equal a new plan of the same node, including the memory's state after each
// run; the draws must reuse plans often and plan anew often.
TEST(StreamPlanCache, ReusedPlansEqualNewPlans)
{
    std::mt19937_64 random(20261207);
    auto pick = [&](std::uint64_t low, std::uint64_t high) {
        return std::uniform_int_distribution<std::uint64_t>(low, high)(random);
    };
    constexpr std::uint64_t chunk = std::uint64_t{1024} * 1024;
    constexpr std::uint64_t turnaround = 40'000;
    FifoMemory memory(2.5, 2.2, turnaround, 300'000, {});
    struct Shape {
        std::uint64_t readBytes;
        std::uint64_t writeBytes;
        bool compute;
        std::uint64_t computePs;
        std::size_t units;
    };
    const std::vector<Shape> shapes{{40 * chunk, 0, true, 40 * 900'000 + 3, 1},
                                    {7 * chunk + 1000, 3 * chunk, true, 2'000'000, 1},
                                    {3 * chunk, 0, false, 0, 1},
                                    {0, 5 * chunk + 17, false, 0, 1},
                                    {0, 0, true, 5'000'000, 2},
                                    {20 * chunk, 2 * chunk, true, std::uint64_t{20} * 300'000, 2}};
    StreamPlanCache cache(16);
    for (int trial = 0; trial < 4000; ++trial) {
        SCOPED_TRACE("trial " + std::to_string(trial));
        const Shape& shape = shapes[pick(0, shapes.size() - 1)];
        StreamShape stream;
        stream.start = Time::fromPs(pick(1'000'000, 1'000'000'000));
        stream.readBytes = shape.readBytes;
        stream.writeBytes = shape.writeBytes;
        stream.chunkBytes = chunk;
        stream.dmaEngines = 2;
        stream.dmaBandwidth = Bandwidth::fromBytesPerSecond(2.0e12);
        const std::uint64_t start = stream.start.ps();
        // The memory: idle long before, idle just before (turnaround done), turning around,
        // or busy past the start by a few set amounts.
        MemoryServer now{0, pick(0, 1) == 1, pick(0, 1) == 1};
        switch (pick(0, 3)) {
        case 0:
            now.freePs = start - pick(turnaround, 900'000);
            break;
        case 1:
            now.freePs = start - turnaround;
            break;
        case 2:
            now.freePs = start - pick(0, 1) * turnaround / 2;
            break;
        default:
            now.freePs = start + pick(1, 3) * 250'000;
            break;
        }
        memory.setState(now);
        std::vector<Time> units;
        for (std::size_t u = 0; u < shape.units; ++u)
            units.push_back(pick(0, 2) == 0 ? Time::fromPs(start + pick(1, 2) * 500'000)
                                            : Time::fromPs(start - pick(0, 900'000)));
        ComputeEstimate estimate;
        estimate.time = Time::fromPs(shape.computePs);
        const ComputeEstimate* part = shape.compute ? &estimate : nullptr;
        StreamPlan fresh;
        planStream(fresh, stream, memory, part, true, units);
        StreamPlan cached;
        cache.plan(cached, stream, memory, part, true, units);
        expectSameChunks(fresh, cached, shape.compute);
        ASSERT_EQ(fresh.runs.size(), cached.runs.size());
        for (std::size_t r = 0; r < fresh.runs.size(); ++r) {
            EXPECT_EQ(fresh.runs[r].memoryAfter.freePs, cached.runs[r].memoryAfter.freePs);
            EXPECT_EQ(fresh.runs[r].memoryAfter.lastWrite, cached.runs[r].memoryAfter.lastWrite);
        }
        if (HasFailure())
            return;
    }
    EXPECT_GT(cache.hits(), 1000U);
    EXPECT_GT(cache.misses(), 500U);
}

// One cache shared by the accelerators of a platform: a plan made on one memory serves another
// memory of the same timing (a hit, equal to a new plan on it), and a memory of another timing
// is planned anew on its own arithmetic.
TEST(StreamPlanCache, SharedByMemoriesOfOneTimingAndNoOther)
{
    constexpr std::uint64_t chunk = std::uint64_t{1024} * 1024;
    FifoMemory first(2.5, 2.2, 40'000, 300'000, {});
    FifoMemory alike(2.5, 2.2, 40'000, 300'000, {});
    FifoMemory slower(1.5, 2.2, 40'000, 300'000, {});
    ASSERT_TRUE(first.sameTiming(alike));
    ASSERT_FALSE(first.sameTiming(slower));
    StreamPlanCache cache;
    ComputeEstimate estimate;
    estimate.time = Time::fromPs(9'000'000);
    // The same node on each memory in turn, each time starting on an idle memory.
    auto planOn = [&](FifoMemory& memory, std::uint64_t startPs) {
        StreamShape stream;
        stream.start = Time::fromPs(startPs);
        stream.readBytes = 12 * chunk;
        stream.writeBytes = 2 * chunk;
        stream.chunkBytes = chunk;
        stream.dmaEngines = 2;
        stream.dmaBandwidth = Bandwidth::fromBytesPerSecond(2.0e12);
        memory.setState({startPs - 5'000'000, false, true});
        const std::vector<Time> units{Time::fromPs(startPs - 1)};
        StreamPlan fresh;
        planStream(fresh, stream, memory, &estimate, true, units);
        StreamPlan cached;
        cache.plan(cached, stream, memory, &estimate, true, units);
        expectSameChunks(fresh, cached, true);
        return fresh.done - stream.start;
    };
    const Time onFirst = planOn(first, 1'000'000'000);
    EXPECT_EQ(cache.misses(), 1U);
    EXPECT_EQ(planOn(alike, 3'000'000'000), onFirst);
    EXPECT_EQ(cache.hits(), 1U);
    EXPECT_GT(planOn(slower, 5'000'000'000), onFirst);
    EXPECT_EQ(cache.misses(), 2U);
    // Back on the first timing, whose plans the slower memory's displaced.
    EXPECT_EQ(planOn(first, 7'000'000'000), onFirst);
    EXPECT_EQ(cache.misses(), 3U);
    EXPECT_EQ(planOn(alike, 9'000'000'000), onFirst);
    EXPECT_EQ(cache.hits(), 2U);
}

} // namespace
} // namespace etsim::accel
