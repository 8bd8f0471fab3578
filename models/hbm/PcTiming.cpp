#include "models/hbm/PcTiming.h"

#include <algorithm>

namespace etsim::hbm {

const char* toString(Command command)
{
    switch (command) {
    case Command::Act:
        return "act";
    case Command::Pre:
        return "pre";
    case Command::Rd:
        return "rd";
    case Command::Wr:
        return "wr";
    case Command::Rda:
        return "rda";
    case Command::Wra:
        return "wra";
    case Command::RefAb:
        return "refab";
    case Command::RefPb:
        return "refpb";
    case Command::PreAb:
        return "prea";
    case Command::Ref2b:
        return "ref2b";
    case Command::RefSb:
        return "refsb";
    case Command::PreSb:
        return "presb";
    }
    return "?";
}

std::uint32_t commandLength(Command command)
{
    return command == Command::Act ? 2 : 1;
}

bool isRowCommand(Command command)
{
    switch (command) {
    case Command::Rd:
    case Command::Wr:
    case Command::Rda:
    case Command::Wra:
        return false;
    default:
        return true;
    }
}

PcTiming::PcTiming(const HbmConfig& config)
    : t(config.timing)
    , burst(config.organisation.burstCycles())
    , banksPerGroup(config.organisation.banksPerGroup)
    , banksPerSid(config.organisation.banksPerGroup * config.organisation.bankGroups)
    , groupsPerSid(config.organisation.bankGroups)
    , banks(config.organisation.banksPerPc())
    , groups(config.organisation.bankGroupsPerPc())
    , actShift(config.controller.actTiming == ActTiming::SecondCycle ? 1 : 0)
{
}

std::uint64_t PcTiming::earliest(Command command, std::uint32_t bank) const
{
    switch (command) {
    case Command::Act: {
        const Bank& b = banks[bank];
        std::uint64_t cycle = std::max({b.act, groups[bankGroupOf(bank)].act, pcAct, bus().row});
        if (actCount >= 4)
            cycle = std::max(cycle, recentActs[actCount % 4] + t.faw);
        return cycle;
    }
    case Command::Pre:
        return std::max({banks[bank].pre, pcPre, bus().row});
    case Command::PreAb: {
        std::uint64_t cycle = std::max(pcPre, bus().row);
        for (const Bank& b : banks)
            cycle = std::max(cycle, b.pre);
        return cycle;
    }
    case Command::PreSb: {
        // A PRE to each bank of the set in one command: each bank's tRAS, tRTP and write
        // recovery, as PREA waits for every bank's.
        std::uint64_t cycle = std::max(pcPre, bus().row);
        refreshedBanks(command, bank, refreshScratch);
        for (std::uint32_t b : refreshScratch)
            cycle = std::max(cycle, banks[b].pre);
        return cycle;
    }
    case Command::Rd:
    case Command::Rda: {
        std::uint64_t cycle =
            std::max({banks[bank].rd, groups[bankGroupOf(bank)].rd, bus().column});
        if (sharedBus != nullptr)
            cycle = std::max(cycle, sharedBus->readToSid[sidOf(bank)]);
        // The data bus is free by then under the CAS-to-CAS rules; this keeps it so when a
        // timing set is unusual.
        if (dataBus > t.cl)
            cycle = std::max(cycle, dataBus - t.cl);
        return cycle;
    }
    case Command::Wr:
    case Command::Wra: {
        std::uint64_t cycle =
            std::max({banks[bank].wr, groups[bankGroupOf(bank)].wr, pcWr, bus().column});
        if (dataBus > t.cwl)
            cycle = std::max(cycle, dataBus - t.cwl);
        return cycle;
    }
    case Command::RefAb: {
        std::uint64_t cycle = std::max({pcRef, bus().row});
        for (const Bank& b : banks)
            cycle = std::max(cycle, b.act + actShift);
        return cycle;
    }
    case Command::RefPb:
    case Command::Ref2b:
    case Command::RefSb: {
        std::uint64_t cycle = std::max(pcRef, bus().row);
        refreshedBanks(command, bank, refreshScratch);
        for (std::uint32_t b : refreshScratch)
            cycle = std::max(cycle, banks[b].act + actShift);
        return cycle;
    }
    }
    return 0;
}

void PcTiming::refreshedBanks(Command command,
                              std::uint32_t bank,
                              std::vector<std::uint32_t>& out) const
{
    out.clear();
    auto count = static_cast<std::uint32_t>(banks.size());
    if (command == Command::Ref2b) {
        out.push_back(bank);
        out.push_back(bank + count / 2);
    } else if (command == Command::RefSb || command == Command::PreSb) {
        for (std::uint32_t b = bank % banksPerGroup; b < count; b += banksPerGroup)
            out.push_back(b);
    } else {
        out.push_back(bank);
    }
}

std::uint32_t PcTiming::refreshCycles(Command command) const
{
    return command == Command::Ref2b ? t.rfcP2b : command == Command::RefSb ? t.rfcSb : t.rfcPb;
}

bool PcTiming::allClosed() const
{
    return std::all_of(
        banks.begin(), banks.end(), [](const Bank& b) { return b.openRow == closedRow; });
}

void PcTiming::closeAll()
{
    for (Bank& b : banks)
        b.openRow = closedRow;
}

std::uint64_t PcTiming::dataDone(Command command, std::uint64_t cycle) const
{
    bool write = command == Command::Wr || command == Command::Wra;
    return cycle + (write ? t.cwl : t.cl) + burst;
}

void PcTiming::casIssued(bool write, std::uint32_t bank, std::uint64_t cycle)
{
    std::uint32_t group = bankGroupOf(bank);
    std::uint32_t sid = sidOf(bank);
    for (std::uint32_t g = 0; g < groups.size(); ++g) {
        Group& other = groups[g];
        bool sameGroup = g == group;
        bool sameSid = g / groupsPerSid == sid;
        if (write) {
            std::uint64_t toWrite = cycle + (sameGroup ? t.ccdL : t.ccdS);
            std::uint64_t toRead = cycle + t.cwl + burst + (sameGroup ? t.wtrL : t.wtrS);
            other.wr = std::max(other.wr, toWrite);
            other.rd = std::max(other.rd, toRead);
        } else {
            std::uint64_t toRead = cycle + (sameGroup ? t.ccdL : (sameSid ? t.ccdS : t.ccdR));
            std::uint64_t toWrite = cycle + (sameGroup ? t.ccdL : t.ccdS);
            other.rd = std::max(other.rd, toRead);
            other.wr = std::max(other.wr, toWrite);
        }
    }
    Bank& b = banks[bank];
    if (write) {
        b.pre = std::max(b.pre, cycle + t.cwl + burst + t.wr);
        dataBus = cycle + t.cwl + burst;
    } else {
        b.pre = std::max(b.pre, cycle + t.rtp);
        pcWr = std::max(pcWr, cycle + t.rtw);
        dataBus = cycle + t.cl + burst;
    }
    bus().column = cycle + 1;
    if (sharedBus != nullptr && !write)
        for (std::uint32_t other = 0; other < sharedBus->readToSid.size(); ++other)
            if (other != sid)
                sharedBus->readToSid[other] = std::max(sharedBus->readToSid[other], cycle + t.ccdR);
}

void PcTiming::autoPrecharge(bool write, std::uint32_t bank, std::uint64_t cycle)
{
    // The device precharges by itself as soon as tRTP (read) or write recovery (write) and
    // tRAS allow; b.pre already holds the later of the two after casIssued.
    Bank& b = banks[bank];
    b.act = std::max(b.act, b.pre + t.rp);
    b.openRow = closedRow;
}

void PcTiming::issue(Command command, std::uint32_t bank, std::uint64_t cycle, std::int64_t row)
{
    switch (command) {
    case Command::Act: {
        Bank& b = banks[bank];
        b.openRow = row;
        b.rd = cycle + t.rcdRd + actShift;
        b.wr = cycle + t.rcdWr + actShift;
        b.pre = std::max(b.pre, cycle + t.ras + actShift);
        b.act = cycle + t.rc;
        std::uint32_t group = bankGroupOf(bank);
        for (std::uint32_t g = 0; g < groups.size(); ++g)
            groups[g].act = std::max(groups[g].act, cycle + (g == group ? t.rrdL : t.rrdS));
        recentActs[actCount % 4] = cycle;
        ++actCount;
        // ACT takes 1.5 CK of the row command bus; whole cycles round it up to 2.
        bus().row = cycle + commandLength(command);
        break;
    }
    case Command::Pre: {
        Bank& b = banks[bank];
        b.openRow = closedRow;
        b.act = std::max(b.act, cycle + t.rp - actShift);
        pcPre = cycle + t.ppd;
        bus().row = cycle + 1;
        break;
    }
    case Command::PreAb:
        for (Bank& b : banks) {
            b.openRow = closedRow;
            b.act = std::max(b.act, cycle + t.rp - actShift);
        }
        pcPre = cycle + t.ppd;
        bus().row = cycle + 1;
        break;
    case Command::PreSb:
        // tRP to the next ACT or refresh of every bank of the set, as PREA's to every bank.
        refreshedBanks(command, bank, refreshScratch);
        for (std::uint32_t b : refreshScratch) {
            banks[b].openRow = closedRow;
            banks[b].act = std::max(banks[b].act, cycle + t.rp - actShift);
        }
        pcPre = cycle + t.ppd;
        bus().row = cycle + 1;
        break;
    case Command::Rd:
    case Command::Wr:
        casIssued(command == Command::Wr, bank, cycle);
        break;
    case Command::Rda:
    case Command::Wra:
        casIssued(command == Command::Wra, bank, cycle);
        autoPrecharge(command == Command::Wra, bank, cycle);
        break;
    case Command::RefAb:
        for (Bank& b : banks)
            b.act = std::max(b.act, cycle + t.rfc - actShift);
        pcRef = cycle + t.rfc;
        bus().row = cycle + 1;
        break;
    case Command::RefPb:
    case Command::Ref2b:
    case Command::RefSb:
        refreshedBanks(command, bank, refreshScratch);
        for (std::uint32_t b : refreshScratch)
            banks[b].act = std::max(banks[b].act, cycle + refreshCycles(command) - actShift);
        pcAct = std::max(pcAct, cycle + t.rrefd - actShift);
        pcRef = cycle + t.rrefd;
        bus().row = cycle + 1;
        break;
    }
}

} // namespace etsim::hbm
