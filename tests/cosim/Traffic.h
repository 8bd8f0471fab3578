#pragma once
// A test initiator for the co-simulation tests: `streams` independent streams, each issuing
// its next transaction a fixed gap after the previous one completed (so the traffic depends on
// the answers), over the non-blocking execution protocol. Records every completion time.

#include "kernel/Extensions.h"
#include "kernel/PayloadPool.h"
#include "kernel/ScTime.h"
#include "kernel/Simulation.h"
#include "kernel/Units.h"

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace etsim::test {

class Traffic : public sc_core::sc_module {
public:
    struct Record {
        std::uint64_t issuePs = 0;
        std::uint64_t completePs = 0;
        std::uint64_t bytes = 0;
        tlm::tlm_response_status status = tlm::TLM_INCOMPLETE_RESPONSE;
    };

    tlm_utils::simple_initiator_socket<Traffic> socket;

    SC_HAS_PROCESS(Traffic);
    Traffic(const sc_core::sc_module_name& name,
            Simulation& simulation,
            int streams,
            int perStream,
            std::uint64_t gapPs)
        : sc_module(name)
        , socket("socket")
        , streams(streams)
        , perStream(perStream)
        , gapPs(gapPs)
        , activity(simulation.enroll(std::string(this->name())))
        , wake("wake")
        , pool("traffic_pool")
    {
        socket.register_nb_transport_bw(this, &Traffic::backward);
        SC_METHOD(issue);
        sensitive << wake;
        activity.busy();
        for (int stream = 0; stream < streams; ++stream) {
            issuedOf.push_back(0);
            // Streams start at different times so their transactions interleave.
            dueAt.push_back(static_cast<std::uint64_t>(stream) * 137000);
        }
    }

    // A run that ended early (a failed peer) leaves transactions in flight: give back our
    // reference on each, so their payloads return to the pool (declare the target after this
    // initiator so that it is destroyed, and lets go of its own references, first).
    ~Traffic() override
    {
        for (const auto& [payload, where] : streamOf)
            payload->release();
    }
    Traffic(const Traffic&) = delete;
    Traffic& operator=(const Traffic&) = delete;

    const std::vector<Record>& records() const { return done; }
    std::function<void(std::size_t)> onComplete;

private:
    void issue()
    {
        const std::uint64_t now = fromScTime(sc_core::sc_time_stamp()).ps();
        std::uint64_t next = ~std::uint64_t{0};
        for (int stream = 0; stream < streams; ++stream) {
            if (issuedOf[stream] >= perStream || busyStream.count(stream) != 0)
                continue;
            if (dueAt[stream] <= now) {
                send(stream, now);
                continue;
            }
            next = std::min(next, dueAt[stream]);
        }
        if (next != ~std::uint64_t{0})
            wake.notify(toScTime(Time::fromPs(next - now)));
    }

    void send(int stream, std::uint64_t now)
    {
        tlm::tlm_generic_payload* payload = &pool.acquire();
        EtNodeInfo info;
        info.rank = RankId{static_cast<std::uint32_t>(stream)};
        info.node = NodeId{static_cast<std::uint64_t>(issuedOf[stream])};
        info.kind = NodeKind::Send;
        info.bytes =
            64 + 1000 * static_cast<std::uint64_t>((stream * 7 + issuedOf[stream] * 3) % 11);
        info.setAttribute("name", "stream" + std::to_string(stream));
        if (EtNodeExtension* old = EtNodeExtension::find(*payload))
            old->info = info;
        else
            payload->set_extension(new EtNodeExtension(info));
        payload->set_command(tlm::TLM_WRITE_COMMAND);
        ++issuedOf[stream];
        busyStream[stream] = payload;
        streamOf[payload] = {stream, done.size()};
        done.push_back(Record{now, 0, info.bytes});
        tlm::tlm_phase phase = tlm::BEGIN_REQ;
        sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
        socket->nb_transport_fw(*payload, phase, delay);
    }

    tlm::tlm_sync_enum
    backward(tlm::tlm_generic_payload& payload, tlm::tlm_phase& phase, sc_core::sc_time& delay)
    {
        const std::uint64_t at = fromScTime(sc_core::sc_time_stamp() + delay).ps();
        const auto [stream, index] = streamOf.at(&payload);
        streamOf.erase(&payload);
        done[index].completePs = at;
        done[index].status = payload.get_response_status();
        busyStream.erase(stream);
        dueAt[stream] = at + gapPs;
        ++completed;
        payload.release();
        if (onComplete)
            onComplete(completed);
        if (completed == static_cast<std::size_t>(streams * perStream))
            activity.idle();
        else
            wake.notify(delay);
        return tlm::TLM_COMPLETED;
    }

    int streams;
    int perStream;
    std::uint64_t gapPs;
    ActivityToken activity;
    sc_core::sc_event wake;
    PayloadPool pool;
    std::vector<int> issuedOf;
    std::vector<std::uint64_t> dueAt;
    std::map<int, tlm::tlm_generic_payload*> busyStream;
    std::map<tlm::tlm_generic_payload*, std::pair<int, std::size_t>> streamOf;
    std::vector<Record> done;
    std::size_t completed = 0;
};

} // namespace etsim::test
