#pragma once
// Several initiators in front of one target socket that accepts a single binding (the
// accelerator's `target` serves both the driver's compute and memory sockets). Forwards
// every call unchanged and routes the backward path to the initiator that sent the payload.
//
// The base protocol's request exclusion then holds only if the target ends each request at
// once (TLM_UPDATED with END_REQ, as the accelerator does): the fan-in does not queue
// requests, so it is only placed in front of such targets.

#include "kernel/FlatMap.h"

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/simple_initiator_socket.h>

namespace etsim::platform {

class FanIn final : public sc_core::sc_module {
public:
    /// Initiators bind here, any number.
    tlm_utils::multi_passthrough_target_socket<FanIn> in;
    /// To the one target.
    tlm_utils::simple_initiator_socket<FanIn> out;

    explicit FanIn(const sc_core::sc_module_name& name);
    FanIn(const FanIn&) = delete;
    FanIn& operator=(const FanIn&) = delete;

private:
    tlm::tlm_sync_enum forward(int id,
                               tlm::tlm_generic_payload& payload,
                               tlm::tlm_phase& phase,
                               sc_core::sc_time& delay);
    tlm::tlm_sync_enum
    backward(tlm::tlm_generic_payload& payload, tlm::tlm_phase& phase, sc_core::sc_time& delay);
    void blocking(int id, tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);

    PayloadMap<int> owner; // the initiator of each payload in flight
};

} // namespace etsim::platform
