// Longer than most files (about 1,000 lines): the preset parameter tables of every HBM
// generation, the parameter table of every key (kernel/ParamTable.h) and the rules stay
// together, so that each error is raised where its key is read and a new key touches one file.

#include "models/hbm/HbmConfig.h"

#include "models/hbm/DramsysImport.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <initializer_list>
#include <optional>
#include <tuple>
#include <utility>

namespace etsim::hbm {

namespace {

bool isPowerOfTwo(std::uint64_t value)
{
    return value != 0 && (value & (value - 1)) == 0;
}

// Address bits that select one of `value` things: ceil(log2(value)).
unsigned log2Exact(std::uint64_t value)
{
    unsigned bits = 0;
    while ((std::uint64_t{1} << bits) < value)
        ++bits;
    return bits;
}

// The members of Timing with their YAML keys, so parsing, checking and messages share one list.
struct TimingKey {
    std::string_view key;
    std::uint32_t Timing::*member;
    std::string_view help;
    bool zeroMeansUnset = false; // 0: derived or not defined (docs/hbm.md)
};
constexpr TimingKey timingKeys[] = {
    {"cl", &Timing::cl, "RD to data"},
    {"cwl", &Timing::cwl, "WR to data"},
    {"rcd_rd", &Timing::rcdRd, "ACT to RD"},
    {"rcd_wr", &Timing::rcdWr, "ACT to WR"},
    {"rp", &Timing::rp, "PRE to ACT"},
    {"ras", &Timing::ras, "ACT to PRE"},
    {"rc", &Timing::rc, "ACT to ACT, same bank"},
    {"wr", &Timing::wr, "write recovery after the last write data"},
    {"rtp", &Timing::rtp, "RD to PRE"},
    {"ccd_s", &Timing::ccdS, "CAS to CAS, other bank group"},
    {"ccd_l", &Timing::ccdL, "CAS to CAS, same bank group"},
    {"ccd_r", &Timing::ccdR, "RD to RD, other stack ID"},
    {"rrd_s", &Timing::rrdS, "ACT to ACT, other bank group"},
    {"rrd_l", &Timing::rrdL, "ACT to ACT, same bank group"},
    {"faw", &Timing::faw, "window holding at most four ACTs per PC"},
    {"wtr_s", &Timing::wtrS, "end of write data to RD, other bank group"},
    {"wtr_l", &Timing::wtrL, "end of write data to RD, same bank group"},
    {"rtw", &Timing::rtw, "RD to WR"},
    {"ppd", &Timing::ppd, "PRE to PRE"},
    {"rfc", &Timing::rfc, "all-bank refresh"},
    {"rfc_pb", &Timing::rfcPb, "per-bank refresh"},
    {"refi", &Timing::refi, "all-bank refresh interval"},
    {"rrefd", &Timing::rrefd, "REFpb to REFpb or ACT of another bank"},
    {"refi_pb",
     &Timing::refiPb,
     "interval between per-bank refreshes; 0: refi / banks per PC",
     true},
    {"rfc_p2b", &Timing::rfcP2b, "per-2-bank refresh; 0: not defined by the standard", true},
    {"refi_p2b",
     &Timing::refiP2b,
     "per-2-bank refresh interval; 0: refi / (banks per PC / 2)",
     true},
    {"rfc_sb", &Timing::rfcSb, "same-bank refresh; 0: not defined", true},
    {"refi_sb", &Timing::refiSb, "same-bank refresh interval; 0: refi / banks per group", true},
};

// The rules between timing keys, each attached to the key that must give way. Every key also
// needs at least 1 cycle unless 0 means "derived" or "not defined" (TimingKey above).
struct TimingRule {
    std::string_view key;
    std::string (*problem)(const Timing&, const Organisation&);
};
constexpr TimingRule timingRules[] = {
    {"rc",
     [](const Timing& t, const Organisation&) -> std::string {
         if (t.rc >= t.ras + t.rp)
             return {};
         return "tRC (" + std::to_string(t.rc) + ") must be at least tRAS + tRP (" +
                std::to_string(t.ras) + " + " + std::to_string(t.rp) + " = " +
                std::to_string(t.ras + t.rp) + " cycles)";
     }},
    {"ccd_s",
     [](const Timing& t, const Organisation& org) -> std::string {
         if (t.ccdS >= org.burstCycles())
             return {};
         return "must cover one burst on the data bus (" + std::to_string(org.burstCycles()) +
                " cycles)";
     }},
    {"ccd_l",
     [](const Timing& t, const Organisation&) -> std::string {
         return t.ccdL >= t.ccdS ? "" : "must be at least ccd_s (" + std::to_string(t.ccdS) + ")";
     }},
    {"rrd_l",
     [](const Timing& t, const Organisation&) -> std::string {
         return t.rrdL >= t.rrdS ? "" : "must be at least rrd_s (" + std::to_string(t.rrdS) + ")";
     }},
    {"wtr_l",
     [](const Timing& t, const Organisation&) -> std::string {
         return t.wtrL >= t.wtrS ? "" : "must be at least wtr_s (" + std::to_string(t.wtrS) + ")";
     }},
    {"refi",
     [](const Timing& t, const Organisation&) -> std::string {
         return t.refi > t.rfc ? ""
                               : "must be longer than rfc (" + std::to_string(t.rfc) + " cycles)";
     }},
    {"refi",
     [](const Timing& t, const Organisation& org) -> std::string {
         if (t.refiPb != 0 || t.refi / org.banksPerPc() > t.rrefd)
             return {};
         return "per-bank interval refi / banks per PC (" +
                std::to_string(t.refi / org.banksPerPc()) + ") must be longer than rrefd";
     }},
    {"refi_pb",
     [](const Timing& t, const Organisation&) -> std::string {
         if (t.refiPb == 0 || t.refiPb > t.rrefd)
             return {};
         return "must be longer than rrefd (" + std::to_string(t.rrefd) + " cycles)";
     }},
    {"refi_p2b",
     [](const Timing& t, const Organisation&) -> std::string {
         if (t.refiP2b == 0 || t.refiP2b > t.rfcP2b)
             return {};
         return "must be longer than its refresh (" + std::to_string(t.rfcP2b) + " cycles)";
     }},
    {"refi_sb",
     [](const Timing& t, const Organisation&) -> std::string {
         if (t.refiSb == 0 || t.refiSb > t.rfcSb)
             return {};
         return "must be longer than its refresh (" + std::to_string(t.rfcSb) + " cycles)";
     }},
};

// A count that address bits select: "" when it holds (atLeastOneProblem for the others).
std::string powerOfTwo(std::uint64_t value)
{
    if (value == 0)
        return "must be at least 1";
    return isPowerOfTwo(value)
               ? ""
               : "must be a power of two (address bits select it), got " + std::to_string(value);
}

// Timings in ns of a JEDEC set, converted to cycles of each preset's clock.
struct TimingNs {
    double cl, cwl, rcdRd, rcdWr, rp, ras, rc, wr, rtp, ccdS, ccdL, ccdR, rrdS, rrdL, faw, wtrS,
        wtrL, rtw, ppd, rfc, rfcPb, refi, rrefd;
};

Timing toCycles(const TimingNs& ns, Frequency clock)
{
    auto cycles = [&](double value) {
        return cyclesFor(Time::fromPs(static_cast<std::uint64_t>(std::llround(value * 1000.0))),
                         clock);
    };
    Timing t;
    t.cl = cycles(ns.cl);
    t.cwl = cycles(ns.cwl);
    t.rcdRd = cycles(ns.rcdRd);
    t.rcdWr = cycles(ns.rcdWr);
    t.rp = cycles(ns.rp);
    t.ras = cycles(ns.ras);
    t.rc = cycles(ns.rc);
    t.wr = cycles(ns.wr);
    t.rtp = cycles(ns.rtp);
    t.ccdS = cycles(ns.ccdS);
    t.ccdL = cycles(ns.ccdL);
    t.ccdR = cycles(ns.ccdR);
    t.rrdS = cycles(ns.rrdS);
    t.rrdL = cycles(ns.rrdL);
    t.faw = cycles(ns.faw);
    t.wtrS = cycles(ns.wtrS);
    t.wtrL = cycles(ns.wtrL);
    t.rtw = cycles(ns.rtw);
    t.ppd = cycles(ns.ppd);
    t.rfc = cycles(ns.rfc);
    t.rfcPb = cycles(ns.rfcPb);
    // The interval is a maximum: rounding down keeps the device within its retention time.
    t.refi = static_cast<std::uint32_t>(std::floor(ns.refi * clock.hz() * 1e-9 + 1e-3));
    t.rrefd = cycles(ns.rrefd);
    if (t.rc < t.ras + t.rp)
        t.rc = t.ras + t.rp; // rounding each up separately can break tRC >= tRAS + tRP
    return t;
}

// HBM3 at 6400 Mb/s (Ramulator2 HBM3_6400Mbps, hardware-models.md 2.2), in ns; nRFC depends
// on the channel density and is filled in per preset.
TimingNs hbm3Ns(double rfcNs)
{
    return TimingNs{12.5,  6.25, 19.375, 9.375, 16.25, 28.125, 45.0, 20.625,
                    5.625, 1.25, 2.5,    1.875, 2.5,   3.125,  15.0, 4.375,
                    6.25,  12.5, 1.25,   rfcNs, 200.0, 3900.0, 5.0};
}

// HBM2 (DRAMSys HBM2.json, tCK = 1 ns, so cycles equal ns); the per-bank refresh is RFCSB.
TimingNs hbm2Ns(double rfcNs, double rfcPbNs)
{
    return TimingNs{17.0, 7.0, 12.0, 6.0, 14.0, 28.0, 42.0, 14.0,  5.0,     2.0,    3.0, 2.0,
                    4.0,  6.0, 16.0, 4.0, 9.0,  18.0, 2.0,  rfcNs, rfcPbNs, 3900.0, 8.0};
}

// JEDEC defines CAS-to-CAS spacing and PRE-to-PRE in clock cycles, tied to the burst:
// converting their ns values at a faster clock would leave gaps between bursts no device has.
void keepCasSpacingInCycles(Timing& t, std::uint32_t ccdS, std::uint32_t ccdL, std::uint32_t ccdR)
{
    t.ccdS = ccdS;
    t.ccdL = ccdL;
    t.ccdR = ccdR;
    t.ppd = 2;
}

Bandwidth bitRate(double gbps)
{
    return Bandwidth::fromBytesPerSecond(gbps * 1e9 / 8.0);
}

std::string describeBits(unsigned bits)
{
    return std::to_string(bits) + (bits == 1 ? " bit" : " bits");
}

std::uint32_t readTimingValue(const ConfigNode& node, Frequency clock, bool zeroMeansUnset = false)
{
    const std::string& text = node.scalar("a timing in cycles (e.g. 31) or a time (\"19.375 ns\")");
    std::size_t first = text.find_first_not_of(" \t");
    if (first != std::string::npos && text[first] == '-')
        node.fail("must be positive, got \"" + text + "\"");
    bool digitsOnly = first != std::string::npos &&
                      text.find_first_not_of("0123456789 \t", first) == std::string::npos;
    std::uint32_t cycles = 0;
    if (digitsOnly) {
        cycles = node.as<std::uint32_t>();
    } else {
        Time time;
        try {
            time = Time::parse(text);
        } catch (const Error& error) {
            node.fail(std::string(error.what()) +
                      "; give cycles (an integer) or a time such as \"19.375 ns\"");
        }
        cycles = cyclesFor(time, clock);
    }
    if (cycles == 0 && !zeroMeansUnset)
        node.fail("must be at least 1 cycle, got \"" + text + "\"");
    return cycles;
}

AddressMapBits addressMapFromOrder(std::initializer_list<AddressField> order,
                                   const Organisation& organisation)
{
    auto bitsOf = [&](AddressField field) -> unsigned {
        switch (field) {
        case AddressField::Byte:
            return log2Exact(organisation.burstBytes());
        case AddressField::Column:
            return log2Exact(organisation.columns());
        case AddressField::Channel:
            return log2Exact(organisation.channelsPerStack);
        case AddressField::PseudoChannel:
            return log2Exact(organisation.pcsPerChannel);
        case AddressField::BankGroup:
            return log2Exact(organisation.bankGroups);
        case AddressField::Bank:
            return log2Exact(organisation.banksPerGroup);
        case AddressField::Sid:
            return log2Exact(organisation.sids);
        case AddressField::Row:
            return log2Exact(organisation.rows);
        }
        return 0;
    };
    AddressMapBits map;
    std::uint8_t next = 0;
    for (AddressField field : order)
        for (unsigned i = 0; i < bitsOf(field); ++i)
            map.field(field).push_back(next++);
    return map;
}

AddressMapBits parseAddressMap(const ConfigNode& node, const Organisation& organisation)
{
    if (node.isScalar())
        return addressMapFromPreset(detail::readEnum(node, addressMapPresetNames), organisation);
    return node.map([&](ConfigMap& map) {
        AddressMapBits bits;
        for (const auto& entry : addressFieldNames)
            bits.field(entry.value) = map.optional<std::vector<std::uint8_t>>(entry.name)
                                          .value_or(std::vector<std::uint8_t>{});
        if (std::optional<ParamViolation> bad = addressMapProblem(bits, organisation))
            map.fail(bad->key, bad->problem);
        return bits;
    });
}

} // namespace

std::uint64_t Organisation::stackBytes() const
{
    return std::uint64_t{pcsPerStack()} * banksPerPc() * rows * page.bytes();
}

std::uint32_t Organisation::burstCycles() const
{
    return static_cast<std::uint32_t>(std::llround(burstLength / bitsPerClock()));
}

Bandwidth Organisation::pcPeak() const
{
    return Bandwidth::fromBytesPerSecond(dataRate.bytesPerSecond() * pcWidthBits);
}

Bandwidth Organisation::devicePeak() const
{
    return pcPeak() * static_cast<double>(pcCount());
}

std::uint32_t cyclesFor(Time time, Frequency clock)
{
    double cycles = static_cast<double>(time.ps()) * clock.hz() * 1e-12;
    return static_cast<std::uint32_t>(std::ceil(cycles - 1e-3));
}

AddressMapBits addressMapFromPreset(AddressMapPreset preset, const Organisation& organisation)
{
    using F = AddressField;
    switch (preset) {
    case AddressMapPreset::Interleaved:
        return addressMapFromOrder({F::Byte,
                                    F::Channel,
                                    F::PseudoChannel,
                                    F::BankGroup,
                                    F::Column,
                                    F::Bank,
                                    F::Sid,
                                    F::Row},
                                   organisation);
    case AddressMapPreset::PageInterleaved:
        return addressMapFromOrder({F::Byte,
                                    F::Column,
                                    F::Channel,
                                    F::PseudoChannel,
                                    F::BankGroup,
                                    F::Bank,
                                    F::Sid,
                                    F::Row},
                                   organisation);
    }
    return {};
}

HbmConfig hbmPreset(HbmPreset preset)
{
    HbmConfig config;
    config.presetName = std::string(enumName(presetNames, preset));
    Organisation& org = config.organisation;
    switch (preset) {
    case HbmPreset::Hbm2:
        // DRAMSys HBM2 memspec: 2 Gb/s, tCK 1 ns, BL4 in PC mode, 64-bit PCs, 2 SIDs; an
        // 8 GiB stack (8 Gb dies), so nRFC 220 and nRFCSB 96 as in the memspec.
        org = Organisation{};
        org.channelsPerStack = 8;
        org.pcWidthBits = 64;
        org.dataRate = bitRate(2.0);
        org.clock = Frequency::fromHz(1e9);
        org.burstLength = 4;
        org.sids = 2;
        org.rows = 16384; // 16 PCs × 32 banks × 16,384 rows × 1 KiB = 8 GiB
        config.timing = toCycles(hbm2Ns(220.0, 96.0), org.clock);
        config.analytic.efficiency = 0.931;
        config.analytic.writeEfficiency = 0.923; // scripts/calibrate-analytic-hbm.py
        config.analytic.turnaround = Time::fromPs(26200);
        break;
    case HbmPreset::Hbm2eA100:
        // A100 80 GB: 5 stacks of 16 GiB at 3.186 Gb/s (2.039 TB/s). HBM2 timings in ns at
        // the faster clock; 16 Gb dies refresh longer (nRFC 350 ns, nRFCSB 160 ns) [A].
        org = Organisation{};
        org.stacks = 5;
        org.channelsPerStack = 8;
        org.pcWidthBits = 64;
        org.dataRate = bitRate(3.186);
        org.clock = Frequency::fromHz(1.593e9);
        org.burstLength = 4;
        org.sids = 2;
        org.rows = 32768;
        config.timing = toCycles(hbm2Ns(350.0, 160.0), org.clock);
        keepCasSpacingInCycles(config.timing, 2, 3, 2);
        config.analytic.efficiency = 0.899;
        config.analytic.writeEfficiency = 0.912; // scripts/calibrate-analytic-hbm.py
        config.analytic.turnaround = Time::fromPs(28200);
        break;
    case HbmPreset::Hbm3H100:
        // H100 SXM: 5 stacks of 16 GiB at 5.23 Gb/s per pin (3.35 TB/s). 8-high stacks of
        // 16 Gb dies: 2 SIDs, 8 Gb per channel, hence nRFC 350 ns.
        org = Organisation{};
        org.stacks = 5;
        org.dataRate = bitRate(5.23);
        org.clock = Frequency::fromHz(1.3075e9);
        org.sids = 2;
        org.rows = 16384;
        config.timing = toCycles(hbm3Ns(350.0), org.clock);
        keepCasSpacingInCycles(config.timing, 2, 4, 3);
        config.analytic.efficiency = 0.886;
        config.analytic.writeEfficiency = 0.9; // scripts/calibrate-analytic-hbm.py
        config.analytic.turnaround = Time::fromPs(32600);
        break;
    case HbmPreset::Hbm3_6400:
        // The spec's reference set: one 8 GiB stack (4 Gb per channel, nRFC 260 ns = 416 CK).
        org = Organisation{};
        config.timing = toCycles(hbm3Ns(260.0), org.clock);
        config.analytic.efficiency = 0.919;
        config.analytic.writeEfficiency = 0.927; // scripts/calibrate-analytic-hbm.py
        config.analytic.turnaround = Time::fromPs(41000);
        break;
    case HbmPreset::Hbm3e_9600:
        // One 8-high HBM3E stack of 24 Gb dies: 24 GiB, 2 SIDs, 9.6 Gb/s (1.229 TB/s). The
        // capacity is not a power of two: 24,576 rows per bank (3 × 8192), the row field on
        // the top address bits. 12 Gb per channel: nRFC 450 ns; HBM3 timings in ns [A].
        org = Organisation{};
        org.dataRate = bitRate(9.6);
        org.clock = Frequency::fromHz(2.4e9);
        org.sids = 2;
        org.rows = 24576;
        config.timing = toCycles(hbm3Ns(450.0), org.clock);
        keepCasSpacingInCycles(config.timing, 2, 4, 3);
        config.analytic.efficiency = 0.862;
        config.analytic.writeEfficiency = 0.875; // scripts/calibrate-analytic-hbm.py
        config.analytic.turnaround = Time::fromPs(47800);
        break;
    case HbmPreset::Hbm3eH200:
        // H200: 6 stacks of 24 GiB HBM3E (141 GB usable of 144 GiB) at 4.8 TB/s, i.e.
        // 6.25 Gb/s per pin. Stacks as in hbm3e_9600.
        org = Organisation{};
        org.stacks = 6;
        org.dataRate = bitRate(6.25);
        org.clock = Frequency::fromHz(1.5625e9);
        org.sids = 2;
        org.rows = 24576;
        config.timing = toCycles(hbm3Ns(450.0), org.clock);
        keepCasSpacingInCycles(config.timing, 2, 4, 3);
        config.analytic.efficiency = 0.857;
        config.analytic.writeEfficiency = 0.911; // scripts/calibrate-analytic-hbm.py
        config.analytic.turnaround = Time::fromPs(25200);
        break;
    case HbmPreset::Hbm4:
        // HBM4-like stack: 2048 bits as 32 channels × 2 PCs, 8 Gb/s, 2 BG × 8 banks per SID,
        // 4 SIDs, 64 GiB (16 Gb per channel, nRFC 450 ns); HBM3 timings in ns [A].
        org = Organisation{};
        org.channelsPerStack = 32;
        org.dataRate = bitRate(8.0);
        org.clock = Frequency::fromHz(2e9);
        org.sids = 4;
        org.bankGroups = 2;
        org.banksPerGroup = 8;
        org.rows = 16384;
        config.timing = toCycles(hbm3Ns(450.0), org.clock);
        keepCasSpacingInCycles(config.timing, 2, 4, 3);
        config.analytic.efficiency = 0.855;
        config.analytic.writeEfficiency = 0.886; // scripts/calibrate-analytic-hbm.py
        config.analytic.turnaround = Time::fromPs(62900);
        break;
    }
    config.addressMap = addressMapFromPreset(AddressMapPreset::Interleaved, org);
    config.analytic.latency = idleReadLatency(config);
    return config;
}

Time idleReadLatency(const HbmConfig& config)
{
    const Timing& t = config.timing;
    std::uint64_t cycles = std::uint64_t{t.rcdRd} + t.cl + config.organisation.burstCycles();
    // An ACT whose timings count from its second cycle adds that cycle.
    if (config.controller.actTiming == ActTiming::SecondCycle)
        ++cycles;
    return config.controller.latency + cycles / config.organisation.clock;
}

std::uint32_t refreshUnits(RefreshKind kind, const Organisation& org)
{
    switch (kind) {
    case RefreshKind::AllBank:
        return 1;
    case RefreshKind::PerBank:
        return org.banksPerPc();
    case RefreshKind::Per2Bank:
        return org.banksPerPc() / 2;
    case RefreshKind::SameBank:
        return org.banksPerGroup;
    case RefreshKind::None:
        break;
    }
    return 0;
}

std::uint32_t refreshInterval(RefreshKind kind, const Timing& t, const Organisation& org)
{
    std::uint32_t units = std::max<std::uint32_t>(1, refreshUnits(kind, org));
    std::uint32_t given = kind == RefreshKind::PerBank    ? t.refiPb
                          : kind == RefreshKind::Per2Bank ? t.refiP2b
                          : kind == RefreshKind::SameBank ? t.refiSb
                                                          : t.refi;
    return given != 0 ? given : t.refi / units;
}

std::uint32_t refreshDuration(RefreshKind kind, const Timing& t)
{
    switch (kind) {
    case RefreshKind::PerBank:
        return t.rfcPb;
    case RefreshKind::Per2Bank:
        return t.rfcP2b;
    case RefreshKind::SameBank:
        return t.rfcSb;
    default:
        return t.rfc;
    }
}

std::optional<ParamViolation>
refreshProblem(const ControllerConfig& c, const Timing& t, const Organisation& org)
{
    auto fail = [](std::string key, std::string problem) {
        return std::optional<ParamViolation>(ParamViolation{std::move(key), std::move(problem)});
    };
    if (c.refresh == RefreshKind::Per2Bank && t.rfcP2b == 0)
        return fail(
            "refresh",
            "per_2bank: the timing set defines no per-2-bank refresh (timing.rfc_p2b is 0; JEDEC "
            "HBM refreshes all banks or one bank at a time); use all_bank or per_bank, or give "
            "timing.rfc_p2b (and timing.refi_p2b) for a device that has it");
    if (c.refresh == RefreshKind::SameBank && t.rfcSb == 0)
        return fail(
            "refresh",
            "same_bank: the timing set defines no same-bank refresh (timing.rfc_sb is 0; JEDEC "
            "HBM refreshes all banks or one bank at a time); use all_bank or per_bank, or give "
            "timing.rfc_sb (and timing.refi_sb) for a device that has it");
    if (c.refresh == RefreshKind::Per2Bank && org.banksPerPc() % 2 != 0)
        return fail("refresh", "per_2bank needs an even number of banks per PC");
    if (c.refresh == RefreshKind::SameBank && org.bankGroupsPerPc() < 2)
        return fail("refresh", "same_bank needs at least two bank groups per PC; use per_bank");
    constexpr std::uint32_t jedecLimit = 8;
    if (c.refreshMaxPostponed > jedecLimit)
        return fail("refresh_max_postponed",
                    std::to_string(c.refreshMaxPostponed) +
                        " is more than JEDEC allows (8 refresh intervals); use 0 to 8");
    if (c.refreshMaxPulledIn > jedecLimit)
        return fail("refresh_max_pulled_in",
                    std::to_string(c.refreshMaxPulledIn) +
                        " is more than JEDEC allows (8 refresh intervals); use 0 to 8");
    if (c.refresh == RefreshKind::None && (c.refreshMaxPostponed > 0 || c.refreshMaxPulledIn > 0))
        return fail(c.refreshMaxPostponed > 0 ? "refresh_max_postponed" : "refresh_max_pulled_in",
                    "refresh: none has no refresh to postpone or pull in; set a refresh mode or "
                    "remove the key");
    if (c.refresh == RefreshKind::None)
        return std::nullopt;
    // A run of pulled-in refreshes must end before the next one falls due, or the timetable
    // would skip that one (the whole-interval-late rule of RefreshSchedule).
    std::uint64_t commands = std::uint64_t{c.refreshMaxPulledIn} * refreshUnits(c.refresh, org) + 1;
    std::uint64_t spacing = c.refresh == RefreshKind::AllBank ? t.rfc : t.rrefd;
    std::uint64_t interval = refreshInterval(c.refresh, t, org);
    if (c.refreshMaxPulledIn > 0 && c.refresh == RefreshKind::AllBank &&
        commands * spacing >= interval)
        return fail("refresh_max_pulled_in",
                    std::to_string(c.refreshMaxPulledIn) +
                        " pulled-in refreshes and the regular one (" + std::to_string(commands) +
                        " x tRFC " + std::to_string(spacing) +
                        " cycles) do not fit in one tREFI (" + std::to_string(interval) +
                        " cycles); use at most " + std::to_string((interval - 1) / spacing - 1));
    return std::nullopt;
}

std::optional<ParamViolation> addressMapProblem(const AddressMapBits& map, const Organisation& org)
{
    auto fail = [](std::string_view key, std::string problem) {
        return std::optional<ParamViolation>(ParamViolation{std::string(key), std::move(problem)});
    };
    unsigned totalBits = log2Exact(org.stackBytes());
    std::vector<int> owner(64, -1);
    // Shared or out-of-range bits first: they explain a wrong width better than the width.
    for (const auto& entry : addressFieldNames) {
        for (std::uint8_t bit : map.field(entry.value)) {
            if (bit >= totalBits)
                return fail(entry.name,
                            "bit " + std::to_string(bit) + " is outside a stack of " +
                                toString(Size::fromBytes(org.stackBytes())) + " (bits 0 to " +
                                std::to_string(totalBits - 1) + ")");
            if (owner[bit] >= 0)
                return fail(entry.name,
                            "bit " + std::to_string(bit) + " is already used by " +
                                std::string(addressFieldNames[owner[bit]].name));
            owner[bit] = static_cast<int>(entry.value);
        }
    }
    const std::tuple<AddressField, std::uint64_t, const char*> widths[] = {
        {AddressField::Byte, org.burstBytes(), "bytes per burst"},
        {AddressField::Column, org.columns(), "bursts per page"},
        {AddressField::Channel, org.channelsPerStack, "channels"},
        {AddressField::PseudoChannel, org.pcsPerChannel, "pseudo-channels per channel"},
        {AddressField::BankGroup, org.bankGroups, "bank groups"},
        {AddressField::Bank, org.banksPerGroup, "banks per group"},
        {AddressField::Sid, org.sids, "stack IDs"},
        {AddressField::Row, org.rows, "rows"},
    };
    for (const auto& [field, count, what] : widths) {
        const auto& bits = map.field(field);
        unsigned needed = log2Exact(count);
        if (bits.size() != needed)
            return fail(enumName(addressFieldNames, field),
                        "has " + describeBits(static_cast<unsigned>(bits.size())) + " but " +
                            std::to_string(count) + " " + what + " need " + describeBits(needed));
    }
    if (!isPowerOfTwo(org.rows)) {
        // Only the top bits can hold a partial count: every address below the capacity then
        // decodes to a row below `rows`, and no row is reachable twice.
        const auto& rowBits = map.field(AddressField::Row);
        unsigned first = totalBits - static_cast<unsigned>(rowBits.size());
        for (std::size_t i = 0; i < rowBits.size(); ++i)
            if (rowBits[i] != first + i)
                return fail("row",
                            std::to_string(org.rows) +
                                " rows are not a power of two, so the row field must be the top "
                                "address bits in order (" +
                                std::to_string(first) + " to " + std::to_string(totalBits - 1) +
                                ")");
    }
    // Each field has the right width and no bit is shared, so the map covers the capacity
    // exactly; the loop above already reported any bit beyond it.
    return std::nullopt;
}

void validate(const HbmConfig& config)
{
    if (std::optional<ParamViolation> bad = hbmParams().firstViolation(config))
        throw Error("hbm." + bad->key + ": " + bad->problem);
}

namespace {

// The map of a DRAMSys simulation file (its tracesetup, if any, is not used: the workload is
// the traffic), with the path taken relative to the file that names it.
HbmConfig importDramsys(const ConfigNode& node)
{
    const std::string& file = node.scalar("the path of a DRAMSys simulation JSON file");
    std::filesystem::path path(file);
    if (path.is_relative())
        path = std::filesystem::path(node.location().file).parent_path() / path;
    HbmConfig config;
    try {
        config = loadDramsysSimulation(path.string(), false).config;
    } catch (const Error& error) {
        node.fail(error.what());
    }
    config.fidelity = Fidelity::Detailed;
    // The analytic fidelity's latency is the imported memory's idle read.
    config.analytic.latency = idleReadLatency(config);
    return config;
}

YAML::Node addressMapYaml(const AddressMapBits& map)
{
    YAML::Node node(YAML::NodeType::Map);
    for (const auto& entry : addressFieldNames) {
        YAML::Node bits(YAML::NodeType::Sequence);
        bits.SetStyle(YAML::EmitterStyle::Flow);
        for (std::uint8_t bit : map.field(entry.value))
            bits.push_back(std::to_string(bit));
        node[std::string(entry.name)] = bits;
    }
    return node;
}

ParamTable<HbmConfig> makeHbmParams()
{
    ParamTable<HbmConfig> table("hbm", "accelerator.hbm", [] { return hbmPreset(defaultPreset); });
    table
        .custom(
            "preset",
            choiceText(presetNames),
            "base memory: every key below starts from its value",
            [](const ConfigNode& node, HbmConfig& config) {
                config = hbmPreset(detail::readEnum(node, presetNames));
            },
            [](const HbmConfig& config) {
                return config.presetName.empty() ? YAML::Node() : YAML::Node(config.presetName);
            })
        .defaultIs(std::string(enumName(presetNames, defaultPreset)));
    table
        .custom(
            "dramsys",
            "path",
            "a DRAMSys simulation JSON file that describes the memory (relative to this file); "
            "only `fidelity` and `analytic` may stand beside it (section DRAMSys configurations)",
            [](const ConfigNode& node, HbmConfig& config) { config = importDramsys(node); },
            [](const HbmConfig&) { return YAML::Node(); })
        .defaultIs("—");
    table
        .choice(
            "fidelity",
            [](auto& c) -> auto& { return c.fidelity; },
            fidelityNames,
            "timing model (Two fidelities above); `detailed` with `dramsys`")
        .defaultIs("analytic");
    using Param = ParamTable<HbmConfig>::Param;
    auto org =
        [&table](const char* key, auto access, const char* type, const char* help) -> Param& {
        return table.value(std::string("organisation.") + key, access, type, help);
    };
    // A count with its one-value rule (atLeastOneProblem, powerOfTwo).
    auto counted = [&org](const char* key,
                          auto access,
                          const char* type,
                          const char* help,
                          std::string (*rule)(std::uint64_t)) -> Param& {
        return org(key, access, type, help).rule([access, rule](const HbmConfig& c) {
            return rule(access(c));
        });
    };
    counted(
        "stacks",
        [](auto& c) -> auto& { return c.organisation.stacks; },
        "integer ≥ 1",
        "HBM stacks of the device",
        atLeastOneProblem<std::uint64_t>);
    counted(
        "channels_per_stack",
        [](auto& c) -> auto& { return c.organisation.channelsPerStack; },
        "power of two",
        "channels per stack",
        powerOfTwo);
    counted(
        "pcs_per_channel",
        [](auto& c) -> auto& { return c.organisation.pcsPerChannel; },
        "power of two",
        "pseudo-channels per channel",
        powerOfTwo);
    counted(
        "pc_width_bits",
        [](auto& c) -> auto& { return c.organisation.pcWidthBits; },
        "power of two",
        "data width of one pseudo-channel, bits",
        powerOfTwo);
    org(
        "data_rate",
        [](auto& c) -> auto& { return c.organisation.dataRate; },
        "bit rate > 0",
        "data rate per pin, e.g. \"6.4 Gb/s\" (echoed in bytes: 800 MB/s)")
        .rule([](const HbmConfig& c) -> std::string {
            return c.organisation.dataRate.bytesPerSecond() > 0.0
                       ? ""
                       : "must be positive, e.g. \"6.4 Gb/s\" per pin";
        });
    org(
        "clock",
        [](auto& c) -> auto& { return c.organisation.clock; },
        "frequency > 0",
        "command clock CK; a burst must take whole cycles")
        .rule([](const HbmConfig& c) -> std::string {
            return c.organisation.clock.hz() > 0.0 ? "" : "must be positive, e.g. \"1.6 GHz\"";
        })
        .rule([](const HbmConfig& c) -> std::string {
            double perBurst = c.organisation.burstLength / c.organisation.bitsPerClock();
            if (std::fabs(perBurst - std::round(perBurst)) <= 1e-6 && std::round(perBurst) >= 1.0)
                return {};
            return "a burst must take a whole number of cycles: burst_length / (data_rate / "
                   "clock) is " +
                   std::to_string(perBurst) + "; use clock = data_rate / 4 for HBM3";
        });
    counted(
        "burst_length",
        [](auto& c) -> auto& { return c.organisation.burstLength; },
        "power of two",
        "data beats per access (BL)",
        powerOfTwo);
    counted(
        "sids",
        [](auto& c) -> auto& { return c.organisation.sids; },
        "power of two",
        "stack IDs per pseudo-channel, each with its own bank groups",
        powerOfTwo);
    counted(
        "bank_groups",
        [](auto& c) -> auto& { return c.organisation.bankGroups; },
        "power of two",
        "bank groups per stack ID",
        powerOfTwo);
    counted(
        "banks_per_group",
        [](auto& c) -> auto& { return c.organisation.banksPerGroup; },
        "power of two",
        "banks per bank group",
        powerOfTwo);
    counted(
        "rows",
        [](auto& c) -> auto& { return c.organisation.rows; },
        "integer ≥ 1",
        "rows per bank; not a power of two puts the row field on the top address bits",
        atLeastOneProblem<std::uint64_t>);
    org(
        "page",
        [](auto& c) -> auto& { return c.organisation.page; },
        "size, a power of two ≥ one burst",
        "row buffer (page) per pseudo-channel")
        .rule([](const HbmConfig& c) -> std::string {
            const Organisation& layout = c.organisation;
            if (isPowerOfTwo(layout.page.bytes()) && layout.page.bytes() >= layout.burstBytes())
                return {};
            return "must be a power of two of at least one burst (" +
                   std::to_string(layout.burstBytes()) + " B), got " + toString(layout.page);
        });
    org(
        "stack_interleave",
        [](auto& c) -> auto& { return c.organisation.stackInterleave; },
        "size, a multiple of the burst",
        "granularity at which addresses move to the next stack")
        .rule([](const HbmConfig& c) -> std::string {
            const Organisation& layout = c.organisation;
            if (layout.stackInterleave.bytes() >= layout.burstBytes() &&
                layout.stackInterleave.bytes() % layout.burstBytes() == 0)
                return {};
            return "must be a multiple of the burst size (" + std::to_string(layout.burstBytes()) +
                   " B), got " + toString(layout.stackInterleave);
        });
    for (const TimingKey& entry : timingKeys) {
        const bool zeroMeansUnset = entry.zeroMeansUnset;
        const auto member = entry.member;
        Param& param = table.custom(
            "timing." + std::string(entry.key),
            zeroMeansUnset ? "cycles, or a time; 0 = derived" : "cycles ≥ 1, or a time",
            std::string(entry.help),
            [member, zeroMeansUnset](const ConfigNode& node, HbmConfig& config) {
                config.timing.*member =
                    readTimingValue(node, config.organisation.clock, zeroMeansUnset);
            },
            [member](const HbmConfig& config) {
                return YAML::Node(std::to_string(config.timing.*member));
            });
        if (!zeroMeansUnset)
            param.rule([member](const HbmConfig& c) -> std::string {
                return c.timing.*member == 0 ? "must be at least 1 cycle" : "";
            });
        for (const TimingRule& rule : timingRules)
            if (rule.key == entry.key)
                param.rule([problem = rule.problem](const HbmConfig& c) {
                    return problem(c.timing, c.organisation);
                });
    }
    table
        .custom(
            "address_map",
            choiceText(addressMapPresetNames) + ", or a map field → list of address bits (" +
                choiceText(addressFieldNames) + ")",
            "how a physical address is cut into fields; rebuilt `interleaved` when `organisation` "
            "changes and no map is given",
            [](const ConfigNode& node, HbmConfig& config) {
                config.addressMap = parseAddressMap(node, config.organisation);
            },
            [](const HbmConfig& config) { return addressMapYaml(config.addressMap); })
        .ruleAt([](const HbmConfig& c) {
            std::optional<ParamViolation> bad = addressMapProblem(c.addressMap, c.organisation);
            if (bad)
                bad->key = "address_map." + bad->key;
            return bad;
        });
    auto choice =
        [&table](const char* key, auto access, const auto& names, const char* help) -> Param& {
        return table.choice(std::string("controller.") + key, access, names, help);
    };
    auto value =
        [&table](const char* key, auto access, const char* type, const char* help) -> Param& {
        return table.value(std::string("controller.") + key, access, type, help);
    };
    auto positive = [&value](const char* key, auto access, const char* help) -> Param& {
        return value(key, access, "integer ≥ 1", help).rule([access](const HbmConfig& c) {
            return atLeastOneProblem(access(c));
        });
    };
    choice(
        "scheduler",
        [](auto& c) -> auto& { return c.controller.scheduler; },
        schedulerNames,
        "command scheduler per pseudo-channel");
    choice(
        "page_policy",
        [](auto& c) -> auto& { return c.controller.pagePolicy; },
        pagePolicyNames,
        "when a row is closed");
    choice(
        "refresh",
        [](auto& c) -> auto& { return c.controller.refresh; },
        refreshNames,
        "refresh mode (section Refresh)")
        .ruleAt([](const HbmConfig& c) {
            std::optional<ParamViolation> bad =
                refreshProblem(c.controller, c.timing, c.organisation);
            if (bad)
                bad->key = "controller." + bad->key;
            return bad;
        });
    value(
        "refresh_max_postponed",
        [](auto& c) -> auto& { return c.controller.refreshMaxPostponed; },
        "0 to 8",
        "refresh intervals a busy controller may postpone");
    value(
        "refresh_max_pulled_in",
        [](auto& c) -> auto& { return c.controller.refreshMaxPulledIn; },
        "0 to 8",
        "refresh intervals an idle controller may pull in");
    positive(
        "read_queue",
        [](auto& c) -> auto& { return c.controller.readQueue; },
        "read requests the scheduler sees per pseudo-channel");
    positive(
        "write_queue",
        [](auto& c) -> auto& { return c.controller.writeQueue; },
        "write requests the scheduler sees per pseudo-channel");
    value(
        "write_high_watermark",
        [](auto& c) -> auto& { return c.controller.writeHighWatermark; },
        "fraction in (0, 1]",
        "write-queue occupancy that starts a write drain")
        .rule([](const HbmConfig& c) -> std::string {
            double high = c.controller.writeHighWatermark;
            return high > 0.0 && high <= 1.0 ? "" : "must be in (0, 1], a fraction of write_queue";
        });
    value(
        "write_low_watermark",
        [](auto& c) -> auto& { return c.controller.writeLowWatermark; },
        "fraction below the high watermark",
        "occupancy at which a drain stops when reads wait")
        .rule([](const HbmConfig& c) -> std::string {
            double low = c.controller.writeLowWatermark;
            return low >= 0.0 && low < c.controller.writeHighWatermark
                       ? ""
                       : "must be in [0, write_high_watermark)";
        });
    value(
        "latency",
        [](auto& c) -> auto& { return c.controller.latency; },
        "time",
        "front end plus PHY: from a request's arrival to its entry in a queue");
    choice(
        "command_bus",
        [](auto& c) -> auto& { return c.controller.commandBus; },
        commandBusNames,
        "whether the pseudo-channels of a channel share its command buses");
    choice(
        "act_timing",
        [](auto& c) -> auto& { return c.controller.actTiming; },
        actTimingNames,
        "the cycle of a two-cycle ACT that timings count from (DRAMSys's HBM2 ACT)");
    choice(
        "buffer",
        [](auto& c) -> auto& { return c.controller.buffer; },
        requestBufferNames,
        "request buffer: per direction (read_queue, write_queue), or one of DRAMSys's channel-wide "
        "buffers (models/hbm/buffer)")
        .rule([](const HbmConfig& c) -> std::string {
            if (c.controller.commandMux != CommandMux::Oldest ||
                c.controller.buffer != RequestBuffer::PerDirection)
                return {};
            return "the oldest command mux takes one command per bank; use bankwise, read_write "
                   "or shared";
        });
    positive(
        "bank_buffer",
        [](auto& c) -> auto& { return c.controller.bankBuffer; },
        "entries per bank of a bankwise buffer");
    positive(
        "read_buffer",
        [](auto& c) -> auto& { return c.controller.readBuffer; },
        "reads per channel of a read_write buffer");
    positive(
        "write_buffer",
        [](auto& c) -> auto& { return c.controller.writeBuffer; },
        "writes per channel of a read_write buffer");
    positive(
        "shared_buffer",
        [](auto& c) -> auto& { return c.controller.sharedBuffer; },
        "requests per channel of a shared buffer");
    choice(
        "command_mux",
        [](auto& c) -> auto& { return c.controller.commandMux; },
        commandMuxNames,
        "which ready command goes first (`oldest` only with, and required by, a per-bank buffer)")
        .rule([](const HbmConfig& c) -> std::string {
            if (c.controller.buffer == RequestBuffer::PerDirection ||
                c.controller.commandMux == CommandMux::Oldest)
                return {};
            return "a " + std::string(enumName(requestBufferNames, c.controller.buffer)) +
                   " buffer offers one command per bank; use oldest";
        });
    choice(
        "refresh_precharge",
        [](auto& c) -> auto& { return c.controller.refreshPrecharge; },
        refreshPrechargeNames,
        "how open banks are closed before a refresh");
    choice(
        "admission",
        [](auto& c) -> auto& { return c.controller.admission; },
        admissionNames,
        "how requests enter the controller");
    choice(
        "refresh_start",
        [](auto& c) -> auto& { return c.controller.refreshStart; },
        refreshStartNames,
        "when each pseudo-channel's first refresh falls due");
    table
        .value(
            "analytic.efficiency",
            [](auto& c) -> auto& { return c.analytic.efficiency; },
            "fraction in (0, 1]",
            "`analytic`: sustained fraction of the device peak for reads")
        .rule([](const HbmConfig& c) -> std::string {
            double e = c.analytic.efficiency;
            return e > 0.0 && e <= 1.0
                       ? ""
                       : "must be in (0, 1], the sustained fraction of peak bandwidth";
        });
    table
        .value(
            "analytic.write_efficiency",
            [](auto& c) -> auto& { return c.analytic.writeEfficiency; },
            "fraction in [0, 1]",
            "`analytic`: the same for writes; 0 = `efficiency`")
        .rule([](const HbmConfig& c) -> std::string {
            double e = c.analytic.writeEfficiency;
            return e >= 0.0 && e <= 1.0
                       ? ""
                       : "must be in [0, 1], the sustained fraction of peak bandwidth for writes "
                         "(0: efficiency)";
        });
    table.value(
        "analytic.turnaround",
        [](auto& c) -> auto& { return c.analytic.turnaround; },
        "time",
        "`analytic`: lost when a write follows a read or a read a write");
    table.value(
        "analytic.latency",
        [](auto& c) -> auto& { return c.analytic.latency; },
        "time",
        "`analytic`: added to every transaction's transfer time");
    return table;
}

} // namespace

const ParamTable<HbmConfig>& hbmParams()
{
    static const ParamTable<HbmConfig> table = makeHbmParams();
    return table;
}

HbmConfig parseHbmConfig(ConfigMap& map)
{
    const ParamTable<HbmConfig>& table = hbmParams();
    // Where each key was written, so that a rule broken only by the merged config is reported
    // where the user wrote the value.
    ParamLocations where;
    HbmConfig config = hbmPreset(defaultPreset);
    // Reads one section through the table, then checks its rules at its keys: the sections
    // come in dependency order (timing in cycles of the organisation's clock, the address map
    // and refresh against both), so each is checked against the values it depends on.
    auto section = [&](const char* name) {
        if (!map.has(name))
            return false;
        map.nested(name, [&](ConfigMap& m) {
            table.readSection(m, name, config, &where);
            table.checkSection(m, name, config);
        });
        return true;
    };

    if (std::optional<ConfigNode> file = map.value("dramsys")) {
        for (const char* key : {"preset", "organisation", "timing", "address_map", "controller"})
            if (map.has(key))
                file->fail(std::string("the DRAMSys file describes the memory; remove `") + key +
                           "` (only fidelity and analytic may stand beside dramsys)");
        table.readKey(map, "dramsys", config, &where);
        table.readKey(map, "fidelity", config, &where);
        section("analytic");
        return config;
    }
    table.readKey(map, "preset", config, &where);
    table.readKey(map, "fidelity", config, &where);
    const bool organisationGiven = section("organisation");
    section("timing");
    if (map.has("address_map")) {
        table.readKey(map, "address_map", config, &where);
    } else if (organisationGiven) {
        // The preset's layout was made for the preset's organisation; rebuild it.
        config.addressMap =
            addressMapFromPreset(AddressMapPreset::Interleaved, config.organisation);
    }
    section("controller");
    section("analytic");
    // What the sections did not give came from the preset and may no longer fit a changed
    // organisation (a timing set, a refresh mode): reported at the map, under the key's path.
    if (std::optional<ParamViolation> bad = table.firstViolation(config))
        failAt(*bad, where, map);
    return config;
}

YAML::Node toYaml(const HbmConfig& config)
{
    return hbmParams().write(config);
}

} // namespace etsim::hbm
