// Every kind of bad input gives one TraceError naming the file, the record and its offset.

#include "et_driver/TraceReader.h"
#include "et_driver/TraceSet.h"
#include "et_driver/TraceWriter.h"
#include "tests/et_driver/TraceTestSupport.h"
#include "tests/support/TempDir.h"

#include <gtest/gtest.h>

namespace etsim::et {
namespace {

namespace fs = std::filesystem;
namespace pb = ChakraProtoMsg;

const std::string metadataRecord("\x07\x0a\x05"
                                 "0.0.4",
                                 8);

std::string nodeRecord(uint64_t id)
{
    pb::Node node;
    node.set_id(id);
    node.set_name("node" + std::to_string(id));
    node.set_type(pb::COMP_NODE);
    node.set_duration_micros(5);
    std::string body = node.SerializeAsString();
    return test::varint(body.size()) + body;
}

// Reads the whole file; returns the message of the TraceError it throws ("" when none).
std::string readError(const fs::path& file, int64_t* record = nullptr, uint64_t* offset = nullptr)
{
    try {
        TraceReader reader(file);
        TraceNode node;
        while (reader.next(node)) {
        }
    } catch (const TraceError& error) {
        if (record != nullptr)
            *record = error.record();
        if (offset != nullptr)
            *offset = error.offset();
        return error.what();
    }
    return "";
}

std::string setError(const fs::path& prefixOrFolder)
{
    try {
        TraceSet set(prefixOrFolder);
    } catch (const TraceError& error) {
        return error.what();
    }
    return "";
}

const std::string corrupt = "the file is corrupt or not a Chakra ET; regenerate or re-copy it";

class BadInput : public ::testing::Test {
protected:
    etsim::test::TempDir temp;
};

TEST_F(BadInput, EmptyFile)
{
    fs::path file = temp.write("e.0.et", "");
    EXPECT_EQ(readError(file),
              file.string() +
                  ": the file is empty: it holds no record, not even the GlobalMetadata record 0 "
                  "every Chakra ET starts with; the producer probably failed, regenerate it");
}

// A GlobalMetadata with no field set is a valid message of zero bytes: record 0 may be empty
// (etsim's own writer makes such a file from JSON without metadata). A node record may not.
TEST_F(BadInput, AnEmptyMetadataRecordIsValidButAnEmptyNodeIsCorrupt)
{
    fs::path good = temp.write("m.0.et", test::varint(0) + nodeRecord(1) + nodeRecord(2));
    EXPECT_EQ(readError(good), "");
    TraceReader reader(good);
    EXPECT_TRUE(reader.metadata().present);
    EXPECT_EQ(reader.metadata().version(), "");
    TraceNode node;
    ASSERT_TRUE(reader.next(node));
    EXPECT_EQ(node.id, 1U);
    ASSERT_TRUE(reader.next(node));
    EXPECT_EQ(node.id, 2U);
    EXPECT_FALSE(reader.next(node));

    fs::path bad = temp.write("z.0.et", test::varint(0) + nodeRecord(1) + test::varint(0));
    int64_t record = -1;
    std::string message = readError(bad, &record);
    EXPECT_EQ(record, 2);
    EXPECT_NE(message.find("the length prefix is 0"), std::string::npos) << message;
}

TEST_F(BadInput, TruncatedFile)
{
    std::string one = nodeRecord(1);
    std::string two = nodeRecord(2);
    std::string whole = metadataRecord + one + two;
    fs::path file = temp.write("t.0.et", whole.substr(0, whole.size() - 3));
    int64_t record = -1;
    uint64_t offset = 0;
    std::string message = readError(file, &record, &offset);
    EXPECT_EQ(record, 2);
    EXPECT_EQ(offset, metadataRecord.size() + one.size());
    EXPECT_EQ(message,
              file.string() + ": record 2 at byte offset " + std::to_string(offset) +
                  ": length prefix says " + std::to_string(two.size() - 1) + " bytes but only " +
                  std::to_string(two.size() - 4) +
                  " remain in the file: the file is truncated (or the prefix is corrupt); "
                  "regenerate or re-copy it");
}

TEST_F(BadInput, LengthPrefixLargerThanRestOfFile)
{
    fs::path file = temp.write("l.0.et", metadataRecord + test::varint(1000) + "abc");
    EXPECT_EQ(readError(file),
              file.string() +
                  ": record 1 at byte offset 8: length prefix says 1000 bytes but only 3 remain "
                  "in the file: the file is truncated (or the prefix is corrupt); regenerate or "
                  "re-copy it");
}

TEST_F(BadInput, BytesThatAreNotAMessage)
{
    fs::path file =
        temp.write("n.0.et", metadataRecord + nodeRecord(1) + test::varint(4) + "\xff\xff\xff\xff");
    EXPECT_EQ(readError(file),
              file.string() + ": record 2 at byte offset " +
                  std::to_string(8 + nodeRecord(1).size()) +
                  ": the 4 bytes are not a valid Chakra Node message: " + corrupt);
}

TEST_F(BadInput, StrayEndGroupTag)
{
    fs::path file = temp.write("g.0.et", metadataRecord + test::varint(1) + "\x0c");
    EXPECT_NE(readError(file).find(": record 1 at byte offset 8: "), std::string::npos);
    EXPECT_NE(readError(file).find("not a valid Chakra Node message"), std::string::npos);
}

TEST_F(BadInput, AbsurdLengthPrefixRejectedBeforeAllocating)
{
    fs::path file = temp.write("a.0.et", metadataRecord + test::varint(0xFFFFFFF0U) + "x");
    EXPECT_EQ(readError(file),
              file.string() +
                  ": record 1 at byte offset 8: length prefix says 4294967280 bytes, more than "
                  "the 67108864-byte limit per record: " +
                  corrupt +
                  " (raise TraceReaderOptions::maxRecordBytes only if records really are this "
                  "large)");
    // The same in a gzip file, where the file size cannot be checked first.
    fs::path gz = temp.write("a.1.et", test::gzipBytes(metadataRecord + test::varint(0x7FFFFFFF)));
    EXPECT_NE(readError(gz).find("uncompressed byte offset 8: length prefix says 2147483647 bytes, "
                                 "more than the 67108864-byte limit"),
              std::string::npos);
}

TEST_F(BadInput, FileEndsInsideLengthPrefix)
{
    fs::path file = temp.write("p.0.et", metadataRecord + "\x80");
    EXPECT_EQ(readError(file),
              file.string() +
                  ": record 1 at byte offset 8: the file ends inside the length prefix of this "
                  "record, or the prefix is not a varint: the file is truncated or corrupt; "
                  "regenerate or re-copy it");
}

TEST_F(BadInput, GzipCutShort)
{
    std::string stream = metadataRecord;
    for (uint64_t id = 1; id <= 2000; ++id)
        stream += nodeRecord(id);
    std::string gz = test::gzipBytes(stream);
    // Cut in the middle, and cut only the 8-byte trailer: both must be errors, not a shorter
    // trace.
    for (std::size_t keep : {gz.size() / 2, gz.size() - 8}) {
        fs::path file = temp.write("c.0.et", gz.substr(0, keep));
        int64_t record = -1;
        std::string message = readError(file, &record);
        EXPECT_NE(message.find(file.string() + ": record "), std::string::npos) << message;
        EXPECT_NE(message.find("the gzip stream is cut short (the file ends inside compressed "
                               "data); re-compress the original trace or re-copy it"),
                  std::string::npos)
            << message;
        EXPECT_GE(record, 1);
    }
}

TEST_F(BadInput, GzipCorrupt)
{
    std::string stream = metadataRecord;
    for (uint64_t id = 1; id <= 200; ++id)
        stream += nodeRecord(id);
    std::string gz = test::gzipBytes(stream);
    for (std::size_t i = 20; i < 60; ++i)
        gz[i] = static_cast<char>(gz[i] ^ 0x5A);
    std::string message = readError(temp.write("x.0.et", gz));
    EXPECT_NE(message.find(": the gzip data is corrupt (zlib: "), std::string::npos) << message;
}

TEST_F(BadInput, EmptyGzip)
{
    fs::path file = temp.write("z.0.et", test::gzipBytes(""));
    EXPECT_EQ(readError(file),
              file.string() +
                  ": the file is empty after gzip decompression: it holds no record, not even "
                  "the GlobalMetadata record 0 every Chakra ET starts with; the producer "
                  "probably failed, regenerate it");
}

TEST_F(BadInput, JsonFile)
{
    fs::path file = temp.write("j.0.et", "{\"workload_graph\": []}");
    EXPECT_EQ(readError(file),
              file.string() +
                  ": record 0 at byte offset 0: length prefix says 123 bytes but only 21 remain "
                  "in the file: the file is truncated (or the prefix is corrupt); regenerate or "
                  "re-copy it (the file starts like JSON; this reader takes the protobuf form "
                  "of Chakra ET only)");
}

TEST_F(BadInput, RecordZeroNeitherMetadataNorNode)
{
    fs::path file = temp.write("r.0.et", test::varint(2) + "\x08\xff");
    EXPECT_EQ(readError(file),
              file.string() +
                  ": record 0 at byte offset 0: record 0 is neither a GlobalMetadata nor a Node "
                  "message: " +
                  corrupt);
    fs::path meta = temp.write("m.0.et", test::varint(2) + "\x0a\x05");
    EXPECT_EQ(readError(meta),
              meta.string() +
                  ": record 0 at byte offset 0: record 0 is not a valid "
                  "GlobalMetadata message: " +
                  corrupt);
}

TEST_F(BadInput, MissingFileAndFolder)
{
    fs::path missing = temp.file("none.0.et");
    EXPECT_EQ(readError(missing),
              missing.string() +
                  ": cannot open: No such file or directory (check the path and the permissions)");
    EXPECT_EQ(readError(temp.path()),
              temp.path().string() +
                  ": is a folder, not a trace file (read folders and prefixes with TraceSet)");
}

TEST_F(BadInput, FolderWithoutTraces)
{
    temp.write("notes.txt", "hello");
    temp.write("model.et.bak", "x");
    EXPECT_EQ(setError(temp.path()),
              temp.path().string() +
                  ": the folder holds no Chakra ET file named <prefix>.<rank>.et (or .et.gz); "
                  "give the folder of a trace");
    fs::path prefix = temp.file("model");
    EXPECT_EQ(setError(prefix),
              prefix.string() + ": no file " + prefix.string() +
                  ".<rank>.et (or .et.gz) exists; check the prefix");
}

TEST_F(BadInput, ARankFileWhereItsTraceIsWantedNamesThePrefix)
{
    fs::path file = temp.write("job.0.et", metadataRecord);
    EXPECT_EQ(setError(file),
              file.string() + ": this is the file of rank 0 of a trace; give the trace's prefix " +
                  temp.file("job").string() + " (for all its rank files) or its folder");
}

TEST_F(BadInput, GapInRanks)
{
    for (int rank : {0, 1, 3})
        temp.write("a." + std::to_string(rank) + ".et", metadataRecord);
    std::string prefix = temp.file("a").string();
    std::string expected = prefix + ": rank 2 is missing (expected " + prefix +
                           ".2.et; found 3 files with ranks 0-3); ranks must be numbered 0..N-1 "
                           "without gaps";
    EXPECT_EQ(setError(temp.file("a")), expected);
    EXPECT_EQ(setError(temp.path()), expected);
}

TEST_F(BadInput, RankZeroMissing)
{
    temp.write("b.1.et", metadataRecord);
    EXPECT_NE(setError(temp.file("b")).find(": rank 0 is missing"), std::string::npos);
}

TEST_F(BadInput, SeveralTracesInOneFolder)
{
    temp.write("a.0.et", metadataRecord);
    temp.write("b.0.et", metadataRecord);
    EXPECT_EQ(setError(temp.path()),
              temp.path().string() +
                  ": the folder holds the rank files of several traces (a, b); give a prefix "
                  "such as " +
                  temp.file("a").string() + " instead");
}

TEST_F(BadInput, RankWithPlainAndGzipFile)
{
    temp.write("a.0.et", metadataRecord);
    temp.write("a.0.et.gz", test::gzipBytes(metadataRecord));
    EXPECT_EQ(setError(temp.file("a")),
              temp.file("a").string() + ": rank 0 has two files, a.0.et and a.0.et.gz; remove one");
}

} // namespace
} // namespace etsim::et
