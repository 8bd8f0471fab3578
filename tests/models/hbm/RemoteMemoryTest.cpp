// The remote / pooled memory model against ASTRA-sim's formula:
// latency + floor(bytes / bandwidth) ns on one FIFO server per rank, node or pool.

#include "models/hbm/RemoteMemory.h"

#include <gtest/gtest.h>

#include <string>

namespace etsim::hbm {
namespace {

RemoteMemoryConfig parse(const std::string& yaml)
{
    return loadConfigString(yaml, "mem.yaml").map(parseRemoteMemoryConfig);
}

TEST(RemoteMemory, RequestTakesLatencyPlusTruncatedTransfer)
{
    StatGroup stats("remote");
    RemoteMemory memory(parse("{kind: per_npu, latency: 500 ns, bandwidth: 64 GB/s}"), 4, stats);
    // 1,000,000 B at 64 B/ns = 15625 ns; 1000 B = 15.625 -> 15 ns.
    EXPECT_EQ(memory.complete(RankId{0}, 0, 1000000), (500 + 15625) * 1000U);
    EXPECT_EQ(memory.complete(RankId{1}, 0, 1000), (500 + 15) * 1000U);
}

TEST(RemoteMemory, ServersAreSharedPerNodeOrPool)
{
    StatGroup stats("remote");
    RemoteMemory perNode(
        parse("{kind: per_node, latency: 100 ns, bandwidth: 1 GB/s, npus_per_node: 2}"), 4, stats);
    EXPECT_EQ(perNode.servers(), 2U);
    EXPECT_EQ(perNode.complete(RankId{0}, 0, 100), 200000U);
    EXPECT_EQ(perNode.complete(RankId{1}, 0, 100), 400000U); // same node: waits its turn
    EXPECT_EQ(perNode.complete(RankId{2}, 0, 100), 200000U); // other node: free
    StatGroup poolStats("pool");
    RemoteMemory pool(parse("{kind: pool, latency: 100 ns, bandwidth: 1 GB/s}"), 4, poolStats);
    EXPECT_EQ(pool.servers(), 1U);
    EXPECT_EQ(pool.complete(RankId{3}, 0, 100), 200000U);
    EXPECT_EQ(pool.complete(RankId{0}, 0, 100), 400000U);
}

TEST(RemoteMemory, ConfigErrorsNameTheKey)
{
    try {
        parse("{kind: pool, latency: 1 us}");
        FAIL() << "no error";
    } catch (const Error& error) {
        EXPECT_EQ(std::string(error.what()),
                  "mem.yaml:1:1: bandwidth: must be positive, e.g. \"64 GB/s\"");
    }
    try {
        parse("{kind: everywhere}");
        FAIL() << "no error";
    } catch (const Error& error) {
        EXPECT_NE(std::string(error.what()).find("expected one of none, per_npu, per_node, pool"),
                  std::string::npos);
    }
    StatGroup stats("remote");
    EXPECT_THROW(RemoteMemory(RemoteMemoryConfig{}, 4, stats), Error);
}

} // namespace
} // namespace etsim::hbm
