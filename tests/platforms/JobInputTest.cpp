// What a job is given besides the platform: the hashes a run report records for each trace
// file (SHA-256 checked against the FIPS 180-2 test vectors, one of them a million bytes so
// digests span the reader's 64 KiB blocks, and the CRC-32 kept beside it; TraceHashes takes
// them on a thread of its own), and the timeline's window and rank list as `etsim run`
// parses them.

#include "platforms/Job.h"
#include "platforms/TraceHashes.h"
#include "tests/support/ErrorOf.h"
#include "tests/support/TempDir.h"

#include <gtest/gtest.h>

#include <atomic>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace etsim::platform {
namespace {

using etsim::test::errorOf;
using etsim::test::TempDir;

TraceFileInfo describe(const std::string& contents)
{
    TempDir dir;
    return describeTraceFile(dir.write("file.et", contents));
}

TEST(TraceHash, Sha256OfTheFips180Vectors)
{
    TraceFileInfo abc = describe("abc");
    EXPECT_EQ(abc.sha256, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    EXPECT_EQ(abc.bytes, 3U);
    EXPECT_EQ(describe("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq").sha256,
              "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    TraceFileInfo million = describe(std::string(1000000, 'a'));
    EXPECT_EQ(million.sha256, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    EXPECT_EQ(million.bytes, 1000000U);
}

TEST(TraceHash, EmptyFile)
{
    TraceFileInfo empty = describe("");
    EXPECT_EQ(empty.sha256, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    EXPECT_EQ(empty.crc32, "00000000");
    EXPECT_EQ(empty.bytes, 0U);
}

TEST(TraceHash, Crc32StaysBesideIt)
{
    EXPECT_EQ(describe("abc").crc32, "352441c2");
    EXPECT_EQ(describe("123456789").crc32, "cbf43926");
}

TEST(TraceHash, MissingFileIsAnError)
{
    TempDir dir;
    const std::string path = dir.file("gone.0.et").string();
    EXPECT_EQ(errorOf([&] { describeTraceFile(path); }),
              path + ": cannot open to hash it (check that the file is readable)");
}

TEST(TraceHash, AStopEndsTheReadingAtTheNextBlock)
{
    TempDir dir;
    const auto path = dir.write("big.et", std::string(200000, 'a'));
    const std::atomic<bool> running{false};
    EXPECT_EQ(describeTraceFile(path, &running).bytes, 200000U);
    const std::atomic<bool> stopped{true};
    EXPECT_EQ(describeTraceFile(path, &stopped).bytes, 0U);
}

TEST(TraceHashes, DescribesEachFileInOrderWithItsRank)
{
    TempDir dir;
    TraceHashes hashes({{3, dir.write("a.3.et", "abc")}, {0, dir.write("a.0.et", "123456789")}});
    const std::vector<TraceHashes::RankedInfo> files = hashes.take();
    ASSERT_EQ(files.size(), 2U);
    EXPECT_EQ(files[0].first, 3U);
    EXPECT_EQ(files[0].second.sha256,
              "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    EXPECT_EQ(files[1].first, 0U);
    EXPECT_EQ(files[1].second.crc32, "cbf43926");
    EXPECT_EQ(files[1].second.path, dir.file("a.0.et").string());
    EXPECT_EQ(errorOf([&] { hashes.take(); }), "TraceHashes::take: the hashes were taken already");
}

TEST(TraceHashes, AnUnreadableFileIsTheTakersError)
{
    TempDir dir;
    const std::string gone = dir.file("gone.1.et").string();
    TraceHashes hashes({{0, dir.write("a.0.et", "abc")}, {1, gone}});
    EXPECT_EQ(errorOf([&] { hashes.take(); }),
              gone + ": cannot open to hash it (check that the file is readable)");
}

using Window = std::pair<std::uint64_t, std::uint64_t>;

TEST(TimelineWindow, TimesWithUnitsAndOpenEnds)
{
    EXPECT_EQ(parseTimelineWindow("2ms:3ms"), Window(2000000000, 3000000000));
    EXPECT_EQ(parseTimelineWindow("1.5 us: 1700 ns"), Window(1500000, 1700000));
    EXPECT_EQ(parseTimelineWindow(":3us"), Window(0, 3000000));
    EXPECT_EQ(parseTimelineWindow("3us:").first, 3000000ULL);
    EXPECT_EQ(parseTimelineWindow("3us:").second, std::numeric_limits<std::uint64_t>::max());
}

TEST(TimelineWindow, Errors)
{
    EXPECT_EQ(errorOf([] { parseTimelineWindow("2ms"); }),
              "--timeline-window 2ms: expected START:END with units, e.g. 2ms:3ms (either side "
              "may be empty)");
    EXPECT_EQ(errorOf([] { parseTimelineWindow("3ms:3ms"); }),
              "--timeline-window 3ms:3ms: the end (3 ms) must come after the start (3 ms)");
    const std::string noUnit = errorOf([] { parseTimelineWindow("2:3ms"); });
    EXPECT_EQ(noUnit.rfind("--timeline-window 2:3ms: \"2\" is not a time: ", 0), 0U) << noUnit;
    EXPECT_NE(noUnit.find("(write a unit, e.g. 2ms, 1.5 us, 700 ns)"), std::string::npos);
}

TEST(TimelineRanks, AllNoneListsAndRanges)
{
    EXPECT_FALSE(parseRankList("all").has_value());
    EXPECT_EQ(parseRankList("none"), std::vector<std::uint32_t>{});
    EXPECT_EQ(parseRankList("0,3,8-10"), (std::vector<std::uint32_t>{0, 3, 8, 9, 10}));
    EXPECT_EQ(parseRankList("5"), (std::vector<std::uint32_t>{5}));
}

TEST(TimelineRanks, Errors)
{
    EXPECT_EQ(errorOf([] { parseRankList("1,,2"); }),
              "--timeline-ranks 1,,2: \"\" is not a rank or a range (write all, none, or e.g. "
              "0,3,8-15)");
    EXPECT_EQ(errorOf([] { parseRankList("-3"); }),
              "--timeline-ranks -3: \"-3\" is not a rank or a range (write all, none, or e.g. "
              "0,3,8-15)");
    EXPECT_EQ(errorOf([] { parseRankList("9-2"); }),
              "--timeline-ranks 9-2: the range \"9-2\" ends before it starts");
    EXPECT_EQ(errorOf([] { parseRankList("0-99999999"); }),
              "--timeline-ranks 0-99999999: the range \"0-99999999\" holds more ranks than a "
              "platform can have");
}

} // namespace
} // namespace etsim::platform
