#include "models/hbm/PseudoChannel.h"

#include <algorithm>
#include <cmath>

namespace etsim::hbm {

CycleClock::CycleClock(Frequency clock) : hz(clock.hz()), wholePeriodPs(0)
{
    double period = 1e12 / hz;
    if (std::fabs(period - std::round(period)) < 1e-9)
        wholePeriodPs = static_cast<std::uint64_t>(std::llround(period));
}

std::uint64_t CycleClock::ps(std::uint64_t cycle) const
{
    if (wholePeriodPs != 0)
        return cycle * wholePeriodPs;
    return static_cast<std::uint64_t>(std::llround(static_cast<long double>(cycle) * 1e12L / hz));
}

std::uint64_t CycleClock::cycleAtOrAfter(std::uint64_t time) const
{
    if (wholePeriodPs != 0)
        return (time + wholePeriodPs - 1) / wholePeriodPs;
    auto cycle = static_cast<std::uint64_t>(static_cast<long double>(time) * hz / 1e12L);
    while (cycle > 0 && ps(cycle - 1) >= time)
        --cycle;
    while (ps(cycle) < time)
        ++cycle;
    return cycle;
}

std::uint64_t CycleClock::cycleAtOrBefore(std::uint64_t time) const
{
    if (wholePeriodPs != 0)
        return time / wholePeriodPs;
    std::uint64_t cycle = cycleAtOrAfter(time);
    return ps(cycle) == time || cycle == 0 ? cycle : cycle - 1;
}

PseudoChannel::PseudoChannel(const HbmConfig& config,
                             RequestBufferIf& buffer,
                             std::uint32_t pcInChannel,
                             const SchedulerIf& scheduler,
                             const PagePolicyIf& pagePolicy,
                             const CommandMuxIf& mux,
                             std::unique_ptr<RefreshPolicyIf> refresh,
                             const CycleClock& clock,
                             StatGroup& stats)
    : config(config)
    , buffer(buffer)
    , pcInChannel(pcInChannel)
    , scheduler(scheduler)
    , pagePolicy(pagePolicy)
    , mux(mux)
    , clock(clock)
    , refresh(std::move(refresh))
    , device(config)
    , highWatermark(static_cast<std::uint32_t>(
          std::ceil(config.controller.writeHighWatermark * config.controller.writeQueue)))
    , lowWatermark(static_cast<std::uint32_t>(
          std::floor(config.controller.writeLowWatermark * config.controller.writeQueue)))
    , burstBytes(config.organisation.burstBytes())
    , bankChoice(config.organisation.banksPerPc())
    , perBank(config.organisation.banksPerPc(), 0)
    , perBankBuffer(buffer.perBank())
    , readBursts(stats.addCounter("read_bursts", "", "read accesses served"))
    , writeBursts(stats.addCounter("write_bursts", "", "write accesses served"))
    , bytes(stats.addCounter("bytes", "B", "data moved (reads and writes)"))
    , rowHits(stats.addCounter("row_hits", "", "accesses to an open row (CAS only)"))
    , rowMisses(stats.addCounter("row_misses", "", "accesses to an idle bank (ACT + CAS)"))
    , rowConflicts(stats.addCounter("row_conflicts", "", "accesses to a bank holding another row"))
    , activates(stats.addCounter("activates", "", "ACT commands"))
    , switches(stats.addCounter("rw_switches", "", "changes of data-bus direction"))
    , refreshes(stats.addCounter("refreshes", "", "refresh commands (all-bank or per-bank)"))
    , refreshTime(stats.addScalar("refresh_time", "s", "time banks spent refreshing"))
    , readOccupancy(stats.addTimeWeightedAverage("read_queue", "", "read queue occupancy"))
    , writeOccupancy(stats.addTimeWeightedAverage("write_queue", "", "write queue occupancy"))
{
    Counter& moved = bytes;
    stats.addFormula("bandwidth", "B/s", "data moved per second", [&moved](const StatWindow& w) {
        return w.seconds() > 0.0 ? static_cast<double>(moved.value()) / w.seconds() : 0.0;
    });
}

bool PseudoChannel::canAccept(bool write) const
{
    // A per-bank buffer admits whole transactions at the channel's front end (HbmDevice):
    // their bursts then all enter.
    return perBankBuffer || buffer.hasRoom(pcInChannel, write, 1);
}

void PseudoChannel::enqueue(const BurstRequest& request, std::uint64_t cycle)
{
    if (idle() && refresh) {
        std::uint64_t skipped = refresh->skipIdle(cycle);
        if (skipped > 0) {
            device.closeAll();
            refreshes += skipped;
            refreshTime +=
                static_cast<double>(skipped * refresh->duration()) * clock.periodSeconds();
        }
    }
    std::uint64_t sequence = request.sequence == unsetSequence ? nextSequence++ : request.sequence;
    // A per-bank buffer keeps reads and writes in one arrival-ordered list.
    (request.write && !perBankBuffer ? writes : reads).push_back(Entry{request, sequence, false});
    ++perBank[request.bank];
    buffer.stored(pcInChannel, request.bank, request.write);
    updateQueueStats(cycle);
}

bool PseudoChannel::serveWrites() const
{
    std::size_t r = reads.size();
    std::size_t w = writes.size();
    if (!writeMode)
        return w >= highWatermark || (r == 0 && w > 0);
    return !(w == 0 || (w <= lowWatermark && r > 0));
}

void PseudoChannel::collect(std::uint64_t now, bool writesActive)
{
    candidates.clear();
    const std::vector<std::uint8_t>* held = nullptr;
    bool allHeld = false;
    if (refresh) {
        refresh->evaluate(now, RefreshView{device, perBank, reads.size() + writes.size()});
        refreshCommands.clear();
        refresh->commands(device, refreshCommands);
        for (const RefreshCommand& r : refreshCommands) {
            Candidate c;
            c.slot = refreshSlot;
            c.bank = r.bank;
            c.command = r.command;
            c.ready = device.earliest(r.command, r.bank);
            candidates.push_back(c);
        }
        held = refresh->held();
        allHeld = held != nullptr && refresh->holdsAll();
    }

    if (allHeld)
        return; // an all-bank refresh holds every request back
    auto consider = [&](const std::vector<Entry>& queue, std::size_t count) {
        for (std::size_t i = 0; i < count; ++i) {
            const BurstRequest& r = queue[i].request;
            if (held != nullptr && (*held)[r.bank])
                continue;
            Candidate c;
            c.slot = static_cast<std::uint32_t>(i);
            c.bank = r.bank;
            c.write = r.write;
            c.sequence = queue[i].sequence;
            std::int64_t open = device.openRow(r.bank);
            if (open == static_cast<std::int64_t>(r.row)) {
                c.command = r.write ? Command::Wr : Command::Rd;
                c.rowHit = true;
            } else if (open == closedRow) {
                c.command = Command::Act;
            } else {
                // Close the row only when no request the policy sees still hits it.
                bool hitWaits = false;
                for (std::size_t j = 0; j < count && !hitWaits; ++j)
                    hitWaits = queue[j].request.bank == r.bank &&
                               static_cast<std::int64_t>(queue[j].request.row) == open;
                if (hitWaits)
                    continue;
                c.command = Command::Pre;
            }
            c.ready = device.earliest(c.command, r.bank);
            candidates.push_back(c);
        }
    };

    if (perBankBuffer) {
        considerPerBank(reads, held);
    } else if (scheduler.arrivalOrder()) {
        bool oldestWrites =
            !writes.empty() && (reads.empty() || writes.front().sequence < reads.front().sequence);
        const std::vector<Entry>& queue = oldestWrites ? writes : reads;
        consider(queue, scheduler.window(queue.size()));
    } else {
        const std::vector<Entry>& queue = writesActive ? writes : reads;
        consider(queue, scheduler.window(queue.size()));
    }
}

void PseudoChannel::considerPerBank(const std::vector<Entry>& queue,
                                    const std::vector<std::uint8_t>* held)
{
    constexpr std::uint32_t none = std::numeric_limits<std::uint32_t>::max();
    std::fill(bankChoice.begin(), bankChoice.end(), none);
    for (std::size_t i = 0; i < queue.size(); ++i) {
        const BurstRequest& r = queue[i].request;
        std::uint32_t& choice = bankChoice[r.bank];
        bool hit = device.openRow(r.bank) == static_cast<std::int64_t>(r.row);
        if (choice == none ||
            (hit && device.openRow(r.bank) != static_cast<std::int64_t>(queue[choice].request.row)))
            choice = static_cast<std::uint32_t>(i);
    }
    for (std::uint32_t bank = 0; bank < bankChoice.size(); ++bank) {
        if (bankChoice[bank] == none || (held != nullptr && (*held)[bank]))
            continue;
        const Entry& e = queue[bankChoice[bank]];
        Candidate c;
        c.slot = bankChoice[bank];
        c.bank = bank;
        c.write = e.request.write;
        c.sequence = e.sequence;
        std::int64_t open = device.openRow(bank);
        if (open == static_cast<std::int64_t>(e.request.row)) {
            c.command = e.request.write ? Command::Wr : Command::Rd;
            c.rowHit = true;
        } else {
            c.command = open == closedRow ? Command::Act : Command::Pre;
        }
        c.ready = device.earliest(c.command, bank);
        candidates.push_back(c);
    }
}

std::uint64_t PseudoChannel::nextCycle(std::uint64_t now)
{
    if (idle())
        return neverCycle;
    collect(now, perBankBuffer ? false : serveWrites());
    std::uint64_t best = neverCycle;
    for (const Candidate& c : candidates)
        best = std::min(best, c.ready);
    if (refresh && refresh->nextDue() > now)
        best = std::min<std::uint64_t>(best, refresh->nextDue());
    return std::max(best, now);
}

void PseudoChannel::classify(Entry& entry, Command command)
{
    if (entry.classified)
        return;
    entry.classified = true;
    if (command == Command::Act)
        ++rowMisses;
    else if (command == Command::Pre)
        ++rowConflicts;
    else
        ++rowHits;
}

void PseudoChannel::updateQueueStats(std::uint64_t cycle)
{
    std::uint64_t ps = clock.ps(cycle);
    readOccupancy.set(ps, static_cast<double>(reads.size()));
    writeOccupancy.set(ps, static_cast<double>(writes.size()));
}

void PseudoChannel::offer(std::uint64_t cycle, Offer& out)
{
    out = Offer{};
    if (idle())
        return;
    if (!perBankBuffer && !scheduler.arrivalOrder())
        writeMode = serveWrites();
    collect(cycle, writeMode);

    std::uint64_t refreshWake =
        refresh && refresh->nextDue() > cycle ? refresh->nextDue() : neverCycle;
    mux.offer(cycle, candidates, scheduler, refreshWake, ready, out);
}

bool PseudoChannel::step(std::uint64_t cycle, BurstDone& done, bool& completed, std::uint64_t& next)
{
    completed = false;
    next = neverCycle;
    Offer o;
    offer(cycle, o);
    if (!o.hasRas && !o.hasCas) {
        next = o.next;
        return false;
    }
    const Candidate& chosen = o.hasRas && o.hasCas ? readyFirst(o.ras, o.cas)
                              : o.hasRas           ? o.ras
                                                   : o.cas;
    if (chosen.ready > cycle) {
        next = o.next;
        return false;
    }
    commit(cycle, chosen, done, completed);
    return true;
}

void PseudoChannel::commit(std::uint64_t cycle,
                           const Candidate& chosen,
                           BurstDone& done,
                           bool& completed)
{
    completed = false;
    if (chosen.slot == refreshSlot) {
        device.issue(chosen.command, chosen.bank, cycle);
        refresh->issued(chosen.command, cycle);
        if (chosen.command != Command::Pre && chosen.command != Command::PreAb &&
            chosen.command != Command::PreSb) {
            ++refreshes;
            refreshTime += static_cast<double>(refresh->duration()) * clock.periodSeconds();
        }
        if (observe)
            observe(cycle, chosen.command, chosen.bank, 0);
        return;
    }

    std::vector<Entry>& queue = chosen.write && !perBankBuffer ? writes : reads;
    Entry& entry = queue[chosen.slot];
    const BurstRequest request = entry.request;
    Command command = chosen.command;
    classify(entry, command);

    if (command == Command::Act) {
        device.issue(command, request.bank, cycle, request.row);
        ++activates;
    } else if (command == Command::Pre) {
        device.issue(command, request.bank, cycle);
    } else {
        bool hitsQueued = false;
        bool missesQueued = false;
        for (const std::vector<Entry>* q : {&reads, &writes})
            for (const Entry& other : *q) {
                if (&other == &entry || other.request.bank != request.bank)
                    continue;
                (other.request.row == request.row ? hitsQueued : missesQueued) = true;
            }
        if (pagePolicy.closeAfterAccess(hitsQueued, missesQueued))
            command = request.write ? Command::Wra : Command::Rda;
        device.issue(command, request.bank, cycle);
        if (lastCasWrite != -1 && lastCasWrite != static_cast<int>(request.write))
            ++switches;
        lastCasWrite = request.write;
        (request.write ? writeBursts : readBursts) += 1;
        bytes += burstBytes;
        done = BurstDone{request.transaction, device.dataDone(command, cycle)};
        completed = true;
        queue.erase(queue.begin() + chosen.slot);
        --perBank[request.bank];
        buffer.removed(pcInChannel, request.bank, request.write);
        updateQueueStats(cycle);
    }
    if (observe)
        observe(cycle, command, request.bank, request.row);
}

} // namespace etsim::hbm
