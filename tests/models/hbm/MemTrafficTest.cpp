// The traffic of `etsim mem`: generated patterns, STL request traces and the run that feeds
// them to either fidelity, with results computed by hand from the presets' numbers.

#include "models/hbm/MemTraffic.h"

#include "tests/models/hbm/HbmTestSupport.h"

#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <vector>

namespace etsim::hbm::test {
namespace {

std::vector<MemRequest> all(TrafficGenerator& generator)
{
    std::vector<MemRequest> requests;
    MemRequest request;
    while (generator.next(request))
        requests.push_back(request);
    return requests;
}

TrafficSpec spec(AddressPattern pattern, std::uint64_t count, std::uint64_t size = 64)
{
    TrafficSpec result;
    result.pattern = pattern;
    result.count = count;
    result.requestSize = Size::fromBytes(size);
    return result;
}

std::string generatorError(const TrafficSpec& traffic, std::uint64_t capacity = 1 << 20)
{
    try {
        TrafficGenerator generator(traffic, capacity);
    } catch (const Error& error) {
        return error.what();
    }
    return "(no error)";
}

TEST(MemTraffic, SequentialAndStridedAddressesWrapInTheirRange)
{
    TrafficSpec sequential = spec(AddressPattern::Sequential, 5);
    sequential.base = 0x1000;
    sequential.range = Size::fromBytes(192);
    TrafficGenerator first(sequential, 1 << 20);
    std::vector<MemRequest> requests = all(first);
    ASSERT_EQ(requests.size(), 5u);
    std::vector<std::uint64_t> addresses;
    for (const MemRequest& r : requests)
        addresses.push_back(r.address);
    EXPECT_EQ(addresses, (std::vector<std::uint64_t>{0x1000, 0x1040, 0x1080, 0x1000, 0x1040}));
    EXPECT_EQ(requests[0].bytes, 64u);
    EXPECT_FALSE(requests[0].write);
    EXPECT_EQ(requests[4].notBeforePs, 0u);

    TrafficSpec strided = spec(AddressPattern::Strided, 4);
    strided.stride = Size::fromBytes(4096);
    strided.range = Size::fromBytes(8192);
    TrafficGenerator second(strided, 1 << 20);
    addresses.clear();
    for (const MemRequest& r : all(second))
        addresses.push_back(r.address);
    EXPECT_EQ(addresses, (std::vector<std::uint64_t>{0, 4096, 0, 4096}));
}

TEST(MemTraffic, RandomAddressesAreAlignedInRangeAndFollowTheSeed)
{
    TrafficSpec random = spec(AddressPattern::Random, 1000, 32);
    random.range = Size::fromBytes(1 << 16);
    TrafficGenerator one(random, 1 << 30);
    TrafficGenerator same(random, 1 << 30);
    random.seed = 2;
    TrafficGenerator other(random, 1 << 30);
    std::vector<MemRequest> a = all(one);
    std::vector<MemRequest> b = all(same);
    std::vector<MemRequest> c = all(other);
    std::set<std::uint64_t> distinct;
    std::size_t differ = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(a[i].address % 32, 0u);
        EXPECT_LT(a[i].address, 1u << 16);
        EXPECT_EQ(a[i].address, b[i].address);
        differ += a[i].address != c[i].address;
        distinct.insert(a[i].address);
    }
    EXPECT_GT(differ, 900u);
    // 1000 draws from 2048 places: about 2048·(1 - e^(-1000/2048)) = 790 distinct.
    EXPECT_GT(distinct.size(), 740u);
    EXPECT_LT(distinct.size(), 840u);
}

TEST(MemTraffic, WritesAreSpreadEvenlyAndTheRateSpacesArrivals)
{
    TrafficSpec mixed = spec(AddressPattern::Sequential, 8);
    mixed.writeFraction = 0.25;
    mixed.rate = Bandwidth::fromBytesPerSecond(64e9); // one 64 B request per ns
    TrafficGenerator generator(mixed, 1 << 20);
    std::vector<MemRequest> requests = all(generator);
    std::vector<bool> writes;
    for (const MemRequest& r : requests)
        writes.push_back(r.write);
    EXPECT_EQ(writes, (std::vector<bool>{false, false, false, true, false, false, false, true}));
    EXPECT_EQ(requests[1].notBeforePs, 1000u);
    EXPECT_EQ(requests[7].notBeforePs, 7000u);
}

TEST(MemTraffic, BadTrafficSpecsNameTheField)
{
    EXPECT_EQ(generatorError(spec(AddressPattern::Sequential, 5, 0)),
              "traffic: the request size must be at least 1 B");
    EXPECT_EQ(generatorError(spec(AddressPattern::Sequential, 0)),
              "traffic: the request count must be at least 1");
    TrafficSpec mixed = spec(AddressPattern::Sequential, 5);
    mixed.writeFraction = 1.5;
    EXPECT_EQ(generatorError(mixed), "traffic: the write fraction must be in [0, 1], got 1.500000");
    TrafficSpec strided = spec(AddressPattern::Strided, 5);
    strided.stride = Size::fromBytes(0);
    EXPECT_EQ(generatorError(strided), "traffic: the stride must be at least 1 B");
    TrafficSpec small = spec(AddressPattern::Random, 5, 128);
    small.range = Size::fromBytes(64);
    EXPECT_EQ(generatorError(small),
              "traffic: the address range (64 B) is smaller than one request (128 B)");
}

TEST(MemTraffic, CopyReadsABurstThenWritesItToTheDestinationHalf)
{
    // 512 B from 0x1000: source 0x1000-0x10ff, destination 0x1100-0x11ff, 4 blocks of 64 B
    // each; bursts of 2 copy blocks 0-1, then 2-3, then wrap to 0-1.
    TrafficSpec copy = spec(AddressPattern::Copy, 10);
    copy.base = 0x1000;
    copy.range = Size::fromBytes(512);
    copy.burst = 2;
    TrafficGenerator generator(copy, 1 << 20);
    std::vector<std::uint64_t> addresses;
    std::vector<bool> writes;
    for (const MemRequest& r : all(generator)) {
        addresses.push_back(r.address);
        writes.push_back(r.write);
        EXPECT_EQ(r.bytes, 64u);
    }
    EXPECT_EQ(addresses,
              (std::vector<std::uint64_t>{
                  0x1000, 0x1040, 0x1100, 0x1140, 0x1080, 0x10c0, 0x1180, 0x11c0, 0x1000, 0x1040}));
    EXPECT_EQ(
        writes,
        (std::vector<bool>{false, false, true, true, false, false, true, true, false, false}));

    // A burst of 1 alternates: read block k, write block k.
    copy.burst = 1;
    copy.count = 4;
    TrafficGenerator alternating(copy, 1 << 20);
    addresses.clear();
    writes.clear();
    for (const MemRequest& r : all(alternating)) {
        addresses.push_back(r.address);
        writes.push_back(r.write);
    }
    EXPECT_EQ(addresses, (std::vector<std::uint64_t>{0x1000, 0x1100, 0x1040, 0x1140}));
    EXPECT_EQ(writes, (std::vector<bool>{false, true, false, true}));
}

TEST(MemTraffic, BadCopySpecsNameTheField)
{
    TrafficSpec mixed = spec(AddressPattern::Copy, 8);
    mixed.writeFraction = 0.5;
    EXPECT_EQ(generatorError(mixed),
              "traffic: the copy pattern writes every block it reads (one write per read), so "
              "leave the write fraction at 0");
    TrafficSpec noBurst = spec(AddressPattern::Copy, 8);
    noBurst.burst = 0;
    EXPECT_EQ(generatorError(noBurst), "traffic: the copy burst must be at least 1 request");
    TrafficSpec small = spec(AddressPattern::Copy, 8);
    small.range = Size::fromBytes(96);
    EXPECT_EQ(generatorError(small),
              "traffic: the copy pattern splits the address range (96 B) into source and "
              "destination halves, each of which must hold one request (64 B)");
}

std::vector<MemRequest> readStl(const std::string& text, StlTiming timing)
{
    std::istringstream in(text);
    StlReader reader(in, "t.stl", timing, Frequency::fromHz(1e9), 64);
    std::vector<MemRequest> requests;
    MemRequest request;
    while (reader.next(request))
        requests.push_back(request);
    return requests;
}

std::string stlError(const std::string& text, StlTiming timing = StlTiming::Absolute)
{
    try {
        readStl(text, timing);
    } catch (const Error& error) {
        return error.what();
    }
    return "(no error)";
}

TEST(MemTraffic, StlLinesGiveCyclesLengthsCommandsAndAddresses)
{
    std::string text = "# a DRAMSys-style trace\n"
                       "\n"
                       "31: read 0x400140\n"
                       "40:\t(128)\twrite\t1f00\t00ff00FF  # data is ignored\n"
                       "40: read 0X20\n";
    std::vector<MemRequest> absolute = readStl(text, StlTiming::Absolute);
    ASSERT_EQ(absolute.size(), 3u);
    EXPECT_EQ(absolute[0].notBeforePs, 31000u); // 31 cycles of 1 GHz
    EXPECT_EQ(absolute[0].address, 0x400140u);
    EXPECT_EQ(absolute[0].bytes, 64u);
    EXPECT_FALSE(absolute[0].write);
    EXPECT_EQ(absolute[1].notBeforePs, 40000u);
    EXPECT_EQ(absolute[1].bytes, 128u);
    EXPECT_TRUE(absolute[1].write);
    EXPECT_EQ(absolute[1].address, 0x1f00u);
    EXPECT_EQ(absolute[2].address, 0x20u);
    // Relative STL: each cycle counts from the previous request.
    std::vector<MemRequest> relative = readStl(text, StlTiming::Relative);
    EXPECT_EQ(relative[1].notBeforePs, 71000u);
    EXPECT_EQ(relative[2].notBeforePs, 111000u);
}

TEST(MemTraffic, MalformedStlLinesAreErrorsWithFileAndLine)
{
    EXPECT_EQ(stlError("31 read 0x10\n"),
              "t.stl:1: expected \"<cycle>:\" at the start of the line, got \"31\"; a request "
              "reads \"31: read 0x400140\"");
    EXPECT_EQ(stlError("x1: read 0x10\n"), "t.stl:1: cycle \"x1\" is not a non-negative integer");
    EXPECT_EQ(stlError("# header\n1: rd 0x10\n"), "t.stl:2: expected read or write, got \"rd\"");
    EXPECT_EQ(stlError("1: (0) read 0x10\n"),
              "t.stl:1: length \"(0)\" is not a byte count in parentheses, e.g. \"(64)\"");
    EXPECT_EQ(stlError("1: write\n"),
              "t.stl:1: the request has no address; give it in hexadecimal, e.g. 0x400140");
    EXPECT_EQ(stlError("1: read 0xg0\n"),
              "t.stl:1: address \"0xg0\" is not a hexadecimal number of at most 64 bits");
    EXPECT_EQ(stlError("1: write 0x10 zz\n"), "t.stl:1: data \"zz\" is not hexadecimal");
    EXPECT_EQ(stlError("1: write 0x10 ff 2: read 0x0\n"),
              "t.stl:1: unexpected \"2:\" after the request; one request per line");
    EXPECT_EQ(stlError("5: read 0x0\n4: read 0x0\n"),
              "t.stl:2: cycle 4 is before the previous request's (5); STL cycles must not "
              "decrease (relative STL gives distances)");
    EXPECT_EQ(stlError("5: read 0x0\n4: read 0x0\n", StlTiming::Relative), "(no error)");
}

RequestSource fromGenerator(TrafficGenerator& generator)
{
    return [&generator](MemRequest& request) { return generator.next(request); };
}

TEST(MemTraffic, AnalyticClosedLoopWaitsForEachCompletion)
{
    // hbm3_6400 analytic: 64 B / (819.2 GB/s × 0.919) = 85 ps on the server, + 33.125 ns.
    // One request in flight: each issues when the previous completes, 33.210 ns apart.
    HbmConfig config = hbmPreset(HbmPreset::Hbm3_6400);
    TrafficGenerator generator(spec(AddressPattern::Sequential, 3),
                               config.organisation.deviceBytes());
    MemoryRunOptions options;
    options.outstanding = 1;
    MemoryRunReport report = runMemory(config, fromGenerator(generator), options);
    EXPECT_EQ(report.fidelity, Fidelity::Analytic);
    EXPECT_EQ(report.requests(), 3u);
    EXPECT_EQ(report.bytesRead, 192u);
    EXPECT_EQ(report.firstIssuePs, 0u);
    EXPECT_EQ(report.lastDonePs, 3 * 33210u);
    EXPECT_DOUBLE_EQ(report.latency.minNs, 33.21);
    EXPECT_DOUBLE_EQ(report.latency.maxNs, 33.21);
    EXPECT_DOUBLE_EQ(report.latency.p99Ns, 33.21);
    EXPECT_EQ(report.latency.buckets[2], 3u); // (30, 40] ns
    EXPECT_DOUBLE_EQ(report.bandwidth(), 192.0 / 99630e-12);
    EXPECT_FALSE(report.rowBuffer.has_value());
}

TEST(MemTraffic, DetailedSequentialStreamHitsOpenRows)
{
    // 2048 reads of 32 B over 64 KiB of the interleaved map: each of the 32 PCs gets 64, in
    // its 4 bank groups × 16 columns of row 0: one activate per bank group, 60 hits per PC.
    HbmConfig config = quietHbm3();
    TrafficGenerator generator(spec(AddressPattern::Sequential, 2048, 32),
                               config.organisation.deviceBytes());
    MemoryRunOptions options;
    options.outstanding = 0;
    MemoryRunReport report = runMemory(config, fromGenerator(generator), options);
    ASSERT_TRUE(report.rowBuffer.has_value());
    EXPECT_EQ(report.rowBuffer->hits, 32u * 60);
    EXPECT_EQ(report.rowBuffer->misses, 32u * 4);
    EXPECT_EQ(report.rowBuffer->conflicts, 0u);
    EXPECT_EQ(report.rowBuffer->activates, 128u);
    EXPECT_DOUBLE_EQ(report.rowBuffer->hitRate(), 0.9375);
    EXPECT_EQ(report.latency.count, 2048u);
    // The first burst of each PC is an idle-bank read: (31 + 20 + 2) CK = 33.125 ns.
    EXPECT_DOUBLE_EQ(report.latency.minNs, 33.125);
    EXPECT_GT(report.peakFraction(), 0.0);
    EXPECT_LE(report.peakFraction(), 1.0);
}

TEST(MemTraffic, DetailedRandomSmallReadsMissTheRowBuffer)
{
    HbmConfig config = hbmPreset(HbmPreset::Hbm3_6400);
    config.fidelity = Fidelity::Detailed;
    TrafficGenerator generator(spec(AddressPattern::Random, 4096, 32),
                               config.organisation.deviceBytes());
    MemoryRunReport report = runMemory(config, fromGenerator(generator), MemoryRunOptions{});
    ASSERT_TRUE(report.rowBuffer.has_value());
    EXPECT_LT(report.rowBuffer->hitRate(), 0.02);
    EXPECT_EQ(report.latency.count, 4096u);
    // 16 in flight against 32 PCs: mostly unloaded activate + read, so about a third of peak
    // at most (hardware-models.md 2.4).
    EXPECT_LT(report.peakFraction(), 0.34);
}

TEST(MemTraffic, LongCopyBurstsTurnTheBusAroundLessOften)
{
    // 4 MiB copied in 512 B requests on one HBM3-6400 stack, 256 in flight: with bursts of 1
    // the controller sees reads and writes mixed in every queue and turns the bus around at
    // every write batch; with bursts of 1,024 requests (512 KiB, 512 bursts of 32 B per PC) a
    // turnaround comes once per burst, so the switches drop by more than 5x and the data rate
    // approaches streaming (91.9 % of peak for reads, docs/hbm.md).
    HbmConfig config = hbmPreset(HbmPreset::Hbm3_6400);
    config.fidelity = Fidelity::Detailed;
    MemoryRunOptions options;
    options.outstanding = 256;
    auto run = [&](std::uint64_t burst) {
        TrafficSpec copy = spec(AddressPattern::Copy, 16384, 512);
        copy.burst = burst;
        TrafficGenerator generator(copy, config.organisation.deviceBytes());
        return runMemory(config, fromGenerator(generator), options);
    };
    MemoryRunReport interleaved = run(1);
    MemoryRunReport bursts = run(1024);
    EXPECT_EQ(bursts.reads, 8192u);
    EXPECT_EQ(bursts.writes, 8192u);
    EXPECT_EQ(bursts.bytesWritten, 8192u * 512);
    ASSERT_TRUE(interleaved.rowBuffer && bursts.rowBuffer);
    EXPECT_LT(bursts.rowBuffer->readWriteSwitches * 5, interleaved.rowBuffer->readWriteSwitches);
    EXPECT_GT(bursts.peakFraction(), interleaved.peakFraction() + 0.1);
    EXPECT_GT(bursts.peakFraction(), 0.8);
    EXPECT_LT(bursts.peakFraction(), 0.919);
}

TEST(MemTraffic, TraceRequestsIssueAtTheirCycles)
{
    // quiet HBM3-6400, cycles of its 1.6 GHz CK: an idle-bank read at cycle 0, a hit to the
    // same row at cycle 160, a write elsewhere at cycle 320.
    HbmConfig config = quietHbm3();
    DeviceRun layout(config);
    std::uint64_t first = addressOf(layout.device, 0, 0, 1, 2, 7, 0);
    std::uint64_t hit = addressOf(layout.device, 0, 0, 1, 2, 7, 9);
    std::ostringstream text;
    text << std::hex << "0: read 0x" << first << "\n160: read 0x" << hit
         << "\n320: write 0x100000\n";
    std::istringstream in(text.str());
    StlReader reader(in, "t.stl", StlTiming::Absolute, config.organisation.clock, 32);
    MemoryRunReport report =
        runMemory(config, [&reader](MemRequest& request) { return reader.next(request); }, {});
    EXPECT_EQ(report.reads, 2u);
    EXPECT_EQ(report.writes, 1u);
    EXPECT_EQ(report.rowBuffer->hits, 1u);
    EXPECT_EQ(report.rowBuffer->misses, 2u);
    EXPECT_DOUBLE_EQ(report.latency.minNs, 13.75); // the hit: nCL + nBL
    EXPECT_DOUBLE_EQ(report.latency.maxNs, 33.125);
    // The write to an idle bank: nRCDWR + nCWL + nBL = 27 CK after cycle 320.
    EXPECT_EQ(report.lastDonePs, (320 + 15 + 10 + 2) * 625u);
}

TEST(MemTraffic, FidelitiesAgreeOnTheCopyTheyWereFittedOn)
{
    // The analytic write efficiency and turnaround are fitted on a copy of 1,600 requests of
    // 16 KiB in bursts of 64 (scripts/calibrate-analytic-hbm.py), which both fidelities then
    // finish within 5 % (a calibration check, for the presets of the GPU platforms; about 2 s
    // of CPU each). Held-out copies agree less well (docs/hbm.md): a constant turnaround does
    // not follow the detailed controller's write batching.
    for (HbmPreset preset : {HbmPreset::Hbm3H100, HbmPreset::Hbm2eA100}) {
        TrafficSpec traffic;
        traffic.pattern = AddressPattern::Copy;
        traffic.burst = 64;
        traffic.requestSize = Size::fromBytes(16 * 1024);
        traffic.count = 1600;
        MemoryRunOptions options;
        options.outstanding = 16;
        std::uint64_t end[2] = {0, 0};
        for (Fidelity fidelity : {Fidelity::Detailed, Fidelity::Analytic}) {
            HbmConfig config = hbmPreset(preset);
            config.fidelity = fidelity;
            TrafficGenerator generator(traffic, config.organisation.deviceBytes());
            end[fidelity == Fidelity::Analytic] =
                runMemory(config, fromGenerator(generator), options).lastDonePs;
        }
        EXPECT_NEAR(static_cast<double>(end[1]) / static_cast<double>(end[0]), 1.0, 0.05)
            << enumName(presetNames, preset);
    }
}

} // namespace
} // namespace etsim::hbm::test
