#include "tests/models/hbm/HbmTestSupport.h"

#include "kernel/Error.h"

namespace etsim::hbm::test {

HbmConfig quietHbm3()
{
    HbmConfig config = hbmPreset(HbmPreset::Hbm3_6400);
    config.fidelity = Fidelity::Detailed;
    config.controller.refresh = RefreshKind::None;
    config.controller.latency = Time::fromPs(0);
    return config;
}

DeviceRun::DeviceRun(const HbmConfig& config)
    : device(config, stats, [this](std::uint64_t token, std::uint64_t ps) { donePs[token] = ps; })
{
}

void DeviceRun::submitAt(
    std::uint64_t ps, std::uint64_t token, std::uint64_t address, std::uint64_t bytes, bool write)
{
    device.runUntil(ps);
    device.submit(token, address, bytes, write, ps);
}

std::uint64_t DeviceRun::counter(const std::string& path) const
{
    const auto* stat = dynamic_cast<const Counter*>(stats.findStat(path));
    if (!stat)
        throw Error("no counter " + path);
    return stat->value();
}

std::uint64_t DeviceRun::sumOverPcs(const std::string& name) const
{
    const Organisation& org = device.config().organisation;
    std::uint64_t sum = 0;
    for (std::uint32_t ch = 0; ch < org.stacks * org.channelsPerStack; ++ch)
        for (std::uint32_t pc = 0; pc < org.pcsPerChannel; ++pc)
            sum +=
                counter("channel" + std::to_string(ch) + ".pc" + std::to_string(pc) + "." + name);
    return sum;
}

std::uint64_t addressOf(const HbmDevice& device,
                        std::uint32_t channel,
                        std::uint32_t pc,
                        std::uint32_t bankGroup,
                        std::uint32_t bank,
                        std::uint32_t row,
                        std::uint32_t column,
                        std::uint32_t sid)
{
    DeviceAddress where;
    where.channel = channel;
    where.pc = pc;
    where.bankGroup = bankGroup;
    where.bank = bank;
    where.row = row;
    where.column = column;
    where.sid = sid;
    return device.addressMap().encode(where);
}

} // namespace etsim::hbm::test
