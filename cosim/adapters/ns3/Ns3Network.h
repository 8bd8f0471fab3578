#pragma once
// The fabric built in ns-3 (docs/cosim-ns3.md): one ns-3 node per device, one point-to-point
// channel per directed link with the link's bandwidth and latency, forwarding at every node by
// the (source, destination) routes of the fabric description, and a small paced sender per
// message. The ns-3 types stay in the .cpp so the adapter's main needs none of them.
//
// ns-3's simulator is process-wide: one Ns3Network per process.

#include "cosim/adapters/ns3/FabricDescription.h"
#include "cosim/peer/LinkUsage.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace etsim::cosim::ns3adapter {

struct Ns3Options {
    /// Largest packet handed to a device (our 16-byte header included), B; the device adds its
    /// 2-byte PPP header.
    std::uint32_t mtu = 9000;
    /// Capacity of every device queue, packets. Senders are paced at the first link's rate, so
    /// queues only hold what converging flows pile up at a shared link.
    std::uint32_t queuePackets = 100000;
};

struct Ns3Completion {
    std::uint64_t flow = 0;
    /// When the last packet arrived, ps.
    std::uint64_t timePs = 0;
};

struct Ns3Counters {
    std::uint64_t flows = 0;
    std::uint64_t packets = 0;
    std::uint64_t windows = 0;
    /// Wall time spent inside Simulator::Run, s.
    double runSeconds = 0.0;
};

class Ns3Network {
public:
    /// Builds the network; throws CosimError for a fabric ns-3 cannot carry (a link from a
    /// device to itself, such as NIC or switch-crossbar links; zero bandwidth; an MTU too small).
    Ns3Network(const FabricDescription& fabric, Ns3Options options);
    ~Ns3Network();
    Ns3Network(const Ns3Network&) = delete;
    Ns3Network& operator=(const Ns3Network&) = delete;

    /// Starts a message of `bytes` from `src` to `dst` at `atPs`. Throws CosimError when
    /// `atPs` is before now (an event in the past) or the pair has no route.
    void inject(std::uint64_t flow,
                std::uint32_t src,
                std::uint32_t dst,
                std::uint64_t bytes,
                std::uint64_t atPs);
    std::uint64_t nowPs() const;
    /// Time of the next pending ns-3 event, ps; ~0 when there is none.
    std::uint64_t nextEventPs() const;
    /// Runs events up to `boundPs` (~0 = no bound). Returns early after a message completed or
    /// a packet was dropped, so the caller can answer before the clock moves on.
    void runUntil(std::uint64_t boundPs);
    /// Messages completed since the last call.
    std::vector<Ns3Completion> takeCompletions();
    /// Non-empty after a drop or another failure that no message can recover from.
    const std::string& failure() const;
    const Ns3Counters& counters() const;
    /// Flows injected and not yet complete.
    std::size_t inFlight() const;
    /// Every link that transmitted: its busy time (the wire time of every packet its device
    /// started, PPP and our headers included, at the device's data rate) and payload bytes.
    std::vector<RemoteLinkUsage> linkUsage() const;

    class Impl;

private:
    std::unique_ptr<Impl> impl;
};

} // namespace etsim::cosim::ns3adapter
