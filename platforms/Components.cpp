#include "platforms/Components.h"

#include "kernel/Error.h"
#include "models/accel/Accelerator.h"
#include "models/hbm/HbmController.h"
#include "models/net/Fabric.h"

namespace etsim::platform {

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

class AcceleratorComponent final : public Component {
public:
    AcceleratorComponent(const std::string& name, const RankContext& rank, TargetSocket& memory)
        : accelerator(name.c_str(), rank.config.accelerator, rank.stats)
    {
        accelerator.memory.bind(memory);
    }
    TargetSocket& target() override { return accelerator.target; }
    bool idle() const override { return accelerator.inFlight() == 0; }

private:
    accel::Accelerator accelerator;
};

class NetComponent final : public FabricComponent {
public:
    NetComponent(const std::string& name, const PlatformConfig& config, StatGroup& stats)
        // Per-link stats only for small fabrics: thousands of links would swamp the report.
        : fabric(name.c_str(), config.fabric, config.ranks, stats, config.ranks <= 256)
    {
    }
    TargetSocket& target() override { return fabric.socket; }
    bool idle() const override { return fabric.idle(); }
    const std::vector<net::CollectiveRecord>& collectives() const override
    {
        return fabric.collectives();
    }
    std::vector<LinkUsage> linkUsage() const override
    {
        std::vector<LinkUsage> usage;
        const net::NetworkCore& core = fabric.engine().network();
        for (std::size_t index = 0; index < core.linkCount(); ++index) {
            const net::Link& link = core.link(index);
            usage.push_back(
                {"device " + std::to_string(link.from) + " -> " + std::to_string(link.to),
                 core.linkBytes(index),
                 core.linkBusyPs(index)});
        }
        return usage;
    }
    void attachTimeline(Timeline& timeline, std::uint32_t processId) override
    {
        fabric.attachTimeline(timeline, processId);
    }

private:
    net::Fabric fabric;
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
    registry.setMemory([](const std::string& name, const RankContext& rank) {
        return std::make_unique<HbmComponent>(name, rank);
    });
    registry.setAccelerator(
        [](const std::string& name, const RankContext& rank, TargetSocket& memory) {
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
