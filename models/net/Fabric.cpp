#include "models/net/Fabric.h"

#include "kernel/Error.h"
#include "kernel/Extensions.h"
#include "kernel/FreeSlots.h"
#include "kernel/ScTime.h"
#include "kernel/Units.h"
#include "kernel/WallProfile.h"

#include <algorithm>
#include <string>

namespace etsim::net {

namespace {

bool later(const std::uint64_t aTime,
           const std::uint64_t aSequence,
           const std::uint64_t bTime,
           const std::uint64_t bSequence)
{
    return aTime != bTime ? aTime > bTime : aSequence > bSequence;
}

} // namespace

Fabric::Fabric(const sc_core::sc_module_name& name,
               const NetConfig& config,
               std::uint32_t ranks,
               StatGroup& parentStats,
               bool linkStats)
    : sc_module(name)
    , socket("socket")
    , network("network")
    , comm(config, ranks)
    , group(parentStats.addGroup(basename()))
    , collectiveTime(group.addDistribution("collective_time",
                                           "us",
                                           "time from a collective's first post to its last "
                                           "member's completion",
                                           {1, 10, 100, 1000, 10000, 100000}))
    , busBandwidth(group.addDistribution("bus_bandwidth",
                                         "GB/s",
                                         "nccl-tests bus bandwidth of each finished collective",
                                         {10, 50, 100, 200, 400, 800}))
    , lastAlgorithmBandwidth(
          group.addScalar("last_algbw", "GB/s", "algorithm bandwidth of the last collective"))
    , lastBusBandwidth(
          group.addScalar("last_busbw", "GB/s", "bus bandwidth of the last collective"))
    , messagePool(std::string(basename()) + ".network.pool")
{
    wall = parentStats.wallProfile();
    socket.register_nb_transport_fw(this, &Fabric::nbTransportFw);
    socket.register_b_transport(this, &Fabric::bTransport);
    comm.setCompletion(
        [this](std::uint64_t token) { completed.push_back(static_cast<std::uint32_t>(token)); });
    SC_HAS_PROCESS(Fabric);
    SC_METHOD(wake);
    sensitive << wakeup;
    dont_initialize();

    const CommEngine& engine = comm;
    group.addFormula("collectives",
                     "",
                     "collectives finished since the start of the run",
                     [&engine](const StatWindow&) {
                         return static_cast<double>(engine.collectivesCompleted());
                     });
    group.addFormula("p2p_transfers",
                     "",
                     "send/recv messages delivered since the start",
                     [&engine](const StatWindow&) {
                         return static_cast<double>(engine.pointToPointCompleted());
                     });
    group.addFormula(
        "messages", "", "network messages sent since the start", [&engine](const StatWindow&) {
            return static_cast<double>(engine.network().messagesSent());
        });
    group.addFormula("rate_updates",
                     "",
                     "flow rate re-evaluations (flow fidelity)",
                     [&engine](const StatWindow&) {
                         return static_cast<double>(engine.network().rateUpdates());
                     });
    if (linkStats) {
        StatGroup& links = group.addGroup("links");
        const NetworkCore& core = engine.network();
        for (std::size_t index = 0; index < core.linkCount(); ++index) {
            const Link& link = core.link(index);
            std::string label = index < engine.topology().links().size()
                                    ? "link" + std::to_string(index)
                                    : "nic" + std::to_string(index);
            std::string path =
                "device " + std::to_string(link.from) + " -> " + std::to_string(link.to);
            StatGroup& one = links.addGroup(label);
            one.addFormula("bytes",
                           "B",
                           "wire bytes sent on " + path + " since the start",
                           [&core, index](const StatWindow&) { return core.linkBytes(index); });
            one.addFormula("utilisation",
                           "",
                           "busy time / window on " + path,
                           [&core, index](const StatWindow& window) {
                               double span = static_cast<double>(window.endPs - window.startPs);
                               return span > 0.0
                                          ? static_cast<double>(core.linkBusyPs(index)) / span
                                          : 0.0;
                           });
        }
    }
}

void Fabric::useRemoteNetwork()
{
    network.register_nb_transport_bw(this, &Fabric::networkBw);
    comm.setRemoteNetwork(this);
}

void Fabric::inject(std::uint32_t src,
                    std::uint32_t dst,
                    std::uint64_t bytes,
                    std::uint64_t message)
{
    EtNodeInfo info;
    info.rank = RankId{src};
    info.kind = NodeKind::Send;
    info.peer = RankId{dst};
    info.bytes = bytes;
    info.node = NodeId{message};
    tlm::tlm_generic_payload& payload = messagePool.acquire();
    payload.set_command(tlm::TLM_WRITE_COMMAND);
    payload.set_extension(new EtNodeExtension(std::move(info)));
    tlm::tlm_phase phase = tlm::BEGIN_REQ;
    // The engine's clock may trail the kernel's by nothing: messages start at its now().
    const std::uint64_t now = nowPs();
    sc_core::sc_time delay = toScTime(Time::fromPs(comm.nowPs() > now ? comm.nowPs() - now : 0));
    const tlm::tlm_sync_enum status = network->nb_transport_fw(payload, phase, delay);
    if (status == tlm::TLM_COMPLETED)
        SC_REPORT_ERROR(name(),
                        "the remote network completed a message at once; it must "
                        "answer with BEGIN_RESP when the message arrives");
}

tlm::tlm_sync_enum
Fabric::networkBw(tlm::tlm_generic_payload& payload, tlm::tlm_phase& phase, sc_core::sc_time& delay)
{
    WallScope wallScope(wall, WallPart::Fabric);
    if (phase != tlm::BEGIN_RESP)
        return tlm::TLM_ACCEPTED;
    const EtNodeExtension& extension = EtNodeExtension::get(payload);
    const std::uint64_t message = toUnderlying(extension.info.node);
    if (!payload.is_response_ok())
        SC_REPORT_ERROR(name(),
                        ("the remote network failed message " + std::to_string(message) + ": " +
                         payload.get_response_string())
                            .c_str());
    payload.release();
    try {
        comm.runUntil(nowPs());
        comm.remoteArrived(message);
    } catch (const Error& error) {
        SC_REPORT_ERROR(name(), error.what());
    }
    wakeup.notify(sc_core::SC_ZERO_TIME);
    delay = sc_core::SC_ZERO_TIME;
    return tlm::TLM_COMPLETED;
}

void Fabric::attachTimeline(Timeline& timeline, std::uint32_t processId)
{
    timeline.processName(processId, name(), processId);
    comm.attachTimeline(timeline, processId);
}

void Fabric::end_of_simulation()
{
    comm.flushTimeline();
}

std::uint64_t Fabric::nowPs() const
{
    return fromScTime(sc_core::sc_time_stamp()).ps();
}

std::uint32_t
Fabric::admit(int port, tlm::tlm_generic_payload& payload, sc_core::sc_event* blocking)
{
    const std::uint32_t token = takeSlot(freeTokens, inFlight);
    inFlight[token] = InFlight{&payload, port, blocking, false};
    return token;
}

void Fabric::fail(std::uint32_t token, const std::string& problem)
{
    inFlight[token].failed = true;
    completed.push_back(token);
    wakeup.notify(sc_core::SC_ZERO_TIME);
    SC_REPORT_ERROR(name(), problem.c_str());
}

void Fabric::start(std::uint32_t token)
{
    tlm::tlm_generic_payload& payload = *inFlight[token].payload;
    const EtNodeExtension* extension = EtNodeExtension::find(payload);
    if (!extension) {
        fail(token,
             std::string(name()) + ": a transaction without an EtNodeExtension; "
                                   "initiators must attach one (kernel/Extensions.h)");
        return;
    }
    try {
        comm.runUntil(nowPs());
        comm.post(extension->info, token);
    } catch (const Error& error) {
        fail(token,
             std::string(name()) + " at " + sc_core::sc_time_stamp().to_string() + ": " +
                 error.what());
        return;
    }
    reschedule();
}

tlm::tlm_sync_enum Fabric::nbTransportFw(int port,
                                         tlm::tlm_generic_payload& payload,
                                         tlm::tlm_phase& phase,
                                         sc_core::sc_time& delay)
{
    WallScope wallScope(wall, WallPart::Fabric);
    if (phase == tlm::END_RESP)
        return tlm::TLM_COMPLETED;
    if (phase != tlm::BEGIN_REQ) {
        SC_REPORT_ERROR(name(), "nb_transport_fw: only BEGIN_REQ and END_RESP are accepted");
        return tlm::TLM_COMPLETED;
    }
    std::uint32_t token = admit(port, payload, nullptr);
    if (delay == sc_core::SC_ZERO_TIME) {
        start(token);
    } else {
        // The request is meant to arrive later: keep it until then.
        delayed.push_back(Delayed{nowPs() + fromScTime(delay).ps(), delayedSequence++, token});
        std::push_heap(delayed.begin(), delayed.end(), [](const Delayed& a, const Delayed& b) {
            return later(a.timePs, a.sequence, b.timePs, b.sequence);
        });
        reschedule();
    }
    phase = tlm::END_REQ;
    delay = sc_core::SC_ZERO_TIME;
    return tlm::TLM_UPDATED;
}

void Fabric::bTransport(int port, tlm::tlm_generic_payload& payload, sc_core::sc_time& delay)
{
    if (delay != sc_core::SC_ZERO_TIME) {
        sc_core::wait(delay);
        delay = sc_core::SC_ZERO_TIME;
    }
    sc_core::sc_event done;
    std::uint32_t token = admit(port, payload, &done);
    start(token);
    sc_core::wait(done);
}

void Fabric::record()
{
    for (const CollectiveRecord& finished : comm.records()) {
        collectiveTime.sample(static_cast<double>(finished.endPs - finished.startPs) * 1e-6);
        busBandwidth.sample(finished.busBandwidth() * 1e-9);
        lastAlgorithmBandwidth.set(finished.algorithmBandwidth() * 1e-9);
        lastBusBandwidth.set(finished.busBandwidth() * 1e-9);
        history.push_back(finished);
    }
    comm.clearRecords();
}

void Fabric::flush()
{
    std::vector<std::uint32_t> batch;
    batch.swap(completed);
    for (std::uint32_t token : batch) {
        InFlight entry = inFlight[token];
        freeTokens.push_back(token);
        entry.payload->set_response_status(entry.failed ? tlm::TLM_GENERIC_ERROR_RESPONSE
                                                        : tlm::TLM_OK_RESPONSE);
        if (entry.blocking) {
            entry.blocking->notify();
            continue;
        }
        tlm::tlm_phase phase = tlm::BEGIN_RESP;
        sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
        socket[entry.port]->nb_transport_bw(*entry.payload, phase, delay);
    }
}

void Fabric::wake()
{
    WallScope wallScope(wall, WallPart::Fabric);
    std::uint64_t now = nowPs();
    auto order = [](const Delayed& a, const Delayed& b) {
        return later(a.timePs, a.sequence, b.timePs, b.sequence);
    };
    while (!delayed.empty() && delayed.front().timePs <= now) {
        std::pop_heap(delayed.begin(), delayed.end(), order);
        std::uint32_t token = delayed.back().token;
        delayed.pop_back();
        start(token);
    }
    try {
        comm.runUntil(now);
        // Every post of this instant so far is in (reschedule woke us for them): rate them.
        comm.settle();
    } catch (const Error& error) {
        SC_REPORT_ERROR(name(), error.what());
    }
    record();
    flush();
    reschedule();
    // Every link is idle now: nothing later can merge with the intervals held so far.
    if (idle())
        comm.flushTimeline();
}

void Fabric::receive(const CrossMessage& message)
{
    comm.receive(message);
    reschedule();
}

void Fabric::runAfterEnd(std::uint64_t limitPs)
{
    if (limitPs > comm.nowPs())
        comm.runUntil(limitPs - 1);
    comm.settle();
    if (!completed.empty() || !delayed.empty())
        throw Error("fabric: a node of a local rank completed after every local rank had "
                    "finished (partitioned run)");
}

void Fabric::reschedule()
{
    if (!completed.empty()) {
        wakeup.notify(sc_core::SC_ZERO_TIME);
        return;
    }
    std::uint64_t now = nowPs();
    std::uint64_t next = UINT64_MAX;
    if (comm.hasEvents())
        next = comm.nextEventPs();
    if (!delayed.empty())
        next = std::min(next, delayed.front().timePs);
    if (next == UINT64_MAX)
        return;
    wakeup.notify(toScTime(Time::fromPs(next > now ? next - now : 0)));
}

} // namespace etsim::net
