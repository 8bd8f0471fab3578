#pragma once
// The network graph and its routing, as plain C++ (no SystemC), so the flow core here and an
// ns-3 adapter build the same network from the same code.
//
// Devices are numbered endpoints first (device r is rank r, 0 .. endpointCount()-1), then
// switches. Every link is directed (full duplex = one link each way) and has its own
// bandwidth and latency. A route is the list of link ids a message crosses, in order.

#include "kernel/Ids.h"
#include "kernel/Units.h"

#include <cstdint>
#include <string>
#include <vector>

namespace etsim::net {

/// One directed link between two devices.
struct Link {
    std::uint32_t from = 0;
    std::uint32_t to = 0;
    /// Usable bandwidth of this direction (efficiency already applied).
    Bandwidth bandwidth;
    /// Propagation plus forwarding latency of this hop.
    Time latency;
    /// The topology dimension the link belongs to (0 for single-level topologies).
    std::uint32_t dim = 0;
};

class TopologyIf {
public:
    virtual ~TopologyIf() = default;

    /// Short description, e.g. "switch(8) x ring(2)".
    virtual std::string name() const = 0;
    /// Endpoints (ranks); they are devices 0 .. endpointCount()-1.
    virtual std::uint32_t endpointCount() const = 0;
    /// Endpoints plus switches.
    virtual std::uint32_t deviceCount() const = 0;
    /// Every directed link, indexed by LinkId.
    virtual const IdVector<LinkId, Link>& links() const = 0;
    /// Appends the links from endpoint `src` to endpoint `dst` to `route` (which the caller
    /// clears); nothing for src == dst. Deterministic: the same pair always takes one path.
    /// Throws etsim::Error for an endpoint out of range.
    virtual void route(std::uint32_t src, std::uint32_t dst, std::vector<LinkId>& route) const = 0;
    /// Largest number of links on any route between two endpoints.
    virtual std::uint32_t diameter() const = 0;
};

} // namespace etsim::net
