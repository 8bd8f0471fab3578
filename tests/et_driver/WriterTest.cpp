#include "et_driver/TraceReader.h"
#include "et_driver/TraceWriter.h"
#include "tests/et_driver/TraceTestSupport.h"
#include "tests/support/TempDir.h"

#include <gtest/gtest.h>

namespace etsim::et {
namespace {

namespace fs = std::filesystem;

std::vector<TraceNode> sampleNodes()
{
    std::vector<TraceNode> nodes;
    for (uint64_t id = 0; id < 500; ++id) {
        TraceNode node;
        node.id = id;
        node.name = id % 10 == 0 ? "ncclDevKernel_AllReduce" : "aten::mm";
        node.type = id % 10 == 0 ? NodeType::CommColl : NodeType::Comp;
        if (id > 0)
            node.dataDeps = {id - 1};
        node.durationMicros = id * 3;
        node.setIsCpuOp(id % 3 == 0);
        if (node.type == NodeType::CommColl) {
            node.setCommType(CollectiveType::AllReduce);
            node.setCommSize(int64_t(id) << 10);
        } else {
            node.setNumOps(int64_t(id) * 1000);
            node.setTensorSize(id * 64);
        }
        nodes.push_back(node);
    }
    nodes.push_back(test::richNode(1000));
    return nodes;
}

void writeAll(const fs::path& file, const std::vector<TraceNode>& nodes, TraceWriterOptions options)
{
    TraceWriter writer(file, TraceWriter::defaultMetadata(), options);
    for (const TraceNode& node : nodes)
        writer.write(node);
    EXPECT_EQ(writer.nodesWritten(), nodes.size());
    writer.close();
}

void expectReadBack(const fs::path& file, const std::vector<TraceNode>& nodes, bool gzip)
{
    TraceReader reader(file);
    EXPECT_EQ(reader.compressed(), gzip);
    EXPECT_TRUE(reader.metadata().present);
    EXPECT_EQ(reader.metadata().version(), "0.0.4");
    std::vector<TraceNode> batch;
    std::size_t index = 0;
    while (reader.nextBatch(batch) > 0) {
        EXPECT_LE(batch.size(), 4096U);
        for (const TraceNode& node : batch) {
            ASSERT_LT(index, nodes.size());
            EXPECT_EQ(node, nodes[index]) << "node " << index;
            ++index;
        }
    }
    EXPECT_EQ(index, nodes.size());
    EXPECT_TRUE(reader.atEnd());
    EXPECT_FALSE(reader.isOpen());
}

TEST(TraceWriter, PlainReadsBackIdentical)
{
    etsim::test::TempDir temp;
    std::vector<TraceNode> nodes = sampleNodes();
    writeAll(temp.file("t.0.et"), nodes, {});
    std::string bytes = etsim::test::readFile(temp.file("t.0.et"));
    // Record 0 is the metadata: length 7, field 1 "0.0.4".
    EXPECT_EQ(bytes.substr(0, 8),
              std::string("\x07\x0a\x05"
                          "0.0.4",
                          8));
    expectReadBack(temp.file("t.0.et"), nodes, false);
}

TEST(TraceWriter, GzipByNameAndByOption)
{
    etsim::test::TempDir temp;
    std::vector<TraceNode> nodes = sampleNodes();
    writeAll(temp.file("t.0.et.gz"), nodes, {});
    EXPECT_EQ(etsim::test::readFile(temp.file("t.0.et.gz")).substr(0, 2), "\x1f\x8b");
    expectReadBack(temp.file("t.0.et.gz"), nodes, true);

    TraceWriterOptions options;
    options.compression = TraceCompression::Gzip;
    writeAll(temp.file("g.0.et"), nodes, options);
    expectReadBack(temp.file("g.0.et"), nodes, true);
    // Same record stream as the plain file.
    writeAll(temp.file("p.0.et"), nodes, {});
    EXPECT_TRUE(test::recordStream(temp.file("g.0.et")) ==
                etsim::test::readFile(temp.file("p.0.et")));

    options.compression = TraceCompression::None;
    writeAll(temp.file("n.0.et.gz"), nodes, options);
    EXPECT_EQ(etsim::test::readFile(temp.file("n.0.et.gz"))[0], '\x07');
}

TEST(TraceWriter, RefusesAllDefaultNode)
{
    etsim::test::TempDir temp;
    TraceWriter writer(temp.file("d.0.et"));
    TraceNode named;
    named.name = "x";
    writer.write(named);
    try {
        writer.write(TraceNode());
        FAIL() << "expected an error";
    } catch (const TraceError& error) {
        EXPECT_EQ(std::string(error.what()),
                  temp.file("d.0.et").string() +
                      ": node 1 after the metadata has only default fields (id 0, no name, "
                      "INVALID_NODE): it would be a zero-length record, which Chakra's Python "
                      "tools read as end of file; give it a name");
    }
    writer.close();
    TraceReader reader(temp.file("d.0.et"));
    TraceNode node;
    ASSERT_TRUE(reader.next(node));
    EXPECT_EQ(node.name, "x");
    EXPECT_FALSE(reader.next(node));
}

TEST(TraceWriter, UncreatableFile)
{
    etsim::test::TempDir temp;
    fs::path file = temp.file("missing/dir/t.0.et");
    try {
        TraceWriter writer(file);
        FAIL() << "expected an error";
    } catch (const TraceError& error) {
        EXPECT_EQ(std::string(error.what()),
                  file.string() +
                      ": cannot create: No such file or directory (check that the folder "
                      "exists and is writable)");
    }
}

} // namespace
} // namespace etsim::et
