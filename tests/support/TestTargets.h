#pragma once
// Stand-in targets for testing initiators before (and without) the hardware models. They
// implement docs/execution-protocol.md: BEGIN_REQ is accepted at once with TLM_UPDATED/END_REQ,
// and the work completes later with BEGIN_RESP on the backward path. Times are exact integer
// picoseconds so tests can check finish times computed by hand.
//
//   FixedTarget  one engine class of every rank (one socket binding per initiator): a
//                transaction takes durationPs when the extension carries one, otherwise
//                latencyPs + bytes * psPerByte + flops * psPerFlop; no contention.
//   FixedMemoryTarget  the stand-in for HBM in tests of initiators such as the accelerator's DMA:
//                one fixed bandwidth and latency; transfers are served one after another (a
//                transfer of B bytes arriving at t starts at max(t, end of the previous one),
//                occupies the memory for B / bandwidth and completes `latency` later). Sizes
//                come from the extension's `bytes`, or the data length without one. Speaks
//                b_transport too, and records every access.
//   CommTarget   the communication stand-in: binding i is rank i. Sends match recvs in order
//                per (src, dst, tag); a message takes latencyPs + bytes * psPerByte. An eager
//                send (attribute "eager" = 1) starts at once, a rendezvous send when its recv
//                is posted; both complete when the message arrives (a recv posted later
//                completes when posted). A collective completes for every member at the last
//                member's arrival + collectiveLatencyPs + bytes * collectivePsPerByte: with
//                all-to-all data dependencies no member can finish before the last one joins.

#include "kernel/Extensions.h"
#include "kernel/PayloadPool.h"
#include "kernel/Units.h"

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_target_socket.h>

#include <cstdint>
#include <deque>
#include <map>
#include <queue>
#include <tuple>
#include <vector>

namespace etsim::test {

/// Base of the stand-ins: the socket, the protocol and the completion calendar.
class ProtocolTarget : public sc_core::sc_module {
public:
    tlm_utils::multi_passthrough_target_socket<ProtocolTarget> socket;

    explicit ProtocolTarget(const sc_core::sc_module_name& name);

    /// Transactions accepted so far.
    std::uint64_t accepted() const { return acceptedCount; }
    /// References held on accepted transactions not answered yet; the destructor gives them
    /// back, so a run abandoned mid-transaction (a deadlock, an error report) leaks nothing.
    std::size_t holding() const { return held.size(); }

protected:
    /// A transaction arrived (BEGIN_REQ) on binding `index` at arrivalPs (now plus the
    /// initiator's annotated delay); the target holds a reference while it has a memory manager.
    virtual void arrive(int index, tlm::tlm_generic_payload& payload, std::uint64_t arrivalPs) = 0;
    /// Sends BEGIN_RESP for `payload` at absolute time timePs and drops the reference.
    void completeAt(int index, tlm::tlm_generic_payload& payload, std::uint64_t timePs);
    static std::uint64_t nowPs();
    /// The blocking path; the base reports an error (the stand-in only speaks non-blocking).
    virtual void transport(int index, tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);

private:
    struct Due {
        std::uint64_t timePs;
        std::uint64_t order;
        int index;
        tlm::tlm_generic_payload* payload;
        bool operator>(const Due& other) const
        {
            return timePs != other.timePs ? timePs > other.timePs : order > other.order;
        }
    };
    tlm::tlm_sync_enum forward(int index,
                               tlm::tlm_generic_payload& payload,
                               tlm::tlm_phase& phase,
                               sc_core::sc_time& delay);
    void fire();

    std::priority_queue<Due, std::vector<Due>, std::greater<Due>> calendar;
    HeldPayloads held;
    std::uint64_t order = 0;
    std::uint64_t acceptedCount = 0;
    sc_core::sc_event due;
};

struct FixedTiming {
    std::uint64_t latencyPs = 0;
    std::uint64_t psPerByte = 0;
    std::uint64_t psPerFlop = 0;
};

class FixedTarget : public ProtocolTarget {
public:
    FixedTarget(const sc_core::sc_module_name& name, FixedTiming timing);
    /// What one transaction costs, ps.
    std::uint64_t cost(const EtNodeInfo& info) const;

private:
    void arrive(int index, tlm::tlm_generic_payload& payload, std::uint64_t arrivalPs) override;
    void transport(int index, tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) override;
    FixedTiming timing;
};

/// See the file comment.
class FixedMemoryTarget : public ProtocolTarget {
public:
    struct Access {
        std::uint64_t address = 0;
        std::uint64_t bytes = 0;
        bool write = false;
        Time start;
        Time end;
    };

    FixedMemoryTarget(const sc_core::sc_module_name& name, Bandwidth bandwidth, Time latency);

    const std::vector<Access>& accesses() const { return log; }
    std::uint64_t bytesMoved() const { return moved; }

private:
    /// Reserves the memory for a payload arriving at `arrival`; returns its completion time.
    Time reserve(const tlm::tlm_generic_payload& payload, Time arrival);
    void arrive(int index, tlm::tlm_generic_payload& payload, std::uint64_t arrivalPs) override;
    void transport(int index, tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) override;

    Bandwidth bandwidth;
    Time latency;
    Time freeAt;
    std::vector<Access> log;
    std::uint64_t moved = 0;
};

struct CommTiming {
    std::uint64_t latencyPs = 0;
    std::uint64_t psPerByte = 0;
    std::uint64_t collectiveLatencyPs = 0;
    std::uint64_t collectivePsPerByte = 0;
};

class CommTarget : public ProtocolTarget {
public:
    CommTarget(const sc_core::sc_module_name& name, CommTiming timing);

    /// Point-to-point messages delivered and collectives completed so far.
    std::uint64_t messages() const { return messageCount; }
    std::uint64_t collectives() const { return collectiveCount; }

private:
    struct Posted {
        int index;
        tlm::tlm_generic_payload* payload;
        std::uint64_t bytes;
        std::uint64_t node;
        std::uint64_t arrivalPs; // eager sends: when the message arrives
        bool eager;
    };
    struct Gathering {
        std::vector<std::pair<int, tlm::tlm_generic_payload*>> members;
        CollectiveType type = CollectiveType::None;
        std::uint64_t bytes = 0;
        std::uint64_t firstNode = 0;
        std::uint32_t firstRank = 0;
    };
    using Key = std::tuple<std::uint32_t, std::uint32_t, std::uint64_t>; // src, dst, tag

    void arrive(int index, tlm::tlm_generic_payload& payload, std::uint64_t arrivalPs) override;
    void send(int index, tlm::tlm_generic_payload& payload, const EtNodeInfo& info);
    void recv(int index, tlm::tlm_generic_payload& payload, const EtNodeInfo& info);
    void collective(int index, tlm::tlm_generic_payload& payload, const EtNodeInfo& info);
    void checkSizes(const Posted& send, const Posted& recv, const Key& key) const;
    std::uint64_t messagePs(std::uint64_t bytes) const
    {
        return timing.latencyPs + bytes * timing.psPerByte;
    }

    CommTiming timing;
    std::map<Key, std::deque<Posted>> sends;
    std::map<Key, std::deque<Posted>> recvs;
    std::map<std::pair<std::int64_t, std::uint64_t>, Gathering> gatherings;
    std::uint64_t messageCount = 0;
    std::uint64_t collectiveCount = 0;
};

} // namespace etsim::test
