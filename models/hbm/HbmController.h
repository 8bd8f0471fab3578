#pragma once
// The HBM subsystem of one device as a TLM-2.0 target (docs/execution-protocol.md): the
// 4-phase non-blocking path with a payload event queue, plus b_transport. A transaction's size
// is the EtNodeExtension's `bytes` (the data length when there is no extension), its address
// the payload's address, a write is TLM_WRITE_COMMAND.
//
// Two fidelities behind the one socket (HbmConfig::fidelity):
//   analytic  completion = max(arrival, device free) + bytes / (peak × efficiency) + latency,
//             one FIFO server per device; the default for whole-workload runs.
//   detailed  the cycle-approximate HbmDevice: bursts over pseudo-channels by the address
//             map, completing with the last burst's data; for memory studies.
//
// Latency, everywhere in this model: from the transaction's arrival at the controller to its
// last data beat (docs/hbm.md).

#include "kernel/FlatMap.h"
#include "kernel/SlotTable.h"
#include "kernel/Stats.h"
#include "kernel/WallProfile.h"
#include "models/hbm/AnalyticHbm.h"
#include "models/hbm/HbmConfig.h"
#include "models/hbm/HbmDevice.h"

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/peq_with_cb_and_phase.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace etsim::hbm {

class HbmController : public sc_core::sc_module {
public:
    SC_HAS_PROCESS(HbmController);

    /// Initiators (DMA engines, rank drivers) bind here; any number may.
    tlm_utils::multi_passthrough_target_socket<HbmController> socket;

    /// `config` must be validated; the model's stats go into `stats`.
    HbmController(const sc_core::sc_module_name& name, const HbmConfig& config, StatGroup& stats);
    HbmController(const HbmController&) = delete;
    HbmController& operator=(const HbmController&) = delete;

    /// No transaction in flight.
    bool idle() const { return pending.size() == 0; }
    const HbmConfig& config() const { return cfg; }
    /// The detailed model; nullptr with the analytic fidelity.
    HbmDevice* device() { return detailed.get(); }
    /// The analytic model; nullptr with the detailed fidelity.
    AnalyticHbm* analyticModel() { return analytic.get(); }

private:
    // The run's wall-time profile (--profile); nullptr when not profiled.
    WallProfile* wall = nullptr;
    struct Pending {
        tlm::tlm_generic_payload* payload = nullptr;
        int socketId = 0;
        sc_core::sc_event* blocking = nullptr; // b_transport waits on it
        std::uint64_t donePs = 0;
    };

    tlm::tlm_sync_enum nbTransportFw(int id,
                                     tlm::tlm_generic_payload& payload,
                                     tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);
    void bTransport(int id, tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);
    void onRequest(tlm::tlm_generic_payload& payload, const tlm::tlm_phase& phase);
    void wake();
    void kick();
    std::uint32_t allocate(tlm::tlm_generic_payload& payload, int id, sc_core::sc_event* event);
    void respond(std::uint32_t slot);
    static std::uint64_t bytesOf(const tlm::tlm_generic_payload& payload);

    HbmConfig cfg;
    std::unique_ptr<HbmDevice> detailed;
    std::unique_ptr<AnalyticHbm> analytic;
    tlm_utils::peq_with_cb_and_phase<HbmController> peq;
    sc_core::sc_event wakeEvent;
    PayloadMap<int> socketOf; // requests in the PEQ: the socket each came in on
    // Transactions in flight by slot (kernel/SlotTable.h); the slot is the device's token.
    SlotTable<Pending> pending{"hbm controller"};
    std::vector<std::uint32_t> finished; // slots completed during the last device run
};

} // namespace etsim::hbm
