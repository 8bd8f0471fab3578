#pragma once
// The builder: elaborates a validated platform into a SystemC module tree, and attaches a
// job to it. Per rank: an accelerator (compute, SRAM, DMA) whose DMA reaches the rank's
// memory (HBM); one fabric for all ranks. Which model builds each kind comes from a
// ComponentRegistry (Components.h).
//
//     etsim::Simulation simulation;
//     etsim::StatGroup stats("platform");
//     auto config = etsim::platform::loadPlatform("hgx_h100");
//     etsim::platform::Platform platform("platform", config, simulation, stats);
//     platform.attach(etsim::platform::traceSources(...));   // one driver per rank
//     etsim::RunResult result = simulation.run();
//
// attach() creates one RankDriver per rank and binds its compute and memory sockets to the
// rank's accelerator (which runs both kinds of node; through a FanIn unless the accelerator
// routes several initiators itself, Component::routesManyInitiators) and its
// communication socket to the fabric, in rank order. Stats: <root>.rank<N>.accelerator,
// <root>.rank<N>.hbm, <root>.drivers.rank<N>, <root>.fabric.

#include "et_driver/NodeLowering.h"
#include "et_driver/ProcessGroups.h"
#include "et_driver/RankDriver.h"
#include "kernel/Simulation.h"
#include "kernel/Stats.h"
#include "models/accel/StreamPlanCache.h"
#include "platforms/Components.h"
#include "platforms/FanIn.h"
#include "platforms/PlatformConfig.h"

#include <systemc>

#include <functional>
#include <memory>
#include <vector>

namespace etsim {
class Logger;
class Timeline;
} // namespace etsim

namespace etsim::platform {

class Platform final : public sc_core::sc_module {
public:
    /// `config` is copied; `simulation` and `stats` must outlive the platform. Throws
    /// etsim::Error for a config that breaks a rule (validatePlatform). `localRanks` (one
    /// flag per rank; empty = all) elaborates only the marked ranks, for a partitioned run
    /// (docs/partitioned-runs.md): the others get no accelerator, HBM, stats or driver, and
    /// attach() never reads their node sources.
    Platform(const sc_core::sc_module_name& name,
             PlatformConfig config,
             Simulation& simulation,
             StatGroup& stats,
             const ComponentRegistry& registry = ComponentRegistry::defaults(),
             std::vector<bool> localRanks = {});
    ~Platform() override;
    Platform(const Platform&) = delete;
    Platform& operator=(const Platform&) = delete;

    /// Attaches a job, one node source per rank (before the simulation starts; once).
    /// `groups` are the communicator groups known up front (a comm-group file); `log` gets
    /// the lowering's warnings and `timeline` (optional) every node. Throws etsim::Error when
    /// the number of sources is not the platform's rank count.
    void attach(std::vector<et::NodeSource> sources,
                const std::vector<et::ProcessGroup>& groups = {},
                const Logger* log = nullptr,
                Timeline* timeline = nullptr);
    /// Called for every finished node of every rank.
    void onRecord(std::function<void(const et::NodeRecord&)> callback);

    const PlatformConfig& config() const { return cfg; }
    std::uint32_t rankCount() const { return cfg.ranks; }
    /// The drivers (empty before attach()).
    std::vector<const et::RankDriver*> drivers() const;
    const FabricComponent& fabric() const { return *net; }
    FabricComponent& fabric() { return *net; }
    /// True when this process elaborates `rank`.
    bool isLocal(std::uint32_t rank) const { return local[rank]; }
    /// The fabric's link tracks go to `timeline` as process `processId` (before the run).
    void attachFabricTimeline(Timeline& timeline, std::uint32_t processId)
    {
        net->attachTimeline(timeline, processId);
    }
    /// Every component idle.
    bool idle() const;
    /// After the run: what did not end cleanly (co-simulation peers that failed at
    /// shutdown), one line per component; ends the links still open.
    std::vector<std::string> shutdownProblems();
    /// Tells every co-simulation peer to terminate, without waiting for the answers.
    void beginShutdown();

private:
    // Plans kept for all ranks together: they recur on every rank, but each rank's memory and
    // units start a node in states of their own, so more distinct ones than for one rank.
    static constexpr std::size_t sharedPlanCapacity = 4096;
    struct Rank {
        std::unique_ptr<Component> memory;
        std::unique_ptr<Component> accelerator;
        std::unique_ptr<FanIn> fanIn; // only in front of a target that takes one binding
        std::unique_ptr<et::RankDriver> driver;
    };

    PlatformConfig cfg;
    Simulation& simulation;
    StatGroup& stats;
    std::unique_ptr<FabricComponent> net;
    // The accelerators' shared streaming plans: before the ranks, which use it until their end.
    accel::StreamPlanCache plans{sharedPlanCapacity};
    std::vector<Rank> ranks;
    std::vector<bool> local;
    std::unique_ptr<et::LoweringContext> lowering;
    std::vector<std::function<void(const et::NodeRecord&)>> recordCallbacks;
};

/// The driver options a platform's `driver:` section describes.
et::RankDriverOptions driverOptions(const DriverConfig& driver);

} // namespace etsim::platform
