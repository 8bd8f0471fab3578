#pragma once
// The per-rank models of ASTRA-sim's compatibility profile: compute and memory nodes timed as
// that simulator's analytical backends time them (shared/spec/astra-sim-semantics.md
// section 4), in place of the accelerator and HBM models.
//
//   AstraCompute  the accelerator's place: a compute node takes its recorded duration (the
//                 driver's replay mode sets it) or its roofline time; a memory node is passed
//                 on to `memory` unchanged, so the rank's memory component times it.
//   AstraMemory   the memory's place: a memory node takes the remote memory's time (latency +
//                 floor(bytes / B per ns), FIFO per server); without a remote memory a memory
//                 node is an error, as with ASTRA-sim's NO_MEMORY_EXPANSION.
//
// Both follow docs/execution-protocol.md: BEGIN_REQ is accepted at once (TLM_UPDATED, END_REQ)
// and BEGIN_RESP comes at the completion time; b_transport returns at once with the delay.

#include "kernel/Extensions.h"
#include "kernel/Ids.h"
#include "kernel/Stats.h"
#include "models/hbm/RemoteMemory.h"
#include "platforms/PlatformConfig.h"

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <queue>
#include <vector>

namespace etsim::platforms::astra {

/// ASTRA-sim's roofline time of a GPU compute node, ns: operational intensity
/// flops / bytes, rate min(localMemory (B/s) * intensity, peak (FLOP/s)), time
/// floor(flops / rate * 1e9); 0 when flops or bytes is 0 (the node is skipped).
std::uint64_t rooflineNs(std::uint64_t flops,
                         std::uint64_t bytes,
                         double peakFlopsPerSecond,
                         double localBytesPerSecond);

/// Base of both models: the target socket and the completion calendar.
class AnalyticTarget : public sc_core::sc_module {
public:
    /// Message type of the SC_REPORT_ERRORs.
    static constexpr const char* reportType = "etsim/astra";

    tlm_utils::simple_target_socket<AnalyticTarget> target;

    explicit AnalyticTarget(const sc_core::sc_module_name& name);
    /// Transactions accepted and not yet answered.
    std::uint64_t inFlight() const { return pending; }

protected:
    /// Where a transaction goes: the absolute completion time in ps, or nullopt when the
    /// model passed it on and will call respond() itself.
    virtual std::optional<std::uint64_t> accept(tlm::tlm_generic_payload& payload) = 0;
    /// The blocking path: the time the work takes from now, ps.
    virtual std::uint64_t blockingPs(tlm::tlm_generic_payload& payload) = 0;
    /// Sends BEGIN_RESP for a transaction accepted earlier and drops its reference.
    void respond(tlm::tlm_generic_payload& payload);
    std::uint64_t nowPs() const;
    /// Reports an error naming the model, rank and node, and marks the payload failed.
    void fail(tlm::tlm_generic_payload& payload, const std::string& problem) const;

private:
    struct Due {
        std::uint64_t timePs;
        std::uint64_t order;
        tlm::tlm_generic_payload* payload;
        bool operator>(const Due& other) const
        {
            return timePs != other.timePs ? timePs > other.timePs : order > other.order;
        }
    };
    tlm::tlm_sync_enum
    forward(tlm::tlm_generic_payload& payload, tlm::tlm_phase& phase, sc_core::sc_time& delay);
    void blocking(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);
    void fire();
    sc_core::sc_time after(std::uint64_t ps) const;

    std::priority_queue<Due, std::vector<Due>, std::greater<Due>> calendar;
    std::uint64_t order = 0;
    std::uint64_t pending = 0;
    std::uint64_t psPerStep = 1;
    sc_core::sc_event due;
};

class AstraCompute final : public AnalyticTarget {
public:
    /// Memory nodes leave here for the rank's memory.
    tlm_utils::simple_initiator_socket<AstraCompute> memory;

    /// Stats in `stats`: compute.flops and compute.tensor_busy (the names the report reads).
    AstraCompute(const sc_core::sc_module_name& name,
                 const platform::AstraNodeTiming& timing,
                 StatGroup& stats);

private:
    std::optional<std::uint64_t> accept(tlm::tlm_generic_payload& payload) override;
    std::uint64_t blockingPs(tlm::tlm_generic_payload& payload) override;
    std::uint64_t computePs(const EtNodeInfo& info);
    tlm::tlm_sync_enum
    backward(tlm::tlm_generic_payload& payload, tlm::tlm_phase& phase, sc_core::sc_time& delay);

    platform::AstraNodeTiming timing;
    StatGroup& group;
    Scalar& flops;
    Scalar& busySeconds;
};

class AstraMemory final : public AnalyticTarget {
public:
    /// `remote` is shared by the ranks of one platform (servers per node or one pool); null
    /// means no remote memory, so any memory node fails.
    AstraMemory(const sc_core::sc_module_name& name,
                RankId rank,
                std::shared_ptr<hbm::RemoteMemory> remote);

private:
    std::optional<std::uint64_t> accept(tlm::tlm_generic_payload& payload) override;
    std::uint64_t blockingPs(tlm::tlm_generic_payload& payload) override;

    RankId rank;
    std::shared_ptr<hbm::RemoteMemory> remote;
};

} // namespace etsim::platforms::astra
