// The trace summary on small traces written by our writer, then on the real traces.

#include "et_driver/TraceInfo.h"

#include "et_driver/TraceWriter.h"
#include "tests/et_driver/TraceTestSupport.h"
#include "tests/support/TempDir.h"

#include <gtest/gtest.h>

namespace etsim::et {
namespace {

namespace fs = std::filesystem;

TraceNode node(uint64_t id,
               NodeType type,
               uint64_t durationMicros,
               std::vector<uint64_t> data = {},
               std::vector<uint64_t> ctrl = {})
{
    TraceNode n;
    n.id = id;
    n.name = "n" + std::to_string(id);
    n.type = type;
    n.durationMicros = durationMicros;
    n.dataDeps = std::move(data);
    n.ctrlDeps = std::move(ctrl);
    return n;
}

TraceNode collective(uint64_t id, CollectiveType type, int64_t bytes, std::vector<uint64_t> data)
{
    TraceNode n = node(id, NodeType::CommColl, 2, std::move(data));
    n.setCommType(type);
    n.setCommSize(bytes);
    return n;
}

void write(const fs::path& file, const std::vector<TraceNode>& nodes)
{
    TraceWriter writer(file);
    for (const TraceNode& n : nodes)
        writer.write(n);
    writer.close();
}

TEST(TraceInfoTest, CountsTotalsAndChains)
{
    etsim::test::TempDir dir;
    TraceNode a = node(1, NodeType::Comp, 10);
    a.setNumOps(1000);
    a.setTensorSize(64);
    TraceNode b = node(2, NodeType::Comp, 5, {1});
    b.setNumOps(-7); // negative work is not added
    TraceNode load = node(5, NodeType::MemLoad, 0, {2});
    load.setTensorSize(4096);
    TraceNode send = node(9, NodeType::CommSend, 0, {1});
    send.setCommSize(100);
    // Longest by node count: 1 2 5 6 7 (5 nodes, 10+5+0+0+0 = 15 us). Longest by duration:
    // 1 3 4 (10+20+1 = 31 us over 3 nodes).
    write(dir.file("t.0.et"),
          {a,
           b,
           node(3, NodeType::Comp, 20, {1}),
           node(4, NodeType::Comp, 1, {2, 3}),
           load,
           node(6, NodeType::Comp, 0, {5}),
           collective(7, CollectiveType::AllReduce, 1024, {6}),
           collective(8, CollectiveType::AllReduce, 1024, {}),
           send,
           collective(10, CollectiveType::AllGather, 512, {})});
    TraceInfo info = readTraceInfo(dir.file("t.0.et"));
    EXPECT_EQ(info.ranks, 1U);
    EXPECT_EQ(info.nodes, 10U);
    EXPECT_EQ(info.nodesByType,
              (std::map<int32_t, uint64_t>{{static_cast<int32_t>(NodeType::MemLoad), 1},
                                           {static_cast<int32_t>(NodeType::Comp), 5},
                                           {static_cast<int32_t>(NodeType::CommSend), 1},
                                           {static_cast<int32_t>(NodeType::CommColl), 3}}));
    ASSERT_EQ(info.collectives.size(), 2U);
    const CollectiveInfo& allReduce = info.collectives.at(0);
    EXPECT_EQ(allReduce.count, 2U);
    EXPECT_EQ(allReduce.totalBytes, 2048U);
    EXPECT_EQ(allReduce.countBySize, (std::map<int64_t, uint64_t>{{1024, 2}}));
    EXPECT_EQ(info.collectives.at(2).totalBytes, 512U);
    EXPECT_EQ(info.totalNumOps, 1000U);
    EXPECT_EQ(info.totalTensorBytes, 64U + 4096U);
    EXPECT_EQ(info.totalCommBytes, 2048U + 512U + 100U);

    ASSERT_EQ(info.rankInfos.size(), 1U);
    const RankInfo& rank = info.rankInfos[0];
    EXPECT_EQ(rank.rank, 0U);
    EXPECT_TRUE(rank.metadataPresent);
    EXPECT_EQ(rank.metadataVersion, "0.0.4");
    EXPECT_EQ(rank.chainEdges, ChainEdges::Data);
    EXPECT_EQ(rank.longestChainNodes, 5U);
    EXPECT_TRUE(rank.hasDurations);
    EXPECT_EQ(rank.criticalPathMicros, 31U);
    EXPECT_EQ(rank.criticalPathNodes, 3U);
    EXPECT_EQ(rank.nodesOnCycles, 0U);
}

TEST(TraceInfoTest, ControlOnlyTracesChainOnControlEdgesAndCyclesAreLeftOut)
{
    etsim::test::TempDir dir;
    write(dir.file("c.0.et"),
          {node(1, NodeType::Comp, 0),
           node(2, NodeType::Comp, 0, {}, {1}),
           node(3, NodeType::Comp, 0, {}, {2})});
    write(dir.file("c.1.et"),
          {node(1, NodeType::Comp, 4, {3}),
           node(2, NodeType::Comp, 4, {1}),
           node(3, NodeType::Comp, 4, {2}),
           node(4, NodeType::Comp, 4, {3}),
           node(5, NodeType::Comp, 4)});
    TraceInfo info = readTraceInfo(dir.file("c"));
    EXPECT_EQ(info.ranks, 2U);
    ASSERT_EQ(info.rankInfos.size(), 2U);
    EXPECT_EQ(info.rankInfos[0].chainEdges, ChainEdges::Ctrl);
    EXPECT_EQ(info.rankInfos[0].longestChainNodes, 3U);
    EXPECT_FALSE(info.rankInfos[0].hasDurations);
    EXPECT_EQ(info.rankInfos[1].chainEdges, ChainEdges::Data);
    EXPECT_EQ(info.rankInfos[1].nodesOnCycles, 4U);
    EXPECT_EQ(info.rankInfos[1].longestChainNodes, 1U);
    EXPECT_EQ(info.rankInfos[1].criticalPathMicros, 4U);

    TraceInfoOptions both;
    both.chainEdges = ChainEdges::DataAndCtrl;
    EXPECT_EQ(readTraceInfo(dir.file("c"), both).rankInfos[0].chainEdges, ChainEdges::DataAndCtrl);
}

TEST(TraceInfoTest, RankFromFileName)
{
    EXPECT_EQ(rankFromFileName("dir/x.12.et"), std::optional<uint32_t>(12));
    EXPECT_EQ(rankFromFileName("x.3.et.gz"), std::optional<uint32_t>(3));
    EXPECT_EQ(rankFromFileName("x.et"), std::nullopt);
    EXPECT_EQ(rankFromFileName("x.a.et"), std::nullopt);
}

TEST(TraceInfoTest, CorruptFileThrowsTraceError)
{
    etsim::test::TempDir dir;
    fs::path file = dir.write("bad.0.et", std::string("\x05\x0a\x01", 3));
    EXPECT_THROW(readTraceInfo(file), TraceError);
}

#define ETSIM_REQUIRE_TRACES(dir)                                                                  \
    std::optional<std::filesystem::path> dir = test::sharedTraces();                               \
    if (!dir)                                                                                      \
        GTEST_SKIP() << "shared traces not found: set ETSIM_TRACES to the traces folder";

TEST(TraceInfoOnRealTraces, Resnet50)
{
    ETSIM_REQUIRE_TRACES(dir);
    TraceInfo info = readTraceInfo(*dir / "text-resnet50-dp-64r-legacy" / "resnet50_DataParallel");
    // README: 64 ranks x 215 nodes (COMP 161, COMM_COLL 54, all ALL_REDUCE; 15 distinct sizes
    // from 16,384 B to 9,437,184 B), dependencies only in ctrl_deps, no GlobalMetadata.
    EXPECT_EQ(info.ranks, 64U);
    EXPECT_EQ(info.nodes, 64U * 215U);
    EXPECT_EQ(info.nodesByType.at(static_cast<int32_t>(NodeType::Comp)), 64U * 161U);
    EXPECT_EQ(info.nodesByType.at(static_cast<int32_t>(NodeType::CommColl)), 64U * 54U);
    ASSERT_EQ(info.collectives.size(), 1U);
    const CollectiveInfo& allReduce = info.collectives.at(0);
    EXPECT_EQ(allReduce.count, 64U * 54U);
    EXPECT_EQ(allReduce.countBySize.size(), 15U);
    EXPECT_EQ(allReduce.countBySize.begin()->first, 16384);
    EXPECT_EQ(allReduce.countBySize.rbegin()->first, 9437184);
    EXPECT_EQ(allReduce.totalBytes, 6528745472U);
    EXPECT_EQ(info.totalCommBytes, 6528745472U);
    for (const RankInfo& rank : info.rankInfos) {
        EXPECT_FALSE(rank.metadataPresent);
        EXPECT_EQ(rank.nodes, 215U);
        EXPECT_EQ(rank.chainEdges, ChainEdges::Ctrl) << "rank " << rank.rank;
        EXPECT_EQ(rank.longestChainNodes, 162U) << "rank " << rank.rank;
        EXPECT_EQ(rank.nodesOnCycles, 0U);
    }
}

TEST(TraceInfoOnRealTraces, LinkedPytorchTrace)
{
    ETSIM_REQUIRE_TRACES(dir);
    TraceInfo info = readTraceInfo(*dir / "pytorch-linked-1.1.0-r0" / "chakra.0.et.gz");
    // README: 11,347 nodes, COMP 11,333, COMM_COLL 14: 12 ALL_REDUCE of 4 B .. 131,072,000 B,
    // 2 BROADCAST of 4 and 8 B.
    EXPECT_EQ(info.nodes, 11347U);
    EXPECT_EQ(info.nodesByType.at(static_cast<int32_t>(NodeType::Comp)), 11333U);
    EXPECT_EQ(info.nodesByType.at(static_cast<int32_t>(NodeType::CommColl)), 14U);
    EXPECT_EQ(info.collectives.at(0).count, 12U);
    EXPECT_EQ(info.collectives.at(0).countBySize.begin()->first, 4);
    EXPECT_EQ(info.collectives.at(0).countBySize.rbegin()->first, 131072000);
    EXPECT_EQ(info.collectives.at(5).countBySize, (std::map<int64_t, uint64_t>{{4, 1}, {8, 1}}));
    EXPECT_EQ(info.collectives.at(0).totalBytes, 1002098696U);
    ASSERT_EQ(info.rankInfos.size(), 1U);
    EXPECT_EQ(info.rankInfos[0].chainEdges, ChainEdges::Data);
    EXPECT_EQ(info.rankInfos[0].nodesOnCycles, 0U);
    EXPECT_TRUE(info.rankInfos[0].hasDurations);
}

} // namespace
} // namespace etsim::et
