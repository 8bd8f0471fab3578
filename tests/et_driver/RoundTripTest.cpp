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

} // namespace
} // namespace etsim::et
