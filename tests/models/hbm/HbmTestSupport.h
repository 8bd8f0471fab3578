#pragma once
// Drives an HbmDevice without SystemC and records completions.

#include "kernel/Stats.h"
#include "models/hbm/HbmDevice.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace etsim::hbm::test {

/// The HBM3-6400 preset with no controller latency and no refresh, so single accesses
/// take exactly the device's timing.
HbmConfig quietHbm3();

/// One device, its stats and what completed when.
struct DeviceRun {
    explicit DeviceRun(const HbmConfig& config);

    /// Submits at `ps` after running the device up to then.
    void submitAt(std::uint64_t ps,
                  std::uint64_t token,
                  std::uint64_t address,
                  std::uint64_t bytes,
                  bool write = false);
    /// Runs until idle.
    void drain() { device.drain(); }
    /// A stat of the device by relative path, e.g. "channel0.pc0.row_hits".
    std::uint64_t counter(const std::string& path) const;
    /// Sum of one counter over every PC ("row_hits").
    std::uint64_t sumOverPcs(const std::string& name) const;

    StatGroup stats{"hbm"};
    std::map<std::uint64_t, std::uint64_t> donePs; // token -> completion, ps
    HbmDevice device;
};

/// Address of a burst given its place (stack 0 unless set).
std::uint64_t addressOf(const HbmDevice& device,
                        std::uint32_t channel,
                        std::uint32_t pc,
                        std::uint32_t bankGroup,
                        std::uint32_t bank,
                        std::uint32_t row,
                        std::uint32_t column,
                        std::uint32_t sid = 0);

} // namespace etsim::hbm::test
