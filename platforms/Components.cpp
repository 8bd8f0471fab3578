#include "platforms/Components.h"

#include "cosim/CosimConfig.h"
#include "cosim/Proxy.h"
#include "cosim/adapters/ns3/DescribeFabric.h"
#include "cosim/peer/LinkUsage.h"
#include "kernel/Error.h"
#include "models/accel/Accelerator.h"
#include "models/hbm/HbmController.h"
#include "models/net/Fabric.h"
#include "platforms/ComputeRouter.h"
#include "platforms/astra/AstraNodes.h"

#include <sstream>

namespace etsim::platform {

void FabricComponent::setPartition(net::PartitionLink* /*link*/)
{
    throw Error("this fabric model cannot run partitioned; use the built-in fabric");
}

void FabricComponent::receive(const net::CrossMessage& /*message*/)
{
    throw Error("this fabric model cannot run partitioned; use the built-in fabric");
}

std::uint64_t FabricComponent::nextEventPs() const
{
    return UINT64_MAX;
}

void FabricComponent::runAfterEnd(std::uint64_t /*limitPs*/)
{
    throw Error("this fabric model cannot run partitioned; use the built-in fabric");
}

namespace {

class HbmComponent final : public Component {
public:
    HbmComponent(const std::string& name, const RankContext& rank)
        : controller(name.c_str(), rank.config.hbm, rank.stats)
    {
    }
    TargetSocket& target() override { return controller.socket; }
    bool idle() const override { return controller.idle(); }

private:
    hbm::HbmController controller;
};

// The analytic HBM's timing, for the accelerator's streaming fast path (StreamMemory.h).
class AnalyticStreamMemory final : public accel::StreamMemory {
public:
    explicit AnalyticStreamMemory(hbm::AnalyticHbm& model) : model(model) {}
    accel::MemoryServer state() const override
    {
        const hbm::AnalyticHbm::Server& server = model.server();
        return {server.freePs, server.lastWrite, server.used};
    }
    std::uint64_t serve(accel::MemoryServer& server,
                        std::uint64_t arrivalPs,
                        std::uint64_t bytes,
                        bool write) const override
    {
        hbm::AnalyticHbm::Server copy{server.freePs, server.lastWrite, server.used};
        const std::uint64_t done = model.serve(copy, arrivalPs, bytes, write);
        server = {copy.freePs, copy.lastWrite, copy.used};
        return done;
    }
    accel::MemoryServer settled(const accel::MemoryServer& server,
                                std::uint64_t fromPs) const override
    {
        const hbm::AnalyticHbm::Server settled =
            model.settled({server.freePs, server.lastWrite, server.used}, fromPs);
        return {settled.freePs, settled.lastWrite, settled.used};
    }
    bool sameTiming(const accel::StreamMemory& other) const override
    {
        const auto* analytic = dynamic_cast<const AnalyticStreamMemory*>(&other);
        return analytic != nullptr && model.sameTiming(analytic->model);
    }
    std::uint64_t complete(std::uint64_t arrivalPs, std::uint64_t bytes, bool write) override
    {
        return model.complete(arrivalPs, bytes, write);
    }
    void completeStream(const std::vector<accel::TransferGroup>& transfers,
                        std::uint64_t turnarounds,
                        const accel::MemoryServer& after) override
    {
        for (const accel::TransferGroup& group : transfers)
            model.recordCompleted(group.bytes, group.latencyPs, group.count);
        model.leaveAt({after.freePs, after.lastWrite, after.used}, turnarounds);
    }

private:
    hbm::AnalyticHbm& model;
};

// The analytic model of the HBM controller behind `memory`, or nullptr (another memory, or
// the detailed fidelity).
hbm::AnalyticHbm* analyticHbmBehind(TargetSocket& memory)
{
    auto* socket = dynamic_cast<sc_core::sc_object*>(&memory);
    auto* controller = socket != nullptr
                           ? dynamic_cast<hbm::HbmController*>(socket->get_parent_object())
                           : nullptr;
    return controller != nullptr ? controller->analyticModel() : nullptr;
}

class AcceleratorComponent final : public Component {
public:
    AcceleratorComponent(const std::string& name, const RankContext& rank, TargetSocket& memory)
        : accelerator(name.c_str(), rank.config.accelerator, rank.stats)
    {
        accelerator.memory.bind(memory);
        // A rank's HBM serves its accelerator only (the driver's memory nodes come through the
        // accelerator too), so an analytic one can hand its timing to the fast path.
        if (hbm::AnalyticHbm* model = analyticHbmBehind(memory)) {
            streamMemory = std::make_unique<AnalyticStreamMemory>(*model);
            accelerator.useStreamMemory(*streamMemory, rank.plans);
        }
    }
    TargetSocket& target() override { return accelerator.target; }
    // Its multi-passthrough target answers on the arrival's binding (Accelerator::Job).
    bool routesManyInitiators() const override { return true; }
    bool idle() const override { return accelerator.inFlight() == 0; }

private:
    std::unique_ptr<AnalyticStreamMemory> streamMemory;
    accel::Accelerator accelerator;
};

// The CONFIG text a compute-engine peer receives: which engine, and the systolic array the
// local model would use ("key: value" lines, docs/cosim.md).
std::string computeDescription(const PlatformConfig& config, RankId rank)
{
    std::ostringstream text;
    text << "component: accelerator.compute\n"
         << "rank: " << static_cast<std::uint32_t>(rank) << "\n"
         << "accelerator: " << config.accelerator.name << "\n";
    if (const auto* array = std::get_if<accel::SystolicTensor>(&config.accelerator.tensor.detail))
        text << "tensor_model: systolic\n"
             << "rows: " << array->tileRows << "\n"
             << "cols: " << array->tileCols << "\n"
             << "clock_hz: " << array->clock.hz() << "\n"
             << "dataflow: " << accel::toString(array->dataflow) << "\n";
    return text.str();
}

// An accelerator whose GEMMs a co-simulation peer runs (accelerator.compute.cosim): the
// accelerator's engine socket reaches a router that sends GEMMs to the proxy and every other
// operator to a local ComputeEngine.
class CosimAcceleratorComponent final : public Component {
public:
    CosimAcceleratorComponent(const std::string& name,
                              const RankContext& rank,
                              TargetSocket& memory)
        : accelerator(
              name.c_str(), rank.config.accelerator, rank.stats, accel::EngineBinding::External)
        , engine(
              (name + "_engine").c_str(), rank.config.accelerator, rank.stats.addGroup("compute"))
        , router((name + "_router").c_str(), rank.stats.addGroup("cosim"))
        , proxy((name + "_proxy").c_str(), proxyOptions(rank))
    {
        proxy.attachWallProfile(rank.stats.wallProfile());
        accelerator.memory.bind(memory);
        accelerator.engineSocket.bind(router.target);
        router.local.bind(engine.target);
        router.remote.bind(proxy.socket);
    }
    TargetSocket& target() override { return accelerator.target; }
    // Its multi-passthrough target answers on the arrival's binding (Accelerator::Job).
    bool routesManyInitiators() const override { return true; }
    bool idle() const override { return accelerator.inFlight() == 0; }
    std::string shutdownProblem() override { return proxy.shutdownProblem(); }
    void beginShutdown() override { proxy.beginShutdown(); }

private:
    static cosim::ProxyOptions proxyOptions(const RankContext& rank)
    {
        cosim::ProxyOptions options = rank.config.computeCosim->proxy;
        const auto index = static_cast<std::uint32_t>(rank.rank);
        options.peer = cosim::substituteRank(options.peer, index);
        options.spawn = cosim::substituteRank(options.spawn, index);
        options.description = computeDescription(rank.config, rank.rank);
        return options;
    }

    accel::Accelerator accelerator;
    accel::ComputeEngine engine;
    ComputeRouter router;
    cosim::Proxy proxy;
};

class NetComponent final : public FabricComponent {
public:
    NetComponent(const std::string& name, const PlatformConfig& config, StatGroup& stats)
        // Per-link stats only for small fabrics: thousands of links would swamp the report.
        : fabric(name.c_str(), config.fabric, config.ranks, stats, config.ranks <= 256)
    {
        if (config.fabricCosim) {
            // The fabric keeps matching and collectives; the peer carries every message.
            cosim::ProxyOptions options = *config.fabricCosim;
            options.description = cosim::ns3adapter::describeFabric(
                fabric.engine().network().fabricLinks(), config.fabric);
            fabric.useRemoteNetwork();
            proxy = std::make_unique<cosim::Proxy>((name + "_cosim").c_str(), options);
            proxy->attachWallProfile(stats.wallProfile());
            fabric.network.bind(proxy->socket);
        }
    }
    TargetSocket& target() override { return fabric.socket; }
    bool idle() const override { return fabric.idle(); }
    std::string shutdownProblem() override
    {
        return proxy ? proxy->shutdownProblem() : std::string();
    }
    void beginShutdown() override
    {
        if (proxy)
            proxy->beginShutdown();
    }
    const std::vector<net::CollectiveRecord>& collectives() const override
    {
        return fabric.collectives();
    }
    std::vector<LinkUsage> linkUsage() const override
    {
        std::vector<LinkUsage> usage;
        const net::NetworkCore& core = fabric.engine().network();
        // A proxied fabric's flow model carried nothing: the peer measured the links.
        std::vector<cosim::RemoteLinkUsage> remote;
        if (proxy) {
            std::string problem;
            remote = remoteUsage(problem);
            if (!problem.empty())
                return usage;
        }
        for (std::size_t index = 0; index < core.linkCount(); ++index) {
            const net::Link& link = core.link(index);
            usage.push_back(
                {"device " + std::to_string(link.from) + " -> " + std::to_string(link.to),
                 proxy ? static_cast<double>(remote[index].bytes) : core.linkBytes(index),
                 proxy ? remote[index].busyPs : core.linkBusyPs(index)});
        }
        return usage;
    }
    std::string linkUsageUnavailable() const override
    {
        std::string problem;
        if (proxy)
            remoteUsage(problem);
        return problem;
    }
    void attachTimeline(Timeline& timeline, std::uint32_t processId) override
    {
        fabric.attachTimeline(timeline, processId);
    }
    void setPartition(net::PartitionLink* link) override
    {
        if (proxy)
            throw Error("fabric.cosim: a co-simulated fabric cannot run partitioned (its peer "
                        "carries every message of the run); run it in one process");
        fabric.setPartition(link);
    }
    void receive(const net::CrossMessage& message) override { fabric.receive(message); }
    std::uint64_t nextEventPs() const override { return fabric.nextEventPs(); }
    void runAfterEnd(std::uint64_t limitPs) override { fabric.runAfterEnd(limitPs); }

private:
    // The link usage the peer sent on its TERMINATE answer (ending the link if the run has not),
    // one entry per link; or `problem` says why there is none.
    std::vector<cosim::RemoteLinkUsage> remoteUsage(std::string& problem) const
    {
        const std::string& text = proxy->finish();
        const std::string peer = "the co-simulation peer '" + proxy->peer().name + "'";
        try {
            if (text.empty())
                problem = peer + " did not report it (a protocol 1.1 peer, or the run failed)";
            else if (!cosim::isLinkUsage(text))
                problem = peer + " answered TERMINATE with something else than link usage";
            else
                return cosim::parseLinkUsage(text, fabric.engine().network().linkCount());
        } catch (const cosim::CosimError& error) {
            problem = peer + " sent a malformed report: " + error.what();
        }
        return {};
    }

    net::Fabric fabric;
    std::unique_ptr<cosim::Proxy> proxy;
};

// The compatibility profile's parts (platforms/astra/AstraNodes.h).
class AstraComputeComponent final : public Component {
public:
    AstraComputeComponent(const std::string& name, const RankContext& rank, TargetSocket& memory)
        : compute(name.c_str(), *rank.config.astra, rank.stats)
    {
        compute.memory.bind(memory);
    }
    TargetSocket& target() override { return compute.target; }
    bool idle() const override { return compute.inFlight() == 0; }

private:
    platforms::astra::AstraCompute compute;
};

class AstraMemoryComponent final : public Component {
public:
    AstraMemoryComponent(const std::string& name,
                         const RankContext& rank,
                         std::shared_ptr<hbm::RemoteMemory> remote)
        : memory(name.c_str(), rank.rank, std::move(remote))
    {
    }
    TargetSocket& target() override { return memory.target; }
    bool idle() const override { return memory.inFlight() == 0; }

private:
    platforms::astra::AstraMemory memory;
};

// The remote memory's servers are shared by the ranks of one platform (per node, or one
// pool): the first rank of a platform creates it, the others of the same platform reuse it.
struct SharedRemoteMemory {
    const PlatformConfig* owner = nullptr;
    std::shared_ptr<hbm::RemoteMemory> memory;

    std::shared_ptr<hbm::RemoteMemory> of(const RankContext& rank)
    {
        const hbm::RemoteMemoryConfig& config = rank.config.astra->remoteMemory;
        if (config.kind == hbm::RemoteMemoryKind::None)
            return nullptr;
        if (owner != &rank.config || !memory) {
            owner = &rank.config;
            memory = std::make_shared<hbm::RemoteMemory>(
                config, rank.config.ranks, rank.stats.addGroup("remote"));
        }
        return memory;
    }
};

[[noreturn]] void missing(ComponentKind kind)
{
    throw Error(std::string("no factory registered for the component kind \"") +
                componentKindNames[static_cast<std::size_t>(kind)] + "\"");
}

} // namespace

ComponentRegistry ComponentRegistry::defaults()
{
    ComponentRegistry registry;
    auto remote = std::make_shared<SharedRemoteMemory>();
    registry.setMemory(
        [remote](const std::string& name, const RankContext& rank) -> std::unique_ptr<Component> {
            if (rank.config.astra)
                return std::make_unique<AstraMemoryComponent>(name, rank, remote->of(rank));
            return std::make_unique<HbmComponent>(name, rank);
        });
    registry.setAccelerator([](const std::string& name,
                               const RankContext& rank,
                               TargetSocket& memory) -> std::unique_ptr<Component> {
        if (rank.config.astra)
            return std::make_unique<AstraComputeComponent>(name, rank, memory);
        const auto& cosim = rank.config.computeCosim;
        if (cosim && cosim->covers(static_cast<std::uint32_t>(rank.rank)))
            return std::make_unique<CosimAcceleratorComponent>(name, rank, memory);
        return std::make_unique<AcceleratorComponent>(name, rank, memory);
    });
    registry.setFabric([](const std::string& name, const PlatformConfig& config, StatGroup& stats) {
        return std::make_unique<NetComponent>(name, config, stats);
    });
    return registry;
}

std::unique_ptr<Component> ComponentRegistry::makeMemory(const std::string& name,
                                                         const RankContext& rank) const
{
    if (!memory)
        missing(ComponentKind::Memory);
    return memory(name, rank);
}

std::unique_ptr<Component> ComponentRegistry::makeAccelerator(const std::string& name,
                                                              const RankContext& rank,
                                                              TargetSocket& target) const
{
    if (!accelerator)
        missing(ComponentKind::Accelerator);
    return accelerator(name, rank, target);
}

std::unique_ptr<FabricComponent> ComponentRegistry::makeFabric(const std::string& name,
                                                               const PlatformConfig& config,
                                                               StatGroup& stats) const
{
    if (!fabric)
        missing(ComponentKind::Fabric);
    return fabric(name, config, stats);
}

} // namespace etsim::platform
