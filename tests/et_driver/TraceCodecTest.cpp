// TraceCodec::decodeRecord reads a Node record without protobuf's parser, and must make of it
// exactly the TraceNode that protobuf's parse and TraceCodec::decode make; it gives up on
// whatever it cannot take for certain to be valid, and never accepts what protobuf refuses.

#include "et_driver/TraceCodec.h"

#include "tests/et_driver/TraceTestSupport.h"

#include <google/protobuf/stubs/logging.h>
#include <gtest/gtest.h>

#include <random>

namespace etsim::et {
namespace {

namespace pb = ChakraProtoMsg;

using test::namedAttribute;

// A compute node as `etsim gen` writes one: tensor tuples in inputs and outputs, typed
// attributes, a preserved one between them.
pb::Node computeNode(std::uint64_t id)
{
    pb::Node node;
    node.set_id(id);
    node.set_name("layer0.qkv_proj " + std::to_string(id));
    node.set_type(pb::COMP_NODE);
    node.add_data_deps(id - 1);
    node.add_data_deps(id - 3);
    node.add_ctrl_deps(id - 2);
    node.set_start_time_micros(11);
    node.set_duration_micros(7);
    node.mutable_inputs()->set_values("[[5, 5, 0, 1024, 2, 'cuda:0']]");
    node.mutable_inputs()->set_shapes("[[1024]]");
    node.mutable_inputs()->set_types("['Tensor(c10::BFloat16)']");
    node.mutable_outputs()->set_values("[[6, 6, 0, 512, 2, 'cuda:0']]");
    pb::AttributeProto attr = namedAttribute("num_ops");
    attr.set_int64_val(1 << 20);
    *node.add_attr() = attr;
    attr = namedAttribute("rf_id");
    attr.set_uint64_val(99);
    *node.add_attr() = attr;
    attr = namedAttribute("op_kind");
    attr.set_string_val("gemm");
    *node.add_attr() = attr;
    attr = namedAttribute("gemm_m");
    attr.set_sint64_val(-4);
    *node.add_attr() = attr;
    attr = namedAttribute("tensor_size");
    attr.set_fixed64_val(3072);
    *node.add_attr() = attr;
    return node;
}

// A collective with involved_dim, which a bool_list carries.
pb::Node collectiveNode(std::uint64_t id, int dims)
{
    pb::Node node;
    node.set_id(id);
    node.set_name("all_reduce");
    node.set_type(pb::COMM_COLL_NODE);
    pb::AttributeProto attr = namedAttribute("comm_type");
    attr.set_int32_val(pb::ALL_REDUCE);
    *node.add_attr() = attr;
    attr = namedAttribute("comm_size");
    attr.set_uint32_val(1 << 20);
    *node.add_attr() = attr;
    attr = namedAttribute("involved_dim");
    for (int dim = 0; dim < dims; ++dim)
        attr.mutable_bool_list()->add_values(dim % 3 != 1);
    *node.add_attr() = attr;
    attr = namedAttribute("pg_name");
    attr.set_string_val("3");
    *node.add_attr() = attr;
    return node;
}

// One field of wire bytes: a length-delimited `payload`, or (varint) its varint value.
std::string delimited(int number, const std::string& payload)
{
    return test::varint((static_cast<std::uint64_t>(number) << 3) | 2) +
           test::varint(payload.size()) + payload;
}
std::string varintField(int number, std::uint64_t value)
{
    return test::varint(static_cast<std::uint64_t>(number) << 3) + test::varint(value);
}

// What protobuf's parse and the codec make of `record`; nullopt when protobuf refuses it.
std::optional<TraceNode> parsed(const std::string& record)
{
    pb::Node message;
    if (!message.ParseFromString(record))
        return std::nullopt;
    TraceNode node;
    TraceCodec::decode(message, record, node);
    return node;
}

void expectDecodedInPlace(const std::string& record, const std::string& what)
{
    const std::optional<TraceNode> expected = parsed(record);
    ASSERT_TRUE(expected.has_value()) << what;
    TraceNode node = test::richNode(1); // whatever it held before must go
    ASSERT_TRUE(TraceCodec::decodeRecord(record, node)) << what;
    EXPECT_EQ(node, *expected) << what;
}

TEST(TraceCodecTest, DecodesInPlaceWhatTheParseDecodes)
{
    expectDecodedInPlace(computeNode(10).SerializeAsString(), "compute node");
    expectDecodedInPlace(collectiveNode(11, 3).SerializeAsString(), "three dimensions");
    expectDecodedInPlace(collectiveNode(12, 32).SerializeAsString(), "32 dimensions");
    // More than 32 dimensions: involved_dim stays preserved.
    expectDecodedInPlace(collectiveNode(13, 40).SerializeAsString(), "40 dimensions");
    expectDecodedInPlace(collectiveNode(14, 0).SerializeAsString(), "an empty list");

    // Repeated names keep the first in the typed field; a documented attribute is preserved.
    pb::Node node = computeNode(20);
    pb::AttributeProto again = namedAttribute("num_ops");
    again.set_int32_val(5);
    again.set_doc_string("a second one");
    *node.add_attr() = again;
    *node.add_attr() = namedAttribute("num_ops");
    expectDecodedInPlace(node.SerializeAsString(), "repeated and documented");

    // Non-canonical encodings: a scalar given twice keeps the last value, unpacked ids append
    // to packed ones, an unpacked bool list, and inputs given twice.
    const std::string base = computeNode(30).SerializeAsString();
    const std::string unpackedList =
        delimited(10,
                  delimited(1, "involved_dim") +
                      delimited(28, varintField(1, 1) + varintField(1, 0) + varintField(1, 2)));
    const std::string extra = varintField(1, 31) + delimited(2, "xy") + varintField(5, 7) +
                              delimited(8, delimited(1, "[1]"));
    expectDecodedInPlace(base + extra + unpackedList, "non-canonical");
}

TEST(TraceCodecTest, LeavesToProtobufWhatItCannotTakeForCertain)
{
    std::vector<std::pair<std::string, std::string>> records;
    pb::Node node = computeNode(1);
    node.set_name("r\xc3\xa9"
                  "duction");
    records.emplace_back(node.SerializeAsString(), "a name beyond ASCII");
    node = computeNode(2);
    node.mutable_inputs()->set_types("['caf\xc3\xa9']");
    records.emplace_back(node.SerializeAsString(), "inputs beyond ASCII");
    node = computeNode(3);
    node.mutable_attr(1)->mutable_int64_list()->add_values(4);
    records.emplace_back(node.SerializeAsString(), "an int64 list");
    records.emplace_back(computeNode(4).SerializeAsString() + std::string("\xa0\x06\x01", 3),
                         "an unknown field");
    records.emplace_back(computeNode(5).SerializeAsString() + test::varint((20 << 3) | 3) +
                             test::varint((20 << 3) | 4),
                         "a group");
    node = computeNode(6);
    node.mutable_outputs()
        ->GetReflection()
        ->MutableUnknownFields(node.mutable_outputs())
        ->AddVarint(7, 1);
    records.emplace_back(node.SerializeAsString(), "an unknown field in outputs");
    // A scalar value, then a bool list in the same attribute: protobuf switches the oneof.
    records.emplace_back(
        computeNode(7).SerializeAsString() +
            delimited(10, delimited(1, "involved_dim") + varintField(9, 1) + delimited(28, "")),
        "a value before a list");
    records.emplace_back(
        computeNode(8).SerializeAsString() +
            delimited(10, delimited(1, "involved_dim") + delimited(28, "") + varintField(9, 1)),
        "a value after a list");
    for (const auto& [record, what] : records) {
        ASSERT_TRUE(parsed(record).has_value()) << what;
        TraceNode decoded;
        EXPECT_FALSE(TraceCodec::decodeRecord(record, decoded)) << what;
    }
}

// Byte by byte changes of valid records: wherever the in-place decoder accepts, protobuf
// accepts too and the codec makes the same node of it.
TEST(TraceCodecTest, AgreesWithProtobufOnMangledRecords)
{
    const std::vector<std::string> bodies = {computeNode(40).SerializeAsString(),
                                             collectiveNode(41, 4).SerializeAsString()};
    // Protobuf logs a line for every string that is not UTF-8; many are made here.
    google::protobuf::LogHandler* logger = google::protobuf::SetLogHandler(nullptr);
    std::mt19937 random(19);
    int decoded = 0;
    int refused = 0;
    for (int trial = 0; trial < 2000; ++trial) {
        std::string mangled = bodies[trial % 2];
        for (int change = 0; change < 1 + trial % 3; ++change) {
            std::size_t at = random() % mangled.size();
            mangled[at] = static_cast<char>(random() % 4 == 0 ? mangled[at] ^ 0x80 : random());
        }
        const std::optional<TraceNode> expected = parsed(mangled);
        TraceNode node;
        if (!TraceCodec::decodeRecord(mangled, node)) {
            refused += expected ? 0 : 1;
            continue;
        }
        ++decoded;
        ASSERT_TRUE(expected.has_value()) << "trial " << trial;
        ASSERT_EQ(node, *expected) << "trial " << trial;
    }
    google::protobuf::SetLogHandler(logger);
    // Both outcomes occur.
    EXPECT_GT(decoded, 200);
    EXPECT_GT(refused, 200);
}

} // namespace
} // namespace etsim::et
