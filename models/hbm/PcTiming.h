#pragma once
// Device timing of one pseudo-channel: for each command and bank, the first CK cycle at which
// the command is legal, kept as "earliest" times per bank, bank group, stack ID and PC that
// each issued command pushes forward. Nothing here ticks: a query is a handful of max()es.
// The constraints and the level each binds at follow hardware-models.md 2.2 (Ramulator2's
// HBM3 and DRAMSys's HBM2 checker).

#include "models/hbm/HbmConfig.h"

#include <array>
#include <cstdint>
#include <vector>

namespace etsim::hbm {

/// DRAM commands. Rda/Wra carry an auto-precharge. Ref2b refreshes bank b and b + banks / 2,
/// RefSb bank b of every bank group (b < banks per group); PreSb precharges that same set.
enum class Command : std::uint8_t {
    Act,
    Pre,
    Rd,
    Wr,
    Rda,
    Wra,
    RefAb,
    RefPb,
    PreAb,
    Ref2b,
    RefSb,
    PreSb
};

/// Lower-case mnemonic ("act", "rda", "refab").
const char* toString(Command command);

/// The next free cycle of the row and the column command bus. A PC owns one; the PCs of a
/// channel with a shared command interface (CommandBus::PerChannel) point at the channel's.
struct BusState {
    std::uint64_t row = 0;
    std::uint64_t column = 0;
    /// Shared buses only: first cycle a read may go to each stack ID. DRAMSys's HBM2 checker
    /// spaces reads to different stack IDs by tCCDR whichever PC of the channel they go to.
    std::array<std::uint64_t, 8> readToSid{};
};

/// Cycles `command` holds its command bus (ACT: 2, the rest: 1).
std::uint32_t commandLength(Command command);
/// Whether `command` travels on the row bus (ACT, PRE, PREA, refresh) or the column bus.
bool isRowCommand(Command command);

/// A row that is not open.
constexpr std::int64_t closedRow = -1;

class PcTiming {
public:
    /// `config` must be validated.
    explicit PcTiming(const HbmConfig& config);

    /// First cycle at which `command` may issue to `bank` (any bank for RefAb), ignoring
    /// whether the bank's state allows it (the controller checks open rows).
    std::uint64_t earliest(Command command, std::uint32_t bank) const;
    /// Applies `command` issued to `bank` at `cycle`; cycle must be >= earliest().
    void issue(Command command, std::uint32_t bank, std::uint64_t cycle, std::int64_t row = 0);

    std::int64_t openRow(std::uint32_t bank) const { return banks[bank].openRow; }
    bool allClosed() const;
    /// Closes every row without timing (refreshes that ran while the PC was idle).
    void closeAll();
    /// Makes this PC use `shared` as its command buses (it must outlive the PcTiming).
    void shareBus(BusState* shared) { sharedBus = shared; }
    /// Cycle at which the read or write data of a CAS issued at `cycle` has fully moved.
    std::uint64_t dataDone(Command command, std::uint64_t cycle) const;

    std::uint32_t bankGroupOf(std::uint32_t bank) const { return bank / banksPerGroup; }
    std::uint32_t sidOf(std::uint32_t bank) const { return bank / banksPerSid; }

private:
    struct Bank {
        std::uint64_t act = 0;
        std::uint64_t pre = 0;
        std::uint64_t rd = 0;
        std::uint64_t wr = 0;
        std::int64_t openRow = closedRow;
    };
    struct Group {
        std::uint64_t act = 0;
        std::uint64_t rd = 0;
        std::uint64_t wr = 0;
    };

    void casIssued(bool write, std::uint32_t bank, std::uint64_t cycle);
    // The banks a per-bank, per-2-bank or same-bank refresh (or a PreSb) of `bank` covers, to
    // `out`.
    void refreshedBanks(Command command, std::uint32_t bank, std::vector<std::uint32_t>& out) const;
    std::uint32_t refreshCycles(Command command) const;
    BusState& bus() { return sharedBus != nullptr ? *sharedBus : ownBus; }
    const BusState& bus() const { return sharedBus != nullptr ? *sharedBus : ownBus; }
    void autoPrecharge(bool write, std::uint32_t bank, std::uint64_t cycle);

    Timing t;
    std::uint32_t burst;
    std::uint32_t banksPerGroup;
    std::uint32_t banksPerSid;
    std::uint32_t groupsPerSid;
    std::vector<Bank> banks;
    std::vector<Group> groups;
    std::uint64_t pcAct = 0; // RRDS, RREFD
    std::uint64_t pcPre = 0; // PPD
    std::uint64_t pcWr = 0;  // RTW
    std::uint64_t pcRef = 0; // RREFD between per-bank refreshes, RFC after all-bank
    // 1 when ACT's timings count from its second cycle (ActTiming::SecondCycle): ACT to
    // RD/WR/PRE/REF grow by one cycle, PRE and REF to ACT shrink by one.
    std::uint32_t actShift;
    BusState ownBus;
    BusState* sharedBus = nullptr;
    std::uint64_t dataBus = 0;
    std::array<std::uint64_t, 4> recentActs{}; // the last four ACTs, for tFAW
    std::uint32_t actCount = 0;
    mutable std::vector<std::uint32_t> refreshScratch;
};

} // namespace etsim::hbm
