// What the Chakra algorithm loader reads of a node, in one pass over its attributes: the last
// chunk attribute of each name (text only from a string_val, numbers only from int64/uint64),
// and the first comm_* attribute that TraceCodec decodes into its typed field.
#include "platforms/collectives/ChakraNodeAttrs.h"

#include "et_driver/proto/et_def.pb.h"

#include <gtest/gtest.h>

#include <string>

namespace etsim::platform {
namespace {

namespace pb = ChakraProtoMsg;

// Views `node` as the trace reader does (through protobuf, so every encoding is allowed).
struct Viewed {
    pb::Node message;
    et::NodeView view;

    pb::AttributeProto& add(const std::string& name)
    {
        pb::AttributeProto* attr = message.add_attr();
        attr->set_name(name);
        return *attr;
    }
    ChakraNodeAttrs read()
    {
        view.assign(message);
        return chakraNodeAttrs(view);
    }
};

TEST(ChakraNodeAttrs, ChunkAttributesTakeTheLastOfEachName)
{
    Viewed node;
    node.add("chunk_op").set_string_val("s");
    node.add("chunk_op").set_string_val("rrs");
    node.add("chunk_op").set_int64_val(3); // not text: ignored
    node.add("src_buf").set_string_val("i");
    node.add("dst_buf").set_string_val("o");
    node.add("src_off").set_int64_val(7);
    node.add("src_off").set_uint64_val(9);
    node.add("dst_off").set_int32_val(5); // int32_val is 0 for the loader
    node.add("chunk_count").set_int64_val(4);
    node.add("chunk_counts").set_int64_val(99); // another name
    ChakraNodeAttrs attrs = node.read();
    ASSERT_TRUE(attrs.op.has_value());
    EXPECT_EQ(*attrs.op, "rrs");
    EXPECT_EQ(attrs.srcBuf.value_or("-"), "i");
    EXPECT_EQ(attrs.dstBuf.value_or("-"), "o");
    EXPECT_EQ(attrs.srcOff, 9);
    EXPECT_EQ(attrs.dstOff, 0);
    EXPECT_EQ(attrs.count, 4);
}

TEST(ChakraNodeAttrs, CommAttributesTakeTheFirstTheTypedFieldHolds)
{
    Viewed node;
    node.add("comm_src").set_int64_val(1LL << 40); // beyond int32: the next one counts
    node.add("comm_src").set_int32_val(3);
    node.add("comm_src").set_int32_val(4);
    pb::AttributeProto& documented = node.add("comm_dst");
    documented.set_int32_val(8);
    documented.set_doc_string("not plain: not decoded into the field");
    node.add("comm_dst").set_uint32_val(2);
    node.add("comm_tag").set_double_val(1.0); // not an integer
    node.add("comm_size").set_uint64_val(4096);
    ChakraNodeAttrs attrs = node.read();
    EXPECT_EQ(attrs.commSrc, 3);
    EXPECT_EQ(attrs.commDst, 2);
    EXPECT_FALSE(attrs.commTag.has_value());
    EXPECT_EQ(attrs.commSize, 4096);
    EXPECT_FALSE(attrs.op.has_value());
    EXPECT_EQ(attrs.count, 1);
}

} // namespace
} // namespace etsim::platform
