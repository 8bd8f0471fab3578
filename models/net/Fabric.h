#pragma once
// The fabric as a SystemC module: one multi-passthrough target socket, bound once per rank
// (binding index = the rank's communication port), implementing docs/execution-protocol.md
// for Send, Recv and Collective transactions. All behaviour lives in a CommEngine with its
// own event calendar; the module has a single SystemC event for the calendar's next time, so
// no message, flow or link is ever a SystemC process or event.
//
// nb_transport_fw(BEGIN_REQ) accepts at once (TLM_UPDATED, END_REQ); the completion comes as
// nb_transport_bw(BEGIN_RESP) at the simulated time the rank's part is done. b_transport
// waits inside (call it from an SC_THREAD). A node the fabric cannot run gets
// TLM_GENERIC_ERROR_RESPONSE and an SC_REPORT_ERROR naming the module, rank and node.

#include "kernel/PayloadPool.h"
#include "kernel/Stats.h"
#include "kernel/Timeline.h"
#include "kernel/WallProfile.h"
#include "models/net/CommEngine.h"
#include "models/net/NetConfig.h"

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/simple_initiator_socket.h>

#include <cstdint>
#include <vector>

namespace etsim::net {

class Fabric final : public sc_core::sc_module, private RemoteNetwork {
public:
    tlm_utils::multi_passthrough_target_socket<Fabric> socket;
    /// Co-simulation (after useRemoteNetwork()): every message between two endpoints goes out
    /// here as a Send transaction (rank = source, peer = destination, bytes, node = message
    /// id) and arrives when the target answers with BEGIN_RESP. Bind it to a cosim::Proxy;
    /// left unbound otherwise.
    tlm_utils::simple_initiator_socket_optional<Fabric> network;

    /// Builds the engine for `ranks` ranks (throws ConfigError when the topology does not
    /// have that many endpoints) and its stats under `parentStats` (group named like the
    /// module). Per-link stats are added when `linkStats` is set (thousands for large
    /// topologies).
    Fabric(const sc_core::sc_module_name& name,
           const NetConfig& config,
           std::uint32_t ranks,
           StatGroup& parentStats,
           bool linkStats = true);
    Fabric(const Fabric&) = delete;
    Fabric& operator=(const Fabric&) = delete;

    /// Records one track per link that carried data (thread = link index) under process
    /// `processId`, which is named after the module: one slice per busy interval, merged, not
    /// one per message. The timeline must outlive the fabric; open intervals are written
    /// whenever the fabric goes idle and at the end of the simulation (or by flushTimeline()).
    void attachTimeline(Timeline& timeline, std::uint32_t processId);
    /// Writes busy intervals still held for merging (call before closing the timeline if the
    /// simulation stopped with traffic in flight).
    void flushTimeline() { comm.flushTimeline(); }

    /// Hands the messages to the target bound on `network` from now on (call before the
    /// simulation starts); collectives and matching stay here.
    void useRemoteNetwork();

    /// Partitioned runs (docs/partitioned-runs.md): only `link`'s local ranks bind and post;
    /// messages to other ranks leave through it (CommEngine::setPartition). Before the run.
    void setPartition(PartitionLink* link) { comm.setPartition(link); }
    /// A message from another process, before its arrival time; call while the kernel is
    /// paused. Throws etsim::Error as CommEngine::receive does.
    void receive(const CrossMessage& message);
    /// The time of the next event of the fabric's own calendar, ps (UINT64_MAX: none).
    std::uint64_t nextEventPs() const { return comm.hasEvents() ? comm.nextEventPs() : UINT64_MAX; }
    /// Partitioned runs whose links carry other processes' messages after the kernel has ended
    /// here (every local rank done): runs the calendar's events before `limitPs` outside the
    /// kernel. Throws etsim::Error if a node of a local rank would complete.
    void runAfterEnd(std::uint64_t limitPs);

    const CommEngine& engine() const { return comm; }
    /// Finished collectives (type, size, start, end, algbw, busbw), in completion order.
    const std::vector<CollectiveRecord>& collectives() const { return history; }
    /// True when no posted node is outstanding and nothing is scheduled.
    bool idle() const { return comm.outstanding() == 0 && !comm.hasEvents(); }
    StatGroup& stats() { return group; }

private:
    // The run's wall-time profile (--profile); nullptr when not profiled.
    WallProfile* wall = nullptr;
    struct InFlight {
        tlm::tlm_generic_payload* payload = nullptr;
        int port = 0;
        sc_core::sc_event* blocking = nullptr;
        bool failed = false;
    };
    struct Delayed {
        std::uint64_t timePs = 0;
        std::uint64_t sequence = 0;
        std::uint32_t token = 0;
    };

    tlm::tlm_sync_enum nbTransportFw(int port,
                                     tlm::tlm_generic_payload& payload,
                                     tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);
    void bTransport(int port, tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);
    std::uint32_t admit(int port, tlm::tlm_generic_payload& payload, sc_core::sc_event* blocking);
    void start(std::uint32_t token);
    void fail(std::uint32_t token, const std::string& problem);
    void wake();
    void flush();
    void reschedule();
    void record();
    void end_of_simulation() override;
    std::uint64_t nowPs() const;
    void inject(std::uint32_t src,
                std::uint32_t dst,
                std::uint64_t bytes,
                std::uint64_t message) override;
    tlm::tlm_sync_enum
    networkBw(tlm::tlm_generic_payload& payload, tlm::tlm_phase& phase, sc_core::sc_time& delay);

    CommEngine comm;
    StatGroup& group;
    Distribution& collectiveTime;
    Distribution& busBandwidth;
    Scalar& lastAlgorithmBandwidth;
    Scalar& lastBusBandwidth;
    sc_core::sc_event wakeup;
    std::vector<InFlight> inFlight;
    std::vector<std::uint32_t> freeTokens;
    std::vector<std::uint32_t> completed;
    std::vector<Delayed> delayed;
    std::uint64_t delayedSequence = 0;
    std::vector<CollectiveRecord> history;
    PayloadPool messagePool;
};

} // namespace etsim::net
