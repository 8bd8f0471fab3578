#include "platforms/astra/AstraNodes.h"

#include "et_driver/NodeLowering.h"

#include <cmath>
#include <string>
#include <variant>

namespace etsim::platforms::astra {

std::uint64_t rooflineNs(std::uint64_t flops,
                         std::uint64_t bytes,
                         double peakFlopsPerSecond,
                         double localBytesPerSecond)
{
    if (flops == 0 || bytes == 0)
        return 0;
    // The same operations in the same order as ASTRA-sim, so the truncation agrees.
    const double intensity = static_cast<double>(flops) / static_cast<double>(bytes);
    const double rate = std::min(localBytesPerSecond * intensity, peakFlopsPerSecond);
    if (!(rate > 0.0))
        return 0;
    const double seconds = static_cast<double>(flops) / rate;
    return static_cast<std::uint64_t>(seconds * 1e9);
}

// ---------------------------------------------------------------------------------------------

AnalyticTarget::AnalyticTarget(const sc_core::sc_module_name& name)
    : sc_core::sc_module(name), target("target")
{
    target.register_nb_transport_fw(this, &AnalyticTarget::forward);
    target.register_b_transport(this, &AnalyticTarget::blocking);
    psPerStep = static_cast<std::uint64_t>(
        std::llround(sc_core::sc_get_time_resolution().to_seconds() * 1e12));
    if (psPerStep == 0)
        psPerStep = 1;
    SC_HAS_PROCESS(AnalyticTarget);
    SC_METHOD(fire);
    sensitive << due;
    dont_initialize();
}

std::uint64_t AnalyticTarget::nowPs() const
{
    return sc_core::sc_time_stamp().value() * psPerStep;
}

sc_core::sc_time AnalyticTarget::after(std::uint64_t ps) const
{
    return sc_core::sc_time::from_value(ps / psPerStep);
}

void AnalyticTarget::fail(tlm::tlm_generic_payload& payload, const std::string& problem) const
{
    payload.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    std::string where = name();
    if (const auto* extension = payload.get_extension<EtNodeExtension>()) {
        const EtNodeInfo& info = extension->info;
        where += ": " + toString(info.rank) + " node " + std::to_string(toUnderlying(info.node));
        if (const NodeAttribute::Value* label = info.findAttribute(et::nameAttribute))
            if (const auto* text = std::get_if<std::string>(label))
                where += " (\"" + *text + "\")";
    }
    const std::string text = where + ": " + problem;
    SC_REPORT_ERROR(reportType, text.c_str());
}

tlm::tlm_sync_enum AnalyticTarget::forward(tlm::tlm_generic_payload& payload,
                                           tlm::tlm_phase& phase,
                                           sc_core::sc_time& /*delay*/)
{
    if (phase == tlm::END_RESP)
        return tlm::TLM_COMPLETED;
    if (phase != tlm::BEGIN_REQ)
        return tlm::TLM_ACCEPTED;
    payload.acquire();
    ++pending;
    std::optional<std::uint64_t> donePs = accept(payload);
    if (donePs) {
        calendar.push(Due{*donePs, order++, &payload});
        const std::uint64_t now = nowPs();
        due.notify(after(*donePs > now ? *donePs - now : 0));
    }
    phase = tlm::END_REQ;
    return tlm::TLM_UPDATED;
}

void AnalyticTarget::blocking(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay)
{
    payload.set_response_status(tlm::TLM_OK_RESPONSE);
    delay += after(blockingPs(payload));
}

void AnalyticTarget::respond(tlm::tlm_generic_payload& payload)
{
    if (payload.get_response_status() == tlm::TLM_INCOMPLETE_RESPONSE)
        payload.set_response_status(tlm::TLM_OK_RESPONSE);
    tlm::tlm_phase phase = tlm::BEGIN_RESP;
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    --pending;
    target->nb_transport_bw(payload, phase, delay);
    payload.release();
}

void AnalyticTarget::fire()
{
    const std::uint64_t now = nowPs();
    while (!calendar.empty() && calendar.top().timePs <= now) {
        Due next = calendar.top();
        calendar.pop();
        respond(*next.payload);
    }
    if (!calendar.empty())
        due.notify(after(calendar.top().timePs - now));
}

// ---------------------------------------------------------------------------------------------

AstraCompute::AstraCompute(const sc_core::sc_module_name& name,
                           const platform::AstraNodeTiming& timing,
                           StatGroup& stats)
    : AnalyticTarget(name)
    , memory("memory")
    , timing(timing)
    , group(stats.addGroup("compute"))
    , flops(group.addScalar("flops", "FLOP", "operations of compute nodes"))
    , busySeconds(
          group.addScalar("tensor_busy", "s", "time compute nodes ran (roofline or recorded)"))
{
    memory.register_nb_transport_bw(this, &AstraCompute::backward);
}

std::uint64_t AstraCompute::computePs(const EtNodeInfo& info)
{
    std::uint64_t ps = info.durationPs;
    if (ps == 0 && timing.roofline)
        ps = 1000 * rooflineNs(info.flops,
                               info.bytes,
                               timing.peak.flopsPerSecond(),
                               timing.localMemory.bytesPerSecond());
    flops += static_cast<double>(info.flops);
    busySeconds += static_cast<double>(ps) * 1e-12;
    return ps;
}

std::optional<std::uint64_t> AstraCompute::accept(tlm::tlm_generic_payload& payload)
{
    const EtNodeInfo& info = EtNodeExtension::get(payload).info;
    if (info.kind == NodeKind::MemLoad || info.kind == NodeKind::MemStore) {
        tlm::tlm_phase phase = tlm::BEGIN_REQ;
        sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
        // The memory accepts at once (AnalyticTarget), so no END_REQ is awaited.
        memory->nb_transport_fw(payload, phase, delay);
        return std::nullopt;
    }
    if (info.kind != NodeKind::Compute) {
        fail(payload,
             std::string("a ") + toString(info.kind) +
                 " node reached the compute model, which runs compute and memory nodes only");
        return nowPs();
    }
    return nowPs() + computePs(info);
}

std::uint64_t AstraCompute::blockingPs(tlm::tlm_generic_payload& payload)
{
    const EtNodeInfo& info = EtNodeExtension::get(payload).info;
    if (info.kind == NodeKind::MemLoad || info.kind == NodeKind::MemStore) {
        sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
        memory->b_transport(payload, delay);
        return delay.value() * static_cast<std::uint64_t>(std::llround(
                                   sc_core::sc_get_time_resolution().to_seconds() * 1e12));
    }
    return computePs(info);
}

tlm::tlm_sync_enum AstraCompute::backward(tlm::tlm_generic_payload& payload,
                                          tlm::tlm_phase& phase,
                                          sc_core::sc_time& /*delay*/)
{
    if (phase == tlm::BEGIN_RESP)
        respond(payload);
    return tlm::TLM_COMPLETED;
}

// ---------------------------------------------------------------------------------------------

AstraMemory::AstraMemory(const sc_core::sc_module_name& name,
                         RankId rank,
                         std::shared_ptr<hbm::RemoteMemory> remote)
    : AnalyticTarget(name), rank(rank), remote(std::move(remote))
{
}

std::optional<std::uint64_t> AstraMemory::accept(tlm::tlm_generic_payload& payload)
{
    const EtNodeInfo& info = EtNodeExtension::get(payload).info;
    if (info.durationPs != 0)
        return nowPs() + info.durationPs;
    if (!remote) {
        fail(payload,
             std::string("a ") + (info.kind == NodeKind::MemStore ? "MEM_STORE" : "MEM_LOAD") +
                 "_NODE needs ASTRA-sim's remote memory, and none is configured (ASTRA-sim "
                 "aborts here with \"Remote memory access is not supported\"); give "
                 "--astra-memory FILE with memory-type PER_NPU_MEMORY_EXPANSION, "
                 "PER_NODE_MEMORY_EXPANSION or MEMORY_POOL");
        return nowPs();
    }
    return remote->complete(rank, nowPs(), info.bytes);
}

std::uint64_t AstraMemory::blockingPs(tlm::tlm_generic_payload& payload)
{
    const std::uint64_t now = nowPs();
    const std::optional<std::uint64_t> done = accept(payload);
    return done && *done > now ? *done - now : 0;
}

} // namespace etsim::platforms::astra
