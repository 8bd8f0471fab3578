#pragma once
// What a platform is built from, and the one place that says which model builds each kind of
// component. The Builder (Platform) asks the registry for a component of a kind; it never
// names a model itself, so a co-simulation proxy or a user's own model replaces a kind by
// registering another factory:
//
//     ComponentRegistry registry = ComponentRegistry::defaults();
//     registry.setMemory([](const std::string& name, const RankContext& rank) { ... });

#include "kernel/Ids.h"
#include "kernel/Stats.h"
#include "kernel/Timeline.h"
#include "models/net/CommEngine.h"
#include "platforms/PlatformConfig.h"

#include <systemc>
#include <tlm>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace etsim::accel {
class StreamPlanCache;
} // namespace etsim::accel

namespace etsim::platform {

/// Any target socket of the base protocol (simple or multi-passthrough).
using TargetSocket =
    tlm::tlm_base_target_socket_b<32, tlm::tlm_fw_transport_if<>, tlm::tlm_bw_transport_if<>>;

/// A built component: owns its SystemC module(s) and exposes where work arrives.
class Component {
public:
    virtual ~Component() = default;
    /// Where initiators bind.
    virtual TargetSocket& target() = 0;
    /// Whether target() takes any number of initiators and answers each through the binding
    /// its request came in on (a multi-passthrough socket that keeps the id). The platform
    /// then binds a driver's compute and memory sockets to it directly; otherwise through a
    /// FanIn, which costs a table of payloads in flight and a call each way.
    virtual bool routesManyInitiators() const { return false; }
    /// No work in flight.
    virtual bool idle() const = 0;
    /// After the run: why the component did not end cleanly (a co-simulation peer that did
    /// not answer TERMINATE), or empty. Ends a co-simulation link that is still open.
    virtual std::string shutdownProblem() { return {}; }
    /// Starts ending co-simulation links (sends TERMINATE) without waiting, so that the
    /// waits of several components for their peers' answers overlap.
    virtual void beginShutdown() {}
};

/// How much one link of a fabric was used.
struct LinkUsage {
    /// "device 0 -> 8" (devices are endpoints, then switches).
    std::string name;
    double bytes = 0.0;
    std::uint64_t busyPs = 0;
};

/// A fabric also reports the collectives it ran and how busy its links were.
class FabricComponent : public Component {
public:
    /// Finished collectives in completion order; empty if the model does not record them.
    virtual const std::vector<net::CollectiveRecord>& collectives() const = 0;
    /// Every link; empty if the model does not track links or cannot measure them.
    virtual std::vector<LinkUsage> linkUsage() const = 0;
    /// Why the links cannot be measured (e.g. a co-simulation peer carried the messages and
    /// did not report them); empty when linkUsage() is complete. Call after the run.
    virtual std::string linkUsageUnavailable() const { return {}; }
    /// Writes the fabric's own tracks (one per busy link) as process `processId` of
    /// `timeline`, which must outlive the run; a model without such tracks writes nothing.
    /// Partitioned runs (docs/partitioned-runs.md): see net::Fabric::setPartition and
    /// receive. A model that cannot be split throws etsim::Error saying so.
    virtual void setPartition(net::PartitionLink* link);
    virtual void receive(const net::CrossMessage& message);
    /// Partitioned runs whose links carry other processes' messages (net::Partitioning::
    /// LinkOwners) after every local rank is done and the kernel has ended: the time of the
    /// fabric's next event (UINT64_MAX: none), and its events before `limitPs`, run outside the
    /// kernel. Nothing of a local rank may complete then (etsim::Error).
    virtual std::uint64_t nextEventPs() const;
    virtual void runAfterEnd(std::uint64_t limitPs);
    virtual void attachTimeline(Timeline& timeline, std::uint32_t processId)
    {
        (void)timeline;
        (void)processId;
    }
};

/// What a per-rank factory gets: the platform, the rank, and the stat group of that rank's
/// component (already created, named after the component).
struct RankContext {
    const PlatformConfig& config;
    RankId rank;
    StatGroup& stats;
    /// The streaming plans the platform's accelerators share (StreamPlanCache.h); null: each
    /// keeps its own.
    accel::StreamPlanCache* plans = nullptr;
};

enum class ComponentKind : std::uint8_t { Memory, Accelerator, Fabric };
inline constexpr const char* componentKindNames[] = {"memory", "accelerator", "fabric"};

class ComponentRegistry {
public:
    /// A rank's memory (HBM): the accelerator's DMA and nothing else binds to it.
    using MemoryFactory =
        std::function<std::unique_ptr<Component>(const std::string& name, const RankContext&)>;
    /// A rank's accelerator; it binds its own memory initiator to `memory`.
    using AcceleratorFactory = std::function<std::unique_ptr<Component>(
        const std::string& name, const RankContext&, TargetSocket& memory)>;
    /// The fabric; the platform binds each rank's communication socket to its target in
    /// rank order.
    using FabricFactory = std::function<std::unique_ptr<FabricComponent>(
        const std::string& name, const PlatformConfig&, StatGroup& parentStats)>;

    /// A registry with etsim's models: hbm::HbmController, accel::Accelerator, net::Fabric;
    /// for a platform with `astra` set (the ASTRA-sim compatibility profile) the memory and
    /// accelerator are platforms::astra::AstraMemory and AstraCompute instead.
    static ComponentRegistry defaults();

    void setMemory(MemoryFactory factory) { memory = std::move(factory); }
    void setAccelerator(AcceleratorFactory factory) { accelerator = std::move(factory); }
    void setFabric(FabricFactory factory) { fabric = std::move(factory); }

    /// Throws etsim::Error naming the kind when no factory is registered for it.
    std::unique_ptr<Component> makeMemory(const std::string& name, const RankContext& rank) const;
    std::unique_ptr<Component>
    makeAccelerator(const std::string& name, const RankContext& rank, TargetSocket& target) const;
    std::unique_ptr<FabricComponent>
    makeFabric(const std::string& name, const PlatformConfig& config, StatGroup& stats) const;

private:
    MemoryFactory memory;
    AcceleratorFactory accelerator;
    FabricFactory fabric;
};

} // namespace etsim::platform
