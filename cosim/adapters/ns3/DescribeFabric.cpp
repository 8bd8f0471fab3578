#include "cosim/adapters/ns3/DescribeFabric.h"

#include "models/net/NetConfig.h"
#include "models/net/topology/FabricLinks.h"
#include "models/net/topology/TopologyFactory.h"

#include <cstdint>
#include <iomanip>
#include <sstream>
#include <vector>

namespace etsim::cosim::ns3adapter {

std::string describeFabric(const net::FabricLinks& links, const net::NetConfig& config)
{
    std::ostringstream text;
    // The topology's own routes are described by its shape (the adapter rebuilds them with
    // the same topology code), so the text grows with the links, not with ranks^2. Routes that
    // cross links the topology does not have (NIC links) or links from a device to itself
    // (switch crossbars) are listed pair by pair.
    bool listRoutes = links.hasNicLinks();
    for (std::size_t index = 0; index < links.size(); ++index)
        listRoutes = listRoutes || links[index].from == links[index].to;
    const net::TopologyIf& topology = links.topology();
    text << "# etsim fabric description (docs/cosim-ns3.md)\n"
         << "etsim-fabric " << (listRoutes ? 1 : 2) << '\n'
         << "endpoints " << topology.endpointCount() << '\n'
         << "devices " << topology.deviceCount() << '\n';
    text << std::setprecision(17);
    for (std::size_t index = 0; index < links.size(); ++index) {
        const net::Link& spec = links[index];
        text << "link " << index << ' ' << spec.from << ' ' << spec.to << ' '
             << spec.bandwidth.bytesPerSecond() << ' ' << spec.latency.ps() << '\n';
    }
    if (!listRoutes) {
        text << "routing " << net::routingShape(config) << '\n';
        return text.str();
    }
    std::vector<std::uint32_t> route;
    const std::uint32_t endpoints = topology.endpointCount();
    for (std::uint32_t src = 0; src < endpoints; ++src)
        for (std::uint32_t dst = 0; dst < endpoints; ++dst) {
            if (src == dst)
                continue;
            links.routeOf(src, dst, route);
            text << "route " << src << ' ' << dst;
            for (std::uint32_t link : route)
                text << ' ' << link;
            text << '\n';
        }
    return text.str();
}

} // namespace etsim::cosim::ns3adapter
