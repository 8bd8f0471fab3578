#include "platforms/Platform.h"

#include "kernel/Error.h"

#include <algorithm>

namespace etsim::platform {

Platform::Platform(const sc_core::sc_module_name& name,
                   PlatformConfig config,
                   Simulation& simulation,
                   StatGroup& stats,
                   const ComponentRegistry& registry,
                   std::vector<bool> localRanks)
    : sc_core::sc_module(name)
    , cfg(std::move(config))
    , simulation(simulation)
    , stats(stats)
    , local(std::move(localRanks))
{
    validatePlatform(cfg);
    if (local.empty())
        local.assign(cfg.ranks, true);
    if (local.size() != cfg.ranks)
        throw Error("platform: " + std::to_string(local.size()) + " local-rank flags for " +
                    std::to_string(cfg.ranks) + " ranks");
    // A stop request (a signal) also ends the proxies' waits on their peers.
    if (cfg.fabricCosim)
        cfg.fabricCosim->stop = simulation.stopRequest();
    if (cfg.computeCosim)
        cfg.computeCosim->proxy.stop = simulation.stopRequest();
    net = registry.makeFabric("fabric", cfg, stats);
    ranks.resize(cfg.ranks);
    for (std::uint32_t rank = 0; rank < cfg.ranks; ++rank) {
        if (!local[rank])
            continue;
        const std::string prefix = "rank" + std::to_string(rank);
        StatGroup& rankStats = stats.addGroup(prefix);
        Rank& parts = ranks[rank];
        parts.memory = registry.makeMemory(
            prefix + "_hbm", RankContext{cfg, RankId{rank}, rankStats.addGroup("hbm")});
        parts.accelerator = registry.makeAccelerator(
            prefix + "_accelerator",
            RankContext{cfg, RankId{rank}, rankStats.addGroup("accelerator"), &plans},
            parts.memory->target());
        if (!parts.accelerator->routesManyInitiators()) {
            parts.fanIn = std::make_unique<FanIn>((prefix + "_fanin").c_str());
            parts.fanIn->out.bind(parts.accelerator->target());
        }
    }
}

void Platform::beginShutdown()
{
    net->beginShutdown();
    for (Rank& rank : ranks)
        if (rank.accelerator)
            rank.accelerator->beginShutdown();
}

std::vector<std::string> Platform::shutdownProblems()
{
    beginShutdown();
    std::vector<std::string> problems;
    auto note = [&](Component& component) {
        if (std::string problem = component.shutdownProblem(); !problem.empty())
            problems.push_back(std::move(problem));
    };
    note(*net);
    for (Rank& rank : ranks)
        if (rank.accelerator)
            note(*rank.accelerator);
    return problems;
}

Platform::~Platform()
{
    // Every co-simulation link is told to end first, so the waits for the answers overlap.
    beginShutdown();
    // SystemC's port and export registries find an object to remove by a scan from their
    // end, so destroying objects in creation order costs time quadratic in the ranks (44 % of
    // a 16,384-rank run): everything goes in reverse creation order where it may. The drivers
    // (made last, by attach) go first only with no payload in flight; otherwise the models go
    // before them: after a run abandoned mid-transaction (a deadlock) the models give back
    // their references on the drivers' payloads, so every payload returns to its driver's pool
    // while the pool exists (kernel/PayloadPool.h, Teardown).
    const bool inFlight = std::any_of(ranks.begin(), ranks.end(), [](const Rank& rank) {
        return rank.driver && rank.driver->pool().stats().inUse != 0;
    });
    if (!inFlight)
        for (auto rank = ranks.rbegin(); rank != ranks.rend(); ++rank)
            rank->driver.reset();
    for (auto rank = ranks.rbegin(); rank != ranks.rend(); ++rank) {
        rank->fanIn.reset();
        rank->accelerator.reset();
        rank->memory.reset();
    }
    net.reset();
}

et::RankDriverOptions driverOptions(const DriverConfig& driver)
{
    et::RankDriverOptions options;
    options.lowering.compute = driver.compute;
    options.lowering.memory = driver.memory;
    options.lowering.communication = driver.communication;
    options.lowering.profile = driver.profile;
    options.lowering.eagerThresholdBytes = driver.eagerThreshold.bytes();
    options.dependencies.policy = driver.dependencies;
    options.dependencies.lenient = driver.lenient;
    options.window = driver.window;
    options.computeLimit = driver.computeLimit;
    options.memoryLimit = driver.memoryLimit;
    options.communicationLimit = driver.communicationLimit;
    options.hostLimit = driver.hostLimit;
    return options;
}

void Platform::attach(std::vector<et::NodeSource> sources,
                      const std::vector<et::ProcessGroup>& groups,
                      const Logger* log,
                      Timeline* timeline)
{
    if (lowering)
        throw Error(std::string(name()) + ": a job is already attached");
    if (sources.size() != cfg.ranks)
        throw Error("the trace has " + std::to_string(sources.size()) + " ranks but the platform" +
                    (cfg.name.empty() ? "" : " \"" + cfg.name + "\"") + " has " +
                    std::to_string(cfg.ranks) +
                    "; use a platform with as many ranks (--set ranks=N with a fitting fabric) "
                    "or --replicate N for a one-rank trace");
    lowering = std::make_unique<et::LoweringContext>(cfg.ranks, log);
    lowering->addGroups(groups);
    StatGroup& driverStats = stats.addGroup("drivers");
    const et::RankDriverOptions options = driverOptions(cfg.driver);
    for (std::uint32_t rank = 0; rank < cfg.ranks; ++rank) {
        if (!local[rank])
            continue;
        Rank& parts = ranks[rank];
        et::RankDriverOptions rankOptions = options;
        rankOptions.dependencies.log = log;
        parts.driver = std::make_unique<et::RankDriver>(("rank" + std::to_string(rank)).c_str(),
                                                        RankId{rank},
                                                        std::move(sources[rank]),
                                                        *lowering,
                                                        simulation,
                                                        rankOptions,
                                                        &driverStats,
                                                        timeline);
        if (parts.fanIn) {
            parts.driver->computeSocket.bind(parts.fanIn->in);
            parts.driver->memorySocket.bind(parts.fanIn->in);
        } else {
            parts.driver->computeSocket.bind(parts.accelerator->target());
            parts.driver->memorySocket.bind(parts.accelerator->target());
        }
        parts.driver->communicationSocket.bind(net->target());
        parts.driver->onRecord([this](const et::NodeRecord& record) {
            for (const auto& callback : recordCallbacks)
                callback(record);
        });
    }
}

void Platform::onRecord(std::function<void(const et::NodeRecord&)> callback)
{
    recordCallbacks.push_back(std::move(callback));
}

std::vector<const et::RankDriver*> Platform::drivers() const
{
    std::vector<const et::RankDriver*> list;
    for (const Rank& rank : ranks)
        if (rank.driver)
            list.push_back(rank.driver.get());
    return list;
}

bool Platform::idle() const
{
    if (!net->idle())
        return false;
    for (const Rank& rank : ranks)
        if (rank.memory && (!rank.memory->idle() || !rank.accelerator->idle()))
            return false;
    return true;
}

} // namespace etsim::platform
