// JSON traces: et -> json -> et byte for byte on every real trace and on writer traces with
// every attribute type; the legacy feeder form against its protobuf twin; protobuf JSON as
// chakra_jsonizer writes it; every error with its message.

#include "et_driver/TraceJson.h"

#include "et_driver/TraceCodec.h"
#include "et_driver/TraceConvert.h"
#include "et_driver/TraceReader.h"
#include "et_driver/TraceWriter.h"
#include "tests/et_driver/TraceTestSupport.h"
#include "tests/support/TempDir.h"

#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

namespace etsim::et {
namespace {

namespace fs = std::filesystem;
namespace pb = ChakraProtoMsg;
using etsim::test::readFile;
using etsim::test::TempDir;

bool isEtName(const std::string& name)
{
    auto ends = [&name](const char* suffix) {
        std::size_t n = std::strlen(suffix);
        return name.size() >= n && name.compare(name.size() - n, n, suffix) == 0;
    };
    return ends(".et") || ends(".et.gz");
}

TEST(TraceJson, EveryRealTraceRoundTripsByteForByte)
{
    std::optional<fs::path> dir = test::sharedTraces();
    if (!dir)
        GTEST_SKIP() << "shared traces not found: set ETSIM_TRACES to the traces folder";
    TempDir temp;
    std::size_t files = 0;
    uint64_t nodes = 0;
    for (const auto& entry : fs::recursive_directory_iterator(*dir)) {
        if (!entry.is_regular_file() || !isEtName(entry.path().filename().string()))
            continue;
        // Gzip the JSON of every other file so both paths are exercised.
        fs::path json = temp.file(files % 2 == 0 ? "t.json" : "t.json.gz");
        fs::path back = temp.file("t.et");
        ConvertResult there = convertTrace(entry.path(), json);
        ConvertResult again = convertTrace(json, back);
        EXPECT_EQ(there.nodes, again.nodes);
        EXPECT_EQ(again.inputJsonForm, std::optional<JsonForm>(JsonForm::Etsim));
        EXPECT_TRUE(test::recordStream(entry.path()) == readFile(back))
            << entry.path() << " changed through JSON";
        nodes += there.nodes;
        ++files;
    }
    EXPECT_EQ(files, 66U);
    EXPECT_EQ(nodes, 3664U + 11347U + 64U * 215U);
}

// A writer trace with richNode (every attribute value case, typed attributes in every
// integer encoding, inputs/outputs, unknown fields) plus floating values JSON cannot hold.
TEST(TraceJson, WriterTraceWithEveryAttributeTypeRoundTrips)
{
    TempDir temp;
    fs::path et = temp.file("rich.0.et");
    pb::GlobalMetadata metadata = TraceWriter::defaultMetadata();
    pb::AttributeProto* meta = metadata.add_attr();
    meta->set_name("schema");
    meta->set_string_val("etsim-test");
    {
        TraceWriter writer(et, metadata);
        for (uint64_t id = 10; id < 14; ++id)
            writer.write(test::richNode(id));
        TraceNode odd;
        odd.id = 99;
        odd.name = "non-finite and signed zero";
        odd.type = NodeType::Comp;
        std::vector<double> doubles = {std::numeric_limits<double>::infinity(),
                                       -std::numeric_limits<double>::infinity(),
                                       std::numeric_limits<double>::quiet_NaN(),
                                       -0.0,
                                       1e-310,
                                       0.1};
        uint64_t payloadBits = 0x7FF0000000000123ULL;
        double payload = 0;
        std::memcpy(&payload, &payloadBits, sizeof payload);
        doubles.push_back(payload);
        pb::AttributeProto attr;
        for (std::size_t i = 0; i < doubles.size(); ++i) {
            attr.Clear();
            attr.set_name("d" + std::to_string(i));
            attr.set_double_val(doubles[i]);
            TraceCodec::addAttribute(odd, attr);
            attr.Clear();
            attr.set_name("f" + std::to_string(i));
            attr.set_float_val(static_cast<float>(doubles[i]));
            TraceCodec::addAttribute(odd, attr);
        }
        attr.Clear();
        attr.set_name("fl");
        attr.mutable_float_list()->add_values(std::numeric_limits<float>::quiet_NaN());
        attr.mutable_float_list()->add_values(3.4e38F);
        TraceCodec::addAttribute(odd, attr);
        writer.write(odd);
        writer.close();
    }
    fs::path json = temp.file("rich.json");
    fs::path back = temp.file("back.et");
    EXPECT_EQ(convertTrace(et, json).nodes, 5U);
    EXPECT_EQ(convertTrace(json, back).nodes, 5U);
    EXPECT_TRUE(readFile(et) == readFile(back));

    std::string text = readFile(json);
    EXPECT_NE(text.find("\"format\": \"etsim-trace-json/1\""), std::string::npos);
    EXPECT_NE(text.find("\"sfixed64_val\": 499999999"), std::string::npos);
    EXPECT_NE(text.find("\"bytes_val\": \"AP8=\""), std::string::npos);
    EXPECT_NE(text.find("\"double_val\": \"-Infinity\""), std::string::npos);
    EXPECT_NE(text.find("\"double_val\": \"NaN:0x7ff0000000000123\""), std::string::npos);
    EXPECT_NE(text.find("\"float_list\": [\"NaN\", "), std::string::npos);
    // The Node field 11 and field 40 richNode appends (see docs/trace-json.md).
    EXPECT_NE(text.find("\"unknown_fields\": \"WgNhYmPAAmM=\""), std::string::npos);
    EXPECT_NE(text.find("\"string_list\": [\"x\", \"y\"]"), std::string::npos);
}

TEST(TraceJson, NodeTreeConversionIsOneToOne)
{
    TraceNode node = test::richNode(7);
    nlohmann::ordered_json json = nodeToJson(node);
    EXPECT_EQ(json["id"], 7);
    EXPECT_EQ(json["type"], "COMM_SEND_NODE");
    EXPECT_EQ(json["inputs"]["shapes"], "[[[53120]], []]");
    EXPECT_EQ(json["outputs"], nlohmann::ordered_json::object());
    EXPECT_EQ(json["attr"][0]["name"], "is_cpu_op");
    EXPECT_EQ(json["attr"][0]["int32_val"], 0);
    TraceNode back;
    nodeFromJson(json, back);
    EXPECT_EQ(back, node);

    // Hand-written minimal node: defaults for everything absent, unknown NodeType numbers.
    TraceNode minimal;
    nodeFromJson(nlohmann::ordered_json::parse(R"({"id": 5, "name": "x", "type": 12})"), minimal);
    EXPECT_EQ(minimal.id, 5U);
    EXPECT_EQ(static_cast<int>(minimal.type), 12);
    EXPECT_TRUE(minimal.dataDeps.empty());
}

TEST(TraceJson, LegacyFeederFormMatchesItsProtobufTwin)
{
    std::optional<fs::path> dir = test::sharedTraces();
    if (!dir)
        GTEST_SKIP() << "shared traces not found: set ETSIM_TRACES to the traces folder";
    TraceJsonReader json(*dir / "chakra-json-variant" / "chakra.0.json.gz");
    TraceReader et(*dir / "chakra-feeder-test" / "chakra.0.et");
    EXPECT_EQ(json.form(), JsonForm::LegacyFeeder);
    EXPECT_TRUE(json.metadata().present);
    EXPECT_EQ(json.metadata().message.attr_size(), 0);
    TraceNode a;
    TraceNode b;
    std::size_t count = 0;
    std::size_t zeroRuntime = 0;
    while (et.next(b)) {
        ASSERT_TRUE(json.next(a)) << "JSON ends before node " << count;
        EXPECT_EQ(a.id, b.id);
        EXPECT_EQ(a.type, b.type) << "node " << a.id;
        EXPECT_EQ(a.dataDeps, b.dataDeps) << "node " << a.id;
        EXPECT_EQ(a.durationMicros, b.durationMicros) << "node " << a.id;
        EXPECT_EQ(a.isCpuOp(), b.isCpuOp()) << "node " << a.id;
        zeroRuntime += a.durationMicros == 0 ? 1 : 0;
        ++count;
    }
    EXPECT_FALSE(json.next(a));
    EXPECT_EQ(count, 3664U);
    EXPECT_EQ(zeroRuntime, 157U);
}

TEST(TraceJson, LegacySmallFixtureKeepsEveryKey)
{
    std::optional<fs::path> dir = test::sharedTraces();
    if (!dir)
        GTEST_SKIP() << "shared traces not found: set ETSIM_TRACES to the traces folder";
    TraceJsonReader reader(*dir / "chakra-json-variant" / "small_chakra.0.json");
    ASSERT_EQ(reader.metadata().message.attr_size(), 3);
    EXPECT_EQ(reader.metadata().message.attr(1).name(), "ngpus");
    EXPECT_EQ(reader.metadata().message.attr(1).int64_val(), 8);
    EXPECT_EQ(reader.metadata().stringAttr("soc"), std::optional<std::string>("soc_name"));
    std::vector<uint64_t> ids;
    TraceNode node;
    while (reader.next(node)) {
        ids.push_back(node.id);
        if (node.id == 435) {
            EXPECT_EQ(node.type, NodeType::CommColl);
            EXPECT_EQ(node.dataDeps, (std::vector<uint64_t>{432, 216, 217}));
            EXPECT_EQ(node.ctrlDeps, (std::vector<uint64_t>{434}));
            EXPECT_EQ(node.durationMicros, 28U);
            EXPECT_EQ(node.isCpuOp(), std::optional<bool>(false));
        }
    }
    EXPECT_EQ(ids, (std::vector<uint64_t>{216, 217, 430, 432, 433, 435, 541}));
}

TEST(TraceJson, LegacyCommKeysBecomeTypedAttributes)
{
    TempDir temp;
    fs::path file = temp.write("c.json", R"({"workload_graph": [
        {"Id": 1, "Name": "ar", "NodeType": 7, "is_cpu_op": false, "comm_type": 0,
         "comm_size": 1048576, "comm_priority": 2, "tensor_size": 64, "comm_src": 1,
         "comm_dst": 2, "comm_tag": 9, "extra": "kept", "list": [1, 2]}
    ], "ngpus": 2})");
    TraceJsonReader reader(file);
    TraceNode node;
    ASSERT_TRUE(reader.next(node));
    EXPECT_EQ(node.commType(), std::optional<int32_t>(0));
    EXPECT_EQ(node.commSize(), std::optional<int64_t>(1048576));
    EXPECT_EQ(node.commPriority(), std::optional<int32_t>(2));
    EXPECT_EQ(node.tensorSize(), std::optional<uint64_t>(64));
    EXPECT_EQ(node.commSrc(), std::optional<int32_t>(1));
    EXPECT_EQ(node.commDst(), std::optional<int32_t>(2));
    EXPECT_EQ(node.commTag(), std::optional<int32_t>(9));
    std::vector<pb::AttributeProto> others = TraceCodec::otherAttributes(node);
    ASSERT_EQ(others.size(), 2U);
    EXPECT_EQ(others[0].string_val(), "kept");
    EXPECT_EQ(others[1].int64_list().values_size(), 2);
    EXPECT_FALSE(reader.next(node));
    // The top-level key after the node array is read too.
    EXPECT_EQ(reader.metadata().message.attr(0).name(), "ngpus");
}

// Writes `file` the way chakra_jsonizer does: protobuf's JSON of each record, back to back.
std::string jsonizerText(const fs::path& et, bool asArray, std::size_t maxNodes)
{
    TraceReader reader(et);
    google::protobuf::util::JsonPrintOptions print;
    print.add_whitespace = true;
    std::vector<std::string> records;
    std::string text;
    if (reader.metadata().present) {
        google::protobuf::util::MessageToJsonString(reader.metadata().message, &text, print);
        records.push_back(text);
    }
    TraceNode node;
    pb::Node message;
    while (records.size() < maxNodes && reader.next(node)) {
        TraceCodec::encode(node, message);
        text.clear();
        google::protobuf::util::MessageToJsonString(message, &text, print);
        records.push_back(text);
    }
    std::string out = asArray ? "[" : "";
    for (std::size_t i = 0; i < records.size(); ++i)
        out += (asArray && i > 0 ? "," : "") + records[i];
    return out + (asArray ? "]" : "");
}

TEST(TraceJson, ProtobufJsonAsJsonizerWritesIt)
{
    std::optional<fs::path> dir = test::sharedTraces();
    if (!dir)
        GTEST_SKIP() << "shared traces not found: set ETSIM_TRACES to the traces folder";
    TempDir temp;
    for (fs::path source : {*dir / "chakra-feeder-test" / "chakra.0.et",
                            *dir / "text-resnet50-dp-64r-legacy" / "resnet50_DataParallel.3.et"}) {
        for (bool asArray : {false, true}) {
            fs::path file = temp.write("j.json", jsonizerText(source, asArray, 400));
            TraceJsonReader json(file);
            TraceReader et(source);
            EXPECT_EQ(json.form(), JsonForm::ProtobufJson);
            EXPECT_EQ(json.metadata().present, et.metadata().present);
            EXPECT_EQ(json.metadata().message.SerializeAsString(),
                      et.metadata().message.SerializeAsString());
            TraceNode a;
            TraceNode b;
            std::size_t count = 0;
            while (json.next(a)) {
                ASSERT_TRUE(et.next(b));
                EXPECT_EQ(a, b) << source << ": node " << count;
                ++count;
            }
            EXPECT_GE(count, 215U - 1);
        }
    }
}

TEST(TraceJson, ConvertChoosesByName)
{
    EXPECT_EQ(traceFileKindByName("a/x.0.et"), std::optional<TraceFileKind>(TraceFileKind::Et));
    EXPECT_EQ(traceFileKindByName("x.et.gz"), std::optional<TraceFileKind>(TraceFileKind::Et));
    EXPECT_EQ(traceFileKindByName("x.json"), std::optional<TraceFileKind>(TraceFileKind::Json));
    EXPECT_EQ(traceFileKindByName("x.json.gz"), std::optional<TraceFileKind>(TraceFileKind::Json));
    EXPECT_EQ(traceFileKindByName("x.txt"), std::nullopt);

    TempDir temp;
    TraceNode node = test::richNode(3);
    fs::path et = temp.file("a.et");
    {
        TraceWriter writer(et);
        writer.write(node);
        writer.close();
    }
    fs::path gz = temp.file("a.json.gz");
    convertTrace(et, gz);
    std::string raw = readFile(gz);
    EXPECT_EQ(static_cast<unsigned char>(raw[0]), 0x1F) << "not gzip";
    // Content sniffing for names of no known kind.
    fs::copy_file(gz, temp.file("noext"));
    AnyTraceReader any(temp.file("noext"));
    EXPECT_EQ(any.kind(), TraceFileKind::Json);
    TraceNode read;
    ASSERT_TRUE(any.next(read));
    EXPECT_EQ(read, node);
    fs::copy_file(et, temp.file("noext2"));
    EXPECT_EQ(AnyTraceReader(temp.file("noext2")).kind(), TraceFileKind::Et);

    try {
        convertTrace(et, temp.file("out.txt"));
        FAIL() << "no error";
    } catch (const TraceError& error) {
        EXPECT_NE(std::string(error.what()).find("end it in .et, .et.gz, .json or .json.gz"),
                  std::string::npos);
    }
    try {
        convertTrace(et, et);
        FAIL() << "no error";
    } catch (const TraceError& error) {
        EXPECT_NE(std::string(error.what()).find("is the input file"), std::string::npos);
    }
}

struct BadJson {
    const char* name;
    std::string text;
    std::string expected;
};

const std::string head = "{\"format\": \"etsim-trace-json/1\", \"metadata\": null, \"nodes\": [";

std::vector<BadJson> badJsonCases()
{
    return {
        {"empty", "", "the file is empty"},
        {"not json", "xyz", "does not start with '{' or '['"},
        {"no format first",
         R"({"nodes": []})",
         "line 1: an etsim trace JSON starts with \"format\": \"etsim-trace-json/1\""},
        {"wrong format", R"({"format": "etsim-trace-json/9", "nodes": []})", "/format: expected"},
        {"unknown top key",
         R"({"format": "etsim-trace-json/1", "extra": 1, "nodes": []})",
         "/extra: unknown top-level key \"extra\"; allowed keys: format, metadata, nodes"},
        {"no nodes", R"({"format": "etsim-trace-json/1"})", "no \"nodes\" array"},
        {"nodes not array",
         R"({"format": "etsim-trace-json/1", "nodes": 3})",
         "/nodes: expected an array of nodes"},
        {"bad metadata",
         R"({"format": "etsim-trace-json/1", "metadata": {"version": 4}, "nodes": []})",
         "/metadata/version: expected a string"},
        {"unknown node key",
         head + R"({"id": 4, "nmae": "x"}]})",
         "node 0 (id 4): /nodes/0/nmae: unknown key \"nmae\" in Node; allowed keys: id, name"},
        {"id negative", head + R"({"id": -4}]})", "/nodes/0/id: value -4 is negative"},
        {"id string",
         head + R"({"id": "4"}]})",
         "/nodes/0/id: expected a non-negative integer (64-bit unsigned), found a string "
         "(\"4\"); write a JSON integer"},
        {"bad type name",
         head + R"({"id": 1, "type": "COMPUTE"}]})",
         "/nodes/0/type: unknown NodeType a string (\"COMPUTE\"); use one of INVALID_NODE"},
        {"deps not array",
         head + R"({"id": 1, "data_deps": 3}]})",
         "/data_deps: expected an array"},
        {"dep not int",
         head + R"({"id": 1}, {"id": 2, "data_deps": [1, 2.5]}]})",
         "line 1: node 1 (id 2): /nodes/1/data_deps/1: expected a non-negative integer"},
        {"two values",
         head + R"({"id": 1, "attr": [{"name": "a", "int64_val": 1, "bool_val": true}]}]})",
         "/nodes/0/attr/0/bool_val: AttributeProto holds one value, but both \"int64_val\" and "
         "\"bool_val\" are given; keep one"},
        {"int32 range",
         head + R"({"id": 1, "attr": [{"name": "a", "int32_val": 3000000000}]}]})",
         "/nodes/0/attr/0/int32_val: value 3000000000 does not fit 32-bit signed"},
        {"bool not bool",
         head + R"({"id": 1, "attr": [{"name": "a", "bool_val": 1}]}]})",
         "/attr/0/bool_val: expected true or false, found an integer (1)"},
        {"bad double",
         head + R"({"id": 1, "attr": [{"name": "a", "double_val": "big"}]}]})",
         "/attr/0/double_val: expected a number, or \"NaN\", \"Infinity\" or \"-Infinity\""},
        {"bad base64",
         head + R"({"id": 1, "attr": [{"name": "a", "bytes_val": "@@"}]}]})",
         "/attr/0/bytes_val: is not base64"},
        {"bad list",
         head + R"({"id": 1, "attr": [{"name": "a", "bool_list": true}]}]})",
         "/attr/0/bool_list: expected an array or an object (BoolList)"},
        {"bad unknown fields",
         head + R"({"id": 1, "unknown_fields": "/w=="}]})",
         "/nodes/0/unknown_fields: is not valid protobuf wire data"},
        {"null value", head + R"({"id": 1, "inputs": null}]})", "/inputs: null is not a value"},
        {"bad json in node",
         head + "\n{\"id\": 1,\n \"name\": x}]}",
         "line 3: node 0: invalid JSON: syntax error"},
        {"number beyond double's range",
         head + "\n{\"id\": 1,\n \"duration_micros\": 1e999}]}",
         "line 2: node 0: invalid JSON: [json.exception.out_of_range.406] number overflow"},
        {"missing comma",
         head + R"({"id": 1} {"id": 2}]})",
         "node 1: expected ',' or ']' after node 0, found '{'"},
        {"truncated", head + R"({"id": 1, "name": "ab)", "the file ends inside a string"},
        {"unclosed",
         head + R"({"id": 1})",
         "expected ',' or ']' after node 0, found the end of the file"},
        {"no node", head, "node 0: the file ends where a JSON value is expected"},
        {"cut inside node", head + R"({"id": [1, )", "the file ends inside a JSON array"},
        {"mismatched", head + R"({"id": [1}]})", "unexpected '}'; expected ']'"},
        {"trailing", head + R"({"id": 1}]} x)", "after the end of the JSON document; remove it"},
        {"legacy bad Id",
         R"({"workload_graph": [{"Id": "1"}]})",
         "node 0: /workload_graph/0/Id: expected a non-negative integer (node id)"},
        {"legacy bad runtime",
         R"({"workload_graph": [{"Id": 7, "runtime": -1}]})",
         "node 0 (id 7): /workload_graph/0/runtime: value -1 is negative"},
        {"legacy bad is_cpu_op",
         R"({"workload_graph": [{"Id": 7, "is_cpu_op": "yes"}]})",
         "/workload_graph/0/is_cpu_op: expected true or false"},
        {"legacy node not object",
         R"({"workload_graph": [3]})",
         "/workload_graph/0: expected a node object"},
        {"legacy no graph", R"({"ngpus": 8})", "no \"workload_graph\" array"},
        {"protobuf bad field",
         R"({"version": "0.0.4"}{"id": "3", "nmae": "x"})",
         "node 0: protobuf JSON Node: "},
        {"protobuf bad metadata", R"({"version": 1})", "GlobalMetadata: "},
    };
}

TEST(TraceJson, EveryErrorNamesFilePlaceAndFix)
{
    TempDir temp;
    for (const BadJson& bad : badJsonCases()) {
        fs::path file = temp.write("bad.json", bad.text);
        try {
            TraceJsonReader reader(file);
            TraceNode node;
            while (reader.next(node)) {
            }
            ADD_FAILURE() << bad.name << ": no error";
        } catch (const TraceError& error) {
            std::string message = error.what();
            EXPECT_EQ(message.rfind(file.string() + ": ", 0), 0U) << bad.name << ": " << message;
            EXPECT_NE(message.find(bad.expected), std::string::npos)
                << bad.name << ": got \"" << message << "\"";
        }
    }
}

TEST(TraceJson, ErrorCarriesLineNodeAndPath)
{
    TempDir temp;
    fs::path file = temp.write("e.json",
                               head + "\n{\"id\": 1},\n{\"id\": 8,\n \"attr\": [{\"name\": \"x\", "
                                      "\"int64_val\": true}]}]}");
    TraceJsonReader reader(file);
    TraceNode node;
    ASSERT_TRUE(reader.next(node));
    try {
        reader.next(node);
        FAIL() << "no error";
    } catch (const TraceJsonError& error) {
        EXPECT_EQ(error.line(), 3U);
        EXPECT_EQ(error.nodeIndex(), 1);
        EXPECT_EQ(error.nodeId(), std::optional<uint64_t>(8));
        EXPECT_EQ(error.jsonPath(), "/nodes/1/attr/0/int64_val");
    }
}

TEST(TraceJson, TruncatedGzipIsAnError)
{
    TempDir temp;
    std::string gz = test::gzipBytes(head + "{\"id\": 1}, {\"id\": 2}]}");
    fs::path file = temp.write("t.json.gz", gz.substr(0, gz.size() - 12));
    try {
        TraceJsonReader reader(file);
        TraceNode node;
        while (reader.next(node)) {
        }
        FAIL() << "no error";
    } catch (const TraceError& error) {
        EXPECT_NE(std::string(error.what()).find("truncated or corrupt"), std::string::npos)
            << error.what();
    }
}

TEST(TraceJson, MetadataAfterNodesAndBigNodesAreHandled)
{
    TempDir temp;
    fs::path file =
        temp.write("late.json",
                   R"({"format": "etsim-trace-json/1", "nodes": [{"id": 1, "name": "a"}],
                       "metadata": {"version": "1.0.0"}})");
    TraceJsonReader reader(file);
    EXPECT_EQ(reader.metadata().version(), "1.0.0");
    TraceNode node;
    ASSERT_TRUE(reader.next(node));
    EXPECT_EQ(node.name, "a");
    EXPECT_FALSE(reader.next(node));

    TraceJsonReaderOptions small;
    small.maxNodeBytes = 16;
    try {
        TraceJsonReader limited(file, small);
        FAIL() << "no error";
    } catch (const TraceJsonError& error) {
        EXPECT_NE(std::string(error.what()).find("longer than 16 bytes"), std::string::npos);
    }
}

// The scanner refills its buffer inside keys, strings, numbers and escapes when the buffer is
// small: the nodes, the metadata and an error's line must not depend on the buffer size.
TEST(TraceJson, AnyBufferSizeReadsTheSameNodes)
{
    TempDir temp;
    fs::path et = temp.file("rich.0.et");
    {
        TraceWriter writer(et, TraceWriter::defaultMetadata());
        for (uint64_t id = 10; id < 14; ++id)
            writer.write(test::richNode(id));
        writer.close();
    }
    auto readAll = [](const fs::path& file, std::size_t bufferBytes) {
        TraceJsonReaderOptions options;
        options.bufferBytes = bufferBytes;
        TraceJsonReader reader(file, options);
        std::vector<std::string> nodes{reader.metadata().version()};
        TraceNode node;
        while (reader.next(node))
            nodes.push_back(prettyJson(nodeToJson(node)));
        return nodes;
    };
    for (const char* name : {"rich.json", "rich.json.gz"}) {
        fs::path json = temp.file(name);
        ASSERT_EQ(convertTrace(et, json).nodes, 4U);
        const std::vector<std::string> whole = readAll(json, TraceJsonReaderOptions{}.bufferBytes);
        ASSERT_EQ(whole.size(), 5U);
        for (std::size_t bytes : {1, 2, 7, 64})
            EXPECT_EQ(readAll(json, bytes), whole) << name << " with a " << bytes << " B buffer";
    }

    fs::path bad = temp.write("bad.json", head + "\n{\"id\": 1,\n \"name\": x}]}");
    TraceJsonReaderOptions tiny;
    tiny.bufferBytes = 3;
    try {
        TraceJsonReader reader(bad, tiny);
        TraceNode node;
        while (reader.next(node)) {
        }
        FAIL() << "no error";
    } catch (const TraceJsonError& error) {
        EXPECT_NE(std::string(error.what()).find("line 3: node 0: invalid JSON: syntax error"),
                  std::string::npos)
            << error.what();
    }
}

TEST(TraceJson, WriterErrors)
{
    TempDir temp;
    EXPECT_THROW(TraceJsonWriter(temp.file("no/such/dir/x.json"), TraceMetadata{}), TraceError);
    TraceJsonWriter writer(temp.file("u.json"), TraceMetadata{});
    TraceNode node;
    node.name = std::string("bad \xff utf-8");
    try {
        writer.write(node);
        FAIL() << "no error";
    } catch (const TraceError& error) {
        EXPECT_NE(std::string(error.what()).find("node 0 (id 0): a string is not valid UTF-8"),
                  std::string::npos)
            << error.what();
    }
    writer.close();
    EXPECT_THROW(writer.write(node), TraceError);
    // An empty trace is a valid document.
    TraceJsonReader empty(temp.file("u.json"));
    EXPECT_FALSE(empty.metadata().present);
    EXPECT_FALSE(empty.next(node));
}

} // namespace
} // namespace etsim::et
