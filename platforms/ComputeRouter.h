#pragma once
// Splits an accelerator's compute transactions between two engines: GEMMs (nodes with a GEMM
// shape) go to `remote` (a co-simulation proxy for an RTL or other external engine), every
// other operator to `local` (the analytical ComputeEngine). Both sides speak the execution
// protocol (docs/execution-protocol.md); the router passes phases through unchanged and
// remembers which side each transaction went to until its response is complete.
//
// A GEMM that is one slice of a streamed node (ComputeSliceExtension) gets the node
// attributes etsim.slice and etsim.slices, so the peer charges that slice's share.

#include "kernel/FlatMap.h"
#include "kernel/Stats.h"

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

namespace etsim::platform {

class ComputeRouter final : public sc_core::sc_module {
public:
    /// Message type of the router's SC_REPORT_ERRORs.
    static constexpr const char* reportType = "etsim/platform/ComputeRouter";

    tlm_utils::simple_target_socket<ComputeRouter> target;
    tlm_utils::simple_initiator_socket<ComputeRouter> local;
    tlm_utils::simple_initiator_socket<ComputeRouter> remote;

    /// Counts `remote_gemms` and `local_nodes` in `stats`.
    ComputeRouter(const sc_core::sc_module_name& name, StatGroup& stats);
    ComputeRouter(const ComputeRouter&) = delete;
    ComputeRouter& operator=(const ComputeRouter&) = delete;

    /// Transactions sent to either side and not yet answered.
    std::size_t inFlight() const { return routes.size(); }

private:
    using Socket = tlm_utils::simple_initiator_socket<ComputeRouter>;

    Socket& choose(tlm::tlm_generic_payload& payload);
    tlm::tlm_sync_enum
    forward(tlm::tlm_generic_payload& payload, tlm::tlm_phase& phase, sc_core::sc_time& delay);
    void blocking(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);
    tlm::tlm_sync_enum
    backward(tlm::tlm_generic_payload& payload, tlm::tlm_phase& phase, sc_core::sc_time& delay);

    PayloadMap<Socket*> routes; // the side each payload in flight took
    Counter& remoteGemms;
    Counter& localNodes;
};

} // namespace etsim::platform
