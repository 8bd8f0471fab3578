#include "models/net/topology/FabricLinks.h"

namespace etsim::net {

FabricLinks::FabricLinks(const TopologyIf& topology, Bandwidth nicBandwidth)
    : graph(topology), nicLinks(nicBandwidth.bytesPerSecond() > 0.0)
{
    const IdVector<LinkId, Link>& specs = graph.links();
    const std::uint32_t endpoints = graph.endpointCount();
    all.reserve(specs.size() + (nicLinks ? 2 * std::size_t{endpoints} : 0));
    for (LinkId id : specs.ids())
        all.push_back(specs[id]);
    if (!nicLinks)
        return;
    // Injection links of every endpoint, then ejection links.
    for (int direction = 0; direction < 2; ++direction)
        for (std::uint32_t rank = 0; rank < endpoints; ++rank)
            all.push_back(Link{rank, rank, nicBandwidth, Time(), 0});
}

void FabricLinks::appendRoute(std::uint32_t src,
                              std::uint32_t dst,
                              std::vector<LinkId>& hops,
                              std::vector<std::uint32_t>& route) const
{
    hops.clear();
    graph.route(src, dst, hops);
    if (nicLinks && src != dst)
        route.push_back(static_cast<std::uint32_t>(nicBase() + src));
    for (LinkId id : hops)
        route.push_back(toUnderlying(id));
    if (nicLinks && src != dst)
        route.push_back(static_cast<std::uint32_t>(nicBase() + graph.endpointCount() + dst));
}

void FabricLinks::routeOf(std::uint32_t src,
                          std::uint32_t dst,
                          std::vector<std::uint32_t>& route) const
{
    std::vector<LinkId> hops;
    route.clear();
    appendRoute(src, dst, hops, route);
}

} // namespace etsim::net
