#include "models/net/topology/FatTreeTopology.h"

#include "kernel/Error.h"

#include <algorithm>
#include <string>

namespace etsim::net {

// Link layout: endpoint r up at 2r, down at 2r + 1; then leaf l to spine s up at
// 2E + 2(l * spines + s), down at that + 1.
FatTreeTopology::FatTreeTopology(const FatTreeConfig& tree) : config(tree)
{
    if (config.endpoints < 2)
        throw Error("FatTreeTopology: needs at least 2 endpoints");
    if (config.endpointsPerLeaf == 0 || config.endpoints % config.endpointsPerLeaf != 0)
        throw Error("FatTreeTopology: endpoints_per_leaf must divide the endpoint count " +
                    std::to_string(config.endpoints));
    if (config.spines == 0)
        throw Error("FatTreeTopology: needs at least one spine");
    if (config.hostBandwidth.bytesPerSecond() <= 0.0 ||
        config.uplinkBandwidth.bytesPerSecond() <= 0.0)
        throw Error("FatTreeTopology: host and uplink bandwidths must be above 0 B/s");
    std::uint32_t leaves = config.leaves();
    std::uint32_t firstLeaf = config.endpoints;
    std::uint32_t firstSpine = firstLeaf + leaves;
    linkList.reserve(2 * static_cast<std::size_t>(config.endpoints) +
                     2 * static_cast<std::size_t>(leaves) * config.spines);
    for (std::uint32_t rank = 0; rank < config.endpoints; ++rank) {
        std::uint32_t leaf = firstLeaf + leafOf(rank);
        linkList.append(Link{rank, leaf, config.hostBandwidth, config.hostLatency, 0});
        linkList.append(Link{leaf, rank, config.hostBandwidth, config.hostLatency, 0});
    }
    for (std::uint32_t leaf = 0; leaf < leaves; ++leaf)
        for (std::uint32_t spine = 0; spine < config.spines; ++spine) {
            linkList.append(Link{firstLeaf + leaf,
                                 firstSpine + spine,
                                 config.uplinkBandwidth,
                                 config.uplinkLatency,
                                 0});
            linkList.append(Link{firstSpine + spine,
                                 firstLeaf + leaf,
                                 config.uplinkBandwidth,
                                 config.uplinkLatency,
                                 0});
        }
}

std::string FatTreeTopology::name() const
{
    return std::string(config.railOptimised ? "rail_fat_tree(" : "fat_tree(") +
           std::to_string(config.endpoints) + " endpoints, " + std::to_string(config.leaves()) +
           " leaves, " + std::to_string(config.spines) + " spines)";
}

std::uint32_t FatTreeTopology::leafOf(std::uint32_t rank) const
{
    return config.railOptimised ? rank % config.leaves() : rank / config.endpointsPerLeaf;
}

void FatTreeTopology::route(std::uint32_t src, std::uint32_t dst, std::vector<LinkId>& route) const
{
    if (src >= config.endpoints || dst >= config.endpoints)
        throw Error("FatTreeTopology::route: endpoint " + std::to_string(std::max(src, dst)) +
                    " out of range (the topology has " + std::to_string(config.endpoints) +
                    " endpoints)");
    if (src == dst)
        return;
    route.push_back(static_cast<LinkId>(2 * src));
    std::uint32_t fromLeaf = leafOf(src);
    std::uint32_t toLeaf = leafOf(dst);
    if (fromLeaf != toLeaf) {
        std::uint32_t spine = (src + dst) % config.spines;
        std::uint32_t uplinks = 2 * config.endpoints;
        route.push_back(static_cast<LinkId>(uplinks + 2 * (fromLeaf * config.spines + spine)));
        route.push_back(static_cast<LinkId>(uplinks + 2 * (toLeaf * config.spines + spine) + 1));
    }
    route.push_back(static_cast<LinkId>(2 * dst + 1));
}

} // namespace etsim::net
