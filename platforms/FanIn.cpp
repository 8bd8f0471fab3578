#include "platforms/FanIn.h"

namespace etsim::platform {

FanIn::FanIn(const sc_core::sc_module_name& name) : sc_core::sc_module(name), in("in"), out("out")
{
    in.register_nb_transport_fw(this, &FanIn::forward);
    in.register_b_transport(this, &FanIn::blocking);
    out.register_nb_transport_bw(this, &FanIn::backward);
}

tlm::tlm_sync_enum FanIn::forward(int id,
                                  tlm::tlm_generic_payload& payload,
                                  tlm::tlm_phase& phase,
                                  sc_core::sc_time& delay)
{
    if (phase == tlm::BEGIN_REQ)
        owner.set(&payload, id);
    tlm::tlm_sync_enum status = out->nb_transport_fw(payload, phase, delay);
    if (status == tlm::TLM_COMPLETED || phase == tlm::END_RESP)
        owner.erase(&payload);
    return status;
}

tlm::tlm_sync_enum
FanIn::backward(tlm::tlm_generic_payload& payload, tlm::tlm_phase& phase, sc_core::sc_time& delay)
{
    const int* found = owner.find(&payload);
    if (found == nullptr) {
        SC_REPORT_ERROR(
            "etsim/platform/FanIn",
            (std::string(name()) + ": a response for a payload no initiator sent").c_str());
        return tlm::TLM_COMPLETED;
    }
    const int id = *found;
    tlm::tlm_sync_enum status = in[id]->nb_transport_bw(payload, phase, delay);
    if (status == tlm::TLM_COMPLETED)
        owner.erase(&payload);
    return status;
}

void FanIn::blocking(int /*id*/, tlm::tlm_generic_payload& payload, sc_core::sc_time& delay)
{
    out->b_transport(payload, delay);
}

} // namespace etsim::platform
