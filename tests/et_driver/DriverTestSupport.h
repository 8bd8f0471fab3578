#pragma once
// A small job for driver tests: N ranks fed from node vectors, stand-in targets with exact
// integer timings, and every node's record kept by (rank, node id).

#include "et_driver/NodeLowering.h"
#include "et_driver/RankDriver.h"
#include "et_driver/TraceNode.h"
#include "kernel/Log.h"
#include "kernel/Simulation.h"
#include "kernel/Stats.h"
#include "tests/support/TestTargets.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace etsim::et::test {

struct Record {
    std::string name;
    Engine engine = Engine::Instant;
    std::uint64_t issuePs = 0;
    std::uint64_t startPs = 0;
    std::uint64_t finishPs = 0;
};

struct JobTimings {
    etsim::test::FixedTiming compute{0, 0, 1000}; // 1 ns per FLOP
    etsim::test::FixedTiming memory{0, 1, 0};     // 1 ps per byte
    etsim::test::CommTiming comm{100000, 10, 500000, 1};
};

class Job {
public:
    Job(const std::vector<std::vector<TraceNode>>& traces,
        RankDriverOptions options = {},
        JobTimings timings = {},
        const std::vector<ProcessGroup>& groups = {})
        : logs(logText)
        , context(traces.size(), &logs.get("et_driver"))
        , stats("job")
        , compute("compute", timings.compute)
        , memory("memory", timings.memory)
        , comm("comm", timings.comm)
    {
        context.addGroups(groups);
        for (std::size_t rank = 0; rank < traces.size(); ++rank) {
            auto driver = std::make_unique<RankDriver>(("rank" + std::to_string(rank)).c_str(),
                                                       static_cast<RankId>(rank),
                                                       vectorSource(traces[rank]),
                                                       context,
                                                       simulation,
                                                       options,
                                                       &stats);
            bind(*driver);
            drivers.push_back(std::move(driver));
        }
    }

    void bind(RankDriver& driver)
    {
        driver.computeSocket.bind(compute.socket);
        driver.memorySocket.bind(memory.socket);
        driver.communicationSocket.bind(comm.socket);
        std::uint32_t rank = toUnderlying(driver.rank());
        driver.onRecord([this, rank](const NodeRecord& record) {
            records[{rank, toUnderlying(record.node)}] = Record{std::string(record.name()),
                                                                record.engine,
                                                                record.issuePs,
                                                                record.startPs,
                                                                record.finishPs};
        });
    }

    RunResult run() { return simulation.run(); }

    std::vector<const RankDriver*> driverList() const
    {
        std::vector<const RankDriver*> list;
        for (const auto& driver : drivers)
            list.push_back(driver.get());
        return list;
    }

    // Finish time of a node, ps; fails the test if it never finished.
    std::uint64_t finish(std::uint32_t rank, std::uint64_t node) const
    {
        auto found = records.find({rank, node});
        if (found == records.end()) {
            ADD_FAILURE() << "rank " << rank << " node " << node << " did not finish";
            return 0;
        }
        return found->second.finishPs;
    }
    const Record& record(std::uint32_t rank, std::uint64_t node) const
    {
        return records.at({rank, node});
    }

    std::ostringstream logText;
    Simulation simulation;
    LogRegistry logs;
    LoweringContext context;
    StatGroup stats;
    // Declared before the targets so that they are destroyed after them: a run abandoned in a
    // deadlock leaves payloads with the targets, which give them back to the drivers' pools.
    std::vector<std::unique_ptr<RankDriver>> drivers;
    etsim::test::FixedTarget compute;
    etsim::test::FixedTarget memory;
    etsim::test::CommTarget comm;
    std::map<std::pair<std::uint32_t, std::uint64_t>, Record> records;
};

inline TraceNode node(std::uint64_t id, NodeType type, std::vector<std::uint64_t> deps = {})
{
    TraceNode result;
    result.id = id;
    result.name = "n" + std::to_string(id);
    result.type = type;
    result.dataDeps = std::move(deps);
    return result;
}

inline TraceNode comp(std::uint64_t id, std::int64_t flops, std::vector<std::uint64_t> deps = {})
{
    TraceNode result = node(id, NodeType::Comp, std::move(deps));
    result.setNumOps(flops);
    result.setTensorSize(0);
    return result;
}

inline TraceNode
send(std::uint64_t id, int dst, int tag, std::int64_t bytes, std::vector<std::uint64_t> deps = {})
{
    TraceNode result = node(id, NodeType::CommSend, std::move(deps));
    result.setCommDst(dst);
    result.setCommTag(tag);
    result.setCommSize(bytes);
    return result;
}

inline TraceNode
recv(std::uint64_t id, int src, int tag, std::int64_t bytes, std::vector<std::uint64_t> deps = {})
{
    TraceNode result = node(id, NodeType::CommRecv, std::move(deps));
    result.setCommSrc(src);
    result.setCommTag(tag);
    result.setCommSize(bytes);
    return result;
}

inline TraceNode coll(std::uint64_t id,
                      CollectiveType type,
                      std::int64_t bytes,
                      std::vector<std::uint64_t> deps = {},
                      std::string pg = "")
{
    TraceNode result = node(id, NodeType::CommColl, std::move(deps));
    result.setCommType(type);
    result.setCommSize(bytes);
    if (!pg.empty())
        result.setPgName(std::move(pg));
    return result;
}

} // namespace etsim::et::test
