#include "models/net/topology/TopologyFactory.h"

#include "models/net/topology/FatTreeTopology.h"
#include "models/net/topology/MultiDimTopology.h"

namespace etsim::net {

std::unique_ptr<TopologyIf> makeTopology(const NetConfig& config)
{
    if (config.topologyKind == TopologyKind::FatTree)
        return std::make_unique<FatTreeTopology>(config.fatTree);
    return std::make_unique<MultiDimTopology>(config.dims);
}

} // namespace etsim::net
