#include "models/hbm/HbmDevice.h"

#include "kernel/FreeSlots.h"

#include <algorithm>
#include <string>

namespace etsim::hbm {

HbmDevice::HbmDevice(const HbmConfig& config, StatGroup& stats, Completion onComplete)
    : cfg(config)
    , map(cfg)
    , clock(cfg.organisation.clock)
    , scheduler(makeScheduler(cfg.controller.scheduler))
    , pagePolicy(makePagePolicy(cfg.controller.pagePolicy))
    , mux(makeCommandMux(cfg.controller.commandMux))
    , onComplete(std::move(onComplete))
    , burstBytes(cfg.organisation.burstBytes())
    , latencyPs(cfg.controller.latency.ps())
    , waiters(2 * std::size_t{cfg.organisation.pcCount()})
    , scheduled(cfg.organisation.pcCount(), neverCycle)
    , isDirty(cfg.organisation.pcCount(), 0)
    , transactionCount(stats.addCounter("transactions", "", "transactions completed"))
    , bytesRead(stats.addCounter("bytes_read", "B", "bytes read"))
    , bytesWritten(stats.addCounter("bytes_written", "B", "bytes written"))
    , latency(stats.addDistribution(
          "latency",
          "ns",
          "transaction latency: arrival to the last data beat",
          {20, 30, 40, 50, 75, 100, 150, 200, 300, 500, 1000, 2000, 5000, 10000, 100000}))
{
    const Organisation& org = cfg.organisation;
    const std::uint32_t channels = org.stacks * org.channelsPerStack;
    sharedBus = cfg.controller.commandBus == CommandBus::PerChannel;
    pcsPerUnit = sharedBus ? org.pcsPerChannel : 1;
    buses.resize(channels);
    offers.resize(pcsPerUnit);
    latencyCycles = clock.cycleAtOrAfter(latencyPs);
    pcs.reserve(org.pcCount());
    for (std::uint32_t channel = 0; channel < org.stacks * org.channelsPerStack; ++channel) {
        StatGroup& channelStats = stats.addGroup("channel" + std::to_string(channel));
        buffers.push_back(makeRequestBuffer(cfg));
        for (std::uint32_t pc = 0; pc < org.pcsPerChannel; ++pc)
            pcs.push_back(
                std::make_unique<PseudoChannel>(cfg,
                                                *buffers.back(),
                                                pc,
                                                *scheduler,
                                                *pagePolicy,
                                                *mux,
                                                makeRefreshPolicy(cfg, pc),
                                                clock,
                                                channelStats.addGroup("pc" + std::to_string(pc))));
        if (sharedBus)
            for (std::uint32_t pc = 0; pc < org.pcsPerChannel; ++pc)
                pcs[channel * org.pcsPerChannel + pc]->shareBus(&buses[channel]);
    }
    perBankBuffer = buffers.front()->perBank();
    Counter& read = bytesRead;
    Counter& written = bytesWritten;
    stats.addFormula(
        "bandwidth", "B/s", "bytes moved per second", [&read, &written](const StatWindow& w) {
            return w.seconds() > 0.0
                       ? static_cast<double>(read.value() + written.value()) / w.seconds()
                       : 0.0;
        });
}

void HbmDevice::setObserver(Observer observer)
{
    for (std::uint32_t i = 0; i < pcs.size(); ++i) {
        if (!observer) {
            pcs[i]->setObserver(nullptr);
            continue;
        }
        pcs[i]->setObserver(
            [observer,
             i](std::uint64_t cycle, Command command, std::uint32_t bank, std::uint32_t row) {
                observer(i, cycle, command, bank, row);
            });
    }
}

void HbmDevice::submit(std::uint64_t token,
                       std::uint64_t address,
                       std::uint64_t bytes,
                       bool write,
                       std::uint64_t nowPs)
{
    const std::uint32_t index = takeSlot(freeSlots, transactions);
    Transaction& t = transactions[index];
    t = Transaction{};
    t.token = token;
    t.firstBurst = address - address % burstBytes;
    std::uint64_t end = address + bytes;
    t.bursts = bytes == 0 ? 0 : (end - t.firstBurst + burstBytes - 1) / burstBytes;
    t.arrivalPs = nowPs;
    t.write = write;
    ++inFlight;
    // Submissions come in time order and the latency is fixed, so arrivals stay sorted.
    arrivals.push_back(Arrival{clock.cycleAtOrAfter(nowPs + latencyPs), index});
}

std::uint64_t HbmDevice::nextEventPs() const
{
    std::uint64_t cycle = neverCycle;
    if (!arrivals.empty())
        cycle = arrivals.front().cycle;
    cycle = std::min(cycle, admitWake);
    if (!calendar.empty())
        cycle = std::min(cycle, calendar.top().first);
    return cycle == neverCycle ? neverPs : clock.ps(cycle);
}

void HbmDevice::runUntil(std::uint64_t ps)
{
    std::uint64_t limit = clock.cycleAtOrBefore(ps);
    while (true) {
        std::uint64_t arrivalCycle = arrivals.empty() ? neverCycle : arrivals.front().cycle;
        std::uint64_t wakeCycle = calendar.empty() ? neverCycle : calendar.top().first;
        std::uint64_t cycle = std::min({arrivalCycle, wakeCycle, admitWake});
        if (cycle == neverCycle || cycle > limit)
            break;
        if (admitWake <= std::min(arrivalCycle, wakeCycle)) {
            admitWake = neverCycle;
            admit(cycle, false);
        } else if (arrivalCycle <= wakeCycle) {
            std::uint32_t index = arrivals.front().transaction;
            arrivals.pop_front();
            start(index, cycle);
        } else {
            std::uint32_t pc = calendar.top().second;
            calendar.pop();
            if (scheduled[pc] != cycle)
                continue; // superseded by an earlier entry
            scheduled[pc] = neverCycle;
            serve(pc, cycle);
        }
        reschedule(cycle);
    }
}

void HbmDevice::drain()
{
    while (!idle()) {
        std::uint64_t next = nextEventPs();
        if (next == neverPs)
            throw Error("hbm: transactions in flight but nothing scheduled (model bug)");
        runUntil(next);
    }
}

void HbmDevice::start(std::uint32_t index, std::uint64_t cycle)
{
    Transaction& t = transactions[index];
    if (t.bursts == 0) {
        t.doneCycle = cycle;
        finish(index);
        return;
    }
    if (cfg.controller.admission == Admission::InOrder) {
        admitQueue.push_back(index);
        admit(cycle, false);
        return;
    }
    if (perBankBuffer && (!admitQueue.empty() || !hasRoom(index))) {
        admitQueue.push_back(index);
        return;
    }
    feed(index, cycle);
}

std::uint32_t HbmDevice::channelOf(std::uint32_t pc) const
{
    return pc / cfg.organisation.pcsPerChannel;
}

bool HbmDevice::hasRoom(std::uint32_t index) const
{
    const Transaction& t = transactions[index];
    DeviceAddress where = map.decode(t.firstBurst);
    std::uint32_t pc = map.pcIndex(where);
    // A per-bank buffer takes a transaction whole, so it needs room for all its bursts;
    // per-direction queues take them one at a time, so room for the first will do.
    return buffers[channelOf(pc)]->hasRoom(
        pc % cfg.organisation.pcsPerChannel, t.write, perBankBuffer ? t.bursts : 1);
}

void HbmDevice::admit(std::uint64_t cycle, bool afterRoom)
{
    bool inOrder = cfg.controller.admission == Admission::InOrder;
    while (!admitQueue.empty()) {
        if (inOrder && cycle < nextAdmit) {
            admitWake = nextAdmit;
            return;
        }
        std::uint32_t index = admitQueue.front();
        if (!hasRoom(index)) {
            admitBlocked = true;
            return;
        }
        admitQueue.pop_front();
        feed(index, cycle);
        // The initiator sends the next request once this one is stored: one per cycle, and
        // when the store waited for room (it then happens after a column command), the
        // acknowledgement leaves one front-end latency later.
        bool waited = admitBlocked || afterRoom;
        admitBlocked = false;
        afterRoom = false;
        if (inOrder)
            nextAdmit = cycle + 1 + (waited ? latencyCycles : 0);
    }
}

void HbmDevice::feed(std::uint32_t index, std::uint64_t cycle)
{
    Transaction& t = transactions[index];
    while (t.generated < t.bursts) {
        DeviceAddress where = map.decode(t.firstBurst + t.generated * burstBytes);
        std::uint32_t pc = map.pcIndex(where);
        if (!pcs[pc]->canAccept(t.write)) {
            waiters[2 * pc + t.write].push_back(index);
            return;
        }
        std::uint32_t bank = map.bankIndex(where);
        pcs[pc]->enqueue(BurstRequest{index, bank, where.row, t.write, nextSequence++}, cycle);
        ++t.generated;
        ++t.outstanding;
        markDirty(unitOf(pc));
    }
}

void HbmDevice::markDirty(std::uint32_t unit)
{
    if (!isDirty[unit]) {
        isDirty[unit] = 1;
        dirty.push_back(unit);
    }
}

void HbmDevice::roomMade(std::uint32_t pc, std::uint64_t cycle)
{
    PseudoChannel& channel = *pcs[pc];
    // Room in this PC's queue: let transactions blocked on it go on, in order.
    for (bool write : {false, true}) {
        std::deque<std::uint32_t>& blocked = waiters[2 * pc + write];
        while (!blocked.empty() && channel.canAccept(write)) {
            std::uint32_t index = blocked.front();
            blocked.pop_front();
            feed(index, cycle);
        }
    }
    if (!admitQueue.empty())
        admit(cycle, true);
}

std::uint64_t HbmDevice::unitNextCycle(std::uint32_t unit, std::uint64_t cycle)
{
    std::uint64_t next = neverCycle;
    for (std::uint32_t pc = unit; pc < unit + pcsPerUnit; ++pc)
        next = std::min(next, pcs[pc]->nextCycle(cycle));
    return next;
}

void HbmDevice::serveChannel(std::uint32_t unit, std::uint64_t cycle)
{
    // The PCs of a channel share its command buses: each offers its commands and one command
    // mux picks among all of them, as one controller per channel does.
    std::uint64_t next = neverCycle;
    while (true) {
        next = neverCycle;
        const Candidate* ras = nullptr;
        const Candidate* cas = nullptr;
        std::uint32_t rasPc = 0;
        std::uint32_t casPc = 0;
        std::uint32_t refreshPc = pcsPerUnit;
        for (std::uint32_t i = 0; i < pcsPerUnit; ++i) {
            Offer& o = offers[i];
            pcs[unit + i]->offer(cycle, o);
            next = std::min(next, o.next);
            if (o.refresh && refreshPc == pcsPerUnit)
                refreshPc = i;
            if (o.hasRas && (ras == nullptr || finishesFirst(o.ras, *ras))) {
                ras = &o.ras;
                rasPc = i;
            }
            if (o.hasCas && (cas == nullptr || finishesFirst(o.cas, *cas))) {
                cas = &o.cas;
                casPc = i;
            }
        }
        const Candidate* chosen = nullptr;
        std::uint32_t chosenPc = 0;
        if (refreshPc != pcsPerUnit) {
            chosen = &offers[refreshPc].ras;
            chosenPc = refreshPc;
        } else if (ras != nullptr && cas != nullptr) {
            chosen = &readyFirst(*ras, *cas);
            chosenPc = chosen == ras ? rasPc : casPc;
        } else if (ras != nullptr || cas != nullptr) {
            chosen = ras != nullptr ? ras : cas;
            chosenPc = ras != nullptr ? rasPc : casPc;
        }
        if (chosen == nullptr || chosen->ready > cycle) {
            if (chosen != nullptr)
                next = std::max(next, cycle + 1);
            break;
        }
        BurstDone done;
        bool completed = false;
        pcs[unit + chosenPc]->commit(cycle, *chosen, done, completed);
        if (completed) {
            burstDone(done);
            roomMade(unit + chosenPc, cycle);
        }
    }
    isDirty[unit] = 0;
    schedule(unit, next);
}

void HbmDevice::serve(std::uint32_t pc, std::uint64_t cycle)
{
    if (sharedBus) {
        serveChannel(pc, cycle);
        return;
    }
    PseudoChannel& channel = *pcs[pc];
    std::uint64_t next = neverCycle;
    while (true) {
        BurstDone done;
        bool completed = false;
        if (!channel.step(cycle, done, completed, next))
            break;
        if (completed) {
            burstDone(done);
            roomMade(pc, cycle);
        }
    }
    // The last step saw every request fed above, so its answer stands.
    isDirty[pc] = 0;
    schedule(pc, next);
}

void HbmDevice::schedule(std::uint32_t pc, std::uint64_t cycle)
{
    if (cycle != neverCycle && cycle < scheduled[pc]) {
        scheduled[pc] = cycle;
        calendar.emplace(cycle, pc);
    }
}

void HbmDevice::reschedule(std::uint64_t cycle)
{
    for (std::uint32_t pc : dirty) {
        if (!isDirty[pc])
            continue;
        isDirty[pc] = 0;
        schedule(pc, unitNextCycle(pc, cycle));
    }
    dirty.clear();
}

void HbmDevice::burstDone(const BurstDone& done)
{
    Transaction& t = transactions[done.transaction];
    t.doneCycle = std::max(t.doneCycle, done.doneCycle);
    --t.outstanding;
    if (t.generated == t.bursts && t.outstanding == 0)
        finish(done.transaction);
}

void HbmDevice::finish(std::uint32_t index)
{
    Transaction& t = transactions[index];
    std::uint64_t donePs = clock.ps(t.doneCycle);
    std::uint64_t bytes = t.bursts * burstBytes;
    (t.write ? bytesWritten : bytesRead) += bytes;
    ++transactionCount;
    latency.sample(static_cast<double>(donePs - t.arrivalPs) * 1e-3);
    std::uint64_t token = t.token;
    freeSlots.push_back(index);
    --inFlight;
    onComplete(token, donePs);
}

} // namespace etsim::hbm
