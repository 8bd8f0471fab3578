#include "platforms/ComputeRouter.h"

#include "kernel/Extensions.h"
#include "models/accel/ComputeSlice.h"

namespace etsim::platform {

ComputeRouter::ComputeRouter(const sc_core::sc_module_name& name, StatGroup& stats)
    : sc_module(name)
    , target("target")
    , local("local")
    , remote("remote")
    , remoteGemms(stats.addCounter("remote_gemms", "", "GEMM transactions run by the peer"))
    , localNodes(stats.addCounter("local_nodes", "", "compute transactions run by the local model"))
{
    target.register_nb_transport_fw(this, &ComputeRouter::forward);
    target.register_b_transport(this, &ComputeRouter::blocking);
    local.register_nb_transport_bw(this, &ComputeRouter::backward);
    remote.register_nb_transport_bw(this, &ComputeRouter::backward);
}

ComputeRouter::Socket& ComputeRouter::choose(tlm::tlm_generic_payload& payload)
{
    EtNodeExtension* extension = payload.get_extension<EtNodeExtension>();
    const bool gemm = extension != nullptr && extension->info.gemm &&
                      extension->info.gemm->m != 0 && extension->info.gemm->n != 0 &&
                      extension->info.gemm->k != 0 && extension->info.gemm->batch != 0;
    if (!gemm) {
        ++localNodes;
        return local;
    }
    const auto* slice = payload.get_extension<accel::ComputeSliceExtension>();
    if (slice != nullptr && slice->count > 1) {
        // The extension is this sub-transaction's own copy (Accelerator::queueCompute).
        auto& attributes = extension->info.attributes;
        attributes.push_back({"etsim.slice", static_cast<std::int64_t>(slice->index)});
        attributes.push_back({"etsim.slices", static_cast<std::int64_t>(slice->count)});
    }
    ++remoteGemms;
    return remote;
}

tlm::tlm_sync_enum ComputeRouter::forward(tlm::tlm_generic_payload& payload,
                                          tlm::tlm_phase& phase,
                                          sc_core::sc_time& delay)
{
    Socket* side = nullptr;
    if (phase == tlm::BEGIN_REQ) {
        side = &choose(payload);
        routes.set(&payload, side);
    } else {
        Socket* const* found = routes.find(&payload);
        if (found == nullptr) {
            SC_REPORT_ERROR(
                reportType,
                (std::string(name()) + ": a phase for a transaction it never routed").c_str());
            return tlm::TLM_COMPLETED;
        }
        side = *found;
    }
    const tlm::tlm_sync_enum status = (*side)->nb_transport_fw(payload, phase, delay);
    if (status == tlm::TLM_COMPLETED || phase == tlm::END_RESP)
        routes.erase(&payload);
    return status;
}

void ComputeRouter::blocking(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay)
{
    choose(payload)->b_transport(payload, delay);
}

tlm::tlm_sync_enum ComputeRouter::backward(tlm::tlm_generic_payload& payload,
                                           tlm::tlm_phase& phase,
                                           sc_core::sc_time& delay)
{
    const bool response = phase == tlm::BEGIN_RESP;
    const tlm::tlm_sync_enum status = target->nb_transport_bw(payload, phase, delay);
    if (response && status == tlm::TLM_COMPLETED)
        routes.erase(&payload);
    return status;
}

} // namespace etsim::platform
