// Trace reading throughput and memory: writes Chakra-shaped traces with TraceWriter, then
// reads each with TraceReader (batches of the default window) and with a plain protobuf parse
// loop over the same file (one reused Node, nothing kept). Each measurement runs in a child
// process so its peak RSS is its own. Temporary files are removed.
//
// Usage: etsim_bench_trace [--nodes N] [--short-nodes N] [--repeats N] [--dir FOLDER]
// (defaults 10,000,000 and 1,000,000 nodes, best of 3 runs, in $TMPDIR; --benchmark_* flags are
// ignored so bench/run.sh can call every binary alike)

#include "et_driver/TraceCodec.h"
#include "et_driver/TraceReader.h"
#include "et_driver/TraceWriter.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <systemc>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <iostream>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

namespace et = etsim::et;
namespace fs = std::filesystem;
namespace pb = ChakraProtoMsg;

// A node shaped like the PyTorch-derived traces of shared/traces: host ops and GPU kernels
// with provenance attributes, a collective now and then.
void makeNode(uint64_t id, et::TraceNode& node, pb::AttributeProto& attr)
{
    node.reset();
    node.id = id;
    bool gpu = id % 3 == 0;
    bool collective = id % 200 == 0;
    node.name = collective ? "ncclDevKernel_AllReduce_Sum_f32_RING_LL"
                : gpu      ? "ampere_sgemm_128x64_tn"
                           : "aten::linear";
    node.type = collective ? et::NodeType::CommColl : et::NodeType::Comp;
    if (id > 1)
        node.dataDeps = {id - 1};
    node.ctrlDeps = {id > 4 ? id - 4 : 0};
    node.durationMicros = 3 + id % 97;
    for (const char* name : {"rf_id", "fw_parent", "seq_id", "scope", "tid", "fw_tid"}) {
        attr.Clear();
        attr.set_name(name);
        attr.set_int64_val(static_cast<int64_t>(id % 100000));
        et::TraceCodec::addAttribute(node, attr);
    }
    if (!gpu) {
        attr.Clear();
        attr.set_name("op_schema");
        attr.set_string_val("aten::linear(Tensor input, Tensor weight, Tensor? bias=None)");
        et::TraceCodec::addAttribute(node, attr);
    }
    node.setIsCpuOp(!gpu && !collective);
    if (collective) {
        node.setCommType(et::CollectiveType::AllReduce);
        node.setCommSize(int64_t{1} << 22);
        node.setInvolvedDim({true});
    }
}

struct Result {
    double seconds = 0;
    uint64_t nodes = 0;
    uint64_t checksum = 0;
};

Result readWithTraceReader(const fs::path& file)
{
    Result result;
    auto start = std::chrono::steady_clock::now();
    et::TraceReader reader(file);
    std::vector<et::TraceNode> batch;
    while (reader.nextBatch(batch) > 0) {
        for (const et::TraceNode& node : batch) {
            result.checksum += node.durationMicros + node.dataDeps.size();
            ++result.nodes;
        }
    }
    result.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return result;
}

// The reference: varint framing and ParseFromCodedStream into one reused Node.
Result readPlainProtobuf(const fs::path& file)
{
    using google::protobuf::io::CodedInputStream;
    Result result;
    auto start = std::chrono::steady_clock::now();
    int fd = ::open(file.c_str(), O_RDONLY);
    if (fd < 0)
        return result;
    {
        google::protobuf::io::FileInputStream input(fd, 256 * 1024);
        pb::Node node;
        bool first = true;
        while (true) {
            CodedInputStream coded(&input);
            uint32_t length = 0;
            if (!coded.ReadVarint32(&length))
                break;
            CodedInputStream::Limit limit = coded.PushLimit(static_cast<int>(length));
            if (first) {
                pb::GlobalMetadata metadata;
                if (!metadata.ParseFromCodedStream(&coded))
                    break;
                first = false;
            } else {
                if (!node.ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage())
                    break;
                result.checksum += node.duration_micros() + node.data_deps_size();
                ++result.nodes;
            }
            coded.PopLimit(limit);
        }
    }
    ::close(fd);
    result.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return result;
}

struct Measured {
    Result result;
    // User + system CPU time of the child: the machine is shared, so wall time says little.
    double cpuSeconds = 0;
    long peakRssKiB = 0;
};

// Runs `read` in a child process; its peak RSS comes from wait4.
template <typename Read>
Measured inChild(Read read, const fs::path& file)
{
    int pipeFds[2];
    if (::pipe(pipeFds) != 0)
        return {};
    pid_t child = ::fork();
    if (child == 0) {
        ::close(pipeFds[0]);
        Result result = read(file);
        ssize_t written = ::write(pipeFds[1], &result, sizeof result);
        ::_exit(written == static_cast<ssize_t>(sizeof result) ? 0 : 1);
    }
    ::close(pipeFds[1]);
    Measured measured;
    if (::read(pipeFds[0], &measured.result, sizeof measured.result) !=
        static_cast<ssize_t>(sizeof measured.result))
        std::cerr << "child failed\n";
    ::close(pipeFds[0]);
    int status = 0;
    struct rusage usage {};
    ::wait4(child, &status, 0, &usage);
    measured.peakRssKiB = usage.ru_maxrss;
    measured.cpuSeconds =
        static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
        1e-6 * static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
    return measured;
}

void writeTrace(const fs::path& file, uint64_t nodes)
{
    et::TraceWriter writer(file);
    et::TraceNode node;
    pb::AttributeProto attr;
    for (uint64_t id = 1; id <= nodes; ++id) {
        makeNode(id, node, attr);
        writer.write(node);
    }
    writer.close();
}

void measure(const fs::path& file, uint64_t nodes, int repeats)
{
    // Warm the page cache so both readers see the same, in-memory file; then alternate runs
    // and keep each reader's best, since other work on a shared machine only slows a run.
    inChild(readPlainProtobuf, file);
    Measured plain;
    Measured ours;
    for (int run = 0; run < repeats; ++run) {
        Measured p = inChild(readPlainProtobuf, file);
        Measured o = inChild(readWithTraceReader, file);
        if (run == 0 || p.cpuSeconds < plain.cpuSeconds)
            plain = p;
        if (run == 0 || o.cpuSeconds < ours.cpuSeconds)
            ours = o;
    }
    double plainRate = static_cast<double>(plain.result.nodes) / plain.cpuSeconds;
    double ourRate = static_cast<double>(ours.result.nodes) / ours.cpuSeconds;
    std::printf("%10llu nodes  %7.1f MB | plain protobuf %5.2f M nodes/s per CPU s (wall %5.1f s, "
                "peak RSS %5.1f MiB) | TraceReader %5.2f M nodes/s per CPU s (wall %5.1f s, peak "
                "RSS %5.1f MiB) | ratio %3.0f%%%s\n",
                static_cast<unsigned long long>(nodes),
                static_cast<double>(fs::file_size(file)) / 1e6,
                plainRate / 1e6,
                plain.result.seconds,
                static_cast<double>(plain.peakRssKiB) / 1024.0,
                ourRate / 1e6,
                ours.result.seconds,
                static_cast<double>(ours.peakRssKiB) / 1024.0,
                100.0 * ourRate / plainRate,
                plain.result.checksum == ours.result.checksum && ours.result.nodes == nodes
                    ? ""
                    : "  MISMATCH");
    std::fflush(stdout);
}

} // namespace

int sc_main(int /*argc*/, char** /*argv*/)
{
    return 0;
}

int main(int argc, char** argv)
{
    uint64_t longNodes = 10'000'000;
    uint64_t shortNodes = 1'000'000;
    int repeats = 3;
    fs::path dir = fs::temp_directory_path();
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        if (arg == "--nodes" && i + 1 < argc)
            longNodes = std::stoull(argv[++i]);
        else if (arg == "--short-nodes" && i + 1 < argc)
            shortNodes = std::stoull(argv[++i]);
        else if (arg == "--repeats" && i + 1 < argc)
            repeats = std::max(1, std::stoi(argv[++i]));
        else if (arg == "--dir" && i + 1 < argc)
            dir = argv[++i];
        else if (arg.rfind("--benchmark", 0) != 0) {
            std::cerr << "usage: etsim_bench_trace [--nodes N] [--short-nodes N] [--repeats N] "
                         "[--dir FOLDER]\n";
            return 2;
        }
    }
    fs::path folder = dir / ("etsim-bench-trace-" + std::to_string(::getpid()));
    try {
        fs::create_directories(folder);
        for (uint64_t nodes : {shortNodes, longNodes}) {
            fs::path file = folder / "bench.0.et";
            writeTrace(file, nodes);
            measure(file, nodes, repeats);
            fs::remove(file);
        }
    } catch (const std::exception& error) {
        std::cerr << "etsim_bench_trace: " << error.what() << '\n';
        fs::remove_all(folder);
        return 1;
    }
    fs::remove_all(folder);
    return 0;
}
