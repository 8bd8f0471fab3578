// NodeView reads a record in place as the TraceNode path reads it: the same fields, the same
// typed attribute values (whatever their encoding), the same refusals of bad records. Records
// it does not scan itself (non-ASCII text, inputs, lists, unknown fields) go through protobuf.

#include "et_driver/NodeView.h"

#include "et_driver/TraceCodec.h"
#include "et_driver/TraceReader.h"
#include "tests/et_driver/TraceTestSupport.h"
#include "tests/support/NodeViews.h"
#include "tests/support/TempDir.h"

#include <google/protobuf/stubs/logging.h>
#include <gtest/gtest.h>

#include <random>

namespace etsim::et {
namespace {

namespace pb = ChakraProtoMsg;
using etsim::test::describe;

const std::string metadataRecord("\x07\x0a\x05"
                                 "0.0.4",
                                 8);

std::string framed(const std::string& body)
{
    return test::varint(body.size()) + body;
}

// What a reader sees of a node, from either path; "error: ..." for a refused file.
struct Seen {
    std::vector<std::string> nodes;
    bool operator==(const Seen& other) const { return nodes == other.nodes; }
};

template <typename Node>
Seen read(const std::filesystem::path& file, TraceReaderOptions options = {})
{
    Seen seen;
    try {
        TraceReader reader(file, options);
        Node node;
        while (reader.next(node))
            seen.nodes.push_back(describe(node));
    } catch (const TraceError& error) {
        seen.nodes.push_back(std::string("error: ") + error.what());
    }
    return seen;
}

using test::namedAttribute;

// A node of the kind an algorithm trace holds, with typed attributes in several encodings,
// values some fields cannot hold and repeated names.
pb::Node algorithmNode(std::uint64_t id)
{
    pb::Node node;
    node.set_id(id);
    node.set_name("rrs " + std::to_string(id));
    node.set_type(pb::COMM_RECV_NODE);
    node.add_data_deps(id - 1);
    node.add_ctrl_deps(id + 7);
    node.set_duration_micros(3);
    pb::AttributeProto attr = namedAttribute("comm_src");
    attr.set_int64_val(1LL << 40); // too large for comm_src: the next one counts
    *node.add_attr() = attr;
    attr.set_sint32_val(-3);
    *node.add_attr() = attr;
    attr = namedAttribute("comm_size");
    attr.set_fixed64_val(4096);
    *node.add_attr() = attr;
    attr = namedAttribute("comm_tag");
    attr.set_double_val(2.0); // not an integer: absent
    *node.add_attr() = attr;
    attr = namedAttribute("comm_dst");
    attr.set_uint32_val(5);
    attr.set_doc_string("documented attributes stay preserved");
    *node.add_attr() = attr;
    attr = namedAttribute("num_ops");
    attr.set_sfixed32_val(-9);
    *node.add_attr() = attr;
    attr = namedAttribute("is_cpu_op");
    attr.set_bool_val(true);
    *node.add_attr() = attr;
    attr = namedAttribute("comm_priority");
    attr.set_uint64_val(~0ULL);
    *node.add_attr() = attr;
    attr = namedAttribute("chunk_op");
    attr.set_string_val("rrs");
    *node.add_attr() = attr;
    attr = namedAttribute("gemm_m");
    attr.set_fixed32_val(0xFFFFFFFFU);
    *node.add_attr() = attr;
    attr = namedAttribute("gemm_n");
    attr.set_sint64_val(-77);
    *node.add_attr() = attr;
    attr = namedAttribute("gemm_k");
    attr.set_int32_val(-1);
    *node.add_attr() = attr;
    attr = namedAttribute("tensor_size");
    attr.set_bytes_val("\x01\x02");
    *node.add_attr() = attr;
    return node;
}

class NodeViewTest : public ::testing::Test {
protected:
    etsim::test::TempDir temp;
};

TEST_F(NodeViewTest, ReadsWhatTheTraceNodePathReads)
{
    std::string file = metadataRecord;
    for (std::uint64_t id = 10; id < 13; ++id)
        file += framed(algorithmNode(id).SerializeAsString());
    std::filesystem::path path = temp.write("v.0.et", file);
    Seen nodes = read<TraceNode>(path);
    ASSERT_EQ(nodes.nodes.size(), 3U);
    EXPECT_EQ(nodes.nodes[0], "10 rrs 10 6 17, 9, 3 1 -9 - - 4096 -3 - - - 4294967295 -77 -1 -");
    EXPECT_EQ(read<NodeView>(path), nodes);
}

// Records lying whole in the reader's buffer are viewed where they lie; the others (split by a
// buffer's end, in a plain or an inflated stream) are read through the general path. Which
// one reads a record changes nothing of what is seen.
TEST_F(NodeViewTest, RecordsAcrossBufferEndsAreSeenAsTheOthers)
{
    std::string plain = metadataRecord;
    for (std::uint64_t id = 1; id <= 300; ++id)
        plain += framed(algorithmNode(id).SerializeAsString());
    std::filesystem::path flat = temp.write("flat.0.et", plain);
    std::filesystem::path packed = temp.write("packed.0.et", test::gzipBytes(plain));
    Seen expected = read<TraceNode>(flat);
    ASSERT_EQ(expected.nodes.size(), 300U);
    // One record is about 170 bytes: 64 splits nearly every one, 1,000 about one in six.
    for (std::size_t buffer : {64, 333, 1000, 256 * 1024}) {
        TraceReaderOptions options;
        options.bufferBytes = buffer;
        EXPECT_EQ(read<NodeView>(flat, options), expected) << "buffer " << buffer;
        EXPECT_EQ(read<NodeView>(packed, options), expected) << "gzip, buffer " << buffer;
    }
}

TEST_F(NodeViewTest, RecordsItDoesNotScanAreReadThroughProtobuf)
{
    std::vector<pb::Node> nodes;
    pb::Node node = algorithmNode(1);
    node.set_name("r\xc3\xa9"
                  "ception"); // UTF-8 beyond ASCII
    nodes.push_back(node);
    node = algorithmNode(2);
    node.mutable_inputs()->set_values("[1]");
    nodes.push_back(node);
    node = algorithmNode(3);
    node.mutable_attr(0)->mutable_int32_list()->add_values(4);
    nodes.push_back(node);
    node = algorithmNode(4);
    std::string withUnknown = node.SerializeAsString() + std::string("\xa0\x06\x01", 3);
    std::string file = metadataRecord;
    for (const pb::Node& each : nodes) {
        NodeView view;
        EXPECT_FALSE(view.scan(each.SerializeAsString())) << each.id();
        file += framed(each.SerializeAsString());
    }
    NodeView view;
    EXPECT_FALSE(view.scan(withUnknown));
    EXPECT_TRUE(view.scan(algorithmNode(5).SerializeAsString()));
    file += framed(withUnknown);
    std::filesystem::path path = temp.write("p.0.et", file);
    Seen seen = read<TraceNode>(path);
    ASSERT_EQ(seen.nodes.size(), 4U);
    EXPECT_EQ(read<NodeView>(path), seen);
}

// A record with a field in the deprecated group encoding: protobuf keeps it as an unknown
// field, the TraceNode path's in-place scan gives up on it and decodes from the message
// alone, which once found the name already moved out of the message (read as "").
TEST_F(NodeViewTest, ARecordWithAnUnknownGroupKeepsItsName)
{
    // Field 20, an empty group: start tag (wire type 3), end tag (wire type 4).
    const std::string group = test::varint((20 << 3) | 3) + test::varint((20 << 3) | 4);
    std::filesystem::path path = temp.write(
        "g.0.et", metadataRecord + framed(algorithmNode(30).SerializeAsString() + group));
    Seen seen = read<TraceNode>(path);
    ASSERT_EQ(seen.nodes.size(), 1U);
    EXPECT_EQ(seen.nodes[0].substr(0, 9), "30 rrs 30");
    EXPECT_EQ(read<NodeView>(path), seen);
}

// A file without the metadata record: record 0 is already a node (spec 3.2).
TEST_F(NodeViewTest, AFileWithoutMetadataStartsWithItsFirstNode)
{
    std::string file = framed(algorithmNode(20).SerializeAsString()) +
                       framed(algorithmNode(21).SerializeAsString());
    std::filesystem::path path = temp.write("legacy.0.et", file);
    Seen seen = read<TraceNode>(path);
    ASSERT_EQ(seen.nodes.size(), 2U);
    EXPECT_EQ(seen.nodes[0].substr(0, 9), "20 rrs 20");
    EXPECT_EQ(read<NodeView>(path), seen);
}

TEST_F(NodeViewTest, BadRecordsAreRefusedWithTheSameErrors)
{
    std::string good = framed(algorithmNode(1).SerializeAsString());
    pb::Node badText = algorithmNode(2);
    badText.set_name(std::string("\xff\xfe", 2));
    for (const std::string& bad : {framed("\xff\xff\xff\xff"),
                                   framed("\x0c"),
                                   framed(std::string("\x00\x01", 2)),
                                   framed(badText.SerializeAsString()),
                                   good.substr(0, good.size() - 2),
                                   test::varint(0)}) {
        std::filesystem::path path = temp.write("b.0.et", metadataRecord + good + bad);
        Seen seen = read<TraceNode>(path);
        ASSERT_EQ(seen.nodes.size(), 2U);
        EXPECT_EQ(seen.nodes[1].substr(0, 7), "error: ");
        EXPECT_EQ(read<NodeView>(path), seen);
    }
}

// Byte by byte changes of a valid record: wherever one path accepts, the other reads the same
// node; wherever one refuses, the other refuses with the same message.
TEST_F(NodeViewTest, AgreesWithTheTraceNodePathOnMangledRecords)
{
    std::string body = algorithmNode(40).SerializeAsString();
    // Protobuf logs a line for every string that is not UTF-8; hundreds are made here.
    google::protobuf::LogHandler* logger = google::protobuf::SetLogHandler(nullptr);
    std::mt19937 random(25);
    int accepted = 0;
    for (int trial = 0; trial < 500; ++trial) {
        std::string mangled = body;
        for (int change = 0; change < 1 + trial % 3; ++change) {
            std::size_t at = random() % mangled.size();
            mangled[at] = static_cast<char>(random() % 4 == 0 ? mangled[at] ^ 0x80 : random());
        }
        std::filesystem::path path = temp.write("m.0.et", metadataRecord + framed(mangled));
        Seen seen = read<TraceNode>(path);
        accepted += seen.nodes.size() == 1 && seen.nodes[0].substr(0, 6) != "error:" ? 1 : 0;
        ASSERT_EQ(read<NodeView>(path), seen) << "trial " << trial;
        std::filesystem::remove(path);
    }
    google::protobuf::SetLogHandler(logger);
    // Both outcomes occur.
    EXPECT_GT(accepted, 50);
    EXPECT_LT(accepted, 450);
}

} // namespace
} // namespace etsim::et
