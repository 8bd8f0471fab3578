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
    , waiters(cfg.organisation.pcCount())
    , scheduled(cfg.organisation.pcCount(), neverCycle)
    , isDirty(cfg.organisation.pcCount(), 0)
    , notBefore(cfg.organisation.pcCount(), 0)
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
            waiters[pc].push_back(index);
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
    while (true) {
        BurstDone done;
        bool completed = false;
        bool issued = channel.step(cycle, done, completed);
        if (completed) {
            burstDone(done);
            // Room in this PC's queue: let blocked transactions go on, each once.
            std::size_t blocked = waiters[pc].size();
            for (std::size_t i = 0;
                 i < blocked && (channel.canAccept(true) || channel.canAccept(false));
                 ++i) {
                std::uint32_t index = waiters[pc].front();
                waiters[pc].pop_front();
                feed(index, cycle);
            }
        }
        if (!issued) {
            // A step that issues nothing must not be retried in the same cycle.
            notBefore[pc] = cycle + 1;
            break;
        }
        if (channel.nextCycle(cycle) > cycle)
            break;
    }
    if (!isDirty[pc]) {
        isDirty[pc] = 1;
        dirty.push_back(pc);
    }
}

void HbmDevice::reschedule(std::uint64_t cycle)
{
    for (std::uint32_t pc : dirty) {
        isDirty[pc] = 0;
        std::uint64_t next = std::max(pcs[pc]->nextCycle(cycle), notBefore[pc]);
        if (next != neverCycle && next < scheduled[pc]) {
            scheduled[pc] = next;
            calendar.emplace(next, pc);
        }
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
