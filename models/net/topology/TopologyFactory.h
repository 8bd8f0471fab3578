#pragma once
// Builds the topology a NetConfig describes.

#include "models/net/NetConfig.h"
#include "models/net/topology/TopologyIf.h"

#include <memory>

namespace etsim::net {

/// A MultiDimTopology or FatTreeTopology; throws etsim::Error for an invalid shape.
std::unique_ptr<TopologyIf> makeTopology(const NetConfig& config);

} // namespace etsim::net
