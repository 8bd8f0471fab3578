#include "tests/models/hbm/DramsysExample.h"

namespace etsim::hbm::test {

namespace {

constexpr std::uint64_t ns = 1000; // ps

} // namespace

HbmConfig dramsysHbm2()
{
    HbmConfig c = hbmPreset(HbmPreset::Hbm2);
    c.fidelity = Fidelity::Detailed;
    Organisation& o = c.organisation;
    o.stacks = 1;
    o.channelsPerStack = 1;
    o.pcsPerChannel = 2;
    o.pcWidthBits = 64;
    o.burstLength = 4;
    o.clock = Frequency::fromHz(1e9);
    o.dataRate = Bandwidth::fromBytesPerSecond(2e9 / 8.0);
    o.sids = 2;
    o.bankGroups = 4;
    o.banksPerGroup = 4;
    o.rows = 32768;
    o.page = Size::fromBytes(1024);
    o.stackInterleave = Size::fromBytes(o.stackBytes());
    Timing& t = c.timing;
    t = Timing{};
    t.cl = 17 + 1;
    t.cwl = 7;
    t.rcdRd = 12;
    t.rcdWr = 6;
    t.rp = 14;
    t.ras = 28;
    t.rc = 42;
    t.wr = 14;
    t.rtp = 5;
    t.ccdS = 2;
    t.ccdL = 3;
    t.ccdR = 2;
    t.rrdS = 4;
    t.rrdL = 6;
    t.faw = 16;
    t.wtrS = 4;
    t.wtrL = 9;
    t.rtw = 18;
    t.ppd = 1;
    t.rfc = 220;
    t.rfcPb = 96;
    t.refi = 3900;
    t.rrefd = 8;
    t.refiPb = 244; // REFISB: a per-bank refresh every 244 cycles
    // am_hbm2_16Gb-8H_pc_brc: byte 0-4, pseudo-channel 5, bank group 6-7, bank 8-9, stack 10,
    // column 11-15, row 16-30.
    AddressMapBits& m = c.addressMap;
    m = AddressMapBits{};
    m.field(AddressField::Byte) = {0, 1, 2, 3, 4};
    m.field(AddressField::PseudoChannel) = {5};
    m.field(AddressField::BankGroup) = {6, 7};
    m.field(AddressField::Bank) = {8, 9};
    m.field(AddressField::Sid) = {10};
    m.field(AddressField::Column) = {11, 12, 13, 14, 15};
    for (std::uint8_t bit = 16; bit <= 30; ++bit)
        m.field(AddressField::Row).push_back(bit);
    ControllerConfig& k = c.controller;
    k.scheduler = SchedulerKind::FrFcfs;
    k.pagePolicy = PagePolicyKind::Open;
    k.refresh = RefreshKind::None;
    k.buffer = RequestBuffer::Bankwise;
    k.bankBuffer = 8;
    k.readQueue = k.writeQueue = 8;
    k.commandMux = CommandMux::Oldest;
    k.commandBus = CommandBus::PerChannel;
    k.actTiming = ActTiming::SecondCycle;
    k.refreshPrecharge = RefreshPrecharge::AllBank;
    k.refreshStart = RefreshStart::Staggered;
    k.admission = Admission::InOrder;
    k.latency = Time::fromPs(1 * ns);
    validate(c);
    return c;
}

std::uint64_t at(std::uint32_t pc,
                 std::uint32_t group,
                 std::uint32_t bank,
                 std::uint32_t row,
                 std::uint32_t column)
{
    return (std::uint64_t{row} << 16) | (std::uint64_t{column} << 11) | (bank << 8) | (group << 6) |
           (pc << 5);
}

void watch(DeviceRun& run, std::vector<Issued>& issued)
{
    run.device.setObserver(
        [&issued](
            std::uint32_t pc, std::uint64_t cycle, Command c, std::uint32_t bank, std::uint32_t) {
            issued.emplace_back(cycle, pc, toString(c), bank);
        });
}

std::vector<Issued> commandsOf(const HbmConfig& config,
                               const std::function<void(DeviceRun&)>& submit)
{
    DeviceRun run(config);
    std::vector<Issued> issued;
    watch(run, issued);
    submit(run);
    run.drain();
    return issued;
}

} // namespace etsim::hbm::test
