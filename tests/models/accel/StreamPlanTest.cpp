// The streaming plan's stepping over periods (StreamPlan.h): on any stream shape, memory state,
// DMA setting and compute time, the plan that steps over periods must give every chunk the
// times of the plan that walks every chunk, to the picosecond, and leave the memory, the DMA
// engines and the units in the same state.

#include "models/accel/StreamPlan.h"

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
    std::uint64_t complete(std::uint64_t arrivalPs, std::uint64_t bytes, bool write) override
    {
        return serve(server, arrivalPs, bytes, write);
    }
    void completeRepeated(std::uint64_t /*bytes*/,
                          std::uint64_t /*latencyPs*/,
                          std::uint64_t /*times*/,
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
    EXPECT_EQ(walked.chunkCount, stepped.chunkCount);
    EXPECT_EQ(walked.done, stepped.done);
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
    if (c.compute)
        EXPECT_EQ(walked.engineFree, stepped.engineFree) << "the units' free times";
    // (A lambda, for ASSERT: the first chunk that differs is enough.)
    [&] {
        for (std::uint64_t i = 0; i < walked.chunkCount; ++i) {
            const ChunkTimes a = walked.chunk(i);
            const ChunkTimes b = stepped.chunk(i);
            ASSERT_EQ(a.bytes, b.bytes) << "chunk " << i;
            ASSERT_EQ(a.write, b.write) << "chunk " << i;
            ASSERT_EQ(a.queued, b.queued) << "chunk " << i;
            ASSERT_EQ(a.sent, b.sent) << "chunk " << i;
            ASSERT_EQ(a.served, b.served) << "chunk " << i;
            ASSERT_EQ(a.loaded, b.loaded) << "chunk " << i;
            if (c.compute) {
                ASSERT_EQ(a.computeSent, b.computeSent) << "chunk " << i;
                ASSERT_EQ(a.computed, b.computed) << "chunk " << i;
                ASSERT_EQ(a.sliceTime, b.sliceTime) << "chunk " << i;
            }
        }
    }();
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

} // namespace
} // namespace etsim::accel
