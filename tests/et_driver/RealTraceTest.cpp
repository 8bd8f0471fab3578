// Reads the real Chakra traces of shared/traces and checks the counts and values its README
// states. Skipped (with a message) when the folder is absent.

#include "et_driver/TraceCodec.h"
#include "et_driver/TraceReader.h"
#include "et_driver/TraceSet.h"
#include "tests/et_driver/TraceTestSupport.h"
#include "tests/support/TempDir.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <unordered_set>

namespace etsim::et {
namespace {

namespace pb = ChakraProtoMsg;

#define ETSIM_REQUIRE_TRACES(dir)                                                                  \
    std::optional<std::filesystem::path> dir = test::sharedTraces();                               \
    if (!dir)                                                                                      \
        GTEST_SKIP() << "shared traces not found: set ETSIM_TRACES to the traces folder";

std::vector<TraceNode> readAll(TraceReader& reader)
{
    std::vector<TraceNode> nodes;
    TraceNode node;
    while (reader.next(node))
        nodes.push_back(node);
    return nodes;
}

std::optional<int64_t> otherInt64(const TraceNode& node, const std::string& name)
{
    for (const pb::AttributeProto& attr : TraceCodec::otherAttributes(node)) {
        if (attr.name() == name && attr.value_case() == pb::AttributeProto::kInt64Val)
            return attr.int64_val();
    }
    return std::nullopt;
}

struct Counts {
    std::map<NodeType, int> byType;
    int gpu = 0;
    uint64_t minId = UINT64_MAX;
    uint64_t maxId = 0;
    std::vector<uint64_t> roots; // nodes without data dependencies
};

Counts count(const std::vector<TraceNode>& nodes)
{
    Counts counts;
    for (const TraceNode& node : nodes) {
        ++counts.byType[node.type];
        if (node.isCpuOp() == std::optional<bool>(false))
            ++counts.gpu;
        counts.minId = std::min(counts.minId, node.id);
        counts.maxId = std::max(counts.maxId, node.id);
        if (node.dataDeps.empty())
            counts.roots.push_back(node.id);
    }
    return counts;
}

TEST(RealTraces, FeederTestTrace)
{
    ETSIM_REQUIRE_TRACES(dir);
    TraceReader reader(*dir / "chakra-feeder-test" / "chakra.0.et");
    EXPECT_FALSE(reader.compressed());
    ASSERT_TRUE(reader.metadata().present);
    EXPECT_EQ(reader.metadata().version(), "");
    EXPECT_EQ(reader.metadata().stringAttr("schema"), std::optional<std::string>("1.0.1"));
    std::vector<TraceNode> nodes = readAll(reader);
    ASSERT_EQ(nodes.size(), 3664U);
    Counts counts = count(nodes);
    EXPECT_EQ(counts.byType[NodeType::Comp], 3643);
    EXPECT_EQ(counts.byType[NodeType::CommColl], 21);
    EXPECT_EQ(counts.byType.size(), 2U);
    EXPECT_EQ(counts.gpu, 1216);
    EXPECT_EQ(counts.minId, 216U);
    EXPECT_EQ(counts.maxId, 7022U);
    EXPECT_EQ(counts.roots, (std::vector<uint64_t>{216, 432, 541, 619, 1634}));

    std::map<uint64_t, const TraceNode*> byId;
    for (const TraceNode& node : nodes)
        byId[node.id] = &node;
    ASSERT_EQ(byId.size(), 3664U);
    const TraceNode& n216 = *byId.at(216);
    EXPECT_EQ(n216.type, NodeType::Comp);
    EXPECT_EQ(n216.isCpuOp(), std::optional<bool>(true));
    EXPECT_EQ(otherInt64(n216, "rf_id"), std::optional<int64_t>(2));
    const TraceNode& n432 = *byId.at(432);
    EXPECT_EQ(n432.type, NodeType::CommColl);
    EXPECT_EQ(otherInt64(n432, "rf_id"), std::optional<int64_t>(110));

    std::vector<uint64_t> children216;
    int forward = 0;
    std::unordered_set<uint64_t> seen;
    for (const TraceNode& node : nodes) {
        for (uint64_t dep : node.dataDeps) {
            if (dep == 216)
                children216.push_back(node.id);
            if (seen.count(dep) == 0)
                ++forward;
        }
        seen.insert(node.id);
    }
    ASSERT_EQ(children216.size(), 331U);
    std::sort(children216.begin(), children216.end());
    EXPECT_EQ(children216[0], 217U);
    EXPECT_EQ(children216[1], 430U);
    EXPECT_EQ(children216[2], 435U);
    EXPECT_EQ(forward, 53);

    // 7 GPU collectives typed by comm_type (5 all-reduce, 2 broadcast); 14 host c10d nodes.
    int allReduce = 0;
    int broadcast = 0;
    int hostColl = 0;
    for (const TraceNode& node : nodes) {
        if (node.type != NodeType::CommColl)
            continue;
        if (node.isCpuOp() == std::optional<bool>(true)) {
            ++hostColl;
            EXPECT_FALSE(node.commType().has_value()) << node.id;
            continue;
        }
        ASSERT_TRUE(node.commType().has_value()) << node.id;
        ASSERT_TRUE(node.commSize().has_value()) << node.id;
        EXPECT_TRUE(node.involvedDim().has_value()) << node.id;
        allReduce += *node.commType() == static_cast<int32_t>(CollectiveType::AllReduce);
        broadcast += *node.commType() == static_cast<int32_t>(CollectiveType::Broadcast);
    }
    EXPECT_EQ(allReduce, 5);
    EXPECT_EQ(broadcast, 2);
    EXPECT_EQ(hostColl, 14);
}

TEST(RealTraces, FeederTestTraceGzippedUnderEtName)
{
    ETSIM_REQUIRE_TRACES(dir);
    std::string plain = test::recordStream(*dir / "chakra-feeder-test" / "chakra.0.et");
    etsim::test::TempDir temp;
    auto file = temp.write("chakra.0.et", test::gzipBytes(plain));
    TraceReader reader(file);
    EXPECT_TRUE(reader.compressed());
    TraceReader original(*dir / "chakra-feeder-test" / "chakra.0.et");
    TraceNode a;
    TraceNode b;
    uint64_t count = 0;
    while (original.next(a)) {
        ASSERT_TRUE(reader.next(b));
        ASSERT_EQ(a, b) << "node " << a.id;
        ++count;
    }
    EXPECT_FALSE(reader.next(b));
    EXPECT_EQ(count, 3664U);
}

TEST(RealTraces, PullRequest117TraceGzip)
{
    ETSIM_REQUIRE_TRACES(dir);
    TraceReader reader(*dir / "pytorch-linked-1.1.0-r0" / "chakra.0.et.gz");
    EXPECT_TRUE(reader.compressed());
    ASSERT_TRUE(reader.metadata().present);
    EXPECT_EQ(reader.metadata().version(), "");
    EXPECT_EQ(reader.metadata().stringAttr("schema"),
              std::optional<std::string>("1.1.0-chakra.0.0.4"));
    std::vector<TraceNode> nodes = readAll(reader);
    ASSERT_EQ(nodes.size(), 11347U);
    Counts counts = count(nodes);
    EXPECT_EQ(counts.byType[NodeType::Comp], 11333);
    EXPECT_EQ(counts.byType[NodeType::CommColl], 14);
    EXPECT_EQ(counts.minId, 1U);
    EXPECT_EQ(counts.maxId, 11347U);
    EXPECT_EQ(counts.roots, (std::vector<uint64_t>{1, 200, 1730}));
    int gpuComp = 0;
    int allReduce = 0;
    int broadcast = 0;
    std::set<int64_t> broadcastSizes;
    int64_t minAllReduce = INT64_MAX;
    int64_t maxAllReduce = 0;
    for (const TraceNode& node : nodes) {
        if (node.type == NodeType::Comp && node.isCpuOp() == std::optional<bool>(false))
            ++gpuComp;
        if (node.type != NodeType::CommColl)
            continue;
        EXPECT_EQ(node.isCpuOp(), std::optional<bool>(false));
        ASSERT_TRUE(node.commSize().has_value());
        if (node.commType() == static_cast<int32_t>(CollectiveType::AllReduce)) {
            ++allReduce;
            minAllReduce = std::min(minAllReduce, *node.commSize());
            maxAllReduce = std::max(maxAllReduce, *node.commSize());
        } else if (node.commType() == static_cast<int32_t>(CollectiveType::Broadcast)) {
            ++broadcast;
            broadcastSizes.insert(*node.commSize());
        }
    }
    EXPECT_EQ(gpuComp, 1603);
    EXPECT_EQ(allReduce, 12);
    EXPECT_EQ(broadcast, 2);
    EXPECT_EQ(minAllReduce, 4);
    EXPECT_EQ(maxAllReduce, 131072000);
    EXPECT_EQ(broadcastSizes, (std::set<int64_t>{4, 8}));

    // The process-group init nodes (ids 2 and 11347) carry the pg JSON in inputs.values.
    for (uint64_t id : {uint64_t{2}, uint64_t{11347}}) {
        auto it = std::find_if(
            nodes.begin(), nodes.end(), [id](const TraceNode& node) { return node.id == id; });
        ASSERT_NE(it, nodes.end());
        EXPECT_EQ(it->name, "## process_group:init ##");
        std::optional<pb::IOInfo> inputs = TraceCodec::inputs(*it);
        ASSERT_TRUE(inputs.has_value());
        EXPECT_EQ(inputs->values().substr(0, 3), "['[");
        EXPECT_NE(inputs->values().find("\"group_size\": 8"), std::string::npos);
    }
}

TEST(RealTraces, Resnet50PrefixWithoutMetadata)
{
    ETSIM_REQUIRE_TRACES(dir);
    TraceSet set(*dir / "text-resnet50-dp-64r-legacy" / "resnet50_DataParallel");
    ASSERT_EQ(set.rankCount(), 64U);
    std::vector<int64_t> rank0Sizes;
    for (uint32_t rank = 0; rank < 64; ++rank) {
        EXPECT_FALSE(set.metadata(rank).present) << "rank " << rank;
        std::vector<TraceNode> nodes = readAll(set.reader(rank));
        ASSERT_EQ(nodes.size(), 215U) << "rank " << rank;
        Counts counts = count(nodes);
        EXPECT_EQ(counts.byType[NodeType::Comp], 161);
        EXPECT_EQ(counts.byType[NodeType::CommColl], 54);
        EXPECT_EQ(counts.minId, 215U * rank);
        EXPECT_EQ(counts.maxId, 215U * rank + 214);
        // Record 0 is a Node: the first node returned is that record, not a lost one.
        EXPECT_EQ(nodes.front().id, 215U * rank);
        std::vector<int64_t> sizes;
        for (const TraceNode& node : nodes) {
            EXPECT_TRUE(node.dataDeps.empty());
            EXPECT_FALSE(node.isCpuOp().has_value());
            if (node.type != NodeType::CommColl)
                continue;
            EXPECT_EQ(node.commType(), std::optional<int32_t>(0));
            EXPECT_EQ(node.involvedDim(),
                      std::optional<std::vector<bool>>(std::vector<bool>{true}));
            sizes.push_back(*node.commSize());
        }
        if (rank == 0)
            rank0Sizes = sizes;
        else
            EXPECT_EQ(sizes, rank0Sizes) << "rank " << rank;
        EXPECT_FALSE(set.reader(rank).isOpen()) << "a finished rank keeps its file open";
    }
    std::set<int64_t> distinct(rank0Sizes.begin(), rank0Sizes.end());
    EXPECT_EQ(distinct.size(), 15U);
    EXPECT_EQ(*distinct.begin(), 16384);
    EXPECT_EQ(*distinct.rbegin(), 9437184);
    EXPECT_EQ(set.openFiles(), 0U);
}

TEST(RealTraces, Resnet50Folder)
{
    ETSIM_REQUIRE_TRACES(dir);
    std::vector<RankFile> files = findRankFiles(*dir / "text-resnet50-dp-64r-legacy");
    ASSERT_EQ(files.size(), 64U);
    EXPECT_EQ(files[10].rank, 10U);
    EXPECT_EQ(files[10].path.filename(), "resnet50_DataParallel.10.et");
}

TEST(RealTraces, RankOfPullRequest117FoundAsGzipPrefix)
{
    ETSIM_REQUIRE_TRACES(dir);
    TraceSet set(*dir / "pytorch-linked-1.1.0-r0" / "chakra");
    ASSERT_EQ(set.rankCount(), 1U);
    EXPECT_TRUE(set.reader(0).compressed());
}

} // namespace
} // namespace etsim::et
