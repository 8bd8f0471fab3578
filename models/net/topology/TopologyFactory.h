#pragma once
// Builds the topology a NetConfig describes.

#include "models/net/NetConfig.h"
#include "models/net/topology/TopologyIf.h"

#include <memory>
#include <string>

namespace etsim::net {

/// A MultiDimTopology or FatTreeTopology; throws etsim::Error for an invalid shape.
std::unique_ptr<TopologyIf> makeTopology(const NetConfig& config);

/// What decides the topology's devices, links and routes (not their speeds), as one line: a
/// network adapter rebuilds the routes from it (docs/cosim-ns3.md, "routing"):
/// "multi_dim ring:8 switch:4" (dimension kind:size, innermost first) or
/// "fat_tree ENDPOINTS ENDPOINTS_PER_LEAF SPINES rail|block".
std::string routingShape(const NetConfig& config);

/// The topology of `shape` (routingShape()) with placeholder link speeds: for its device
/// numbering, links (from, to) and routes only. Throws etsim::Error naming the shape and what
/// is wrong with it.
std::unique_ptr<TopologyIf> makeRoutingTopology(const std::string& shape);

} // namespace etsim::net
