#pragma once
// A memory with one fixed bandwidth and latency that implements the execution protocol
// (docs/execution-protocol.md, nb and b transport): the stand-in for the HBM model in tests
// of initiators such as the accelerator's DMA. Transfers are served one after another: a
// transfer of B bytes arriving at t starts at max(t, end of the previous transfer), occupies
// the memory for B / bandwidth and completes `latency` later. Sizes come from the
// EtNodeExtension (its `bytes`), or the payload's data length when there is none. Every
// access is recorded for checks.

#include "kernel/Extensions.h"
#include "kernel/Units.h"

#include <systemc>
#include <tlm>
#include <tlm_utils/peq_with_get.h>
#include <tlm_utils/simple_target_socket.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace etsim::test {

class FixedMemoryTarget final : public sc_core::sc_module {
public:
    struct Access {
        std::uint64_t address = 0;
        std::uint64_t bytes = 0;
        bool write = false;
        Time start;
        Time end;
    };

    tlm_utils::simple_target_socket<FixedMemoryTarget> target;

    SC_HAS_PROCESS(FixedMemoryTarget);
    FixedMemoryTarget(sc_core::sc_module_name name, Bandwidth bandwidth, Time latency)
        : sc_module(name), target("target"), bandwidth(bandwidth), latency(latency), done("done")
    {
        target.register_nb_transport_fw(this, &FixedMemoryTarget::nbTransportFw);
        target.register_b_transport(this, &FixedMemoryTarget::bTransport);
        SC_METHOD(respond);
        sensitive << done.get_event();
        dont_initialize();
    }

    const std::vector<Access>& accesses() const { return log; }
    std::uint64_t bytesMoved() const { return moved; }

private:
    // Reserves the memory for the payload arriving at `arrival`; returns its completion time.
    Time reserve(const tlm::tlm_generic_payload& payload, Time arrival)
    {
        const EtNodeExtension* extension = EtNodeExtension::find(payload);
        std::uint64_t bytes = extension ? extension->info.bytes : payload.get_data_length();
        Access access;
        access.address = payload.get_address();
        access.bytes = bytes;
        access.write = payload.is_write();
        access.start = std::max(arrival, freeAt);
        freeAt = access.start + Size::fromBytes(bytes) / bandwidth;
        access.end = freeAt + latency;
        log.push_back(access);
        moved += bytes;
        return access.end;
    }

    tlm::tlm_sync_enum
    nbTransportFw(tlm::tlm_generic_payload& payload, tlm::tlm_phase& phase, sc_core::sc_time& delay)
    {
        if (phase != tlm::BEGIN_REQ)
            return tlm::TLM_COMPLETED; // END_RESP: accepted and ignored
        const sc_core::sc_time now = sc_core::sc_time_stamp();
        Time end = reserve(payload, Time::fromScTime(now + delay));
        if (payload.has_mm())
            payload.acquire();
        payload.set_response_status(tlm::TLM_OK_RESPONSE);
        done.notify(payload, end.toScTime() - now);
        phase = tlm::END_REQ;
        delay = sc_core::SC_ZERO_TIME;
        return tlm::TLM_UPDATED;
    }

    void bTransport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay)
    {
        const sc_core::sc_time now = sc_core::sc_time_stamp();
        delay = reserve(payload, Time::fromScTime(now + delay)).toScTime() - now;
        payload.set_response_status(tlm::TLM_OK_RESPONSE);
    }

    void respond()
    {
        while (tlm::tlm_generic_payload* payload = done.get_next_transaction()) {
            tlm::tlm_phase phase = tlm::BEGIN_RESP;
            sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
            target->nb_transport_bw(*payload, phase, delay);
            if (payload->has_mm())
                payload->release();
        }
    }

    Bandwidth bandwidth;
    Time latency;
    Time freeAt;
    tlm_utils::peq_with_get<tlm::tlm_generic_payload> done;
    std::vector<Access> log;
    std::uint64_t moved = 0;
};

} // namespace etsim::test
