#include "models/hbm/HbmDevice.h"

#include <algorithm>
#include <string>

namespace etsim::hbm {

HbmDevice::HbmDevice(const HbmConfig& config, StatGroup& stats, Completion onComplete)
    : cfg(config)
    , map(cfg)
    , clock(cfg.organisation.clock)
    , scheduler(makeScheduler(cfg.controller.scheduler))
    , pagePolicy(makePagePolicy(cfg.controller.pagePolicy))
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
    pcs.reserve(org.pcCount());
    for (std::uint32_t channel = 0; channel < org.stacks * org.channelsPerStack; ++channel) {
        StatGroup& channelStats = stats.addGroup("channel" + std::to_string(channel));
        for (std::uint32_t pc = 0; pc < org.pcsPerChannel; ++pc)
            pcs.push_back(
                std::make_unique<PseudoChannel>(cfg,
                                                *scheduler,
                                                *pagePolicy,
                                                clock,
                                                channelStats.addGroup("pc" + std::to_string(pc))));
    }
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
            [observer, i](std::uint64_t cycle, Command command, std::uint32_t bank) {
                observer(i, cycle, command, bank);
            });
    }
}

void HbmDevice::submit(std::uint64_t token,
                       std::uint64_t address,
                       std::uint64_t bytes,
                       bool write,
                       std::uint64_t nowPs)
{
    std::uint32_t index;
    if (!freeSlots.empty()) {
        index = freeSlots.back();
        freeSlots.pop_back();
    } else {
        index = static_cast<std::uint32_t>(transactions.size());
        transactions.emplace_back();
    }
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
        std::uint64_t cycle = std::min(arrivalCycle, wakeCycle);
        if (cycle == neverCycle || cycle > limit)
            break;
        if (arrivalCycle <= wakeCycle) {
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
    feed(index, cycle);
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
        pcs[pc]->enqueue(BurstRequest{index, map.bankIndex(where), where.row, t.write}, cycle);
        ++t.generated;
        ++t.outstanding;
        if (!isDirty[pc]) {
            isDirty[pc] = 1;
            dirty.push_back(pc);
        }
    }
}

void HbmDevice::serve(std::uint32_t pc, std::uint64_t cycle)
{
    PseudoChannel& channel = *pcs[pc];
    std::uint64_t next = neverCycle;
    while (true) {
        BurstDone done;
        bool completed = false;
        if (!channel.step(cycle, done, completed, next))
            break;
        if (completed) {
            burstDone(done);
            // Room in this PC's queue: let transactions blocked on it go on, in order.
            for (bool write : {false, true}) {
                std::deque<std::uint32_t>& blocked = waiters[2 * pc + write];
                while (!blocked.empty() && channel.canAccept(write)) {
                    std::uint32_t index = blocked.front();
                    blocked.pop_front();
                    feed(index, cycle);
                }
            }
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
        schedule(pc, pcs[pc]->nextCycle(cycle));
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
