// et -> et byte for byte: every record of every real trace, and of traces written by our
// writer, re-serializes to its original bytes.

#include "et_driver/TraceCodec.h"
#include "et_driver/TraceReader.h"
#include "et_driver/TraceWriter.h"
#include "tests/et_driver/TraceTestSupport.h"
#include "tests/support/TempDir.h"

#include <gtest/gtest.h>

namespace etsim::et {
namespace {

namespace fs = std::filesystem;
namespace pb = ChakraProtoMsg;

// Reads `file` with TraceReader and compares each re-encoded record with the original bytes.
// Returns the number of records compared.
std::size_t expectSameRecords(const fs::path& file)
{
    std::vector<std::string> records = test::splitRecords(test::recordStream(file));
    TraceReader reader(file);
    std::size_t index = 0;
    if (reader.metadata().present) {
        EXPECT_EQ(reader.metadata().message.SerializeAsString(), records.at(0)) << file;
        index = 1;
    }
    TraceNode node;
    pb::Node message;
    while (reader.next(node)) {
        if (index >= records.size()) {
            ADD_FAILURE() << file << ": more nodes than records";
            break;
        }
        TraceCodec::encode(node, message);
        EXPECT_EQ(message.SerializeAsString(), records[index])
            << file << ": record " << index << " (node " << node.id << ") differs";
        ++index;
    }
    EXPECT_EQ(index, records.size()) << file;
    return index;
}

TEST(RoundTrip, EveryRealTraceRecordByRecord)
{
    std::optional<fs::path> dir = test::sharedTraces();
    if (!dir)
        GTEST_SKIP() << "shared traces not found: set ETSIM_TRACES to the traces folder";
    std::size_t files = 0;
    std::size_t records = 0;
    for (const auto& entry : fs::recursive_directory_iterator(*dir)) {
        std::string name = entry.path().filename().string();
        bool isEt = name.size() > 3 && (name.compare(name.size() - 3, 3, ".et") == 0 ||
                                        name.find(".et.gz") == name.size() - 6);
        if (!entry.is_regular_file() || !isEt)
            continue;
        records += expectSameRecords(entry.path());
        ++files;
    }
    // chakra.0.et, chakra.0.et.gz and the 64 ResNet-50 ranks.
    EXPECT_EQ(files, 66U);
    EXPECT_EQ(records, 3665U + 11348U + 64U * 215U);
}

TEST(RoundTrip, WriterCopyOfRealTraceIsIdenticalFile)
{
    std::optional<fs::path> dir = test::sharedTraces();
    if (!dir)
        GTEST_SKIP() << "shared traces not found: set ETSIM_TRACES to the traces folder";
    etsim::test::TempDir temp;
    for (fs::path source : {*dir / "chakra-feeder-test" / "chakra.0.et",
                            *dir / "pytorch-linked-1.1.0-r0" / "chakra.0.et.gz"}) {
        TraceReader reader(source);
        fs::path copy = temp.file("copy.0.et");
        TraceWriter writer(copy, reader.metadata().message);
        TraceNode node;
        while (reader.next(node))
            writer.write(node);
        writer.close();
        EXPECT_TRUE(test::recordStream(source) == etsim::test::readFile(copy))
            << source << " changed when copied";
    }
}

TEST(RoundTrip, WriterTraceWithEveryAttributeType)
{
    etsim::test::TempDir temp;
    fs::path file = temp.file("rich.0.et");
    pb::GlobalMetadata metadata = TraceWriter::defaultMetadata();
    auto* attr = metadata.add_attr();
    attr->set_name("schema");
    attr->set_string_val("etsim-test");
    {
        TraceWriter writer(file, metadata);
        for (uint64_t id = 10; id < 20; ++id)
            writer.write(test::richNode(id));
        writer.close();
    }
    EXPECT_EQ(expectSameRecords(file), 11U);
    TraceReader reader(file);
    EXPECT_EQ(reader.metadata().version(), "0.0.4");
    EXPECT_EQ(reader.metadata().stringAttr("schema"), std::optional<std::string>("etsim-test"));
    TraceNode node;
    for (uint64_t id = 10; id < 20; ++id) {
        ASSERT_TRUE(reader.next(node));
        EXPECT_EQ(node, test::richNode(id));
    }
    EXPECT_FALSE(reader.next(node));
}

// Empty metadata (JSON with no version or attributes) would be a zero-length record 0, the
// end of the file to Chakra's Python tools: the writer gives it the default version instead.
TEST(RoundTrip, EmptyMetadataIsWrittenWithTheDefaultVersion)
{
    etsim::test::TempDir temp;
    fs::path file = temp.file("bare.0.et");
    {
        TraceWriter writer(file, pb::GlobalMetadata());
        writer.write(test::richNode(1));
        writer.close();
    }
    std::vector<std::string> records = test::splitRecords(test::recordStream(file));
    ASSERT_EQ(records.size(), 2U);
    EXPECT_FALSE(records[0].empty());
    TraceReader reader(file);
    EXPECT_EQ(reader.metadata().version(), TraceWriter::defaultMetadata().version());
    TraceNode node;
    ASSERT_TRUE(reader.next(node));
    EXPECT_EQ(node, test::richNode(1));
}

} // namespace
} // namespace etsim::et

namespace etsim::et {
namespace {

// Records split across read buffers take the codec's general path; tiny buffers force that
// for most records, and the nodes must not change.
TEST(RoundTrip, BufferSizeDoesNotChangeNodes)
{
    etsim::test::TempDir temp;
    fs::path file = temp.file("b.0.et");
    {
        TraceWriter writer(file);
        for (uint64_t id = 1; id <= 50; ++id)
            writer.write(test::richNode(id));
        writer.close();
    }
    TraceReaderOptions tiny;
    tiny.bufferBytes = 16;
    TraceReader small(file, tiny);
    TraceReader large(file);
    TraceNode a;
    TraceNode b;
    int count = 0;
    while (large.next(a)) {
        ASSERT_TRUE(small.next(b));
        ASSERT_EQ(a, b) << "node " << a.id;
        ++count;
    }
    EXPECT_FALSE(small.next(b));
    EXPECT_EQ(count, 50);
}

// Non-canonical input (unpacked dependencies, fields out of order, an unknown field between
// known ones) decodes to the same values; preserved parts keep their bytes.
TEST(RoundTrip, NonCanonicalRecordDecodes)
{
    std::string body;
    body += std::string("\x12\x01x", 3);        // name "x"
    body += std::string("\x28\x05\x28\x06", 4); // data_deps 5, 6 unpacked
    body += std::string("\x08\x2a", 2);         // id 42 after the name
    body += std::string("\x98\x03\x07", 3);     // unknown field 51 = 7
    body += std::string("\x2a\x01\x07", 3);     // data_deps 7 packed
    body += std::string("\x52\x07\x0a\x03"
                        "abc\x48\x01",
                        9); // attr abc = 1
    etsim::test::TempDir temp;
    fs::path file = temp.write("n.0.et",
                               std::string("\x07\x0a\x05"
                                           "0.0.4",
                                           8) +
                                   test::varint(body.size()) + body);
    TraceReader reader(file);
    TraceNode node;
    ASSERT_TRUE(reader.next(node));
    EXPECT_EQ(node.id, 42U);
    EXPECT_EQ(node.name, "x");
    EXPECT_EQ(node.dataDeps, (std::vector<uint64_t>{5, 6, 7}));
    ASSERT_EQ(node.otherAttributeCount(), 1U);
    EXPECT_EQ(node.preserved(),
              std::string("\x98\x03\x07\x52\x07\x0a\x03"
                          "abc\x48\x01",
                          12));
    EXPECT_FALSE(reader.next(node));
}

} // namespace
} // namespace etsim::et
