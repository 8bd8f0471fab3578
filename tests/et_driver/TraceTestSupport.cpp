#include "tests/et_driver/TraceTestSupport.h"

#include "et_driver/TraceCodec.h"
#include "et_driver/TraceReader.h"
#include "tests/support/TempDir.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <stdexcept>
#include <zlib.h>

namespace etsim::et::test {

namespace pb = ChakraProtoMsg;

std::string varint(uint64_t value)
{
    std::string out;
    do {
        auto byte = static_cast<unsigned char>(value & 0x7F);
        value >>= 7;
        if (value != 0)
            byte |= 0x80;
        out += static_cast<char>(byte);
    } while (value != 0);
    return out;
}

std::vector<std::string> splitRecords(const std::string& stream)
{
    std::vector<std::string> records;
    std::size_t pos = 0;
    while (pos < stream.size()) {
        uint64_t length = 0;
        int shift = 0;
        while (true) {
            if (pos >= stream.size() || shift > 28) {
                ADD_FAILURE() << "bad length prefix at byte " << pos;
                return records;
            }
            auto byte = static_cast<unsigned char>(stream[pos++]);
            length |= static_cast<uint64_t>(byte & 0x7F) << shift;
            shift += 7;
            if ((byte & 0x80) == 0)
                break;
        }
        if (length > stream.size() - pos) {
            ADD_FAILURE() << "record at byte " << pos << " runs past the end";
            return records;
        }
        records.push_back(stream.substr(pos, length));
        pos += length;
    }
    return records;
}

std::string gzipBytes(const std::string& plain)
{
    z_stream zs{};
    if (deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        throw std::runtime_error("deflateInit2 failed");
    std::string out(deflateBound(&zs, plain.size()) + 32, '\0');
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(plain.data()));
    zs.avail_in = static_cast<uInt>(plain.size());
    zs.next_out = reinterpret_cast<Bytef*>(out.data());
    zs.avail_out = static_cast<uInt>(out.size());
    int status = deflate(&zs, Z_FINISH);
    out.resize(zs.total_out);
    deflateEnd(&zs);
    if (status != Z_STREAM_END)
        throw std::runtime_error("deflate failed");
    return out;
}

std::string gunzipBytes(const std::string& compressed)
{
    z_stream zs{};
    if (inflateInit2(&zs, 15 + 16) != Z_OK)
        throw std::runtime_error("inflateInit2 failed");
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data()));
    zs.avail_in = static_cast<uInt>(compressed.size());
    std::string out;
    char buffer[1 << 16];
    int status = Z_OK;
    while (status != Z_STREAM_END) {
        zs.next_out = reinterpret_cast<Bytef*>(buffer);
        zs.avail_out = sizeof buffer;
        status = inflate(&zs, Z_NO_FLUSH);
        if (status != Z_OK && status != Z_STREAM_END) {
            inflateEnd(&zs);
            throw std::runtime_error("inflate failed");
        }
        out.append(buffer, sizeof buffer - zs.avail_out);
    }
    inflateEnd(&zs);
    return out;
}

std::string recordStream(const std::filesystem::path& file)
{
    std::string bytes = etsim::test::readFile(file);
    if (bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1F &&
        static_cast<unsigned char>(bytes[1]) == 0x8B)
        return gunzipBytes(bytes);
    return bytes;
}

std::map<uint64_t, TraceNode> nodesById(const std::filesystem::path& file)
{
    std::map<uint64_t, TraceNode> nodes;
    TraceReader reader(file);
    TraceNode node;
    while (reader.next(node))
        nodes[node.id] = node;
    return nodes;
}

ChakraProtoMsg::AttributeProto namedAttribute(const std::string& name)
{
    ChakraProtoMsg::AttributeProto attr;
    attr.set_name(name);
    return attr;
}

TraceNode richNode(uint64_t id)
{
    TraceNode node;
    node.id = id;
    node.name = "rich node " + std::to_string(id) + " with a name longer than fifteen chars";
    node.type = NodeType::CommSend;
    node.ctrlDeps = {id + 1000, 3};
    node.dataDeps = {id - 1, id - 2, uint64_t{1} << 63};
    node.startTimeMicros = 17;
    node.durationMicros = 123456789012ULL;

    auto add = [&node](const pb::AttributeProto& attr) { TraceCodec::addAttribute(node, attr); };
    pb::AttributeProto a;
    // Typed attributes in encodings other than the canonical ones (spec 4.2 drift).
    a.set_name("is_cpu_op");
    a.set_int32_val(0);
    add(a);
    a.Clear();
    a.set_name("rf_id");
    a.set_int64_val(-5);
    add(a);
    a.Clear();
    a.set_name("comm_size");
    a.set_uint64_val(1ULL << 40);
    add(a);
    a.Clear();
    a.set_name("comm_src");
    a.set_sint32_val(-3);
    add(a);
    a.Clear();
    a.set_name("comm_dst");
    a.set_fixed32_val(7);
    add(a);
    a.Clear();
    a.set_name("comm_tag");
    a.set_sfixed64_val(499999999);
    add(a);
    a.Clear();
    a.set_name("op_schema");
    a.set_string_val("aten::mm(Tensor self, Tensor mat2) -> Tensor");
    add(a);
    a.Clear();
    a.set_name("num_ops");
    a.set_fixed64_val(1ULL << 50);
    add(a);
    a.Clear();
    a.set_name("tensor_size");
    a.set_sint64_val(4096);
    add(a);
    a.Clear();
    a.set_name("comm_type");
    a.set_uint32_val(7);
    add(a);
    a.Clear();
    a.set_name("comm_priority");
    a.set_bool_val(true);
    add(a);
    a.Clear();
    a.set_name("involved_dim");
    a.mutable_bool_list()->add_values(true);
    a.mutable_bool_list()->add_values(false);
    a.mutable_bool_list()->add_values(true);
    add(a);
    a.Clear();
    a.set_name("pg_name");
    a.set_string_val("3");
    add(a);
    a.Clear();
    a.set_name("op_kind");
    a.set_string_val("gemm");
    add(a);
    a.Clear();
    a.set_name("gemm_m");
    a.set_int32_val(512);
    add(a);
    a.Clear();
    a.set_name("gemm_n");
    a.set_uint64_val(1024);
    add(a);
    a.Clear();
    a.set_name("gemm_k");
    a.set_int64_val(2048);
    add(a);
    a.Clear();
    a.set_name("gemm_batch");
    a.set_sfixed32_val(8);
    add(a);
    a.Clear();
    a.set_name("dtype");
    a.set_string_val("bf16");
    add(a);
    // Every other value type, kept as preserved attributes.
    a.Clear();
    a.set_name("d");
    a.set_double_val(2.5);
    add(a);
    a.Clear();
    a.set_name("dl");
    a.mutable_double_list()->add_values(1.5);
    add(a);
    a.Clear();
    a.set_name("f");
    a.set_float_val(0.25F);
    add(a);
    a.Clear();
    a.set_name("fl");
    a.mutable_float_list()->add_values(-1.0F);
    add(a);
    a.Clear();
    a.set_name("i32l");
    a.mutable_int32_list()->add_values(-1);
    add(a);
    a.Clear();
    a.set_name("i64l");
    a.mutable_int64_list()->add_values(-1);
    add(a);
    a.Clear();
    a.set_name("u32l");
    a.mutable_uint32_list()->add_values(1);
    add(a);
    a.Clear();
    a.set_name("u64l");
    a.mutable_uint64_list()->add_values(1);
    add(a);
    a.Clear();
    a.set_name("s32l");
    a.mutable_sint32_list()->add_values(-9);
    add(a);
    a.Clear();
    a.set_name("s64l");
    a.mutable_sint64_list()->add_values(-9);
    add(a);
    a.Clear();
    a.set_name("f32l");
    a.mutable_fixed32_list()->add_values(9);
    add(a);
    a.Clear();
    a.set_name("f64l");
    a.mutable_fixed64_list()->add_values(9);
    add(a);
    a.Clear();
    a.set_name("sf32l");
    a.mutable_sfixed32_list()->add_values(-9);
    add(a);
    a.Clear();
    a.set_name("sf64l");
    a.mutable_sfixed64_list()->add_values(-9);
    add(a);
    a.Clear();
    a.set_name("sl");
    a.mutable_string_list()->add_values("x");
    a.mutable_string_list()->add_values("y");
    add(a);
    a.Clear();
    a.set_name("b");
    a.set_bytes_val(std::string("\0\xff", 2));
    add(a);
    a.Clear();
    a.set_name("bl");
    a.mutable_bytes_list()->add_values("z");
    add(a);
    // Attributes a typed field cannot take stay preserved: float comm_size duplicate, a
    // doc_string, an out-of-range value.
    a.Clear();
    a.set_name("comm_size");
    a.set_double_val(3.0);
    add(a);
    a.Clear();
    a.set_name("stream");
    a.set_doc_string("CUDA stream");
    a.set_int64_val(7);
    add(a);
    a.Clear();
    a.set_name("no value");
    add(a);

    pb::IOInfo inputs;
    inputs.set_values("[[[430, 431, 0, 53120, 4, 'cuda:0']], '<Object>']");
    inputs.set_shapes("[[[53120]], []]");
    inputs.set_types("['GenericList[Tensor(float)]', 'Object']");
    TraceCodec::setInputs(node, inputs);
    TraceCodec::setOutputs(node, pb::IOInfo());

    // Unknown fields of a newer schema (spec 3.3: Node.storage = 11, and a varint field 40).
    pb::Node message;
    TraceCodec::encode(node, message);
    std::string bytes = message.SerializeAsString() +
                        std::string("\x5a\x03"
                                    "abc",
                                    5) +
                        varint(40 << 3) + varint(99);
    pb::Node withUnknown;
    if (!withUnknown.ParseFromString(bytes))
        throw std::runtime_error("richNode: cannot parse its own bytes");
    TraceCodec::decode(withUnknown, node);
    return node;
}

} // namespace etsim::et::test
