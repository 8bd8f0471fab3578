// Bad input through the etsim command, each case a failure a user once met: a crash, a hang,
// or a wrong result that exited 0. Every case must end with its exit code (README table) and
// a message that names the file, the place and the limit.

#include "et_driver/TraceWriter.h"
#include "tests/support/RunCommand.h"
#include "tests/support/TempDir.h"
#include "tests/support/TraceNodes.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <string>
#include <sys/stat.h>
#include <vector>

namespace etsim::apps {
namespace {

using etsim::test::CommandResult;
using etsim::test::contains;
using etsim::test::runCommand;
using etsim::test::runEtsim;
using etsim::test::TempDir;

constexpr int ranks = 8; // hgx_h100

// Writes dir/<name>.<r>.et for r < count, the nodes of each rank from `nodes(r)`.
std::string writeTrace(const TempDir& dir,
                       const std::string& name,
                       const std::function<std::vector<et::TraceNode>(int)>& nodes,
                       int count = ranks)
{
    for (int rank = 0; rank < count; ++rank) {
        et::TraceWriter writer(dir.file(name + "." + std::to_string(rank) + ".et"));
        for (const et::TraceNode& node : nodes(rank))
            writer.write(node);
        writer.close();
    }
    return (dir.path() / name).string();
}

std::string run(const std::string& trace, const std::string& extra = "")
{
    return "run --platform hgx_h100 --quiet --trace " + trace + " " + extra;
}

// ---- 1. A platform file whose top level is not a mapping -----------------------------------

TEST(BadInputCommand, PlatformWhoseTopLevelIsNotAMapping)
{
    TempDir dir;
    std::string trace =
        writeTrace(dir, "t", [](int) { return std::vector{test::computeNode(1, 1000, 1000, 1)}; });
    for (const char* text : {"hello\n", "42\n", "- ranks\n- 8\n", "", "~\n"}) {
        const std::string file = dir.write("p.yaml", text).string();
        CommandResult result = runEtsim("run --platform " + file + " --trace " + trace);
        EXPECT_EQ(result.code, 1) << text << result.output;
        EXPECT_TRUE(contains(result.output, file + ":1:1: the file is not a mapping of keys"))
            << text << result.output;
        EXPECT_FALSE(contains(result.output, "terminate")) << result.output;
    }
}

// ---- 2. Nesting depth of every JSON and YAML reader -----------------------------------------

TEST(BadInputCommand, DeepNestingIsRefusedWithTheLimit)
{
    TempDir dir;
    const std::string deep(100000, '[');
    const std::string json = dir.write("deep.json", deep).string();
    CommandResult convert = runEtsim("trace convert " + json + " " + dir.file("o.et").string());
    EXPECT_EQ(convert.code, 1) << convert.output;
    EXPECT_TRUE(contains(convert.output, "nested deeper than 100 levels")) << convert.output;

    // Just past the limit, in a node of etsim's own form.
    const std::string node = R"({"format": "etsim-trace-json/1", "metadata": null, "nodes": [)" +
                             std::string(101, '[') + std::string(101, ']') + "]}";
    CommandResult shallow = runEtsim("trace convert " + dir.write("n.json", node).string() + " " +
                                     dir.file("o.et").string());
    EXPECT_EQ(shallow.code, 1) << shallow.output;
    EXPECT_TRUE(contains(shallow.output, "nested deeper than 100 levels")) << shallow.output;

    const std::string yaml = dir.write("deep.yaml", deep).string();
    std::string trace =
        writeTrace(dir, "t", [](int) { return std::vector{test::computeNode(1, 1000, 1000, 1)}; });
    CommandResult platform = runEtsim("run --platform " + yaml + " --trace " + trace);
    EXPECT_EQ(platform.code, 1) << platform.output;
    EXPECT_TRUE(contains(platform.output, yaml + ":1:")) << platform.output;
    EXPECT_TRUE(contains(platform.output, "nested deeper than 100 levels")) << platform.output;

    const std::string groups = dir.write("groups.json", deep).string();
    CommandResult grouped = runEtsim(run(trace, "--comm-groups " + groups));
    EXPECT_EQ(grouped.code, 1) << grouped.output;
    EXPECT_TRUE(contains(grouped.output, groups + ": line 1: nested deeper than 100 levels"))
        << grouped.output;

    CommandResult set =
        runEtsim(run(trace, "--set 'name=" + std::string(200, '[') + std::string(200, ']') + "'"));
    EXPECT_EQ(set.code, 2) << set.output;
    EXPECT_TRUE(contains(set.output, "--set name=")) << set.output;
    EXPECT_TRUE(contains(set.output, "nested deeper than 100 levels")) << set.output;
}

// ---- 3. Empty records and 64-bit length prefixes --------------------------------------------

TEST(BadInputCommand, AGzipOfZerosIsCorruptAtOnce)
{
    TempDir dir;
    const std::string file = dir.file("zeros.0.et.gz").string();
    ASSERT_EQ(runCommand("head -c 1000000 /dev/zero | gzip > " + file).code, 0);
    for (const char* command : {"trace info ", "trace validate "}) {
        CommandResult result = runEtsim(command + file);
        EXPECT_EQ(result.code, 1) << command << result.output;
        EXPECT_TRUE(contains(result.output, "the length prefix is 0")) << result.output;
    }
    // The same zeros uncompressed: no longer 4,095 empty nodes.
    const std::string plain = dir.file("plain.0.et").string();
    ASSERT_EQ(runCommand("head -c 4096 /dev/zero > " + plain).code, 0);
    CommandResult info = runEtsim("trace info " + plain);
    EXPECT_EQ(info.code, 1) << info.output;
    EXPECT_TRUE(contains(info.output, "the length prefix is 0")) << info.output;
}

TEST(BadInputCommand, LengthPrefixesAreReadWithAll64Bits)
{
    TempDir dir;
    // 2^32 as a varint: read modulo 2^32 it was an empty record.
    const std::string file = dir.file("wide.0.et").string();
    {
        std::ofstream out(file, std::ios::binary);
        out << std::string("\x80\x80\x80\x80\x10", 5) << std::string(64, 'x');
    }
    CommandResult info = runEtsim("trace info " + file);
    EXPECT_EQ(info.code, 1) << info.output;
    EXPECT_TRUE(contains(info.output, "length prefix says 4294967296 bytes")) << info.output;
}

// ---- 4. Time overflow -----------------------------------------------------------------------

TEST(BadInputCommand, ReplayPastTheEndOfTheClockIsAnErrorNamingTheNode)
{
    TempDir dir;
    // Six nodes of 3.1e12 us in a chain: 1.86e19 ps, past 2^64 ps.
    std::string trace = writeTrace(dir, "long", [](int) {
        std::vector<et::TraceNode> nodes;
        for (std::uint64_t id = 1; id <= 6; ++id)
            nodes.push_back(test::compNode(id,
                                           id > 1 ? std::vector<std::uint64_t>{id - 1}
                                                  : std::vector<std::uint64_t>{},
                                           {},
                                           3'100'000'000'000));
        return nodes;
    });
    CommandResult result = runEtsim(run(trace, "--mode replay"));
    EXPECT_EQ(result.code, 1) << result.output;
    EXPECT_TRUE(contains(result.output, "node 6 of rank")) << result.output;
    EXPECT_TRUE(contains(result.output, "would end past the end of the simulated clock"))
        << result.output;
}

TEST(BadInputCommand, SizesAndDurationsThatCannotBeSimulated)
{
    TempDir dir;
    std::string trace = writeTrace(dir, "huge", [](int) {
        et::TraceNode tooLong = test::compNode(1, {}, {}, 20'000'000'000'000);
        return std::vector{
            test::gpuCollectiveNode(2, et::CollectiveType::AllReduce, std::uint64_t{1} << 62),
            tooLong};
    });
    CommandResult validate = runEtsim("trace validate " + trace);
    EXPECT_EQ(validate.code, 1) << validate.output;
    EXPECT_TRUE(contains(validate.output,
                         "comm_size 4611686018427387904 B is above etsim's limit of 2^50 B"))
        << validate.output;
    EXPECT_TRUE(contains(validate.output, "duration_micros 20000000000000 us is beyond"))
        << validate.output;
    CommandResult result = runEtsim(run(trace));
    EXPECT_EQ(result.code, 1) << result.output;
    EXPECT_TRUE(contains(result.output, "node 2 (\"n2\"): comm_size 4611686018427387904 B"))
        << result.output;
}

TEST(BadInputCommand, ATransferBeyondTheClockIsAnErrorNotAWrappedTime)
{
    TempDir dir;
    std::string trace = writeTrace(dir, "ar", [](int) {
        return std::vector{
            test::gpuCollectiveNode(1, et::CollectiveType::AllReduce, std::uint64_t{1} << 40)};
    });
    // Every fidelity refuses the first message, naming the node that sent it and the time.
    for (const char* fidelity : {"flow", "analytical", "astra_aware", "astra_unaware"}) {
        CommandResult result =
            runEtsim(run(trace,
                         std::string("--set 'fabric.topology.dims[0].bandwidth=1e-9 B/s' ") +
                             "--set fabric.fidelity=" + fidelity));
        EXPECT_EQ(result.code, 1) << fidelity << ": " << result.output;
        EXPECT_TRUE(contains(result.output,
                             "fabric: rank 0 node 1: all_reduce of "
                             "1099511627776 B: a message of 34359738368 B from "
                             "endpoint 0 to endpoint 1 would take"))
            << fidelity << ": " << result.output;
        EXPECT_TRUE(contains(result.output, "s, beyond the end of the simulated clock"))
            << fidelity << ": " << result.output;
    }
    // A point-to-point send: its node and its size.
    std::string p2p = writeTrace(dir, "p2p", [](int rank) {
        std::vector<et::TraceNode> nodes;
        if (rank == 0)
            nodes.push_back(test::sendNode(3, 1, 5, 1 << 16));
        if (rank == 1)
            nodes.push_back(test::recvNode(4, 0, 5, 1 << 16));
        return nodes;
    });
    CommandResult send = runEtsim(run(p2p, "--set 'fabric.topology.dims[0].bandwidth=1e-12 B/s'"));
    EXPECT_EQ(send.code, 1) << send.output;
    EXPECT_TRUE(contains(send.output, "rank 0 node 3: send of 65536 B to rank 1")) << send.output;
}

// ---- 5. Work one value can cause -----------------------------------------------------------

TEST(BadInputCommand, AHugeTensorIsRefusedNotSimulatedForYears)
{
    TempDir dir;
    std::string trace = writeTrace(dir, "mem", [](int) {
        return std::vector{test::gpuMemoryNode(1, true, std::numeric_limits<std::uint64_t>::max())};
    });
    CommandResult result = runEtsim(run(trace));
    EXPECT_EQ(result.code, 1) << result.output;
    EXPECT_TRUE(contains(result.output, "tensor_size")) << result.output;

    // Below the per-node limit, but more than twice the 80 GB the memory holds.
    std::string big = writeTrace(dir, "big", [](int) {
        return std::vector{test::gpuMemoryNode(1, true, std::uint64_t{1} << 40)};
    });
    CommandResult held = runEtsim(run(big));
    EXPECT_EQ(held.code, 1) << held.output;
    EXPECT_TRUE(contains(held.output, "more than twice the")) << held.output;
    EXPECT_TRUE(contains(held.output, "the accelerator's memory holds")) << held.output;
}

TEST(BadInputCommand, ATinyTimelineSampleIsWidened)
{
    TempDir dir;
    std::string trace = writeTrace(dir, "t", [](int) {
        return std::vector{test::computeNode(1, std::uint64_t{1} << 40, 1 << 20, 1)};
    });
    const std::string timeline = dir.file("t.json").string();
    CommandResult result =
        runEtsim(run(trace, "--timeline " + timeline + " --timeline-sample 1ps"));
    ASSERT_EQ(result.code, 0) << result.output;
    // At most 100,000 samples per counter track (a few MB), not one per picosecond.
    EXPECT_LT(std::filesystem::file_size(timeline), 200U << 20);
}

// ---- 6. --set indices -----------------------------------------------------------------------

TEST(BadInputCommand, SetIndexOutOfRangeNamesTheValidRange)
{
    TempDir dir;
    std::string trace =
        writeTrace(dir, "t", [](int) { return std::vector{test::computeNode(1, 1000, 1000, 1)}; });
    CommandResult result =
        runEtsim(run(trace, "--set 'fabric.topology.dims[18446744073709551616].bandwidth=1 GB/s'"));
    EXPECT_EQ(result.code, 1) << result.output;
    EXPECT_TRUE(
        contains(result.output, "fabric.topology.dims[18446744073709551616]: index out of range"))
        << result.output;
    EXPECT_TRUE(contains(result.output, "valid indices are 0 to")) << result.output;
}

// ---- 7. Rendezvous above the eager threshold ------------------------------------------------

TEST(BadInputCommand, ARendezvousSendWithoutItsRecvDeadlocks)
{
    TempDir dir;
    auto sendOnly = [](std::uint64_t bytes) {
        return [bytes](int rank) {
            std::vector<et::TraceNode> nodes{test::computeNode(1, 1000, 1000, 1)};
            if (rank == 0)
                nodes.push_back(test::pointToPointNode(2, true, 0, 1, bytes, 7));
            return nodes;
        };
    };
    // 1 MiB is above the 64 KiB eager threshold: the send waits for a recv that never comes.
    CommandResult large = runEtsim(run(writeTrace(dir, "large", sendOnly(1 << 20))));
    EXPECT_EQ(large.code, 1) << large.output;
    EXPECT_TRUE(contains(large.output, "deadlock")) << large.output;
    // 1 KiB is eager: it leaves at once and completes when it arrives.
    CommandResult small = runEtsim(run(writeTrace(dir, "small", sendOnly(1024))));
    EXPECT_EQ(small.code, 0) << small.output;
}

// ---- 8. Inconsistent compute attributes -----------------------------------------------------

TEST(BadInputCommand, ComputeAttributesOutOfRangeNameTheNodeAndAttribute)
{
    TempDir dir;
    auto withNode = [&](const std::string& name, et::TraceNode node) {
        return writeTrace(dir, name, [node](int) { return std::vector{node}; });
    };
    et::TraceNode ops = test::computeNode(1, 0, 1000, 1);
    ops.setNumOps(std::numeric_limits<std::int64_t>::max());
    et::TraceNode gemm = test::computeNode(1, 1000, 1000, 1);
    gemm.setGemmM(std::int64_t{1} << 40);
    gemm.setGemmN(std::int64_t{1} << 40);
    gemm.setGemmK(std::int64_t{1} << 40);
    et::TraceNode negativeM = test::computeNode(1, 1000, 1000, 1);
    negativeM.setGemmM(-5);
    et::TraceNode negativeOps = test::computeNode(1, 1000, 1000, 1);
    negativeOps.setNumOps(-5);
    for (const auto& [name, node, text] :
         {std::tuple{"ops", ops, "num_ops 9223372036854775807 is above etsim's limit"},
          std::tuple{"gemm", gemm, "the GEMM shape"},
          std::tuple{"negm", negativeM, "gemm_m is -5"},
          std::tuple{"negops", negativeOps, "num_ops is -5"}}) {
        const std::string trace = withNode(name, node);
        CommandResult result = runEtsim(run(trace));
        EXPECT_EQ(result.code, 1) << name << result.output;
        EXPECT_TRUE(contains(result.output, "node 1 (\"n1\"): " + std::string(text)))
            << name << result.output;
        CommandResult validate = runEtsim("trace validate " + trace);
        EXPECT_EQ(validate.code, 1) << name << validate.output;
        EXPECT_TRUE(contains(validate.output, text)) << name << validate.output;
    }
}

// ---- 9. validate applies the run's rules -----------------------------------------------------

TEST(BadInputCommand, ValidateRefusesWhatRunRefuses)
{
    TempDir dir;
    for (int peer : {99, -1}) {
        std::string trace = writeTrace(dir, "p" + std::to_string(peer + 1), [peer](int rank) {
            return std::vector{test::pointToPointNode(1, true, rank, peer, 64, 0)};
        });
        CommandResult validate = runEtsim("trace validate " + trace);
        EXPECT_EQ(validate.code, 1) << validate.output;
        EXPECT_TRUE(
            contains(validate.output,
                     "comm_dst " + std::to_string(peer) + " is not a rank of this 8-rank job"))
            << validate.output;
        EXPECT_EQ(runEtsim(run(trace)).code, 1);
    }
    // A control-dependency cycle deadlocks a run that honours control edges.
    std::string cycle = writeTrace(dir, "cycle", [](int) {
        return std::vector{test::compNode(1, {}, {2}), test::compNode(2, {}, {1})};
    });
    CommandResult validate = runEtsim("trace validate " + cycle);
    EXPECT_EQ(validate.code, 1) << validate.output;
    EXPECT_TRUE(contains(validate.output, "error: ")) << validate.output;
    EXPECT_TRUE(contains(validate.output, "control dependency cycle of 2 nodes"))
        << validate.output;
    EXPECT_EQ(runEtsim(run(cycle)).code, 1);
    EXPECT_EQ(runEtsim("trace validate --data-only " + cycle).code, 0);
}

// ---- 10. Outputs that cannot work ------------------------------------------------------------

TEST(BadInputCommand, ReportAndTimelineNeedTheirOwnFiles)
{
    TempDir dir;
    std::string trace =
        writeTrace(dir, "t", [](int) { return std::vector{test::computeNode(1, 1000, 1000, 1)}; });
    const std::string out = dir.file("out.json").string();
    CommandResult same = runEtsim(run(trace, "--report " + out + " --timeline " + out));
    EXPECT_EQ(same.code, 2) << same.output;
    EXPECT_TRUE(contains(same.output, "name the same file")) << same.output;
    EXPECT_FALSE(std::filesystem::exists(out));
    CommandResult empty = runEtsim(run(trace, "--report ''"));
    EXPECT_EQ(empty.code, 2) << empty.output;
    EXPECT_TRUE(contains(empty.output, "--report needs a file name")) << empty.output;
}

// ---- 21. Exit codes ---------------------------------------------------------------------------

TEST(BadInputCommand, UnreadableFilesAndOverrideSyntaxCannotStart)
{
    TempDir dir;
    std::string trace =
        writeTrace(dir, "t", [](int) { return std::vector{test::computeNode(1, 1000, 1000, 1)}; });
    std::filesystem::create_directory(dir.file("folder.yaml"));
    CommandResult folder =
        runEtsim("run --platform " + dir.file("folder.yaml").string() + " --trace " + trace);
    EXPECT_EQ(folder.code, 2) << folder.output;
    EXPECT_TRUE(contains(folder.output, "cannot read: is a folder")) << folder.output;

    for (const char* set : {"'fabric.topology.dims[x]=1'", "'ranks=[1,'", "'a..b=1'"}) {
        CommandResult result = runEtsim(run(trace, std::string("--set ") + set));
        EXPECT_EQ(result.code, 2) << set << result.output;
        EXPECT_TRUE(contains(result.output, "etsim run: --set ")) << set << result.output;
        EXPECT_FALSE(contains(result.output, "preset:hgx_h100:1:1")) << set << result.output;
    }

    for (const char* command : {"mem --config ", "sweep "}) {
        CommandResult result = runEtsim(command + dir.file("folder.yaml").string());
        EXPECT_EQ(result.code, 2) << command << result.output;
        EXPECT_TRUE(contains(result.output, "cannot read: is a folder")) << result.output;
    }

    CommandResult plot =
        runEtsim("plot " + dir.path().string() + " -o " + dir.file("p.svg").string());
    EXPECT_EQ(plot.code, 2) << plot.output;
    CommandResult compare = runEtsim("compare " + dir.path().string() + " " + dir.path().string());
    EXPECT_EQ(compare.code, 2) << compare.output;
}

// ---- 22. Messages that name what is wrong ------------------------------------------------------

TEST(BadInputCommand, ACommSizeThatIsNotAnIntegerIsNotMissing)
{
    TempDir dir;
    const std::string json = dir.write("c.json", R"({"format": "etsim-trace-json/1",
        "metadata": {"version": "0.0.4"}, "nodes": [{"id": 1, "name": "ar", "type": "COMM_COLL_NODE",
        "ctrl_deps": [], "data_deps": [], "duration_micros": 1, "attr": [
        {"name": "is_cpu_op", "bool_val": false}, {"name": "comm_type", "int64_val": 0},
        {"name": "comm_size", "double_val": 1.5}]}]})")
                                 .string();
    for (int rank = 0; rank < ranks; ++rank)
        ASSERT_EQ(runEtsim("trace convert " + json + " " +
                           dir.file("c." + std::to_string(rank) + ".et").string())
                      .code,
                  0);
    CommandResult result = runEtsim(run((dir.path() / "c").string()));
    EXPECT_EQ(result.code, 1) << result.output;
    EXPECT_TRUE(contains(result.output, "has a comm_size etsim cannot read (double_val)"))
        << result.output;
}

TEST(BadInputCommand, ARankFileThatIsNotAFileIsNamed)
{
    TempDir dir;
    std::string trace =
        writeTrace(dir, "t", [](int) { return std::vector{test::computeNode(1, 1000, 1000, 1)}; });
    std::filesystem::remove(dir.file("t.2.et"));
    std::filesystem::create_directory(dir.file("t.2.et"));
    CommandResult folder = runEtsim(run(trace));
    EXPECT_EQ(folder.code, 2) << folder.output;
    EXPECT_TRUE(contains(folder.output, "rank 2 is a folder, not a rank file")) << folder.output;

    std::filesystem::remove(dir.file("t.2.et"));
    ASSERT_EQ(::mkfifo(dir.file("t.2.et").c_str(), 0600), 0);
    CommandResult fifo = runEtsim(run(trace));
    EXPECT_EQ(fifo.code, 2) << fifo.output;
    EXPECT_TRUE(contains(fifo.output, "rank 2 is a FIFO (named pipe), not a rank file"))
        << fifo.output;
    CommandResult info = runEtsim("trace info " + trace);
    EXPECT_EQ(info.code, 2) << info.output;
}

TEST(BadInputCommand, AstraValuesOutOfRangeNameFileLineAndKey)
{
    TempDir dir;
    std::string trace = writeTrace(
        dir,
        "ar",
        [](int) {
            return std::vector{test::gpuCollectiveNode(1, et::CollectiveType::AllReduce, 1 << 20)};
        },
        4);
    const std::string system = dir.write("sys.json", R"({
  "scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 1,
  "preferred-dataset-splits": 4, "all-reduce-implementation": ["ring"],
  "all-gather-implementation": ["ring"], "reduce-scatter-implementation": ["ring"],
  "all-to-all-implementation": ["ring"], "collective-optimization": "baseline",
  "local-mem-bw": 1600})")
                                   .string();
    for (const char* bandwidth : {"1e300", "1e-15"}) {
        const std::string network =
            dir.write("net.yml",
                      "topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ " +
                          std::string(bandwidth) + " ]\nlatency: [ 500 ]\n")
                .string();
        CommandResult result = runEtsim("run --quiet --astra-network " + network +
                                        " --astra-system " + system + " --trace " + trace);
        EXPECT_EQ(result.code, 1) << bandwidth << result.output;
        EXPECT_TRUE(contains(result.output, network + ":3:12: bandwidth: dimension 0 is"))
            << bandwidth << result.output;
    }
    const std::string network =
        dir.write("net.yml",
                  "topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ 50 ]\n"
                  "latency: [ 500 ]\n")
            .string();
    const std::string splits = dir.write("splits.json", R"({
  "scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 1,
  "preferred-dataset-splits": 1000000, "all-reduce-implementation": ["ring"],
  "all-gather-implementation": ["ring"], "reduce-scatter-implementation": ["ring"],
  "all-to-all-implementation": ["ring"], "collective-optimization": "baseline",
  "local-mem-bw": 1600})")
                                   .string();
    CommandResult result = runEtsim("run --quiet --astra-network " + network + " --astra-system " +
                                    splits + " --trace " + trace);
    EXPECT_EQ(result.code, 1) << result.output;
    EXPECT_TRUE(contains(result.output, "preferred-dataset-splits: must be at most 1024"))
        << result.output;

    // The system file's rates and delays: a local memory of 1e-300 GB/s ran and finished with
    // a reduction time past the clock, 1e300 failed without naming the file or the key.
    struct Case {
        const char* from;
        const char* to;
        const char* expected;
    };
    const std::string base = test::readFile(dir.file("sys.json"));
    for (const Case& bad : {
             Case{"\"local-mem-bw\": 1600",
                  "\"local-mem-bw\": 1e-300",
                  ":6:19: local-mem-bw: is 1e-300 GB/s; it must be from 1e-06 to 1e+09 GB/s"},
             Case{"\"local-mem-bw\": 1600",
                  "\"local-mem-bw\": 1e300",
                  ":6:19: local-mem-bw: is 1e+300 GB/s; it must be from"},
             Case{"\"local-mem-bw\": 1600",
                  "\"local-mem-bw\": 1600, \"roofline-enabled\": 1, \"peak-perf\": 1e300",
                  "peak-perf: is 1e+300 TFLOP/s; it must be from 1e-06 to 1e+09 TFLOP/s"},
             Case{"\"endpoint-delay\": 10",
                  "\"endpoint-delay\": 18446744073709551615",
                  ":2:50: endpoint-delay: is 1.8446744073709552e+19 ns; it must be from 0 to 1e+12 "
                  "ns"},
         }) {
        std::string text = base;
        text.replace(text.find(bad.from), std::string(bad.from).size(), bad.to);
        const std::string file = dir.write("range.json", text).string();
        CommandResult ranged = runEtsim("run --quiet --astra-network " + network +
                                        " --astra-system " + file + " --trace " + trace);
        EXPECT_EQ(ranged.code, 1) << bad.to << ": " << ranged.output;
        EXPECT_TRUE(contains(ranged.output, bad.expected)) << bad.to << ": " << ranged.output;
    }
}

} // namespace
} // namespace etsim::apps
