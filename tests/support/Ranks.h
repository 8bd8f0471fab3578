#pragma once
// A scripted initiator for fabric tests: one socket per rank that posts nodes (EtNodeInfo) at
// given times and records when each completes. Header-only: any test that links the kernel
// library can use it.

#include "kernel/Extensions.h"
#include "kernel/Ids.h"
#include "kernel/PayloadPool.h"
#include "kernel/ScTime.h"
#include "kernel/Units.h"

#include <gtest/gtest.h>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace etsim::test {

// One initiator socket per rank; posts scripted nodes at given times and records when each
// completes. Checks the protocol: END_REQ at once, BEGIN_RESP on the backward path. Releases
// its reference on each payload when the transaction completes, or at destruction for those a
// test left unfinished.
class Ranks : public sc_core::sc_module {
public:
    struct Post {
        std::uint64_t atPs;
        EtNodeInfo info;
    };

    Ranks(const sc_core::sc_module_name& name, std::uint32_t count) : sc_module(name)
    {
        for (std::uint32_t rank = 0; rank < count; ++rank) {
            sockets.push_back(std::make_unique<tlm_utils::simple_initiator_socket_tagged<Ranks>>(
                ("port" + std::to_string(rank)).c_str()));
            sockets.back()->register_nb_transport_bw(
                this, &Ranks::backward, static_cast<int>(rank));
        }
        SC_HAS_PROCESS(Ranks);
        SC_THREAD(script);
    }
    // Gives back the reference acquire() gave us on each payload still held; an entry set to
    // null has been given back already.
    ~Ranks() override
    {
        for (tlm::tlm_generic_payload* payload : payloads)
            if (payload != nullptr)
                payload->release();
    }
    Ranks(const Ranks&) = delete;
    Ranks& operator=(const Ranks&) = delete;

    /// Payloads the ranks still hold (transactions not completed).
    std::size_t holding() const { return pool.inUse(); }

    std::vector<std::unique_ptr<tlm_utils::simple_initiator_socket_tagged<Ranks>>> sockets;
    std::vector<Post> posts;
    std::vector<std::uint64_t> donePs;
    std::vector<tlm::tlm_response_status> status;
    std::vector<tlm::tlm_sync_enum> accepted;
    bool blocking = false;

private:
    void script()
    {
        donePs.assign(posts.size(), 0);
        status.assign(posts.size(), tlm::TLM_INCOMPLETE_RESPONSE);
        for (std::size_t index = 0; index < posts.size(); ++index) {
            sc_core::sc_time at = toScTime(Time::fromPs(posts[index].atPs));
            if (at > sc_core::sc_time_stamp())
                sc_core::wait(at - sc_core::sc_time_stamp());
            tlm::tlm_generic_payload& payload = pool.acquire();
            payload.set_command(tlm::TLM_WRITE_COMMAND);
            payload.set_extension(new EtNodeExtension(posts[index].info));
            payloads.push_back(&payload);
            std::uint32_t rank = toUnderlying(posts[index].info.rank);
            if (blocking) {
                sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
                (*sockets[rank])->b_transport(payload, delay);
                finish(index, sc_core::SC_ZERO_TIME);
                continue;
            }
            tlm::tlm_phase phase = tlm::BEGIN_REQ;
            sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
            accepted.push_back((*sockets[rank])->nb_transport_fw(payload, phase, delay));
            EXPECT_EQ(phase, tlm::END_REQ);
        }
    }

    // Records post `index` as completed `delay` from now and gives its payload back.
    void finish(std::size_t index, const sc_core::sc_time& delay)
    {
        tlm::tlm_generic_payload* payload = payloads[index];
        donePs[index] = fromScTime(sc_core::sc_time_stamp() + delay).ps();
        status[index] = payload->get_response_status();
        // Cleared first: the pool may hand the same object to a later post.
        payloads[index] = nullptr;
        payload->release();
    }

    tlm::tlm_sync_enum backward(int /*rank*/,
                                tlm::tlm_generic_payload& payload,
                                tlm::tlm_phase& phase,
                                sc_core::sc_time& delay)
    {
        EXPECT_EQ(phase, tlm::BEGIN_RESP);
        for (std::size_t index = 0; index < payloads.size(); ++index)
            if (payloads[index] == &payload) {
                finish(index, delay);
                break;
            }
        return tlm::TLM_COMPLETED;
    }

    PayloadPool pool{"ranks.pool"};
    std::vector<tlm::tlm_generic_payload*> payloads;
};

} // namespace etsim::test
