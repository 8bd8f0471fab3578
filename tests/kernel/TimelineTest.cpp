#include "kernel/Timeline.h"

#include "kernel/Error.h"
#include "tests/support/ErrorOf.h"
#include "tests/support/TempDir.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace etsim {
namespace {

using test::errorOf;

using nlohmann::json;

json parseTimeline(const std::filesystem::path& path)
{
    return json::parse(test::readFile(path));
}

// Microseconds in the file back to picoseconds, checking that no digit was lost.
std::uint64_t picoseconds(const json& microseconds)
{
    double scaled = microseconds.get<double>() * 1e6;
    auto rounded = static_cast<std::uint64_t>(std::llround(scaled));
    EXPECT_NEAR(scaled, static_cast<double>(rounded), 1e-3) << microseconds;
    return rounded;
}

TEST(Timeline, EmptyTimelineIsAValidDocument)
{
    test::TempDir dir;
    auto path = dir.file("empty.json");
    {
        Timeline timeline(path.string());
        timeline.close();
        timeline.close(); // later calls do nothing
    }
    json document = parseTimeline(path);
    EXPECT_EQ(document, json::parse(R"({"displayTimeUnit":"ns","traceEvents":[]})"));
}

TEST(Timeline, MetadataNamesAndOrdersProcessesAndThreads)
{
    test::TempDir dir;
    auto path = dir.file("meta.json");
    Timeline timeline(path.string(), {4096, DisplayTimeUnit::Milliseconds});
    timeline.processName(3, "rank3", 3);
    timeline.threadName(3, 7, "hbm.channel7", -2);
    timeline.close();
    EXPECT_EQ(timeline.eventCount(), 4U);

    json document = parseTimeline(path);
    EXPECT_EQ(document.at("displayTimeUnit"), "ms");
    const json& events = document.at("traceEvents");
    ASSERT_EQ(events.size(), 4U);
    EXPECT_EQ(events[0],
              json::parse(R"({"ph":"M","name":"process_name","pid":3,"args":{"name":"rank3"}})"));
    EXPECT_EQ(
        events[1],
        json::parse(R"({"ph":"M","name":"process_sort_index","pid":3,"args":{"sort_index":3}})"));
    EXPECT_EQ(events[2], json::parse(R"({"ph":"M","name":"thread_name","pid":3,"tid":7,
                              "args":{"name":"hbm.channel7"}})"));
    EXPECT_EQ(events[3], json::parse(R"({"ph":"M","name":"thread_sort_index","pid":3,"tid":7,
                              "args":{"sort_index":-2}})"));
}

TEST(Timeline, CompleteEventsKeepPicosecondTimes)
{
    test::TempDir dir;
    auto path = dir.file("slices.json");
    // One hour plus one picosecond: 3.6e15 ps needs 16 significant digits in microseconds.
    const std::uint64_t late = 3600ULL * 1000000000000ULL + 1;
    {
        Timeline timeline(path.string());
        timeline.complete(0, 1, "gemm", "compute", 1234567, 1000, {{"flops", 2048}});
        timeline.complete(0, 1, "tiny", "compute", 5, 1);
        timeline.complete(1, 2, "late", "dma", late, 999999999999ULL);
        timeline.complete(1, 2, "round", "dma", 2000000, 0);
        timeline.close();
    }
    std::string text = test::readFile(path);
    // The numbers are written as exact decimals, not through a double.
    EXPECT_NE(text.find(R"("ts":1.234567,"dur":0.001)"), std::string::npos) << text;
    EXPECT_NE(text.find(R"("ts":0.000005,"dur":0.000001)"), std::string::npos) << text;
    EXPECT_NE(text.find(R"("ts":3600000000.000001,"dur":999999.999999)"), std::string::npos)
        << text;
    EXPECT_NE(text.find(R"("ts":2,"dur":0)"), std::string::npos) << text;

    json events = json::parse(text).at("traceEvents");
    ASSERT_EQ(events.size(), 4U);
    const json& gemm = events[0];
    EXPECT_EQ(gemm.at("ph"), "X");
    EXPECT_EQ(gemm.at("name"), "gemm");
    EXPECT_EQ(gemm.at("cat"), "compute");
    EXPECT_EQ(gemm.at("pid"), 0);
    EXPECT_EQ(gemm.at("tid"), 1);
    EXPECT_EQ(picoseconds(gemm.at("ts")), 1234567U);
    EXPECT_EQ(picoseconds(gemm.at("dur")), 1000U);
    EXPECT_EQ(gemm.at("args"), json::parse(R"({"flops":2048})"));
    EXPECT_EQ(picoseconds(events[1].at("ts")), 5U);
    EXPECT_EQ(picoseconds(events[1].at("dur")), 1U);
    EXPECT_FALSE(events[1].contains("args"));
    EXPECT_EQ(events[2].at("pid"), 1);
    EXPECT_EQ(events[2].at("tid"), 2);
    EXPECT_EQ(events[2].at("cat"), "dma");
    EXPECT_EQ(picoseconds(events[2].at("dur")), 999999999999ULL);
    EXPECT_EQ(picoseconds(events[3].at("ts")), 2000000U);
}

TEST(Timeline, ArgsOfEveryType)
{
    test::TempDir dir;
    auto path = dir.file("args.json");
    {
        Timeline timeline(path.string());
        std::string op = "read";
        std::vector<TraceArg> args{{"op", op},
                                   {"bytes", std::uint64_t{18446744073709551615ULL}},
                                   {"delta", -42},
                                   {"ratio", 0.125},
                                   {"nan", std::nan("")},
                                   {"hit", true},
                                   {"miss", false},
                                   {"literal", "text"}};
        timeline.instant(2, 4, "mark", "debug", 1500000, args);
    }
    json events = parseTimeline(path).at("traceEvents");
    ASSERT_EQ(events.size(), 1U);
    const json& mark = events[0];
    EXPECT_EQ(mark.at("ph"), "i");
    EXPECT_EQ(mark.at("s"), "t");
    EXPECT_EQ(mark.at("name"), "mark");
    EXPECT_EQ(mark.at("cat"), "debug");
    EXPECT_EQ(mark.at("pid"), 2);
    EXPECT_EQ(mark.at("tid"), 4);
    EXPECT_EQ(picoseconds(mark.at("ts")), 1500000U);
    const json& args = mark.at("args");
    EXPECT_EQ(args.at("op"), "read");
    EXPECT_EQ(args.at("bytes").get<std::uint64_t>(), 18446744073709551615ULL);
    EXPECT_EQ(args.at("delta"), -42);
    EXPECT_DOUBLE_EQ(args.at("ratio").get<double>(), 0.125);
    EXPECT_TRUE(args.at("nan").is_null());
    EXPECT_EQ(args.at("hit"), true);
    EXPECT_EQ(args.at("miss"), false);
    EXPECT_EQ(args.at("literal"), "text");
}

TEST(Timeline, CounterTracks)
{
    test::TempDir dir;
    auto path = dir.file("counters.json");
    Timeline timeline(path.string());
    timeline.counter(0, "hbm.queue", 2500, {{"reads", 3}, {"writes", 1.5}});
    EXPECT_EQ(errorOf([&] {
                  timeline.counter(0, "hbm.queue", 3000, {{"state", "busy"}});
              }),
              "timeline counter \"hbm.queue\": series \"state\" is not a number; counter values "
              "must be numbers");
    EXPECT_EQ(errorOf([&] { timeline.counter(0, "hbm.queue", 3000, {}); }),
              "timeline counter \"hbm.queue\": no series given; pass at least one {name, number}");
    timeline.counter(0, "hbm.queue", 4000, {{"reads", 0}, {"writes", 0}});
    timeline.close();

    // The rejected calls left nothing behind.
    json events = parseTimeline(path).at("traceEvents");
    ASSERT_EQ(events.size(), 2U);
    EXPECT_EQ(events[0].at("ph"), "C");
    EXPECT_EQ(events[0].at("name"), "hbm.queue");
    EXPECT_EQ(events[0].at("pid"), 0);
    EXPECT_EQ(picoseconds(events[0].at("ts")), 2500U);
    EXPECT_EQ(events[0].at("args").at("reads"), 3);
    EXPECT_DOUBLE_EQ(events[0].at("args").at("writes").get<double>(), 1.5);
    EXPECT_EQ(picoseconds(events[1].at("ts")), 4000U);
    EXPECT_EQ(events[1].at("args"), json::parse(R"({"reads":0,"writes":0})"));
}

// A window [1000, 2000) ps: slices overlapping it are clipped, the rest dropped; instants,
// counters and flow ends count where they are; names are always written.
TEST(Timeline, WindowClipsAndDropsEvents)
{
    test::TempDir dir;
    auto path = dir.file("window.json");
    TimelineOptions options;
    options.windowStartPs = 1000;
    options.windowEndPs = 2000;
    Timeline timeline(path.string(), options);
    timeline.processName(0, "rank 0", 0);
    timeline.complete(0, 1, "before", "c", 0, 1000);         // ends at the start: dropped
    timeline.complete(0, 1, "across start", "c", 500, 1000); // 500..1500 -> 1000..1500
    timeline.complete(0, 1, "inside", "c", 1200, 300);
    timeline.complete(0, 1, "across end", "c", 1800, 700); // 1800..2500 -> 1800..2000
    timeline.complete(0, 1, "around", "c", 0, 5000);       // -> 1000..2000
    timeline.complete(0, 1, "after", "c", 2000, 10);       // starts at the end: dropped
    timeline.complete(0, 1, "empty inside", "c", 1999, 0);
    timeline.instant(0, 1, "early", "c", 999);
    timeline.instant(0, 1, "mark", "c", 1000);
    timeline.counter(0, "load", 1999, {{"x", 1}});
    timeline.counter(0, "load", 2000, {{"x", 2}});
    timeline.flowStart(0, 1, "dep", "dep", 7, 900);
    timeline.flowEnd(0, 1, "dep", "dep", 7, 1300);
    EXPECT_EQ(timeline.eventCount(), 10U);
    timeline.close();

    // The flow's start (900 ps) is dropped, its end (1300 ps) kept: viewers ignore the lone end.
    json events = parseTimeline(path).at("traceEvents");
    ASSERT_EQ(events.size(), 10U);
    EXPECT_EQ(events[0].at("name"), "process_name");
    std::vector<std::string> names;
    for (const json& event : events)
        names.push_back(event.at("name"));
    EXPECT_EQ(names,
              (std::vector<std::string>{"process_name",
                                        "process_sort_index",
                                        "across start",
                                        "inside",
                                        "across end",
                                        "around",
                                        "empty inside",
                                        "mark",
                                        "load",
                                        "dep"}));
    EXPECT_EQ(picoseconds(events[2].at("ts")), 1000U);
    EXPECT_EQ(picoseconds(events[2].at("dur")), 500U);
    EXPECT_EQ(picoseconds(events[3].at("ts")), 1200U);
    EXPECT_EQ(picoseconds(events[3].at("dur")), 300U);
    EXPECT_EQ(picoseconds(events[4].at("dur")), 200U);
    EXPECT_EQ(picoseconds(events[5].at("ts")), 1000U);
    EXPECT_EQ(picoseconds(events[5].at("dur")), 1000U);
    EXPECT_EQ(events[8].at("args").at("x"), 1);
}

TEST(Timeline, EmptyWindowIsAnError)
{
    test::TempDir dir;
    auto path = dir.file("empty.json");
    TimelineOptions options;
    options.windowStartPs = 5000;
    options.windowEndPs = 5000;
    EXPECT_EQ(errorOf([&] { Timeline timeline(path.string(), options); }),
              "timeline \"" + path.string() +
                  "\": the window [5000 ps, 5000 ps) is empty; its start must come before its "
                  "end");
}

TEST(Timeline, FlowArrowsBindToEnclosingSlices)
{
    test::TempDir dir;
    auto path = dir.file("flows.json");
    {
        Timeline timeline(path.string());
        timeline.complete(0, 1, "send", "comm", 1000, 500);
        timeline.flowStart(0, 1, "dep", "et", 77, 1400);
        timeline.complete(1, 3, "recv", "comm", 2000, 800);
        timeline.flowEnd(1, 3, "dep", "et", 77, 2100);
    }
    json events = parseTimeline(path).at("traceEvents");
    ASSERT_EQ(events.size(), 4U);
    const json& start = events[1];
    EXPECT_EQ(start.at("ph"), "s");
    EXPECT_EQ(start.at("name"), "dep");
    EXPECT_EQ(start.at("cat"), "et");
    EXPECT_EQ(start.at("id"), 77);
    EXPECT_EQ(start.at("pid"), 0);
    EXPECT_EQ(start.at("tid"), 1);
    EXPECT_EQ(picoseconds(start.at("ts")), 1400U);
    EXPECT_FALSE(start.contains("bp"));
    const json& end = events[3];
    EXPECT_EQ(end.at("ph"), "f");
    EXPECT_EQ(end.at("bp"), "e");
    EXPECT_EQ(end.at("name"), "dep");
    EXPECT_EQ(end.at("cat"), "et");
    EXPECT_EQ(end.at("id"), 77);
    EXPECT_EQ(end.at("pid"), 1);
    EXPECT_EQ(end.at("tid"), 3);
    EXPECT_EQ(picoseconds(end.at("ts")), 2100U);
}

TEST(Timeline, StringsAreEscaped)
{
    test::TempDir dir;
    auto path = dir.file("escape.json");
    const std::string nasty = std::string("say \"hi\" \\ back\nslash\ttab\r\b\f") + '\x01' +
                              '\x1f' + '\x7f' + '\0' + "end";
    const std::string unicode = "µs → 漢字 🚀"; // 2-, 3- and 4-byte sequences
    {
        Timeline timeline(path.string());
        timeline.processName(0, nasty, 0);
        timeline.complete(0, 0, unicode, "c\"at", 0, 1, {{"k\\ey", nasty}});
        // Broken UTF-8: a stray continuation byte, a truncated sequence, an overlong '/'
        // and an encoded surrogate each become U+FFFD.
        timeline.instant(0, 0, "a\x80z\xE2\x82", "\xC0\xAF|\xED\xA0\x80", 0);
    }
    std::string text = test::readFile(path);
    EXPECT_NE(text.find(R"(\u0001\u001f)"), std::string::npos);
    EXPECT_NE(text.find(R"(\u0000end)"), std::string::npos);
    json events = json::parse(text).at("traceEvents");
    ASSERT_EQ(events.size(), 4U);
    EXPECT_EQ(events[0].at("args").at("name"), nasty);
    EXPECT_EQ(events[2].at("name"), unicode);
    EXPECT_EQ(events[2].at("cat"), "c\"at");
    EXPECT_EQ(events[2].at("args").at("k\\ey"), nasty);
    EXPECT_EQ(events[3].at("name"), "a\xEF\xBF\xBDz\xEF\xBF\xBD\xEF\xBF\xBD");
    EXPECT_EQ(events[3].at("cat"), "\xEF\xBF\xBD\xEF\xBF\xBD|\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
}

// The file a timeline writes before close(): the temporary beside the target (close()
// renames it into place, kernel/AtomicFile.h).
std::filesystem::path inProgress(const std::filesystem::path& target)
{
    for (const auto& entry : std::filesystem::directory_iterator(target.parent_path()))
        if (entry.path().filename().string().rfind("." + target.filename().string() + ".", 0) == 0)
            return entry.path();
    ADD_FAILURE() << "no temporary file for " << target;
    return target;
}

TEST(Timeline, TheFileAppearsOnlyWhenClosedAndReplacesAnOlderOneWhole)
{
    test::TempDir dir;
    auto path = dir.write("timeline.json", "an older run's timeline");
    Timeline timeline(path.string(), {64, DisplayTimeUnit::Nanoseconds});
    for (int i = 0; i < 100; ++i)
        timeline.complete(0, 0, "x", "c", 0, 1);
    timeline.flush();
    EXPECT_EQ(test::readFile(path), "an older run's timeline");
    timeline.close();
    EXPECT_EQ(parseTimeline(path).at("traceEvents").size(), 100U);
    EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()),
                            std::filesystem::directory_iterator()),
              1);
}

TEST(Timeline, SmallBatchesStreamToDiskAndLoseNothing)
{
    test::TempDir dir;
    auto path = dir.file("batched.json");
    const std::uint64_t count = 20000;
    const std::size_t batchBytes = 512;
    std::uintmax_t sizeBeforeClose = 0;
    {
        Timeline timeline(path.string(), {batchBytes, DisplayTimeUnit::Nanoseconds});
        for (std::uint64_t i = 0; i < count; ++i)
            timeline.complete(static_cast<std::uint32_t>(i % 4),
                              static_cast<std::uint32_t>(i % 7),
                              "op" + std::to_string(i),
                              "compute",
                              i * 1001,
                              i % 13,
                              {{"index", i}});
        EXPECT_GT(timeline.batchCount(), count / 10);
        // Every batch but the one being written and the one being filled is on disk.
        sizeBeforeClose = std::filesystem::file_size(inProgress(path));
        EXPECT_GT(sizeBeforeClose, count * 80);
        timeline.close();
        EXPECT_EQ(timeline.eventCount(), count);
    }
    EXPECT_GT(std::filesystem::file_size(path), sizeBeforeClose);
    json events = parseTimeline(path).at("traceEvents");
    ASSERT_EQ(events.size(), count);
    for (std::uint64_t i = 0; i < count; ++i) {
        const json& event = events[i];
        ASSERT_EQ(event.at("name"), "op" + std::to_string(i));
        ASSERT_EQ(event.at("args").at("index"), i);
        ASSERT_EQ(event.at("pid"), i % 4);
        ASSERT_EQ(event.at("tid"), i % 7);
        ASSERT_EQ(picoseconds(event.at("ts")), i * 1001);
        ASSERT_EQ(picoseconds(event.at("dur")), i % 13);
    }
}

TEST(Timeline, FlushPutsEventsOnDiskBeforeClose)
{
    test::TempDir dir;
    auto path = dir.file("flush.json");
    Timeline timeline(path.string());
    timeline.complete(0, 0, "a", "c", 0, 1);
    timeline.flush();
    std::string partial = test::readFile(inProgress(path));
    EXPECT_EQ(partial,
              "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n"
              "{\"ph\":\"X\",\"name\":\"a\",\"pid\":0,\"tid\":0,\"cat\":\"c\",\"ts\":0,"
              "\"dur\":0.000001}");
    timeline.complete(0, 0, "b", "c", 1, 1);
    timeline.close();
    EXPECT_EQ(parseTimeline(path).at("traceEvents").size(), 2U);
}

TEST(Timeline, DestructorDuringUnwindingLeavesAValidFile)
{
    test::TempDir dir;
    auto path = dir.file("unwind.json");
    try {
        Timeline timeline(path.string(), {256, DisplayTimeUnit::Nanoseconds});
        timeline.processName(0, "rank0", 0);
        for (std::uint32_t i = 0; i < 100; ++i)
            timeline.complete(0, 1, "step", "compute", std::uint64_t{i} * 10, 5);
        throw std::runtime_error("deadlock at 1 us");
    } catch (const std::runtime_error& error) {
        EXPECT_STREQ(error.what(), "deadlock at 1 us");
    }
    json events = parseTimeline(path).at("traceEvents");
    ASSERT_EQ(events.size(), 102U);
    EXPECT_EQ(events[0].at("args").at("name"), "rank0");
    EXPECT_EQ(picoseconds(events[101].at("ts")), 990U);
}

TEST(Timeline, DestructorWithoutCloseLeavesAValidFile)
{
    test::TempDir dir;
    auto path = dir.file("dtor.json");
    {
        Timeline timeline(path.string());
        timeline.counter(0, "queue", 0, {{"depth", 1}});
    }
    EXPECT_EQ(parseTimeline(path).at("traceEvents").size(), 1U);
}

TEST(Timeline, EventAfterCloseIsAnError)
{
    test::TempDir dir;
    auto path = dir.file("closed.json");
    Timeline timeline(path.string());
    timeline.close();
    std::string expected = "timeline file \"" + path.string() +
                           "\": event recorded after close(); record every event before closing";
    EXPECT_EQ(errorOf([&] { timeline.complete(0, 0, "late", "c", 0, 1); }), expected);
    EXPECT_EQ(errorOf([&] { timeline.flush(); }), expected);
    EXPECT_EQ(parseTimeline(path).at("traceEvents").size(), 0U);
}

TEST(Timeline, UnopenableFileNamesThePath)
{
    test::TempDir dir;
    auto path = dir.file("missing-folder/trace.json");
    EXPECT_EQ(errorOf([&] { Timeline timeline(path.string()); }),
              "timeline file \"" + path.string() +
                  "\": cannot create: No such file or directory (check that the folder exists "
                  "and is writable)");
}

TEST(Timeline, WriteFailureIsReportedWithThePath)
{
    if (!std::filesystem::exists("/dev/full"))
        GTEST_SKIP() << "/dev/full is needed to make writes fail";
    // Writes to /dev/full fail with ENOSPC: the writer thread's error reaches the producer.
    std::string expected = "timeline file \"/dev/full\": write failed: No space left on device";
    Timeline timeline("/dev/full", {64, DisplayTimeUnit::Nanoseconds});
    std::string error = errorOf([&] {
        for (int i = 0; i < 1000; ++i)
            timeline.complete(0, 0, "x", "c", 0, 1);
    });
    EXPECT_EQ(error, expected);
    EXPECT_EQ(errorOf([&] { timeline.close(); }), expected);
    EXPECT_EQ(errorOf([&] { timeline.close(); }), "(no error)");
}

// A partitioned run moves each process's events into one file: read back in chunks of
// whole events (however small the chunk asked for) and appended, they make the same
// document as writing them all into one timeline.
TEST(Timeline, EventsReadBackAndAppendedMakeTheSameDocument)
{
    test::TempDir dir;
    auto write = [](Timeline& timeline, std::uint32_t process) {
        timeline.processName(process, "rank " + std::to_string(process), process);
        for (std::uint64_t i = 0; i < 50; ++i)
            timeline.complete(process, 1, "node,\nwith a newline", "c", i * 1000, 500);
        timeline.counter(process, "utilisation", 7, {{"compute", 0.5}});
    };
    const auto whole = dir.file("whole.json");
    {
        Timeline timeline(whole.string());
        write(timeline, 0);
        write(timeline, 1);
    }
    const auto part = dir.file("part.json");
    {
        Timeline timeline(part.string());
        write(timeline, 1);
    }
    for (std::size_t chunkBytes : {std::size_t{1}, std::size_t{100}, std::size_t{1} << 20}) {
        SCOPED_TRACE(chunkBytes);
        const auto merged = dir.file("merged.json");
        Timeline timeline(merged.string(), {64, DisplayTimeUnit::Nanoseconds});
        write(timeline, 0);
        TimelineEventReader reader(part.string());
        std::uint64_t chunks = 0;
        for (TimelineEventReader::Chunk chunk = reader.next(chunkBytes); chunk.count > 0;
             chunk = reader.next(chunkBytes)) {
            ++chunks;
            timeline.appendEvents(chunk.text, chunk.count);
        }
        EXPECT_EQ(reader.next(chunkBytes).text, "");
        EXPECT_EQ(timeline.eventCount(), 2 * 53U);
        timeline.close();
        EXPECT_EQ(test::readFile(merged), test::readFile(whole));
        // One event a chunk when a byte is asked for, all in one when a megabyte is.
        if (chunkBytes == 1)
            EXPECT_EQ(chunks, 53U);
        else if (chunkBytes == 100)
            EXPECT_GT(chunks, 10U);
        else
            EXPECT_EQ(chunks, 1U);
    }
}

TEST(Timeline, AnEmptyTimelineReadsBackAsNoEvents)
{
    test::TempDir dir;
    const auto path = dir.file("empty.json");
    Timeline(path.string(), {64, DisplayTimeUnit::Milliseconds}).close();
    TimelineEventReader reader(path.string());
    TimelineEventReader::Chunk chunk = reader.next(1024);
    EXPECT_EQ(chunk.count, 0U);
    EXPECT_EQ(chunk.text, "");
}

TEST(Timeline, ReadingBackRefusesWhatATimelineDidNotWriteWhole)
{
    test::TempDir dir;
    const auto other = dir.write("other.json", R"({"traceEvents":[]})");
    EXPECT_EQ(errorOf([&] { TimelineEventReader reader(other.string()); }),
              "timeline file \"" + other.string() +
                  "\": not a timeline etsim wrote (its header differs)");
    const auto cut = dir.write("cut.json", "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n{}");
    EXPECT_EQ(errorOf([&] { TimelineEventReader reader(cut.string()); }),
              "timeline file \"" + cut.string() +
                  "\": not a closed timeline (its end is missing: was the run stopped?)");
    const auto missing = dir.file("missing.json");
    EXPECT_EQ(errorOf([&] { TimelineEventReader reader(missing.string()); }),
              "timeline file \"" + missing.string() +
                  "\": cannot be read: No such file or directory");
}

} // namespace
} // namespace etsim
