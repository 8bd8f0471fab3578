#include "models/hbm/HbmController.h"

#include "kernel/Extensions.h"
#include "kernel/ScTime.h"
#include "kernel/WallProfile.h"

namespace etsim::hbm {

namespace {

sc_core::sc_time fromPs(std::uint64_t ps)
{
    return toScTime(Time::fromPs(ps));
}

} // namespace

HbmController::HbmController(const sc_core::sc_module_name& name,
                             const HbmConfig& config,
                             StatGroup& stats)
    : sc_module(name), socket("socket"), cfg(config), peq(this, &HbmController::onRequest)
{
    wall = stats.wallProfile();
    validate(cfg);
    socket.register_nb_transport_fw(this, &HbmController::nbTransportFw);
    socket.register_b_transport(this, &HbmController::bTransport);
    if (cfg.fidelity == Fidelity::Detailed) {
        detailed = std::make_unique<HbmDevice>(
            cfg, stats, [this](std::uint64_t token, std::uint64_t donePs) {
                pending.at(token).donePs = donePs;
                finished.push_back(static_cast<std::uint32_t>(token));
            });
        SC_METHOD(wake);
        sensitive << wakeEvent;
        dont_initialize();
    } else {
        analytic = std::make_unique<AnalyticHbm>(cfg, stats);
    }
}

std::uint64_t HbmController::bytesOf(const tlm::tlm_generic_payload& payload)
{
    if (const EtNodeExtension* extension = EtNodeExtension::find(payload))
        return extension->info.bytes;
    return payload.get_data_length();
}

std::uint32_t
HbmController::allocate(tlm::tlm_generic_payload& payload, int id, sc_core::sc_event* event)
{
    // Slot ids fit the device's 32-bit tokens: transactions in flight are bounded by the
    // initiators' windows.
    return static_cast<std::uint32_t>(pending.add(Pending{&payload, id, event, 0}));
}

tlm::tlm_sync_enum HbmController::nbTransportFw(int id,
                                                tlm::tlm_generic_payload& payload,
                                                tlm::tlm_phase& phase,
                                                sc_core::sc_time& delay)
{
    WallScope wallScope(wall, WallPart::Hbm);
    if (phase == tlm::BEGIN_REQ) {
        socketOf.set(&payload, id);
        peq.notify(payload, phase, delay);
        phase = tlm::END_REQ;
        return tlm::TLM_UPDATED;
    }
    if (phase == tlm::END_RESP)
        return tlm::TLM_COMPLETED;
    SC_REPORT_ERROR(name(), "nb_transport_fw: unexpected phase (only BEGIN_REQ and END_RESP)");
    return tlm::TLM_COMPLETED;
}

void HbmController::onRequest(tlm::tlm_generic_payload& payload, const tlm::tlm_phase& phase)
{
    const int id = *socketOf.find(&payload);
    socketOf.erase(&payload);
    std::uint64_t now = toPicoseconds(sc_core::sc_time_stamp());
    bool write = payload.get_command() == tlm::TLM_WRITE_COMMAND;
    std::uint32_t slot = allocate(payload, id, nullptr);
    if (!detailed) {
        pending.at(slot).donePs = analytic->complete(now, bytesOf(payload), write);
        respond(slot);
        return;
    }
    detailed->submit(slot, payload.get_address(), bytesOf(payload), write, now);
    kick();
}

void HbmController::respond(std::uint32_t slot)
{
    Pending done = pending.at(slot);
    pending.remove(slot);
    std::uint64_t now = toPicoseconds(sc_core::sc_time_stamp());
    done.payload->set_response_status(tlm::TLM_OK_RESPONSE);
    if (done.blocking) {
        done.blocking->notify(fromPs(done.donePs - now));
        return;
    }
    tlm::tlm_phase phase = tlm::BEGIN_RESP;
    sc_core::sc_time delay = fromPs(done.donePs - now);
    socket[done.socketId]->nb_transport_bw(*done.payload, phase, delay);
}

void HbmController::kick()
{
    std::uint64_t next = detailed->nextEventPs();
    wakeEvent.cancel();
    if (next == neverPs)
        return;
    std::uint64_t now = toPicoseconds(sc_core::sc_time_stamp());
    wakeEvent.notify(fromPs(next > now ? next - now : 0));
}

void HbmController::wake()
{
    WallScope wallScope(wall, WallPart::Hbm);
    detailed->runUntil(toPicoseconds(sc_core::sc_time_stamp()));
    // Responses go out after the run: an initiator may send its next request from inside
    // nb_transport_bw, and the device must not be entered while it runs.
    std::vector<std::uint32_t> slots;
    slots.swap(finished);
    for (std::uint32_t slot : slots)
        respond(slot);
    kick();
}

void HbmController::bTransport(int id, tlm::tlm_generic_payload& payload, sc_core::sc_time& delay)
{
    std::uint64_t now = toPicoseconds(sc_core::sc_time_stamp());
    std::uint64_t arrival = now + toPicoseconds(delay);
    if (!detailed) {
        // Timing is fixed at arrival: return at once with the completion as the delay.
        std::uint64_t done = analytic->complete(
            arrival, bytesOf(payload), payload.get_command() == tlm::TLM_WRITE_COMMAND);
        delay = fromPs(done - now);
        payload.set_response_status(tlm::TLM_OK_RESPONSE);
        return;
    }
    if (delay != sc_core::SC_ZERO_TIME)
        sc_core::wait(delay);
    sc_core::sc_event done;
    std::uint32_t slot = allocate(payload, id, &done);
    detailed->submit(slot,
                     payload.get_address(),
                     bytesOf(payload),
                     payload.get_command() == tlm::TLM_WRITE_COMMAND,
                     toPicoseconds(sc_core::sc_time_stamp()));
    kick();
    sc_core::wait(done);
    delay = sc_core::SC_ZERO_TIME;
}

} // namespace etsim::hbm
