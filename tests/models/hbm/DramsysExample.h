#pragma once
// DRAMSys's HBM2 example (memspec/HBM2.json, am_hbm2_16Gb-8H_pc_brc.json, fr_fcfs.json) as
// the importer builds it, and the helpers the command-sequence tests share.
//
// The memspec, in tCK = 1 ns: RCDRD 12, RL 17, DQSCK 1, BL 4 at DDR (a burst is 2 cycles),
// RP 14, RAS 28, RC 42, RTP 5, CCDL 3, CCDS 2, RRDS 4, RRDL 6, FAW 16, RFC 220. DRAMSys's
// HBM2 checker counts ACT's timings from the second of its two row-bus cycles: ACT to RD is
// RCDRD + 1 = 13, PRE to ACT is RP - 1 = 13, REF to ACT is RFC - 1. A request reaches the
// controller one cycle after its BEGIN_REQ (ThinkDelayFw 1); read data ends RL + DQSCK + 2 =
// 20 cycles after the RD.

#include "tests/models/hbm/HbmTestSupport.h"

#include <cstdint>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

namespace etsim::hbm::test {

/// The example without refresh (tests that need it turn it on): the values are written out
/// so that hand-worked sequences follow from this file.
HbmConfig dramsysHbm2();

/// Address of (pc, bank group, bank, row, column) in stack 0 under the example's map.
std::uint64_t at(std::uint32_t pc,
                 std::uint32_t group,
                 std::uint32_t bank,
                 std::uint32_t row,
                 std::uint32_t column);

/// (cycle, pc, command, bank) of an issued command.
using Issued = std::tuple<std::uint64_t, std::uint32_t, std::string, std::uint32_t>;

/// Records every command `run` issues into `issued`.
void watch(DeviceRun& run, std::vector<Issued>& issued);

/// The commands a device of `config` issues for the traffic `submit` gives it, run to idle.
std::vector<Issued> commandsOf(const HbmConfig& config,
                               const std::function<void(DeviceRun&)>& submit);

} // namespace etsim::hbm::test
