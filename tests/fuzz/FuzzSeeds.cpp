// Writes the fuzzers' generated seed corpora, one folder per target: small traces made by our
// writers (plain, gzip, every attribute type, no metadata) for trace_reader and trace_json,
// and one frame of every message type for wire. The text seeds of the other targets are
// committed in tests/fuzz/seeds/. Usage: etsim_fuzz_seeds OUTPUT_FOLDER

#include "cosim/wire/Frame.h"
#include "cosim/wire/Messages.h"
#include "et_driver/TraceCodec.h"
#include "et_driver/TraceJson.h"
#include "et_driver/TraceWriter.h"

#include <systemc>

#include <filesystem>
#include <fstream>
#include <iostream>

namespace {

namespace et = etsim::et;

et::TraceNode smallNode(uint64_t id, et::NodeType type)
{
    et::TraceNode node;
    node.id = id;
    node.name = "n" + std::to_string(id);
    node.type = type;
    if (id > 0)
        node.dataDeps = {id - 1};
    node.ctrlDeps = {id + 7};
    node.durationMicros = id * 11;
    node.setIsCpuOp(id % 2 == 0);
    if (type == et::NodeType::CommColl) {
        node.setCommType(et::CollectiveType::AllReduce);
        node.setCommSize(1 << 20);
        node.setPgName("0");
        node.setInvolvedDim({true, false});
    } else if (type == et::NodeType::CommSend || type == et::NodeType::CommRecv) {
        node.setCommSrc(0);
        node.setCommDst(1);
        node.setCommTag(42);
        node.setCommSize(4096);
    } else {
        node.setNumOps(1000);
        node.setTensorSize(256);
        node.setOpKind("gemm");
        node.setGemmM(16);
        node.setDtype("bf16");
    }
    ChakraProtoMsg::AttributeProto extra;
    extra.set_name("rf_id");
    extra.set_int64_val(static_cast<int64_t>(id));
    et::TraceCodec::addAttribute(node, extra);
    return node;
}

void writeTrace(const std::filesystem::path& file, int nodes, et::TraceCompression compression)
{
    et::TraceWriterOptions options;
    options.compression = compression;
    et::TraceWriter writer(file, et::TraceWriter::defaultMetadata(), options);
    for (int i = 0; i < nodes; ++i) {
        auto type = static_cast<et::NodeType>(2 + i % 6);
        writer.write(smallNode(static_cast<uint64_t>(i), type));
    }
    writer.close();
}

void writeJsonTrace(const std::filesystem::path& file, int nodes)
{
    et::TraceMetadata metadata;
    metadata.present = true;
    metadata.message = et::TraceWriter::defaultMetadata();
    et::TraceJsonWriter writer(file, metadata);
    for (int i = 0; i < nodes; ++i)
        writer.write(smallNode(static_cast<uint64_t>(i), static_cast<et::NodeType>(2 + i % 6)));
    writer.close();
}

void writeBytes(const std::filesystem::path& file, const std::vector<std::uint8_t>& bytes)
{
    std::ofstream out(file, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
}

// One frame of each message type, as a host and a peer send them.
void writeFrames(const std::filesystem::path& folder)
{
    namespace cosim = etsim::cosim;
    cosim::Frame frame;
    cosim::Hello hello;
    hello.capabilities = 0x1f;
    hello.lookaheadPs = 1000000;
    hello.quantumPs = 1000000;
    hello.name = "etsim";
    hello.token = "secret";
    frame.header.type = cosim::MessageType::Hello;
    frame.payload = cosim::encodeHello(hello);
    writeBytes(folder / "hello", cosim::encodeFrame(frame));

    cosim::Request request;
    request.command = 1;
    request.address = 0x1000;
    cosim::WireNodeInfo node;
    node.rank = 3;
    node.node = 17;
    node.kind = 1;
    node.bytes = 4096;
    node.flops = 1 << 20;
    node.peer = 5;
    node.group = 1;
    node.groupRanks = std::vector<std::uint32_t>{0, 3, 5};
    node.gemm = cosim::WireNodeInfo::Gemm{64, 32, 16, 1};
    node.attributes.push_back({"etsim.slice", std::int64_t{1}});
    node.attributes.push_back({"scale", 0.5});
    node.attributes.push_back({"name", std::string("gemm")});
    request.node = node;
    request.data = {1, 2, 3, 4};
    frame.header.type = cosim::MessageType::Request;
    frame.header.requestId = 7;
    frame.header.timestampPs = 123456;
    frame.payload = cosim::encodeRequest(request);
    writeBytes(folder / "request", cosim::encodeFrame(frame));

    cosim::Response response;
    response.data = {9, 8, 7};
    frame.header.type = cosim::MessageType::Response;
    frame.header.flags = cosim::frameflags::response;
    frame.payload = cosim::encodeResponse(response);
    writeBytes(folder / "response", cosim::encodeFrame(frame));

    frame.header.flags = 0;
    frame.header.type = cosim::MessageType::Grant;
    frame.header.requestId = 2;
    frame.payload = cosim::encodeGrant(2);
    writeBytes(folder / "grant", cosim::encodeFrame(frame));

    frame.header.type = cosim::MessageType::Terminate;
    frame.payload = cosim::encodeText("etsim-link-usage 1\nlink 0 1000 64\n");
    writeBytes(folder / "terminate", cosim::encodeFrame(frame));

    frame.header.type = cosim::MessageType::Error;
    frame.payload = cosim::encodeText("token mismatch");
    writeBytes(folder / "error", cosim::encodeFrame(frame));
}

} // namespace

int sc_main(int /*argc*/, char** /*argv*/)
{
    return 0;
}

int main(int argc, char** argv)
{
    if (argc != 2) {
        std::cerr << "usage: etsim_fuzz_seeds OUTPUT_FOLDER\n";
        return 2;
    }
    const std::filesystem::path root = argv[1];
    try {
        const std::filesystem::path out = root / "trace_reader";
        std::filesystem::create_directories(out);
        std::filesystem::create_directories(root / "trace_json");
        writeJsonTrace(root / "trace_json" / "six.json", 6);
        writeJsonTrace(root / "trace_json" / "six.json.gz", 6);
        std::filesystem::create_directories(root / "wire");
        writeFrames(root / "wire");
        writeTrace(out / "one.0.et", 1, et::TraceCompression::None);
        writeTrace(out / "six.0.et", 6, et::TraceCompression::None);
        writeTrace(out / "six-gzip.0.et", 6, et::TraceCompression::Gzip);
        writeTrace(out / "forty.0.et", 40, et::TraceCompression::None);
        // No GlobalMetadata: record 0 is a Node (the legacy form of spec 3.2).
        std::ofstream legacy(out / "legacy.0.et", std::ios::binary);
        for (int i = 0; i < 4; ++i) {
            ChakraProtoMsg::Node message;
            et::TraceCodec::encode(smallNode(static_cast<uint64_t>(i), et::NodeType::Comp),
                                   message);
            std::string body = message.SerializeAsString();
            legacy.put(static_cast<char>(body.size())); // < 128 B: a one-byte varint
            legacy << body;
        }
    } catch (const std::exception& error) {
        std::cerr << "etsim_fuzz_seeds: " << error.what() << '\n';
        return 1;
    }
    return 0;
}
