// Writes the fuzzer's seed corpus: small traces made by our writer (plain, gzip, every
// attribute type, no metadata). Usage: etsim_fuzz_seeds OUTPUT_FOLDER

#include "et_driver/TraceCodec.h"
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
    std::filesystem::path out = argv[1];
    try {
        std::filesystem::create_directories(out);
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
