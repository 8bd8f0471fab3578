#pragma once
// Configuration of the HBM model: organisation, timing set, address map, controller policies
// and the analytic fidelity's calibration. A config starts from a named preset (the spec's
// parameter sets, docs/hbm.md) and a YAML map overrides any key:
//
//     hbm:
//       preset: hbm3_h100
//       fidelity: detailed
//       organisation: {stacks: 1}
//       timing: {rcd_rd: 31, rp: "16.25 ns"}      # cycles, or a time rounded up to cycles
//       address_map: interleaved                  # a preset name, or explicit bit lists
//       controller: {scheduler: fifo, page_policy: closed_adaptive, refresh: per_bank}
//
// Every rule is checked where the key is read, so errors name the file, line and key path.
// Models receive a validated HbmConfig only.

#include "kernel/Config.h"
#include "kernel/ParamTable.h"
#include "kernel/Units.h"

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace YAML {
class Node;
}

namespace etsim::hbm {

/// Which of the two models behind one HbmController serves the transactions.
enum class Fidelity { Analytic, Detailed };
constexpr EnumName<Fidelity> fidelityNames[] = {{"analytic", Fidelity::Analytic},
                                                {"detailed", Fidelity::Detailed}};

/// The order in which a pseudo-channel's controller serves its queued requests.
enum class SchedulerKind { FrFcfs, Fifo };
constexpr EnumName<SchedulerKind> schedulerNames[] = {{"fr_fcfs", SchedulerKind::FrFcfs},
                                                      {"fifo", SchedulerKind::Fifo}};

/// When a row is closed after a column access.
enum class PagePolicyKind { Open, Closed, OpenAdaptive, ClosedAdaptive };
constexpr EnumName<PagePolicyKind> pagePolicyNames[] = {
    {"open", PagePolicyKind::Open},
    {"closed", PagePolicyKind::Closed},
    {"open_adaptive", PagePolicyKind::OpenAdaptive},
    {"closed_adaptive", PagePolicyKind::ClosedAdaptive},
};

/// How the controller refreshes its banks: all at once (REFab), one bank at a time (REFpb),
/// a pair of banks (b and b + banks / 2) at a time, or the same bank of every bank group at a
/// time. JEDEC HBM defines the first two; the others need their timings (rfc_p2b, rfc_sb).
enum class RefreshKind { None, AllBank, PerBank, Per2Bank, SameBank };
constexpr EnumName<RefreshKind> refreshNames[] = {{"none", RefreshKind::None},
                                                  {"all_bank", RefreshKind::AllBank},
                                                  {"per_bank", RefreshKind::PerBank},
                                                  {"per_2bank", RefreshKind::Per2Bank},
                                                  {"same_bank", RefreshKind::SameBank}};

/// Whether the pseudo-channels of a channel share its row and column command buses (HBM2's
/// pseudo-channel mode: one command/address interface per channel) or each has its own.
enum class CommandBus { PerPc, PerChannel };
constexpr EnumName<CommandBus> commandBusNames[] = {{"per_pc", CommandBus::PerPc},
                                                    {"per_channel", CommandBus::PerChannel}};

/// Which of ACT's two row-bus cycles its timings (tRCD, tRAS, tRP to ACT, tRFC to ACT) count
/// from. JEDEC HBM2 latches an ACT over two cycles and counts from the second one.
enum class ActTiming { FirstCycle, SecondCycle };
constexpr EnumName<ActTiming> actTimingNames[] = {{"first_cycle", ActTiming::FirstCycle},
                                                  {"second_cycle", ActTiming::SecondCycle}};

/// Where accepted requests wait (models/hbm/buffer): a read and a write queue per PC
/// (read_queue, write_queue), or one of DRAMSys's channel-wide buffers, whose banks each offer
/// one request: bankwise (bank_buffer entries per bank; the next request is accepted only while
/// the bank of the request stored last has room), read_write (read_buffer reads and
/// write_buffer writes per channel) or shared (shared_buffer requests per channel).
enum class RequestBuffer { PerDirection, Bankwise, ReadWrite, Shared };
constexpr EnumName<RequestBuffer> requestBufferNames[] = {
    {"per_direction", RequestBuffer::PerDirection},
    {"bankwise", RequestBuffer::Bankwise},
    {"read_write", RequestBuffer::ReadWrite},
    {"shared", RequestBuffer::Shared}};

/// Which command issues when several are legal. scheduler: the scheduler picks among the
/// requests' commands (row hits first for fr_fcfs). oldest: each bank offers one command (its
/// first row hit, else its oldest request); the best row command and the best column command
/// are those finishing first (ready cycle + command length), then the older request; of the
/// two, the one ready first, then the older, issues if it is legal now.
enum class CommandMux { Scheduler, Oldest };
constexpr EnumName<CommandMux> commandMuxNames[] = {{"scheduler", CommandMux::Scheduler},
                                                    {"oldest", CommandMux::Oldest}};

/// How an all-bank refresh closes the open rows: one PRE per open bank, or one PREA.
enum class RefreshPrecharge { PerBank, AllBank };
constexpr EnumName<RefreshPrecharge> refreshPrechargeNames[] = {
    {"per_bank", RefreshPrecharge::PerBank}, {"all_bank", RefreshPrecharge::AllBank}};

/// When each PC of a channel refreshes first: all after tREFI, or staggered in bit-reversed PC
/// order (PC r of n at tREFI - reverse(r) x tREFI / n, as DRAMSys spreads its ranks).
enum class RefreshStart { Aligned, Staggered };
constexpr EnumName<RefreshStart> refreshStartNames[] = {{"aligned", RefreshStart::Aligned},
                                                        {"staggered", RefreshStart::Staggered}};

/// How requests enter the controller: each when it arrives, or one at a time in arrival order,
/// at most one per cycle, the next waiting until the controller has stored the previous one
/// (a TLM initiator that waits for END_REQ, as DRAMSys's trace players do).
enum class Admission { Parallel, InOrder };
constexpr EnumName<Admission> admissionNames[] = {{"parallel", Admission::Parallel},
                                                  {"in_order", Admission::InOrder}};

/// The parameter sets of hardware-models.md section 2.
enum class HbmPreset { Hbm2, Hbm2eA100, Hbm3H100, Hbm3_6400, Hbm3e_9600, Hbm3eH200, Hbm4 };
constexpr EnumName<HbmPreset> presetNames[] = {
    {"hbm2", HbmPreset::Hbm2},
    {"hbm2e_a100", HbmPreset::Hbm2eA100},
    {"hbm3_h100", HbmPreset::Hbm3H100},
    {"hbm3_6400", HbmPreset::Hbm3_6400},
    {"hbm3e_9600", HbmPreset::Hbm3e_9600},
    {"hbm3e_h200", HbmPreset::Hbm3eH200},
    {"hbm4", HbmPreset::Hbm4},
};
constexpr HbmPreset defaultPreset = HbmPreset::Hbm3_6400;

/// Stacks, channels, pseudo-channels (PC) and banks of one device.
struct Organisation {
    std::uint32_t stacks = 1;
    std::uint32_t channelsPerStack = 16;
    std::uint32_t pcsPerChannel = 2;
    /// Data width of one pseudo-channel, bits.
    std::uint32_t pcWidthBits = 32;
    /// Data rate per pin, as a bit rate ("6.4 Gb/s" is held as 0.8e9 B/s).
    Bandwidth dataRate = Bandwidth::fromBytesPerSecond(0.8e9);
    /// Command clock CK; timings in cycles count its periods.
    Frequency clock = Frequency::fromHz(1.6e9);
    /// Data beats per access (BL).
    std::uint32_t burstLength = 8;
    /// Stack IDs (SID) per PC; each has its own bank groups.
    std::uint32_t sids = 1;
    std::uint32_t bankGroups = 4;
    std::uint32_t banksPerGroup = 4;
    /// Rows per bank; need not be a power of two (24 Gb dies), the address map then puts the
    /// row field on the top bits.
    std::uint32_t rows = 16384;
    /// Row buffer (page) per PC.
    Size page = Size::fromBytes(1024);
    /// Granularity at which consecutive addresses move to the next stack.
    Size stackInterleave = Size::fromBytes(4096);

    std::uint32_t pcsPerStack() const { return channelsPerStack * pcsPerChannel; }
    std::uint32_t pcCount() const { return stacks * pcsPerStack(); }
    std::uint32_t bankGroupsPerPc() const { return sids * bankGroups; }
    std::uint32_t banksPerPc() const { return sids * bankGroups * banksPerGroup; }
    /// Bytes one access moves: width × BL / 8.
    std::uint64_t burstBytes() const { return std::uint64_t{pcWidthBits} * burstLength / 8; }
    /// Accesses per row.
    std::uint64_t columns() const { return page.bytes() / burstBytes(); }
    /// Bytes per stack.
    std::uint64_t stackBytes() const;
    /// Bytes of the whole device.
    std::uint64_t deviceBytes() const { return stackBytes() * stacks; }
    /// Data bits per pin per CK, rounded (4 for HBM3: 6.4 Gb/s at 1.6 GHz).
    double bitsPerClock() const { return dataRate.bytesPerSecond() * 8.0 / clock.hz(); }
    /// CK cycles one burst occupies the data bus (nBL).
    std::uint32_t burstCycles() const;
    /// Peak data rate of one PC.
    Bandwidth pcPeak() const;
    /// Peak data rate of the device (all stacks).
    Bandwidth devicePeak() const;
};

/// The device timing set, in CK cycles (hardware-models.md 2.2). Names follow the spec
/// without the leading n; YAML keys are the snake_case forms (rcd_rd, ccd_s, rfc_pb).
struct Timing {
    std::uint32_t cl = 20;     ///< RD to data
    std::uint32_t cwl = 10;    ///< WR to data
    std::uint32_t rcdRd = 31;  ///< ACT to RD
    std::uint32_t rcdWr = 15;  ///< ACT to WR
    std::uint32_t rp = 26;     ///< PRE to ACT
    std::uint32_t ras = 45;    ///< ACT to PRE
    std::uint32_t rc = 72;     ///< ACT to ACT, same bank
    std::uint32_t wr = 33;     ///< write recovery after the last write data
    std::uint32_t rtp = 9;     ///< RD to PRE
    std::uint32_t ccdS = 2;    ///< CAS to CAS, other bank group
    std::uint32_t ccdL = 4;    ///< CAS to CAS, same bank group
    std::uint32_t ccdR = 3;    ///< RD to RD, other stack ID
    std::uint32_t rrdS = 4;    ///< ACT to ACT, other bank group
    std::uint32_t rrdL = 5;    ///< ACT to ACT, same bank group
    std::uint32_t faw = 24;    ///< window holding at most four ACTs per PC
    std::uint32_t wtrS = 7;    ///< end of write data to RD, other bank group
    std::uint32_t wtrL = 10;   ///< end of write data to RD, same bank group
    std::uint32_t rtw = 20;    ///< RD to WR
    std::uint32_t ppd = 2;     ///< PRE to PRE
    std::uint32_t rfc = 416;   ///< all-bank refresh
    std::uint32_t rfcPb = 320; ///< per-bank refresh
    std::uint32_t refi = 6240; ///< all-bank refresh interval
    std::uint32_t rrefd = 8;   ///< REFpb to REFpb or ACT of another bank
    /// Interval between per-bank refreshes; 0: refi / banks per PC.
    std::uint32_t refiPb = 0;
    /// Per-2-bank refresh (both banks busy) and its interval; 0: not defined by the standard
    /// (the interval then defaults to refi / (banks per PC / 2)).
    std::uint32_t rfcP2b = 0;
    std::uint32_t refiP2b = 0;
    /// Same-bank refresh (one bank in every bank group) and its interval; 0: not defined (the
    /// interval then defaults to refi / banks per group).
    std::uint32_t rfcSb = 0;
    std::uint32_t refiSb = 0;
};

/// The fields a physical address is cut into.
enum class AddressField : std::uint8_t {
    Byte,
    Column,
    Channel,
    PseudoChannel,
    BankGroup,
    Bank,
    Sid,
    Row,
};
constexpr std::size_t addressFieldCount = 8;
constexpr EnumName<AddressField> addressFieldNames[] = {
    {"byte", AddressField::Byte},
    {"column", AddressField::Column},
    {"channel", AddressField::Channel},
    {"pseudo_channel", AddressField::PseudoChannel},
    {"bank_group", AddressField::BankGroup},
    {"bank", AddressField::Bank},
    {"sid", AddressField::Sid},
    {"row", AddressField::Row},
};

/// Named layouts of the address bits inside one stack, least significant field first.
enum class AddressMapPreset {
    /// byte | channel | pc | bank_group | column | bank | sid | row: consecutive bursts go
    /// to consecutive PCs (32 B interleave), then to other bank groups of the same rows.
    Interleaved,
    /// byte | column | channel | pc | bank_group | bank | sid | row: a whole page per PC
    /// before moving on (1 KiB interleave).
    PageInterleaved,
};
constexpr EnumName<AddressMapPreset> addressMapPresetNames[] = {
    {"interleaved", AddressMapPreset::Interleaved},
    {"page_interleaved", AddressMapPreset::PageInterleaved},
};

/// Which address bits (inside a stack) form each field: bits[field][i] is the address bit of
/// the field's bit i, least significant first (DRAMSys ConGen style).
struct AddressMapBits {
    std::array<std::vector<std::uint8_t>, addressFieldCount> bits;

    const std::vector<std::uint8_t>& field(AddressField which) const
    {
        return bits[static_cast<std::size_t>(which)];
    }
    std::vector<std::uint8_t>& field(AddressField which)
    {
        return bits[static_cast<std::size_t>(which)];
    }
};

/// The bit layout of a preset for an organisation (whose counts must be powers of two).
AddressMapBits addressMapFromPreset(AddressMapPreset preset, const Organisation& organisation);

/// Queues and policies of the controller of each pseudo-channel.
struct ControllerConfig {
    SchedulerKind scheduler = SchedulerKind::FrFcfs;
    PagePolicyKind pagePolicy = PagePolicyKind::OpenAdaptive;
    RefreshKind refresh = RefreshKind::AllBank;
    /// Refreshes the controller may postpone while its banks are busy, and pull in while they
    /// are idle, counted in all-bank refresh intervals (a per-bank policy may move banks per PC
    /// times as many REFpb), at most 8 each (JEDEC).
    std::uint32_t refreshMaxPostponed = 0;
    std::uint32_t refreshMaxPulledIn = 0;
    /// Requests the scheduler sees per PC and direction; later bursts wait in the front end.
    std::uint32_t readQueue = 32;
    std::uint32_t writeQueue = 32;
    /// Write-queue occupancy (fraction) that starts a write drain.
    double writeHighWatermark = 0.8;
    /// Occupancy at which a drain stops when reads are waiting.
    double writeLowWatermark = 0.2;
    /// Front-end plus PHY pipeline: from a request's arrival to its entry in a PC queue.
    Time latency = Time::fromPs(0);
    CommandBus commandBus = CommandBus::PerPc;
    ActTiming actTiming = ActTiming::FirstCycle;
    RequestBuffer buffer = RequestBuffer::PerDirection;
    /// Entries per bank of a bank-wise buffer.
    std::uint32_t bankBuffer = 8;
    /// Reads and writes per channel of a read_write buffer; requests of a shared one.
    std::uint32_t readBuffer = 8;
    std::uint32_t writeBuffer = 8;
    std::uint32_t sharedBuffer = 8;
    CommandMux commandMux = CommandMux::Scheduler;
    RefreshPrecharge refreshPrecharge = RefreshPrecharge::PerBank;
    RefreshStart refreshStart = RefreshStart::Aligned;
    Admission admission = Admission::Parallel;
};

/// The analytic fidelity: latency + bytes / (device peak × efficiency of the direction), one
/// FIFO server per device, a turnaround between a read and a write that follow each other.
/// Each preset states what its detailed model sustains (docs/hbm.md, and
/// scripts/calibrate-analytic-hbm.py for the writes and the turnaround).
struct AnalyticConfig {
    /// Sustained fraction of the device peak for reads, in (0, 1].
    double efficiency = 0.919;
    /// The same for writes; unset (0) = `efficiency`.
    double writeEfficiency = 0.0;
    /// Lost when a write follows a read or a read a write on the server (bus turnaround,
    /// write-queue drain); not added when the server was idle that long anyway.
    Time turnaround;
    /// Added to every transaction's transfer time.
    Time latency = Time::fromPs(33125);

    double writeShare() const { return writeEfficiency > 0.0 ? writeEfficiency : efficiency; }
};

/// A complete, validated HBM configuration.
struct HbmConfig {
    std::string presetName;
    Fidelity fidelity = Fidelity::Analytic;
    Organisation organisation;
    Timing timing;
    AddressMapBits addressMap;
    ControllerConfig controller;
    AnalyticConfig analytic;
};

/// The parameter set of a preset (hardware-models.md 2.1, 2.2; docs/hbm.md lists them).
HbmConfig hbmPreset(HbmPreset preset);

/// Unloaded read of an idle bank: controller latency + (tRCDRD + CL + burst) cycles, one more
/// with ActTiming::SecondCycle. The
/// presets use it as the analytic latency.
Time idleReadLatency(const HbmConfig& config);

/// The CK cycles that cover `time` at `clock` (rounded up; a time within 0.001 cycle of a
/// whole number counts as that number).
std::uint32_t cyclesFor(Time time, Frequency clock);

/// The rules that the parameter table (hbmParams) attaches to `address_map` and to
/// `controller.refresh`, shared with the DRAMSys importer, which reports them at its own keys.
/// Each gives the first broken rule, with its key relative to the section ("row",
/// "refresh_max_pulled_in"), or nullopt.
std::optional<ParamViolation> addressMapProblem(const AddressMapBits& map,
                                                const Organisation& organisation);
/// The refresh mode against the timing set and organisation (at controller keys).
std::optional<ParamViolation> refreshProblem(const ControllerConfig& controller,
                                             const Timing& timing,
                                             const Organisation& organisation);

/// Refresh commands one mode issues per all-bank interval: 1, banks, banks / 2 or banks per
/// group; 0 for RefreshKind::None.
std::uint32_t refreshUnits(RefreshKind kind, const Organisation& organisation);
/// The interval and the duration of one refresh command of a mode, cycles.
std::uint32_t refreshInterval(RefreshKind kind, const Timing& timing, const Organisation& org);
std::uint32_t refreshDuration(RefreshKind kind, const Timing& timing);

/// Checks a config built in C++ against every rule of hbmParams(); throws etsim::Error
/// "hbm.<section>.<key>: <problem>".
void validate(const HbmConfig& config);

/// Reads the `hbm` map (see the top of this file); errors are ConfigErrors at the key.
HbmConfig parseHbmConfig(ConfigMap& map);

/// Every key of the hbm map: its type, default, rules and help (kernel/ParamTable.h). It drives
/// parseHbmConfig, validate(), toYaml and the key table of docs/hbm.md.
const ParamTable<HbmConfig>& hbmParams();

/// Every value of a config as the `hbm` map above (scalars as YAML text, timings in cycles,
/// the address map as explicit bit lists): parseHbmConfig of the result gives back the same
/// config. The resolved platform of a run report is built from it.
YAML::Node toYaml(const HbmConfig& config);

} // namespace etsim::hbm
