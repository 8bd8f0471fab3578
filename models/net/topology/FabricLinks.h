#pragma once
// The links a fabric's messages cross and the one place routes are built. The topology's links
// come first (indexed as its LinkIds); with a NIC bandwidth (`nic:` in docs/network.md) there
// follow one injection link per endpoint, then one ejection link per endpoint (each from the
// endpoint to itself, no latency), and every route between two different endpoints starts on
// its source's injection link and ends on its destination's ejection link.
//
// SystemC-free: the fabric's timing core routes its messages with it, and the bridge describes
// the same links and routes to a peer that carries the messages (cosim/adapters/ns3).

#include "kernel/Units.h"
#include "models/net/topology/TopologyIf.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace etsim::net {

class FabricLinks {
public:
    /// `topology` must outlive this. A NIC bandwidth of 0 B/s means no NIC links.
    FabricLinks(const TopologyIf& topology, Bandwidth nicBandwidth);

    const TopologyIf& topology() const { return graph; }
    std::uint32_t endpointCount() const { return graph.endpointCount(); }
    /// Every link: the topology's, then the NIC injection links, then the ejection links.
    std::size_t size() const { return all.size(); }
    const Link& operator[](std::size_t index) const { return all[index]; }
    bool hasNicLinks() const { return nicLinks; }
    /// Index of endpoint 0's injection link (= the topology's link count).
    std::size_t nicBase() const { return graph.links().size(); }

    /// The one route builder: appends to `route` the links a message from endpoint `src` to
    /// endpoint `dst` crosses (the topology's hops, with the NIC links around them when
    /// configured); `hops` is scratch. Throws etsim::Error for an endpoint out of range.
    void appendRoute(std::uint32_t src,
                     std::uint32_t dst,
                     std::vector<LinkId>& hops,
                     std::vector<std::uint32_t>& route) const;
    /// The route from `src` to `dst` in `route` (cleared first).
    void routeOf(std::uint32_t src, std::uint32_t dst, std::vector<std::uint32_t>& route) const;

private:
    const TopologyIf& graph;
    std::vector<Link> all;
    bool nicLinks = false;
};

} // namespace etsim::net
